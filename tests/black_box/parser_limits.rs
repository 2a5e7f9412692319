//! http-mcp.md §2.4 and §12.4 rows 26–38 against the real binary: the parser limits answer with the exact
//! empty-body responses and close; heads within the limits reach the router and health.

use crate::support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use support::mcp::{Req, B_LIST_BODY};
use support::{authority, read_response, Deployment, Gateway};

fn start() -> (Deployment, Gateway) {
    let mut d = Deployment::baseline();
    d.write_documents();
    let addr = SocketAddr::from(([127, 0, 0, 1], d.port));
    let gateway = Gateway::start(d.command(), addr);
    (d, gateway)
}

/// What a row expects.
enum Expect {
    /// A JSON answer with this status and body.
    Json(u16, &'static str),
    /// The empty-body refusal of §2.4 with this status line, then close.
    Empty(&'static str),
}

const E400: Expect = Expect::Empty("HTTP/1.1 400 Bad Request");
const E414: Expect = Expect::Empty("HTTP/1.1 414 URI Too Long");
const E431: Expect = Expect::Empty("HTTP/1.1 431 Request Header Fields Too Large");
const READY: Expect = Expect::Json(200, r#"{"status":"ready"}"#);

/// Reads until the peer closes, with a deadline; the bytes and whether it closed in time.
fn read_to_close(stream: &mut TcpStream, deadline: Duration) -> (Vec<u8>, bool) {
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return (out, true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return (out, true),
        }
    }
    (out, false)
}

/// Checks one empty-body refusal: exact status line, exactly `content-length: 0` and `connection: close`
/// (and optionally `date`), no body, and the connection closed after it.
fn assert_empty_refusal(bytes: &[u8], closed: bool, status_line: &str, context: &str) {
    assert!(closed, "{context}: the connection is closed after the refusal");
    let text = String::from_utf8_lossy(bytes);
    let (head, body) =
        text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{context}: no head in {text:?}"));
    assert_eq!(body, "", "{context}: empty body, nothing after it");
    let mut lines = head.split("\r\n");
    assert_eq!(lines.next(), Some(status_line), "{context}");
    let mut headers: Vec<String> =
        lines.map(|l| l.to_ascii_lowercase()).filter(|l| !l.starts_with("date:")).collect();
    headers.sort();
    assert_eq!(
        headers,
        ["connection: close", "content-length: 0"],
        "{context}: no content-type, nothing else"
    );
}

fn check(addr: SocketAddr, id: &str, request: &[u8], expect: &Expect) {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // A refusal may come before the whole request is written; the client then sees a reset on write.
    let _ = stream.write_all(request);
    match expect {
        Expect::Empty(line) => {
            let (bytes, closed) = read_to_close(&mut stream, Duration::from_secs(5));
            assert_empty_refusal(&bytes, closed, line, id);
        }
        Expect::Json(status, body) => {
            let resp = read_response(&mut stream, false).unwrap_or_else(|e| panic!("row {id}: {e}"));
            assert_eq!(resp.status, *status, "row {id}");
            assert_eq!(String::from_utf8_lossy(&resp.body), *body, "row {id}");
            assert_eq!(resp.header("content-type"), Some("application/json; charset=utf-8"), "row {id}");
        }
    }
}

fn b_health(host: &str, extra: &str) -> Vec<u8> {
    format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n").into_bytes()
}

/// B-list (§12.2) with `edit` applied to its head lines; the body stays as it is.
fn b_list(host: &str, edit: impl Fn(Vec<String>) -> Vec<String>) -> Vec<u8> {
    let request = Req::b_list(host);
    assert_eq!(request.body.len(), 170);
    let head = String::from_utf8(request.head()).expect("ascii head");
    let lines = head.trim_end_matches("\r\n").split("\r\n").map(str::to_owned).collect();
    let mut out = edit(lines).join("\r\n");
    out.push_str("\r\n\r\n");
    out.push_str(B_LIST_BODY);
    out.into_bytes()
}

/// `X-Fill-<n>` field lines that bring M2's sum (§6.2: lowercase name plus trimmed value, per line) from
/// `base` to exactly `target`; each line stays well inside 8,192 bytes.
fn fillers(base: usize, target: usize) -> String {
    let mut out = String::new();
    let mut left = target - base;
    let mut n = 0;
    while left > 0 {
        let name = format!("x-fill-{n:02}");
        let value = (left - name.len()).min(8_000);
        assert!(value > 0, "filler arithmetic");
        out.push_str(&format!("X-Fill-{n:02}: {}\r\n", "f".repeat(value)));
        left -= name.len() + value;
        n += 1;
    }
    out
}

/// M2's sum over the field lines of `head` (everything up to the empty line).
fn m2_sum(request: &[u8]) -> usize {
    let text = String::from_utf8_lossy(request);
    let head = text.split("\r\n\r\n").next().unwrap_or_default();
    head.split("\r\n").skip(1).filter_map(|l| l.split_once(':')).map(|(n, v)| n.len() + v.trim().len()).sum()
}

#[test]
fn rows_26_to_37_without_the_mcp_front() {
    let (_d, gateway) = start();
    let addr = gateway.addr;
    let host = authority(addr);
    let h = host.as_str();
    let xs = |n| "x".repeat(n);
    let lines = |n: usize| (0..n).map(|i| format!("X-H{i}: 1\r\n")).collect::<String>();
    let health_base = m2_sum(&b_health(h, ""));
    let rows: Vec<(&str, Vec<u8>, Expect)> = vec![
        (
            "26",
            format!("GET /{} HTTP/1.1\r\nHost: {h}\r\n\r\n", xs(8_176)).into_bytes(),
            Expect::Json(404, r#"{"status":"not_found"}"#),
        ),
        ("27", format!("GET /{} HTTP/1.1\r\nHost: {h}\r\n\r\n", xs(8_177)).into_bytes(), E414),
        ("28", b_health(h, &format!("X-Line: {}\r\n", xs(8_182))), READY),
        ("29", b_health(h, &format!("X-Line: {}\r\n", xs(8_183))), E431),
        ("30", b_health(h, &lines(63)), READY),
        ("31", b_health(h, &lines(64)), E431),
        ("34", b_health(h, &fillers(health_base, 32_769)), READY),
        (
            "35",
            b_list(h, |mut l| {
                l.insert(4, " application/json".to_owned());
                l
            }),
            E400,
        ),
        (
            "36",
            b_list(h, |mut l| {
                l.push("Transfer-Encoding: chunked".to_owned());
                l
            }),
            E400,
        ),
        (
            "37",
            b_list(h, |mut l| {
                l[0] = "POST /mcp HTTP/2.0".to_owned();
                l
            }),
            E400,
        ),
    ];
    for (id, request, expect) in &rows {
        check(addr, id, request, expect);
    }
}

#[test]
fn the_other_refusals_of_section_2_4() {
    let (_d, gateway) = start();
    let addr = gateway.addr;
    let host = authority(addr);
    let h = host.as_str();
    let rows: Vec<(&str, Vec<u8>)> = vec![
        ("method token", format!("G(T /health/ready HTTP/1.1\r\nHost: {h}\r\n\r\n").into_bytes()),
        ("target byte", format!("GET /health/r\u{e9} HTTP/1.1\r\nHost: {h}\r\n\r\n").into_bytes()),
        ("h2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec()),
        ("space before colon", b_health(h, "X-A : 1\r\n")),
        ("name not a token", b_health(h, "X(A: 1\r\n")),
        ("bare CR", b_health(h, "X-A: 1\r2\r\n")),
        ("TE not chunked", b_health(h, "Transfer-Encoding: gzip, chunked\r\n")),
        ("CL not decimal", b_health(h, "Content-Length: +0\r\n")),
        ("two identical CL", b_health(h, "Content-Length: 0\r\nContent-Length: 0\r\n")),
    ];
    for (id, request) in &rows {
        check(addr, id, request, &E400);
    }
}

#[test]
fn later_heads_on_a_connection_are_guarded_too() {
    let (_d, gateway) = start();
    let addr = gateway.addr;
    let host = authority(addr);
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.write_all(&b_health(&host, "")).unwrap();
    let first = read_response(&mut stream, false).unwrap();
    assert_eq!((first.status, first.body.as_slice()), (200, br#"{"status":"ready"}"#.as_slice()));
    // Keep-alive: the second head on the same connection is refused.
    stream.write_all(&b_health(&host, &format!("X-Line: {}\r\n", "x".repeat(8_183)))).unwrap();
    let (bytes, closed) = read_to_close(&mut stream, Duration::from_secs(5));
    assert_empty_refusal(&bytes, closed, "HTTP/1.1 431 Request Header Fields Too Large", "keep-alive");

    // Two answered in order, then the refusal of the third head.
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut requests = b_health(&host, "");
    requests.extend(b_health(&host, ""));
    requests.extend(format!("GET /health/ready HTTP/2.0\r\nHost: {host}\r\n\r\n").into_bytes());
    stream.write_all(&requests).unwrap();
    let (bytes, closed) = read_to_close(&mut stream, Duration::from_secs(5));
    let text = String::from_utf8_lossy(&bytes);
    let parts: Vec<&str> = text.split("HTTP/1.1 ").collect();
    assert_eq!(parts.len(), 4, "{text}");
    assert!(parts[1].starts_with("200 OK") && parts[2].starts_with("200 OK"), "{text}");
    let refusal = format!("HTTP/1.1 {}", parts[3]);
    assert_empty_refusal(refusal.as_bytes(), closed, "HTTP/1.1 400 Bad Request", "pipelined");
}

#[test]
fn row_38_an_incomplete_head_is_closed_without_a_response_after_30_s() {
    let (_d, gateway) = start();
    let mut stream = TcpStream::connect(gateway.addr).unwrap();
    let sent = Instant::now();
    stream.write_all(b"POST /mcp HTTP/1.1\r\n").unwrap();
    let (bytes, closed) = read_to_close(&mut stream, Duration::from_secs(40));
    let elapsed = sent.elapsed();
    assert!(closed && bytes.is_empty(), "closed without a response: {bytes:?}");
    // §2.3: 30,000 ms from acceptance; generous slack above, none needed below.
    assert!(elapsed >= Duration::from_millis(29_500) && elapsed < Duration::from_secs(36), "{elapsed:?}");
}

#[test]
fn rows_32_and_33_the_aggregate_bound_of_mcp() {
    let (_d, gateway) = start();
    let addr = gateway.addr;
    let host = authority(addr);
    let base = m2_sum(&b_list(&host, |l| l));
    let with_fill = |target: usize| {
        b_list(&host, |mut l| {
            let fill = fillers(base, target);
            l.extend(fill.trim_end_matches("\r\n").split("\r\n").map(str::to_owned));
            l
        })
    };
    assert_eq!(m2_sum(&with_fill(32_768)), 32_768);
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.write_all(&with_fill(32_768)).unwrap();
    let ok = read_response(&mut stream, false).unwrap();
    assert_eq!(ok.status, 200, "row 32");
    let listed: serde_json::Value = serde_json::from_slice(&ok.body).unwrap();
    assert_eq!(listed["id"], 1, "row 32");
    assert!(listed["result"]["tools"].is_array(), "row 32");
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.write_all(&with_fill(32_769)).unwrap();
    let refused = read_response(&mut stream, false).unwrap();
    assert_eq!(refused.status, 431, "row 33");
    assert_eq!(refused.body, br#"{"error":"request_headers_too_large"}"#, "row 33");
    assert_eq!(refused.header("connection"), Some("close"), "row 33");
}

#[test]
fn the_fillers_hit_the_m2_sums_exactly() {
    let host = "127.0.0.1:8765";
    let base = m2_sum(&b_health(host, ""));
    for target in [32_768, 32_769] {
        let request = b_health(host, &fillers(base, target));
        assert_eq!(m2_sum(&request), target);
        let lines = String::from_utf8_lossy(&request).matches("\r\n").count() - 2;
        assert!(lines <= 64, "{lines} field lines");
    }
}
