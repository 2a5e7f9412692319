//! http-mcp.md §4 and §12.3: the health endpoints and the router, byte for byte, over IPv4 and `::1`,
//! against the real binary.

use crate::support;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde_json::json;
use support::{authority, raw_exchange, Deployment, Gateway, Response};

/// Headers no answer may carry (http-mcp.md §1 "Response headers").
const FORBIDDEN: [&str; 6] =
    ["server", "mcp-session-id", "retry-after", "set-cookie", "vary", "access-control-allow-origin"];

fn start(ip: &str) -> (Deployment, Gateway) {
    let mut d = Deployment::baseline();
    d.gateway["listen"]["address"] = json!(ip);
    d.gateway["listen"]["allowed_origins"] = json!(["http://127.0.0.1:3000"]);
    if ip == "::1" {
        d.port = support::free_port("::1");
        d.gateway["listen"]["port"] = json!(d.port);
    }
    d.write_documents();
    let addr = SocketAddr::new(ip.parse::<IpAddr>().expect("ip"), d.port);
    let gateway = Gateway::start(d.command(), addr);
    (d, gateway)
}

fn assert_health_headers(resp: &Response, context: &str) {
    assert_eq!(resp.header("content-type"), Some("application/json; charset=utf-8"), "{context}");
    assert_eq!(resp.header("cache-control"), Some("no-store"), "{context}");
    for name in resp.header_names() {
        assert!(
            !FORBIDDEN.contains(&name) && !name.starts_with("access-control-"),
            "{context}: header {name}"
        );
    }
}

struct Row {
    id: &'static str,
    request: String,
    status: u16,
    body: &'static str,
    allow: Option<&'static str>,
    head: bool,
}

fn rows(host: &str) -> Vec<Row> {
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    vec![
        Row { id: "1 ready", request: get("/health/ready"), status: 200, body: r#"{"status":"ready"}"#, allow: None, head: false },
        Row { id: "2 live", request: get("/health/live"), status: 200, body: r#"{"status":"live"}"#, allow: None, head: false },
        Row { id: "3 HEAD", request: format!("HEAD /health/ready HTTP/1.1\r\nHost: {host}\r\n\r\n"), status: 405, body: "", allow: Some("GET"), head: true },
        Row { id: "4 POST", request: format!("POST /health/ready HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n"), status: 405, body: r#"{"status":"method_not_allowed"}"#, allow: Some("GET"), head: false },
        Row { id: "5 preflight", request: format!("OPTIONS /health/ready HTTP/1.1\r\nHost: {host}\r\nOrigin: http://127.0.0.1:3000\r\nAccess-Control-Request-Method: GET\r\n\r\n"), status: 405, body: r#"{"status":"method_not_allowed"}"#, allow: Some("GET"), head: false },
        Row { id: "6 wrong host", request: "GET /health/ready HTTP/1.1\r\nHost: evil.example\r\n\r\n".into(), status: 400, body: r#"{"status":"invalid_authority"}"#, allow: None, head: false },
        Row { id: "7 authority before method", request: "POST /health/ready HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 0\r\n\r\n".into(), status: 400, body: r#"{"status":"invalid_authority"}"#, allow: None, head: false },
        Row { id: "8 two hosts", request: format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nHost: {host}\r\n\r\n"), status: 400, body: r#"{"status":"invalid_authority"}"#, allow: None, head: false },
        Row { id: "9 origin ignored", request: format!("GET /health/ready HTTP/1.1\r\nHost: {host}\r\nOrigin: https://evil.example\r\n\r\n"), status: 200, body: r#"{"status":"ready"}"#, allow: None, head: false },
        Row { id: "10 unknown", request: get("/unknown"), status: 404, body: r#"{"status":"not_found"}"#, allow: None, head: false },
        Row { id: "11 root", request: get("/"), status: 404, body: r#"{"status":"not_found"}"#, allow: None, head: false },
        Row { id: "12 trailing slash", request: get("/health/ready/"), status: 404, body: r#"{"status":"not_found"}"#, allow: None, head: false },
        Row { id: "13 case", request: get("/MCP"), status: 404, body: r#"{"status":"not_found"}"#, allow: None, head: false },
        Row { id: "14 POST unknown", request: format!("POST /unknown HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n"), status: 404, body: r#"{"status":"not_found"}"#, allow: None, head: false },
        Row { id: "15 query", request: get("/health/ready?verbose=1"), status: 200, body: r#"{"status":"ready"}"#, allow: None, head: false },
        Row { id: "health path", request: get("/health"), status: 404, body: r#"{"status":"not_found"}"#, allow: None, head: false },
        Row { id: "percent-encoded", request: get("/%6Dcp"), status: 404, body: r#"{"status":"not_found"}"#, allow: None, head: false },
        Row { id: "21 absolute form", request: format!("GET http://{host}/health/ready HTTP/1.1\r\nHost: {host}\r\n\r\n"), status: 400, body: r#"{"status":"invalid_authority"}"#, allow: None, head: false },
    ]
}

fn check_rows(ip: &str) {
    let (_d, gateway) = start(ip);
    let host = authority(gateway.addr);
    for row in rows(&host) {
        let context = format!("{ip} row {}", row.id);
        let resp = raw_exchange(gateway.addr, row.request.as_bytes(), row.head).expect("exchange");
        assert_eq!(resp.status, row.status, "{context}");
        assert_eq!(String::from_utf8_lossy(&resp.body), row.body, "{context}");
        assert_eq!(resp.header("allow"), row.allow, "{context}");
        assert_health_headers(&resp, &context);
        if row.head {
            assert_eq!(resp.header("content-length"), Some("31"), "{context}");
        } else {
            assert_eq!(resp.header("content-length"), Some(row.body.len().to_string().as_str()), "{context}");
        }
    }
    let (code, _, stdout, _) =
        gateway.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));
    assert!(stdout.is_empty());
}

#[test]
fn health_table_over_ipv4() {
    check_rows("127.0.0.1");
}

#[test]
fn health_table_over_ipv6() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("skipped: ::1 cannot be bound on this machine");
        return;
    }
    check_rows("::1");
}

#[test]
fn mcp_method_rule_rows_16_to_19() {
    let (_d, gateway) = start("127.0.0.1");
    let host = authority(gateway.addr);
    let cases = [
        ("16 GET /mcp", format!("GET /mcp HTTP/1.1\r\nHost: {host}\r\n\r\n"), false),
        ("17 GET /mcp wrong host", "GET /mcp HTTP/1.1\r\nHost: evil.example\r\n\r\n".to_string(), false),
        ("18 DELETE", format!("DELETE /mcp HTTP/1.1\r\nHost: {host}\r\nMcp-Session-Id: abc\r\nContent-Length: 2\r\n\r\n{{}}"), true),
        ("19 OPTIONS", format!("OPTIONS /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\n\r\n{{}}"), true),
    ];
    for (id, request, close) in cases {
        let resp = raw_exchange(gateway.addr, request.as_bytes(), false).expect("exchange");
        assert_eq!(resp.status, 405, "{id}");
        assert_eq!(String::from_utf8_lossy(&resp.body), r#"{"error":"method_not_allowed"}"#, "{id}");
        assert_eq!(resp.header("allow"), Some("POST"), "{id}");
        assert_eq!(resp.header("cache-control"), Some("no-store"), "{id}");
        if close {
            assert_eq!(
                resp.header("connection"),
                Some("close"),
                "{id}: an unread body closes the connection"
            );
        }
        assert!(resp.header_names().iter().all(|n| !n.starts_with("access-control-")), "{id}");
    }
}
