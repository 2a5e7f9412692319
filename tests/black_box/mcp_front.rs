//! http-mcp.md §5–§11 black-box: the `POST /mcp` front of the real `ptc` binary over loopback TCP with
//! raw sockets, against the fixture of §12.1, row by row (§12.3 rows 16–21, §12.5–§12.10, §12.11,
//! §12.12).
//! Rows that need a fenced domain or held leases run the same fixture in-process
//! (`mcp_front/inproc.rs`); the body-read rows of §12.6 are scripted exchanges (`mcp_front/body.rs`).
//! Rows whose answer is a committed event stream ("SSE ok", "SSE input") are read chunk by chunk and
//! compared de-chunked; `tests/black_box/mcp_calls.rs` covers every other outcome's stream.

use crate::support;

#[path = "mcp_front/body.rs"]
mod body;
#[path = "mcp_front/inproc.rs"]
mod inproc;
#[path = "mcp_front/refusal_log.rs"]
mod refusal_log;
#[path = "mcp_front/rows.rs"]
mod rows;

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use rows::Row;
use support::mcp::{closes, connect, fixture, Req};
use support::{read_response, Gateway, Response};

/// Headers no `/mcp` answer ever carries (http-mcp.md §1, §10.1); `access-control-*` is checked by prefix.
const FORBIDDEN: [&str; 6] =
    ["server", "mcp-session-id", "mcp-protocol-version", "retry-after", "set-cookie", "vary"];

/// Asserts the JSON response headers of §10.1 and the step's extra headers.
pub fn assert_json_headers(n: u16, response: &Response, close: bool) {
    assert_eq!(response.header("content-type"), Some("application/json; charset=utf-8"), "row {n}");
    assert_eq!(response.header("cache-control"), Some("no-store"), "row {n}");
    assert_eq!(response.header("content-length"), Some(response.body.len().to_string().as_str()), "row {n}");
    assert_eq!(response.header("connection"), close.then_some("close"), "row {n}: connection");
    let www = (response.status == 401).then_some("Bearer");
    assert_eq!(response.header("www-authenticate"), www, "row {n}");
    let allow = (response.status == 405).then_some("POST");
    assert_eq!(response.header("allow"), allow, "row {n}");
    for name in response.header_names() {
        assert!(!FORBIDDEN.contains(&name) && !name.starts_with("access-control-"), "row {n}: {name}");
    }
}

/// Runs one row on a fresh connection and checks status, exact body, headers and the close. Row 21 is
/// the router's answer, whose headers are the same JSON headers (§4.2).
pub fn check(addr: SocketAddr, row: &Row) {
    if row.sse {
        check_stream(addr, row);
        return;
    }
    let mut stream = connect(addr);
    let bytes = if row.head_only { row.req.head() } else { row.req.bytes() };
    stream.write_all(&bytes).unwrap_or_else(|e| panic!("row {}: write: {e}", row.n));
    let response = read_response(&mut stream, false).unwrap_or_else(|e| panic!("row {}: read: {e}", row.n));
    let text = String::from_utf8_lossy(&response.body);
    assert_eq!(response.status, row.status, "row {}: {}", row.n, &text[..text.len().min(300)]);
    assert!(
        text == row.body,
        "row {}: body\n got: {}\nwant: {}",
        row.n,
        &text[..text.len().min(600)],
        &row.body[..row.body.len().min(600)]
    );
    assert_json_headers(row.n, &response, row.close);
    if row.close {
        assert!(closes(&mut stream, Duration::from_secs(3)), "row {}: the connection must close", row.n);
    }
}

/// A row whose answer is a committed stream. The fixture has one run slot, and execution.md §10 releases
/// it only after the previous row's final bytes were handed to the kernel, so the client can read that
/// end a moment before the slot is free: a 429 `run_capacity_exhausted` is retried until a deadline, and
/// the answer that counts is the stream.
fn check_stream(addr: SocketAddr, row: &Row) {
    let busy = r#"{"error":{"code":-31999,"data":{"reason":"run_capacity_exhausted"},"message":"Server busy"},"id":1,"jsonrpc":"2.0"}"#;
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        let mut stream = connect(addr);
        stream.write_all(&row.req.bytes()).unwrap_or_else(|e| panic!("row {}: write: {e}", row.n));
        let committed = support::sse::read_stream(&mut stream);
        if committed.status == 429
            && committed.body() == busy.as_bytes()
            && std::time::Instant::now() < deadline
        {
            continue;
        }
        support::sse::assert_committed_head(&committed);
        assert!(committed.ended, "row {}: the stream ends", row.n);
        assert_eq!(String::from_utf8_lossy(&committed.body()), row.body, "row {}", row.n);
        return;
    }
}

/// A running fixture; the gateway is reaped before its directory is removed (field order).
pub struct Running {
    gateway: Gateway,
    deployment: support::Deployment,
}

impl Running {
    /// The gateway and its deployment, to stop the gateway first.
    fn into_parts(self) -> (Gateway, support::Deployment) {
        (self.gateway, self.deployment)
    }
}

fn start(address: &str) -> (Running, SocketAddr, String) {
    let d = fixture(address);
    let ip: std::net::IpAddr = address.parse().expect("ip");
    let addr = SocketAddr::new(ip, d.port);
    let gateway = Gateway::start(d.command(), addr);
    (Running { gateway, deployment: d }, addr, support::authority(addr))
}

/// The IPv4 fixture, its command adjusted by `adjust` (an environment variable).
fn start_with(adjust: impl FnOnce(&mut std::process::Command)) -> (Running, SocketAddr, String) {
    let d = fixture("127.0.0.1");
    let addr = SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), d.port);
    let mut cmd = d.command();
    adjust(&mut cmd);
    let gateway = Gateway::start(cmd, addr);
    (Running { gateway, deployment: d }, addr, support::authority(addr))
}

#[test]
fn transport_rows_over_ipv4() {
    let (_running, addr, host) = start("127.0.0.1");
    for row in rows::transport_rows(&host, addr.port()) {
        check(addr, &row);
    }
}

#[test]
fn json_envelope_meta_and_method_rows() {
    let (_running, addr, host) = start("127.0.0.1");
    let earlier = rows::earlier_rows(&host);
    for row in rows::json_rows(&host).iter().chain(&rows::meta_rows(&host)).chain(&earlier) {
        check(addr, row);
    }
}

#[test]
fn call_and_param_rows() {
    let (_running, addr, host) = start("127.0.0.1");
    for row in rows::call_rows(&host).iter().chain(&rows::precedence_rows(&host)) {
        check(addr, row);
    }
}

#[test]
fn ipv6_rows() {
    // §12.5 rows 46–47 on the IPv6 fixture.
    let (_running, addr, host) = start("::1");
    let list = support::mcp::result("1", &support::mcp::listing_result());
    let unbracketed = Req::b_list(&host).set("Host", &format!("::1:{}", addr.port()));
    let cases = [
        Row {
            n: 46,
            req: Req::b_list(&host),
            head_only: false,
            status: 200,
            body: list,
            close: false,
            sse: false,
        },
        Row {
            n: 47,
            req: unbracketed,
            head_only: false,
            status: 400,
            body: r#"{"error":"invalid_authority"}"#.into(),
            close: true,
            sse: false,
        },
    ];
    for row in &cases {
        check(addr, row);
    }
}

/// A refusal on a fresh connection, answered and closed (docs/security.md section 4).
fn refused(n: u16, req: Req, status: u16, code: &str) -> Row {
    Row {
        n,
        req,
        head_only: false,
        status,
        body: format!(r#"{{"error":"{code}"}}"#),
        close: true,
        sse: false,
    }
}

/// docs/security.md section 4, http-mcp.md §6.3–§6.4: a browser page whose name was rebound to the loopback
/// address sends its own name in `Host`; a cross-origin page sends an `Origin` that is not listed. Both
/// are refused, with the right bearer, before anything else is looked at: 400 `invalid_authority`, 403
/// `origin_forbidden`, then the connection closes.
#[test]
fn dns_rebinding_and_foreign_origins_are_refused() {
    let (_running, addr, host) = start("127.0.0.1");
    let port = addr.port();
    let b = || Req::b_list(&host);
    let rows = [
        refused(1, b().set("Host", &format!("rebind.attacker.example:{port}")), 400, "invalid_authority"),
        refused(2, b().set("Host", "rebind.attacker.example"), 400, "invalid_authority"),
        refused(3, b().set("Host", &format!("127.0.0.1.nip.io:{port}")), 400, "invalid_authority"),
        refused(4, b().set("Host", &format!("0x7f000001:{port}")), 400, "invalid_authority"),
        refused(5, b().set("Host", &format!("2130706433:{port}")), 400, "invalid_authority"),
        refused(6, b().set("Host", &format!("127.1:{port}")), 400, "invalid_authority"),
        refused(7, b().set("Host", &format!("LOCALHOST:{port}")), 400, "invalid_authority"),
        refused(8, b().remove("Host").add("X-Forwarded-Host", &host), 400, "invalid_authority"),
        refused(
            9,
            b().add("Origin", &format!("http://rebind.attacker.example:{port}")),
            403,
            "origin_forbidden",
        ),
        refused(10, b().add("Origin", &format!("http://{host}")), 403, "origin_forbidden"),
        refused(11, b().add("Origin", "http://localhost:3000"), 403, "origin_forbidden"),
        refused(12, b().add("Origin", "https://127.0.0.1:3000"), 403, "origin_forbidden"),
        refused(13, b().add("Origin", "http://127.0.0.1:3000.attacker.example"), 403, "origin_forbidden"),
        refused(
            14,
            b().add("Origin", "http://127.0.0.1:3000, http://127.0.0.1:3000"),
            403,
            "origin_forbidden",
        ),
    ];
    for row in &rows {
        check(addr, row);
    }
}

/// docs/security.md section 3, http-mcp.md §6.5: every refused credential gets the same answer, byte for
/// byte, whatever its length and however many of its leading or trailing bytes match the token, so the answer
/// tells nothing about the token. (The comparison is the constant-time digest comparison
/// `BearerDigest::matches` of src/mcp/bearer.rs.)
#[test]
fn every_refused_credential_gets_the_same_bytes() {
    let (_running, addr, host) = start("127.0.0.1");
    let a = |n: usize| "a".repeat(n);
    let credentials: Vec<Option<String>> = vec![
        None,
        Some(format!("Bearer {}", "b".repeat(32))),
        Some(format!("Bearer {}b", a(31))),
        Some(format!("Bearer b{}", a(31))),
        Some(format!("Bearer {}", a(31))),
        Some(format!("Bearer {}", a(33))),
        Some(format!("Bearer {}", a(4_096))),
        Some(format!("Bearer {}", a(4_097))),
        Some(format!("Bearer {}\u{e9}", a(31))),
        Some("Basic YTpi".into()),
        Some("Bearer".into()),
    ];
    // The whole answer, every byte up to the close, but for the value of its one `date` line (an
    // IMF-fixdate, the only bytes that may differ between two answers), written `<date>`.
    let answer = |authorization: &Option<String>| -> String {
        let req = match authorization {
            Some(value) => Req::b_list(&host).set("Authorization", value),
            None => Req::b_list(&host).remove("Authorization"),
        };
        let mut stream = connect(addr);
        stream.write_all(&req.bytes()).expect("write");
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stream, &mut bytes).expect("read to the close");
        let text = String::from_utf8(bytes).expect("an ASCII answer");
        let dates: Vec<&str> = text.split("\r\n").filter(|l| l.starts_with("date: ")).collect();
        assert!(dates.len() == 1 && dates[0].len() == 35 && dates[0].ends_with(" GMT"), "{text}");
        text.replacen(dates[0], "date: <date>", 1)
    };
    let body = r#"{"error":"unauthorized"}"#;
    let want = format!(
        "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\n\
         connection: close\r\nwww-authenticate: Bearer\r\ncontent-length: {}\r\ndate: <date>\r\n\r\n{body}",
        body.len()
    );
    for credential in &credentials {
        assert_eq!(answer(credential), want, "{:?}", credential.as_deref().map(|c| &c[..c.len().min(40)]));
    }
}

#[test]
fn body_rows() {
    let (_running, addr, host) = start("127.0.0.1");
    body::run(addr, &host);
}

#[test]
fn a_defect_answers_500_with_the_validated_id_and_releases_the_lease() {
    // http-mcp.md §5: a gateway failure before the commit answers 500 `-32603`, with the id once M11 has
    // validated it; the lease is released on that path too (three in a row with two leases).
    let d = fixture("127.0.0.1");
    let addr = SocketAddr::new([127, 0, 0, 1].into(), d.port);
    let mut cmd = d.command();
    cmd.env("PTC_FAULT", "mcp_front_defect");
    let running = Running { gateway: Gateway::start(cmd, addr), deployment: d };
    let host = support::authority(addr);
    let internal = |id| support::mcp::rpc_error(-32603, id);
    let mut cases: Vec<Row> = (0..3)
        .map(|_| Row {
            n: 0,
            req: Req::b_list(&host),
            head_only: false,
            status: 500,
            body: internal(Some("1")),
            close: false,
            sse: false,
        })
        .collect();
    cases.push(Row {
        n: 90,
        req: Req::b_list(&host).body("{"),
        head_only: false,
        status: 400,
        body: support::mcp::rpc_error(-32700, None),
        close: false,
        sse: false,
    });
    for row in &cases {
        check(addr, row);
    }
    drop(running);
}
