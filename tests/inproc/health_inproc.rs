//! http-mcp.md §3, §4 and §12.3 in-process: the router and the health endpoints byte for byte (status
//! line, every header line, body, keep-alive or close), over IPv4 and `::1`, against the listener on port
//! 0 with raw sockets. The transport rows (ceiling, idle timeout, graceful stop, lingering close, the
//! head-guard seam) are in `health_inproc/transport.rs`.

#[path = "health_inproc/transport.rs"]
mod transport;
#[path = "health_inproc/wire.rs"]
mod wire;

use crate::support::mcp::Req;
use ptc_gateway::testing::codes::NotReadyCause;
use wire::{assert_no_forbidden_headers, start, Client, Options, B_LIST_BODY};

/// One request and its exact answer.
struct Row {
    id: &'static str,
    request: String,
    status_line: &'static str,
    body: &'static str,
    allow: Option<&'static str>,
    /// The request is a `HEAD`: headers only, `content-length` of the GET answer.
    head: bool,
    /// The answer carries `connection: close` and the connection closes after it (§2.5).
    close: bool,
}

const OK: &str = "HTTP/1.1 200 OK";
const BAD_REQUEST: &str = "HTTP/1.1 400 Bad Request";
const NOT_FOUND: &str = "HTTP/1.1 404 Not Found";
const NOT_ALLOWED: &str = "HTTP/1.1 405 Method Not Allowed";
const UNAVAILABLE: &str = "HTTP/1.1 503 Service Unavailable";

const READY: &str = r#"{"status":"ready"}"#;
const LIVE: &str = r#"{"status":"live"}"#;
const NOT_READY: &str = r#"{"status":"not_ready"}"#;
const INVALID_AUTHORITY: &str = r#"{"status":"invalid_authority"}"#;
const NOT_FOUND_BODY: &str = r#"{"status":"not_found"}"#;
const H3: &str = r#"{"status":"method_not_allowed"}"#;
const M1: &str = r#"{"error":"method_not_allowed"}"#;

/// B-list of §12.2 with `method`, `target` and extra header lines.
fn b_list(method: &str, target: &str, host: &str, extra: &str) -> String {
    assert_eq!(B_LIST_BODY.len(), 170);
    let mut request = Req::b_list(host).method(method).target(target);
    for line in extra.split_terminator("\r\n") {
        let (name, value) = line.split_once(": ").expect("a header line");
        request = request.add(name, value);
    }
    String::from_utf8(request.bytes()).expect("ascii request")
}

fn row(id: &'static str, request: String, status_line: &'static str, body: &'static str) -> Row {
    Row { id, request, status_line, body, allow: None, head: false, close: false }
}

impl Row {
    fn allow(mut self, allow: &'static str) -> Row {
        self.allow = Some(allow);
        self
    }
    fn close(mut self) -> Row {
        self.close = true;
        self
    }
    fn head(mut self) -> Row {
        self.head = true;
        self
    }
}

/// §12.3 rows 1–21 that need no MCP front, and the neighbouring cases the rules imply.
fn ready_rows(host: &str) -> Vec<Row> {
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    let with = |head: &str| format!("{head}\r\n\r\n");
    vec![
        row("1", get("/health/ready"), OK, READY),
        row("2", get("/health/live"), OK, LIVE),
        row("3", with(&format!("HEAD /health/ready HTTP/1.1\r\nHost: {host}")), NOT_ALLOWED, H3).allow("GET").head(),
        row("4", with(&format!("POST /health/ready HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0")), NOT_ALLOWED, H3)
            .allow("GET"),
        row(
            "5",
            with(&format!(
                "OPTIONS /health/ready HTTP/1.1\r\nHost: {host}\r\nOrigin: http://127.0.0.1:3000\r\n\
                 Access-Control-Request-Method: GET"
            )),
            NOT_ALLOWED,
            H3,
        )
        .allow("GET"),
        row("6", get("/health/ready").replace(host, "evil.example"), BAD_REQUEST, INVALID_AUTHORITY),
        row("7", with("POST /health/ready HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 0"), BAD_REQUEST, INVALID_AUTHORITY),
        row("8", with(&format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nHost: {host}")), BAD_REQUEST, INVALID_AUTHORITY),
        row("8 case", with(&format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nHOST: {host}")), BAD_REQUEST, INVALID_AUTHORITY),
        row("9", with(&format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nOrigin: https://evil.example")), OK, READY),
        row("10", get("/unknown"), NOT_FOUND, NOT_FOUND_BODY),
        row("11", get("/"), NOT_FOUND, NOT_FOUND_BODY),
        row("12", get("/health/ready/"), NOT_FOUND, NOT_FOUND_BODY),
        row("13", get("/MCP"), NOT_FOUND, NOT_FOUND_BODY),
        row("14", with(&format!("POST /unknown HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0")), NOT_FOUND, NOT_FOUND_BODY),
        row("15", get("/health/ready?verbose=1"), OK, READY),
        row("16", get("/mcp"), NOT_ALLOWED, M1).allow("POST"),
        row("17", get("/mcp").replace(host, "evil.example"), NOT_ALLOWED, M1).allow("POST"),
        row("18", b_list("DELETE", "/mcp", host, "Mcp-Session-Id: abc\r\n"), NOT_ALLOWED, M1).allow("POST").close(),
        row("19", b_list("OPTIONS", "/mcp", host, ""), NOT_ALLOWED, M1).allow("POST").close(),
        row("21", b_list("POST", &format!("http://{host}/mcp"), host, ""), BAD_REQUEST, INVALID_AUTHORITY).close(),
        // Neighbours of the rows above.
        row("/health", get("/health"), NOT_FOUND, NOT_FOUND_BODY),
        row("/health/", get("/health/"), NOT_FOUND, NOT_FOUND_BODY),
        row("/mcp/", get("/mcp/"), NOT_FOUND, NOT_FOUND_BODY),
        row("/%6Dcp", get("/%6Dcp"), NOT_FOUND, NOT_FOUND_BODY),
        row("404 after H1", get("/unknown").replace(host, "evil.example"), BAD_REQUEST, INVALID_AUTHORITY),
        row("no host", with("GET /health/live HTTP/1.1"), BAD_REQUEST, INVALID_AUTHORITY),
        row("OWS host", with(&format!("GET /health/live HTTP/1.1\r\nHost:   {host}  ")), OK, LIVE),
        row("absolute, no body", get(&format!("http://{host}/health/ready")), BAD_REQUEST, INVALID_AUTHORITY),
        row("asterisk", with(&format!("OPTIONS * HTTP/1.1\r\nHost: {host}")), BAD_REQUEST, INVALID_AUTHORITY),
        row(
            "body unread",
            format!("POST /health/ready HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\n\r\nhello"),
            NOT_ALLOWED,
            H3,
        )
        .allow("GET")
        .close(),
        row(
            "chunked unread",
            format!("POST /unknown HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
            NOT_FOUND,
            NOT_FOUND_BODY,
        )
        .close(),
        row(
            "no 100-continue",
            with(&format!("POST /health/live HTTP/1.1\r\nHost: {host}\r\nExpect: 100-continue\r\nContent-Length: 5")),
            NOT_ALLOWED,
            H3,
        )
        .allow("GET")
        .close(),
        row("HEAD /mcp", with(&format!("HEAD /mcp HTTP/1.1\r\nHost: {host}")), NOT_ALLOWED, M1).allow("POST").head(),
        row(
            "POST /mcp provisional",
            with(&format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0")),
            UNAVAILABLE,
            r#"{"error":"not_ready"}"#,
        ),
        row("POST /mcp provisional, body", b_list("POST", "/mcp", host, ""), UNAVAILABLE, r#"{"error":"not_ready"}"#)
            .close(),
    ]
}

/// §12.3 rows 22–23: the same listener after a fence.
fn fenced_rows(host: &str) -> Vec<Row> {
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    vec![
        row("22", get("/health/ready"), UNAVAILABLE, NOT_READY),
        row("23", get("/health/live"), OK, LIVE),
        row("16 fenced", get("/mcp"), NOT_ALLOWED, M1).allow("POST"),
    ]
}

/// Sends one row on a fresh connection and checks the answer byte for byte; then proves the connection
/// closed (close rows) or stayed usable and carried no stray body bytes (every other row).
async fn check(addr: std::net::SocketAddr, host: &str, row: &Row, context: &str) {
    let context = format!("{context} row {}", row.id);
    let mut client = Client::connect(addr).await;
    client.send(row.request.as_bytes()).await;
    let wire = client.response(row.head).await;
    assert_eq!(wire.status_line, row.status_line, "{context}");
    let mut expected: Vec<(&str, String)> = vec![
        ("cache-control", "no-store".into()),
        ("content-length", row.body.len().to_string()),
        ("content-type", "application/json; charset=utf-8".into()),
    ];
    if let Some(allow) = row.allow {
        expected.push(("allow", allow.into()));
    }
    if row.close {
        expected.push(("connection", "close".into()));
    }
    expected.sort();
    let mut got: Vec<(&str, String)> =
        wire.headers.iter().filter(|(n, _)| n != "date").map(|(n, v)| (n.as_str(), v.clone())).collect();
    got.sort();
    assert_eq!(got, expected, "{context}: the exact header set (plus an optional date)");
    assert!(wire.headers.iter().filter(|(n, _)| n == "date").count() <= 1, "{context}");
    assert_no_forbidden_headers(&wire, &context);
    if !row.head {
        assert_eq!(String::from_utf8_lossy(&wire.body), row.body, "{context}");
    }
    if row.close {
        assert!(client.closes_within(wire::DEADLINE).await, "{context}: closed after the answer");
        return;
    }
    // Keep-alive: the next request on the same connection is answered, and nothing (no HEAD body, no
    // interim 100) arrived in between.
    assert!(client.leftover().is_empty(), "{context}: stray bytes {:?}", client.leftover());
    client.send(format!("GET /health/live HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes()).await;
    let next = client.response(false).await;
    assert_eq!(
        (next.status_line.as_str(), next.body.as_slice()),
        (OK, LIVE.as_bytes()),
        "{context}: kept alive"
    );
}

async fn check_all(ip: &'static str) {
    let Some(fixture) = start(Options { ip, ..Options::default() }) else { return };
    let host = fixture.authority.clone();
    let context = format!("{ip} ({host})");
    for row in ready_rows(&host) {
        check(fixture.addr, &host, &row, &context).await;
    }
    assert!(fixture.readiness.fence(NotReadyCause::ProviderRuntimeLost));
    for row in fenced_rows(&host) {
        check(fixture.addr, &host, &row, &format!("{context} fenced")).await;
    }
    let slots = fixture.listener.control().slots();
    assert_eq!(slots.ceiling, 10, "max_inflight_requests 2 + 8");
    assert!(slots.peak <= slots.ceiling);
}

#[tokio::test]
async fn routing_and_health_over_ipv4() {
    check_all("127.0.0.1").await;
}

#[tokio::test]
async fn routing_and_health_over_ipv6() {
    check_all("::1").await;
}

#[tokio::test]
async fn the_authority_is_the_bound_address_by_the_rule_of_section_1() {
    let Some(v4) = start(Options::default()) else { panic!("127.0.0.1 must bind") };
    assert_eq!(v4.authority, format!("127.0.0.1:{}", v4.addr.port()));
    // §12.5 row 48 for health: an IPv4 deployment refuses the IPv6 authority.
    let mut client = Client::connect(v4.addr).await;
    client
        .send(format!("GET /health/live HTTP/1.1\r\nHost: [::1]:{}\r\n\r\n", v4.addr.port()).as_bytes())
        .await;
    assert_eq!(client.response(false).await.status_line, BAD_REQUEST);
    if let Some(v6) = start(Options { ip: "::1", ..Options::default() }) {
        assert_eq!(v6.authority, format!("[::1]:{}", v6.addr.port()));
        let mut client = Client::connect(v6.addr).await;
        // §12.5 row 47: an unbracketed IPv6 authority fails.
        client
            .send(format!("GET /health/live HTTP/1.1\r\nHost: ::1:{}\r\n\r\n", v6.addr.port()).as_bytes())
            .await;
        assert_eq!(client.response(false).await.status_line, BAD_REQUEST);
    }
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let Some(fixture) = start(Options::default()) else { panic!("127.0.0.1 must bind") };
    let host = &fixture.authority;
    let mut client = Client::connect(fixture.addr).await;
    let pipeline = format!(
        "GET /health/live HTTP/1.1\r\nHost: {host}\r\n\r\nGET /nope HTTP/1.1\r\nHost: {host}\r\n\r\n\
         HEAD /health/ready HTTP/1.1\r\nHost: {host}\r\n\r\nGET /health/ready HTTP/1.1\r\nHost: {host}\r\n\r\n"
    );
    client.send(pipeline.as_bytes()).await;
    let answers =
        [(OK, LIVE, false), (NOT_FOUND, NOT_FOUND_BODY, false), (NOT_ALLOWED, "", true), (OK, READY, false)];
    for (status_line, body, head) in answers {
        let wire = client.response(head).await;
        assert_eq!(
            (wire.status_line.as_str(), String::from_utf8_lossy(&wire.body).as_ref()),
            (status_line, body)
        );
    }
}

#[tokio::test]
async fn a_client_connection_close_is_honoured() {
    let Some(fixture) = start(Options::default()) else { panic!("127.0.0.1 must bind") };
    let mut client = Client::connect(fixture.addr).await;
    let request =
        format!("GET /health/live HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", fixture.authority);
    client.send(request.as_bytes()).await;
    let wire = client.response(false).await;
    assert_eq!(wire.status_line, OK);
    assert_eq!(wire.header("connection"), Some("close"));
    assert!(client.closes_within(wire::DEADLINE).await);
}

/// §12.4 rows that hyper enforces by itself with this listener's configuration (`max_headers(64)`), on a
/// health path. The rows that need the head guard (27, 29, 36 and the rest of §2.4) are not here.
#[tokio::test]
async fn parser_rows_hyper_already_enforces() {
    let Some(fixture) = start(Options::default()) else { panic!("127.0.0.1 must bind") };
    let host = fixture.authority.clone();
    let x = |n: usize| "x".repeat(n);
    let lines = |n: usize| (0..n).map(|i| format!("X-H{i}: 1\r\n")).collect::<String>();
    let filler = (0..40).map(|i| format!("X-Fill-{i}: {}\r\n", "y".repeat(1000))).collect::<String>();
    // 63 more field lines of exactly 8,192 bytes each: the largest head §2.4 admits, about 516 KiB.
    let largest = (0..63).map(|i| format!("X-L{i:02}: {}\r\n", x(8192 - 9))).collect::<String>();
    assert!(largest.split("\r\n").filter(|l| !l.is_empty()).all(|l| l.len() + 2 == 8192));
    let empty_431 = "HTTP/1.1 431 Request Header Fields Too Large";
    // (row, request, status line, body; an empty body means the empty-body refusal of §2.4).
    let rows: Vec<(&str, String, &str, &str)> = vec![
        ("26", format!("GET /{} HTTP/1.1\r\nHost: {host}\r\n\r\n", x(8176)), NOT_FOUND, NOT_FOUND_BODY),
        (
            "28",
            format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nX-Line: {}\r\n\r\n", x(8182)),
            OK,
            READY,
        ),
        ("30", format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\n{}\r\n", lines(63)), OK, READY),
        ("31", format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\n{}\r\n", lines(64)), empty_431, ""),
        ("34", format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\n{filler}\r\n"), OK, READY),
        ("largest head", format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\n{largest}\r\n"), OK, READY),
        (
            "35",
            format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nX-A: 1\r\n 2\r\n\r\n"),
            BAD_REQUEST,
            "",
        ),
        ("37", format!("GET /health/ready HTTP/2.0\r\nHost: {host}\r\n\r\n"), BAD_REQUEST, ""),
        (
            "space before colon",
            format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nX-A : 1\r\n\r\n"),
            BAD_REQUEST,
            "",
        ),
        (
            "bare CR",
            format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nX-A: 1\r2\r\n\r\n"),
            BAD_REQUEST,
            "",
        ),
        ("method token", format!("G(T /health/ready HTTP/1.1\r\nHost: {host}\r\n\r\n"), BAD_REQUEST, ""),
        (
            "two lengths",
            format!("POST /x HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n"),
            BAD_REQUEST,
            "",
        ),
        (
            "length syntax",
            format!("POST /x HTTP/1.1\r\nHost: {host}\r\nContent-Length: +5\r\n\r\n"),
            BAD_REQUEST,
            "",
        ),
        (
            "coding",
            format!("POST /x HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: gzip\r\n\r\n"),
            BAD_REQUEST,
            "",
        ),
    ];
    assert_eq!(rows[0].1.find("\r\n"), Some(8190), "row 26: 8,192 bytes with its CRLF");
    assert_eq!(rows[1].1.split("\r\n").nth(2).map(str::len), Some(8190), "row 28: 8,192 bytes with its CRLF");
    for (id, request, status_line, body) in rows {
        let mut client = Client::connect(fixture.addr).await;
        client.send(request.as_bytes()).await;
        let wire = client.response(false).await;
        assert_eq!(wire.status_line, status_line, "row {id}");
        if body.is_empty() {
            let headers: Vec<_> = wire.headers.iter().filter(|(n, _)| n != "date").cloned().collect();
            let expected = vec![
                ("connection".to_owned(), "close".to_owned()),
                ("content-length".to_owned(), "0".to_owned()),
            ];
            assert_eq!(headers, expected, "row {id}: the empty-body response of §2.4");
            assert!(client.closes_within(wire::DEADLINE).await, "row {id}: closed");
        } else {
            assert_eq!(String::from_utf8_lossy(&wire.body), body, "row {id}");
        }
    }
}

/// §2.1: an HTTP/1.0 request is served and answered with an HTTP/1.1 status line; without keep-alive the
/// connection closes after the answer, with `Connection: keep-alive` it stays open (hyper then announces
/// `connection: keep-alive`, the HTTP/1.0 way of saying so).
#[tokio::test]
async fn http_1_0_requests_get_http_1_1_answers() {
    let Some(fixture) = start(Options::default()) else { panic!("127.0.0.1 must bind") };
    let host = &fixture.authority;
    let mut once = Client::connect(fixture.addr).await;
    once.send(format!("GET /health/live HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes()).await;
    let wire = once.response(false).await;
    assert_eq!((wire.status_line.as_str(), wire.body.as_slice()), (OK, LIVE.as_bytes()));
    assert_eq!(wire.header("connection"), None);
    assert!(once.closes_within(wire::DEADLINE).await, "HTTP/1.0 without keep-alive closes");

    let mut kept = Client::connect(fixture.addr).await;
    for path in ["/health/ready", "/nope", "/health/live"] {
        kept.send(
            format!("GET {path} HTTP/1.0\r\nHost: {host}\r\nConnection: keep-alive\r\n\r\n").as_bytes(),
        )
        .await;
        let wire = kept.response(false).await;
        assert!(wire.status_line.starts_with("HTTP/1.1 "), "{path}: {}", wire.status_line);
        assert_eq!(wire.header("connection"), Some("keep-alive"), "{path}");
    }
    // An HTTP/1.1 request on the same connection is untouched.
    kept.send(format!("GET /health/live HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes()).await;
    assert_eq!(kept.response(false).await.status_line, OK);
}
