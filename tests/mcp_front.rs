//! http-mcp.md §5–§11 black-box: the `POST /mcp` front of the real `ptc` binary over loopback TCP with
//! raw sockets, against the fixture of §12.1, row by row (§12.3 rows 16–21, §12.5–§12.10, §12.11).
//! Rows that need a fenced domain or held leases run the same fixture in-process
//! (`mcp_front/inproc.rs`); the body-read rows of §12.6 are scripted exchanges (`mcp_front/body.rs`).
//! Rows whose answer is a committed event stream ("SSE ok", "SSE input") are read chunk by chunk and
//! compared de-chunked; `tests/mcp_calls.rs` covers every other outcome's stream.

mod support;

#[path = "mcp_front/body.rs"]
mod body;
#[path = "mcp_front/inproc.rs"]
mod inproc;
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
    _gateway: Gateway,
    _deployment: support::Deployment,
}

fn start(address: &str) -> (Running, SocketAddr, String) {
    let d = fixture(address);
    let ip: std::net::IpAddr = address.parse().expect("ip");
    let addr = SocketAddr::new(ip, d.port);
    let gateway = Gateway::start(d.command(), addr);
    (Running { _gateway: gateway, _deployment: d }, addr, support::authority(addr))
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
    for row in rows::json_rows(&host).iter().chain(&rows::meta_rows(&host)) {
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
    let running = Running { _gateway: Gateway::start(cmd, addr), _deployment: d };
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
