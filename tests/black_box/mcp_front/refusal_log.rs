//! http-mcp.md §5.1: every refused `/mcp` request leaves exactly one `debug` line naming its row, status and
//! closed code, and nothing of the request (no header value, no bearer, no body byte).

use std::time::Duration;

use super::{check, rows::Row, start_with};
use crate::support::mcp::{rpc_error, Req};
use crate::support::TOKEN;

const REFUSED: &str = "/mcp request refused";

#[test]
fn every_refused_request_leaves_one_debug_line_without_its_values() {
    let (running, addr, host) = start_with(|cmd| {
        cmd.env("PTC_LOG", "debug");
    });
    let wrong_bearer = "b".repeat(32);
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"secret-client","version":"1"}}}"#;
    let unknown_tool = Req::b_call(&host)
        .set("Mcp-Name", "nope")
        .edit(r#""name":"echo""#, r#""name":"nope""#)
        .edit(r#"{"text":"hi"}"#, r#"{"text":"a secret argument"}"#);
    let unsupported = r#"{"error":{"code":-32022,"data":{"requested":"2025-11-25","supported":["2026-07-28"]},"message":"Unsupported protocol version"},"id":1,"jsonrpc":"2.0"}"#;
    let row = |n, req, status, body: &str, close| Row {
        n,
        req,
        head_only: false,
        status,
        body: body.to_owned(),
        close,
        sse: false,
    };
    let cases = [
        row(1, Req::b_list(&host).method("GET"), 405, r#"{"error":"method_not_allowed"}"#, true),
        row(
            2,
            Req::b_list(&host).set("Authorization", &format!("Bearer {wrong_bearer}")),
            401,
            r#"{"error":"unauthorized"}"#,
            true,
        ),
        row(
            3,
            Req::b_list(&host).remove("MCP-Protocol-Version").remove("Mcp-Method").body(initialize),
            400,
            unsupported,
            false,
        ),
        row(4, unknown_tool, 200, &rpc_error(-32602, Some("1")), false),
    ];
    for case in &cases {
        check(addr, case);
    }
    let (mut gateway, deployment) = running.into_parts();
    let drained = gateway.drain_stderr();
    let (code, _, _, _) = gateway.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(20));
    assert_eq!(code, Some(0), "a clean drain");
    drop(deployment);
    let stderr = String::from_utf8(drained.join().expect("stderr reader")).expect("UTF-8 diagnostics");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(REFUSED))
        .map(|l| l.split_once(" DEBUG ").map_or(l, |(_, rest)| rest))
        .collect();
    assert_eq!(
        lines,
        [
            "ptc_gateway::mcp::step: /mcp request refused step=M1 status=405 reason=method_not_allowed",
            "ptc_gateway::mcp::step: /mcp request refused step=M5 status=401 reason=unauthorized",
            "ptc_gateway::mcp::step: /mcp request refused step=M12 status=400 code=-32022",
            "ptc_gateway::mcp::step: /mcp request refused step=C2 status=200 code=-32602",
        ],
        "one line per refusal\n{stderr}"
    );
    for value in [TOKEN, wrong_bearer.as_str(), "secret", "nope", "2025-11-25", "initialize"] {
        assert!(!stderr.contains(value), "{value:?} reached the log\n{stderr}");
    }
}
