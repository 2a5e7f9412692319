//! The official MCP TypeScript client SDK v2 (`@modelcontextprotocol/client` 2.4.0, pinned in
//! tests/typescript/package-lock.json) as a real third-party client of the gateway, in each of its version
//! negotiation modes that matter to a user (docs/clients.md).
//!
//! Owns: running tests/typescript/client.mjs against the real binary and asserting what the SDK parsed:
//! with the version pinned and with `mode: "auto"`, the revision and era it negotiated, the
//! `server/discover` result (http-mcp.md §10.2), the `tools/list` result (http-mcp.md §10.3) and the same
//! three `tools/call` results as the Python client (execution.md §7, §15.1), exactly; with its default
//! settings (the 2025 `initialize` handshake), the version mismatch it reports (http-mcp.md §7.3.1). Does
//! not own: the client script's logic (client.mjs) or the deployment (fixture.rs).

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{authority, TOKEN};
use crate::{child, fixture, install};

/// Generous: a cold Node.js start plus a handful of loopback exchanges.
const DEADLINE: Duration = Duration::from_secs(90);

/// A result as the SDK hands it to the caller. Unlike the Python SDK, it consumes `resultType`: its
/// 2026-07-28 decoder refuses a `tools/list` or `tools/call` result without that member ("servers
/// implementing protocol revision 2026-07-28 MUST include it"), branches on it (`complete` here, never
/// `input_required`) and returns the rest. So its absence below proves the gateway sent
/// `"resultType": "complete"`. The `server/discover` result is not decoded that way and keeps it.
fn decoded(mut result: Value) -> Value {
    let removed = result.as_object_mut().and_then(|members| members.remove("resultType"));
    assert_eq!(removed, Some(json!("complete")), "every fixture result is complete: {result}");
    result
}

/// What client.mjs must print, value for value.
fn expected() -> Value {
    let calls = fixture::sdk_call_results();
    let calls: serde_json::Map<String, Value> = calls
        .as_object()
        .expect("calls by label")
        .iter()
        .map(|(k, v)| (k.clone(), decoded(v.clone())))
        .collect();
    json!({
        // The pinned mode sent server/discover at 2026-07-28 and adopted it; `modern` is the SDK's name
        // for a 2026-07-28+ connection (the legacy `initialize` handshake never ran).
        "protocol_version": "2026-07-28",
        "era": "modern",
        "discover": fixture::discover_result(),
        "tools_list": decoded(fixture::tools_list_result()),
        "calls": calls,
    })
}

/// Runs client.mjs in `mode` against a fresh fixture gateway.
fn run_client(mode: &str) -> child::Finished {
    let (node, script) = install::typescript_client();
    let (_deployment, gateway) = fixture::start(None);
    let url = format!("http://{}/mcp", authority(gateway.addr));
    let mut cmd = Command::new(node);
    cmd.arg(script).arg(&url).arg(mode).env("PTC_TEST_BEARER", TOKEN);
    child::run("tests/typescript/client.mjs", cmd, DEADLINE)
}

/// The JSON object a successful run printed.
fn printed(run: &child::Finished) -> Value {
    let transcript = run.transcript();
    assert!(run.status.success(), "client.mjs failed\n{transcript}");
    serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("client.mjs printed no JSON object ({e})\n{transcript}"))
}

#[test]
fn typescript_sdk_discovers_lists_and_calls() {
    let run = run_client("pin");
    assert_eq!(printed(&run), expected(), "the TypeScript SDK's view of the gateway\n{}", run.transcript());
}

#[test]
fn typescript_sdk_in_auto_mode_discovers_lists_and_calls() {
    // `versionNegotiation: { mode: "auto" }` probes `server/discover` first and adopts 2026-07-28: the same
    // view as the pinned run.
    let run = run_client("auto");
    assert_eq!(printed(&run), expected(), "the TypeScript SDK in auto mode\n{}", run.transcript());
}

#[test]
fn typescript_sdk_with_its_defaults_reports_the_unsupported_version() {
    // The default mode (`legacy`) sends the 2025 `initialize` (id 0, no `_meta`); the gateway answers 400
    // -32022 with the served versions (http-mcp.md §7.3.1, §12.12). The SDK's transport hands a 400 body to
    // its JSON-RPC layer only for a 2026-07-28 request, so it reports the answer as an HTTP error whose
    // message carries the whole body: a version mismatch naming 2026-07-28, no longer "Invalid params".
    let run = run_client("default");
    let transcript = run.transcript();
    assert_eq!(run.status.code(), Some(1), "client.mjs must fail\n{transcript}");
    let mut got: Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("client.mjs printed no JSON object ({e})\n{transcript}"));
    let detail = got.as_object_mut().and_then(|o| o.remove("detail"));
    assert!(detail.is_some(), "the stack is printed for the transcript\n{transcript}");
    let body = r#"{"error":{"code":-32022,"data":{"requested":"2025-11-25","supported":["2026-07-28"]},"message":"Unsupported protocol version"},"id":0,"jsonrpc":"2.0"}"#;
    let expected = json!({
        "error": "SdkHttpError",
        "code": "CLIENT_HTTP_NOT_IMPLEMENTED",
        "message": format!("Error POSTing to endpoint: {body}"),
        "data": {"status": 400, "statusText": "Bad Request", "text": body},
    });
    assert_eq!(got, expected, "what the SDK reports with its defaults\n{transcript}");
}
