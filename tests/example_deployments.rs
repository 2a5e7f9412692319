//! Every runnable example under `config-examples/` starts with the command line its README gives and
//! answers one call made with `ptc call` (issue 7, "each with a README of three lines and a test that starts
//! it and makes one call"). The audited example also leaves exactly one durable audit record and an event log.

mod support;

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use support::{free_port, ptc, run_with_deadline, Gateway};

/// An example copied to a temporary directory (so the repository stays clean) and moved to a free port
/// (the port is part of no pin); returns the directory, the running gateway and the endpoint.
fn start(example: &str, port: u16) -> (tempfile::TempDir, Gateway, String) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples").join(example);
    let dir = tempfile::tempdir().expect("tempdir");
    support::copy_tree(&source, dir.path());
    let free = free_port("127.0.0.1");
    let config = dir.path().join("ptc-gateway.json");
    let text = std::fs::read_to_string(&config).expect("config");
    let listen = format!("\"port\": {port}");
    assert!(text.contains(&listen), "{example} listens on {port}, as its README says");
    std::fs::write(&config, text.replace(&listen, &format!("\"port\": {free}"))).expect("write");
    let mut cmd = ptc();
    cmd.current_dir(dir.path()).args(["gateway", "ptc-gateway.json", "--env-file", "credentials.env"]);
    let gateway = Gateway::start(cmd, SocketAddr::from(([127, 0, 0, 1], free)));
    (dir, gateway, format!("http://127.0.0.1:{free}/mcp"))
}

/// `ptc call ENDPOINT TOOL --arguments ARGS` with `token`: (exit, stdout).
fn call(endpoint: &str, tool: &str, arguments: &str, token: &str) -> (Option<i32>, String) {
    let mut cmd = ptc();
    cmd.args(["call", endpoint, tool, "--arguments", arguments]).env("PTC_GATEWAY_TOKEN", token);
    let output = run_with_deadline(cmd, Duration::from_secs(30));
    (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn each_example_answers_its_readme_call() {
    // (example, port, tool, arguments, token, stdout) exactly as the examples' READMEs give them.
    let cases = [
        (
            "quickstart",
            8765,
            "greet",
            r#"{"name":"Ada"}"#,
            "quickstart-FAKE-token-0000000000000000",
            "{\"greeting\":\"Hello, Ada!\"}\n",
        ),
        (
            "audited-write",
            8766,
            "remember",
            r#"{"note":"hello"}"#,
            "audited-write-FAKE-token-00000000000000",
            "{\"accepted\":true,\"length\":5}\n",
        ),
    ];
    for (example, port, tool, arguments, token, stdout) in cases {
        let (dir, _gateway, endpoint) = start(example, port);
        assert_eq!(call(&endpoint, tool, arguments, token), (Some(0), stdout.to_owned()), "{example}");
        if example == "audited-write" {
            // The record was durable before the result was published (execution.md §10).
            let mut records = Vec::new();
            for entry in std::fs::read_dir(dir.path().join("audit")).expect("audit dir") {
                let path = entry.expect("entry").path();
                if path.extension().is_some_and(|e| e == "jsonl") {
                    let text = std::fs::read_to_string(&path).expect("audit file");
                    records.extend(text.lines().map(str::to_owned));
                }
            }
            let records: Vec<serde_json::Value> = records
                .iter()
                .filter_map(|l| serde_json::from_str(l).ok())
                .filter(|v: &serde_json::Value| v.get("call_id").is_some())
                .collect();
            assert_eq!(records.len(), 1, "one record for one call: {records:?}");
            assert_eq!(records[0]["tool_name"], "remember");
            assert_eq!(records[0]["outcome_code"], "success");
            assert_eq!(records[0]["disconnected"], false);
            assert!(dir.path().join("artifacts/events").is_dir(), "the event log is written");
        }
    }
}
