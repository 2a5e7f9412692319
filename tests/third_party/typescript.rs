//! The official MCP TypeScript client SDK v2 (`@modelcontextprotocol/client` 2.4.0, pinned in
//! tests/typescript/package-lock.json) as a real third-party client of the gateway in 2026-07-28 mode.
//!
//! Owns: running tests/typescript/client.mjs against the real binary and asserting what the SDK parsed:
//! the revision and era it negotiated, the `server/discover` result (http-mcp.md §10.2), the `tools/list`
//! result (http-mcp.md §10.3) and the same three `tools/call` results as the Python client (execution.md
//! §7, §15.1), exactly. Does not own: the client script's logic (client.mjs) or the deployment
//! (fixture.rs).

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

#[test]
fn typescript_sdk_discovers_lists_and_calls() {
    let (node, script) = install::typescript_client();
    let (_deployment, gateway) = fixture::start(None);
    let url = format!("http://{}/mcp", authority(gateway.addr));
    let mut cmd = Command::new(node);
    cmd.arg(script).arg(&url).env("PTC_TEST_BEARER", TOKEN);
    let (got, transcript) = child::run_json("tests/typescript/client.mjs", cmd, DEADLINE);
    assert_eq!(got, expected(), "the TypeScript SDK's view of the gateway\n{transcript}");
}
