//! The official `mcp` Python SDK (2.x, pinned in tests/python/requirements.txt) as a real third-party
//! client of the gateway in 2026-07-28 mode.
//!
//! Owns: running tests/python/client.py against the real binary and asserting what the SDK parsed:
//! the era it negotiated, the `server/discover` result (http-mcp.md §10.2), the `tools/list` result
//! (§10.3) and three `tools/call` results (execution.md §7, §15.1), exactly. Does not own: the client
//! script's logic (client.py) or the deployment (fixture.rs).

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{authority, TOKEN};
use crate::{child, fixture, install};

/// Generous: a cold interpreter start plus a handful of loopback exchanges.
const DEADLINE: Duration = Duration::from_secs(90);

/// What client.py must print, value for value.
fn expected() -> Value {
    json!({
        // mode="auto" probed server/discover and adopted it; the legacy handshake never ran.
        "protocol_version": "2026-07-28",
        "legacy_handshake": false,
        "discover": fixture::discover_result(),
        "tools_list": fixture::tools_list_result(),
        "calls": {
            // execution.md §15.1 "A successful call", byte for byte in the text block.
            "shout": fixture::success(json!({"length": 12, "text": "HELLO, WORLD"}),
                                      r#"{"length":12,"text":"HELLO, WORLD"}"#),
            // The SDK mirrors `region` into Mcp-Param-Region; not header-safe, so only its base64 form
            // (http-mcp.md §9.2 step 4) can pass C3. Deterministic JSON leaves non-ASCII unescaped.
            "weather": fixture::success(json!({"region": "Hello, 世界"}), r#"{"region":"Hello, 世界"}"#),
            // execution.md §15.1 "Invalid input": minLength fails, the stream carries the fixed text.
            "shout_invalid": fixture::tool_error("Tool input did not satisfy its contract"),
        }
    })
}

#[test]
fn python_sdk_discovers_lists_and_calls() {
    let (python, script) = install::python_client();
    let (_deployment, gateway) = fixture::start(None);
    let url = format!("http://{}/mcp", authority(gateway.addr));
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(&url).env("PTC_TEST_BEARER", TOKEN).env("PYTHONDONTWRITEBYTECODE", "1");
    let run = child::run("tests/python/client.py", cmd, DEADLINE);
    let transcript = run.transcript();
    assert!(run.status.success(), "the Python SDK client failed\n{transcript}");
    let got: Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("client.py printed no JSON object ({e})\n{transcript}"));
    assert_eq!(got, expected(), "the Python SDK's view of the gateway\n{transcript}");
}
