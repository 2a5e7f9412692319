//! The official `mcp` Python SDK (2.x, pinned in config-examples/upstreams/requirements.txt, the closure of
//! the examples' time server, whose venv the tests reuse) as a real third-party client of the gateway in
//! 2026-07-28 mode.
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
        "calls": fixture::sdk_call_results(),
    })
}

#[test]
fn python_sdk_discovers_lists_and_calls() {
    let (python, script) = install::python_client();
    let (_deployment, gateway) = fixture::start(None);
    let url = format!("http://{}/mcp", authority(gateway.addr));
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(&url).env("PTC_TEST_BEARER", TOKEN).env("PYTHONDONTWRITEBYTECODE", "1");
    let (got, transcript) = child::run_json("tests/python/client.py", cmd, DEADLINE);
    assert_eq!(got, expected(), "the Python SDK's view of the gateway\n{transcript}");
}
