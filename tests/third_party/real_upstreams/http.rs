//! The Streamable HTTP upstream `tests/upstreams/http_time_server.py` (the pinned `mcp` 2.x SDK serving
//! `mcp-server-time`'s tools) and its static credential check, spoken to with raw HTTP/1.1: the library
//! is not involved, so this proves the upstream that the gateway tests (`real_upstreams_gateway`) use.
//!
//! Owns: a table of requests with their exact statuses, and the script's exit on stdin end of file
//! (starting it is `support::http_time_server`).

use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use super::installed;
use crate::support::http_time_server::HttpTimeServer;
use crate::support::{authority, raw_exchange};

const TOKEN: &str = "upstream-secret-7f3a";
const META: &str = r#"{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"ptc-gateway","version":"0.1.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;

type Server = HttpTimeServer;

fn start() -> Server {
    let (python, script) = installed::http_time_server();
    HttpTimeServer::start(&python, &script, TOKEN)
}

/// One POST to `/mcp` with `Connection: close`, so the body (JSON or an SSE stream) ends at EOF.
fn post(server: &Server, headers: &[&str], body: &str) -> crate::support::Response {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        authority(server.addr),
        body.len()
    );
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    raw_exchange(server.addr, request.as_bytes(), false).unwrap()
}

fn modern(method: &str, extra: &str) -> String {
    format!(r#"{{"id":1,"jsonrpc":"2.0","method":"{method}","params":{{"_meta":{META}{extra}}}}}"#)
}

#[test]
fn http_time_server_requires_its_static_bearer() {
    let server = start();
    let discover = modern("server/discover", "");
    let bearer = format!("Authorization: Bearer {TOKEN}");
    let wrong = format!("Authorization: Bearer {TOKEN}x");
    let basic = "Authorization: Basic dXNlcjpwYXNz".to_owned();
    let era = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: server/discover"];
    // (label, headers): every request without exactly the configured bearer is refused before the app.
    let refused: [(&str, Vec<&str>); 4] = [
        ("no credential", era.to_vec()),
        ("wrong token", [&era[..], &[wrong.as_str()]].concat()),
        ("wrong scheme", [&era[..], &[basic.as_str()]].concat()),
        ("two credentials", [&era[..], &[bearer.as_str(), bearer.as_str()]].concat()),
    ];
    for (label, headers) in &refused {
        let response = post(&server, headers, &discover);
        assert_eq!(response.status, 401, "{label}");
        assert_eq!(response.header("www-authenticate"), Some("Bearer"), "{label}");
        assert_eq!(response.body, br#"{"error":"unauthorized"}"#, "{label}");
    }

    let response = post(&server, &[&era[..], &[bearer.as_str()]].concat(), &discover);
    assert_eq!(response.status, 200);
    let answer: Json = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(answer["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "mcp-time", "version": "2026.10.19"})
    );

    let call_headers =
        ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: get_current_time", &bearer];
    let call = modern("tools/call", r#","name":"get_current_time","arguments":{"timezone":"UTC"}"#);
    let response = post(&server, &call_headers, &call);
    assert_eq!(response.status, 200);
    let answer: Json = serde_json::from_slice(&response.body).unwrap();
    let value = &answer["result"]["structuredContent"];
    assert_eq!((&value["timezone"], &value["is_dst"]), (&json!("UTC"), &json!(false)));

    // The legacy era is served too: `initialize` opens a session (an SSE answer, then the close).
    let initialize = r#"{"id":1,"jsonrpc":"2.0","method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"ptc-gateway","version":"0.1.0"},"protocolVersion":"2025-11-25"}}"#;
    let response = post(&server, &[bearer.as_str()], initialize);
    assert_eq!(response.status, 200);
    assert!(response.header("mcp-session-id").is_some_and(|id| !id.is_empty()));
    let body = String::from_utf8_lossy(&response.body);
    assert!(body.contains(r#""protocolVersion":"2025-11-25""#), "{body}");
    assert!(body.contains(r#""serverInfo":{"name":"mcp-time","version":"2026.10.19"}"#), "{body}");

    stops_at_end_of_stdin(server);
}

/// Closing stdin ends the server (so a dead harness leaves nothing behind), within a deadline.
fn stops_at_end_of_stdin(mut server: Server) {
    drop(server.child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the server did not exit after stdin closed");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}
