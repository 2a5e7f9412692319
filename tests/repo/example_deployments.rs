//! Every runnable example under `config-examples/` starts with the command line its README gives and
//! answers one call made with `ptc call` (issue 7, "each with a README of three lines and a test that starts
//! it and makes one call"). The audited example also leaves exactly one durable audit record and an event log.

use crate::support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use support::{free_port, ptc, run_with_deadline, Gateway};

/// An example copied to a temporary directory, so the repository stays clean; returns the directory and
/// the copy. The copy has nothing of the repository beside it but `config-examples/upstreams` (a link to
/// the repository's, holding its installs): an example that named anything else outside its own directory,
/// `tests/` above all, would not start. The relative upstream launchers resolve to the same bytes, so the
/// committed pins hold.
fn copy_example(example: &str) -> (tempfile::TempDir, PathBuf) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    let examples = dir.path().join("config-examples");
    let at = examples.join(example);
    std::fs::create_dir_all(&at).expect("mkdir");
    std::os::unix::fs::symlink(support::example_upstreams(), examples.join("upstreams")).expect("link");
    support::copy_tree(&repo.join("config-examples").join(example), &at);
    (dir, at)
}

/// An example copied (`copy_example`) and moved to a free port (the port is part of no pin); returns the
/// directory, the copy, the running gateway and the endpoint.
fn start(example: &str, port: u16) -> (tempfile::TempDir, PathBuf, Gateway, String) {
    let (dir, at) = copy_example(example);
    let free = free_port("127.0.0.1");
    let config = at.join("ptc-gateway.json");
    let text = std::fs::read_to_string(&config).expect("config");
    let listen = format!("\"port\": {port}");
    assert!(text.contains(&listen), "{example} listens on {port}, as its README says");
    std::fs::write(&config, text.replace(&listen, &format!("\"port\": {free}"))).expect("write");
    let mut cmd = ptc();
    cmd.current_dir(&at).args(["gateway", "ptc-gateway.json", "--env-file", "credentials.env"]);
    let gateway = Gateway::start(cmd, SocketAddr::from(([127, 0, 0, 1], free)));
    (dir, at, gateway, format!("http://127.0.0.1:{free}/mcp"))
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
        let (_dir, at, _gateway, endpoint) = start(example, port);
        assert_eq!(call(&endpoint, tool, arguments, token), (Some(0), stdout.to_owned()), "{example}");
        if example == "audited-write" {
            // The record was durable before the result was published (execution.md §10).
            let mut records = Vec::new();
            for entry in std::fs::read_dir(at.join("audit")).expect("audit dir") {
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
            assert!(at.join("artifacts/events").is_dir(), "the event log is written");
        }
    }
}

/// two-upstreams (issue 7): its README call composes server-everything's `echo` and mcp-server-time's
/// `get_current_time` in one mission; the time varies, so the shape is checked (the four fields, UTC).
#[test]
fn two_upstreams_answers_its_readme_call() {
    let (_dir, _at, _gateway, endpoint) = start("two-upstreams", 8767);
    let arguments = r#"{"message":"hello","timezone":"UTC"}"#;
    let (status, stdout) =
        call(&endpoint, "timestamped_echo", arguments, "two-upstreams-FAKE-token-00000000000000");
    assert_eq!(status, Some(0), "{stdout}");
    assert!(stdout.ends_with('\n'), "{stdout:?}");
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(value["echo"], "Echo: hello", "{value}");
    let time = value["time"].as_object().expect("time");
    let fields: Vec<&str> = time.keys().map(String::as_str).collect();
    assert_eq!(fields, ["datetime", "day_of_week", "is_dst", "timezone"], "{value}");
    assert_eq!(time["timezone"], "UTC");
    assert_eq!(time["is_dst"], false);
    assert!(time["datetime"].as_str().is_some_and(|d| d.ends_with("+00:00")), "{value}");
}

/// debug (issue 15): the main gateway traces every call; the analysis gateway's cold tools read its traces
/// anew on every call: `hist.counters` counts 0 runs, then 1 after one more main call (traces.md H1), and
/// `analysis_api` lists the four `hist` tools. The analysis gateway refuses to start before the main
/// gateway has created its trace directory (traces.md H7).
#[test]
fn debug_analysis_counts_the_main_gateways_runs() {
    let (_dir, at) = copy_example("debug");
    let mut ports = Vec::new();
    for (part, port) in [("main", 8768), ("analysis", 8769)] {
        let config = at.join(part).join("ptc-gateway.json");
        let text = std::fs::read_to_string(&config).expect("config");
        let listen = format!("\"port\": {port}");
        assert!(text.contains(&listen), "{part} listens on {port}, as the README says");
        let free = free_port("127.0.0.1");
        std::fs::write(&config, text.replace(&listen, &format!("\"port\": {free}"))).expect("write");
        ports.push(free);
    }
    let command = |part: &str| {
        let mut cmd = ptc();
        cmd.current_dir(at.join(part)).args(["gateway", "ptc-gateway.json", "--env-file", "credentials.env"]);
        cmd
    };
    // H7: no trace directory yet, so the analysis gateway refuses before binding its port.
    let refused = run_with_deadline(command("analysis"), Duration::from_secs(30));
    support::assert_startup_error(&refused, "provider_runtime_unavailable", "analysis before main");
    assert!(std::net::TcpListener::bind(("127.0.0.1", ports[1])).is_ok(), "the port was never bound");
    // At `info` a refused start explains itself on stderr (lifecycle.md §1.5), which the panic then shows.
    let explained = |part: &str| {
        let mut cmd = command(part);
        cmd.env("PTC_LOG", "info");
        cmd
    };
    let _main = Gateway::start(explained("main"), SocketAddr::from(([127, 0, 0, 1], ports[0])));
    let _analysis = Gateway::start(explained("analysis"), SocketAddr::from(([127, 0, 0, 1], ports[1])));
    let (main, analysis) =
        (format!("http://127.0.0.1:{}/mcp", ports[0]), format!("http://127.0.0.1:{}/mcp", ports[1]));
    let (main_token, analysis_token) =
        ("debug-main-FAKE-token-0000000000000000", "debug-analysis-FAKE-token-000000000000");
    let counters = r#"{"source":"return tool(\"hist.counters\", {}).value"}"#;
    let none = "{\"ok\":true,\"value\":{\"by_tool\":{},\"runs\":0}}\n";
    assert_eq!(call(&analysis, "analysis_eval", counters, analysis_token), (Some(0), none.to_owned()));
    let (status, time) = call(&main, "clock_now", r#"{"timezone":"UTC"}"#, main_token);
    assert_eq!(status, Some(0), "{time}");
    let one = "{\"ok\":true,\"value\":{\"by_tool\":{\"clock_now\":{\"success\":1}},\"runs\":1}}\n";
    assert_eq!(call(&analysis, "analysis_eval", counters, analysis_token), (Some(0), one.to_owned()));
    // The README's replay (replay.md): the recorded run again, its time answered from the trace.
    let mut replay = ptc();
    replay.current_dir(at.join("main")).args(["replay", "ptc-gateway.json", "artifacts/traces"]);
    let replayed = run_with_deadline(replay, Duration::from_secs(30));
    assert_eq!(
        (replayed.status.code(), String::from_utf8_lossy(&replayed.stdout).into_owned()),
        (Some(0), "1 runs: 1 same, 0 different, 0 diverged, 0 not replayable\n".to_owned()),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let (status, api) = call(&analysis, "analysis_api", "{}", analysis_token);
    assert_eq!(status, Some(0), "{api}");
    let api: serde_json::Value = serde_json::from_str(&api).expect("json");
    let aliases: Vec<&str> =
        api["tools"].as_array().expect("tools").iter().filter_map(|t| t["alias"].as_str()).collect();
    assert_eq!(aliases, ["hist.counters", "hist.open", "hist.read", "hist.runs"], "{api}");
    assert_eq!(api["mission"], "hist");
}

/// agent (issue 16, models.md vector E1): the example's README call against the scripted fixture running
/// the example's own `fixture-script.json`. The fixture listens on a free port, so the copy's `model`
/// endpoint is moved there and its installation pin refreshed from `--print-pins` (which needs no model
/// key); the mission composes the real mcp-server-time, whose result the second request carries.
#[test]
fn agent_answers_its_readme_call_against_the_fixture() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join("config-examples/agent/fixture-script.json")).expect("script"),
    )
    .expect("json");
    let up = support::openai::OpenAiFixture::start(script["answers"].as_array().expect("answers"));
    let (_dir, at) = copy_example("agent");
    let host = at.join("ptc-host.json");
    let text = std::fs::read_to_string(&host).expect("host");
    assert!(text.contains("\"endpoint\": \"http://127.0.0.1:8800/v1\""), "the README's fixture port");
    std::fs::write(&host, text.replace("127.0.0.1:8800", &format!("127.0.0.1:{}", up.port))).expect("write");
    let free = free_port("127.0.0.1");
    let config = at.join("ptc-gateway.json");
    let mut gateway_doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("config")).expect("json");
    assert_eq!(gateway_doc["listen"]["port"], 8770, "agent listens on 8770, as its README says");
    gateway_doc["listen"]["port"] = serde_json::json!(free);
    std::fs::write(&config, serde_json::to_string_pretty(&gateway_doc).expect("json")).expect("write");
    let mut discover = ptc();
    discover.current_dir(&at).args(["gateway", "ptc-gateway.json", "--print-pins"]);
    let out = run_with_deadline(discover, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let pins: serde_json::Value = serde_json::from_slice(&out.stdout).expect("pins");
    assert_eq!(pins["ask_time"]["provider_snapshot_pins"], gateway_doc["tools"][0]["provider_snapshot_pins"]);
    assert_eq!(
        pins["ask_time"]["installation_config_pins"]["time"],
        gateway_doc["tools"][0]["installation_config_pins"]["time"]
    );
    gateway_doc["tools"][0]["installation_config_pins"] =
        pins["ask_time"]["installation_config_pins"].clone();
    std::fs::write(&config, serde_json::to_string_pretty(&gateway_doc).expect("json")).expect("write");
    let mut cmd = ptc();
    cmd.current_dir(&at).args(["gateway", "ptc-gateway.json", "--env-file", "credentials.env"]);
    let _gateway = Gateway::start(cmd, SocketAddr::from(([127, 0, 0, 1], free)));
    let endpoint = format!("http://127.0.0.1:{free}/mcp");
    let arguments = r#"{"question":"Which timezone does the clock report?"}"#;
    assert_eq!(
        call(&endpoint, "ask_time", arguments, "agent-FAKE-token-000000000000000000000000"),
        (Some(0), "{\"answer\":\"The clock upstream reports the timezone UTC.\",\"turns\":2}\n".to_owned())
    );
    let requests = up.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["headers"]["authorization"], "Bearer sk-FAKE-model-key-for-the-local-fixture");
    let system = requests[0]["body"]["messages"][0]["content"].as_str().expect("system message");
    assert!(
        system.contains(concat!(
            "declare function tool(alias: \"time.now\", arguments: { timezone: string }): ",
            "ToolResult<{ datetime: string, day_of_week: string, is_dst: boolean, timezone: string }>"
        )),
        "{system}"
    );
    assert_eq!(
        requests[1]["body"]["messages"][3],
        serde_json::json!({"role": "tool", "tool_call_id": "run-1", "content": "{\"ok\":true,\"value\":\"UTC\"}"})
    );
}

/// published-briefs (issue 17, scope 5): the README's call over the official filesystem server on two
/// read-only roots, a file one root lacks, and a path that leaves the `notes` root.
#[test]
fn published_briefs_answers_its_readme_call() {
    let (_dir, _at, _gateway, endpoint) = start("published-briefs", 8771);
    let token = "published-briefs-FAKE-token-0000000000";
    let cases = [
        (
            r#"{"path":"brief.txt"}"#,
            "{\"notes\":\"Quarterly brief: ship the gateway, keep the audit.\\n\",\"policy\":\"Policy: every write is audited; secrets never leave the host.\\n\"}\n",
        ),
        (r#"{"path":"draft.txt"}"#, "{\"notes\":\"A second note, with no policy beside it.\\n\",\"policy\":null}\n"),
        (
            r#"{"path":"../policy/brief.txt"}"#,
            "{\"notes\":null,\"policy\":\"Policy: every write is audited; secrets never leave the host.\\n\"}\n",
        ),
    ];
    for (arguments, stdout) in cases {
        assert_eq!(call(&endpoint, "brief", arguments, token), (Some(0), stdout.to_owned()), "{arguments}");
    }
}

/// Issue 25: examples run side by side, each on the port its document and README give. The two pairs that
/// once shared a port (agent and debug/main, published-briefs and debug/analysis) run at once, unmoved,
/// each from its own copy, and all four are ready together.
#[test]
fn examples_run_side_by_side_on_their_own_ports() {
    let parts = [
        ("debug", "main", 8768),
        ("debug", "analysis", 8769),
        ("agent", "", 8770),
        ("published-briefs", "", 8771),
    ];
    for (_, _, port) in parts {
        assert!(
            std::net::TcpListener::bind(("127.0.0.1", port)).is_ok(),
            "port {port} is taken on this machine; this test needs it free"
        );
    }
    let mut copies = std::collections::BTreeMap::new();
    let mut running = Vec::new();
    // In this order: the analysis gateway needs the main gateway's trace directory (traces.md H7).
    for (example, part, port) in parts {
        let (_, at) = copies.entry(example).or_insert_with(|| copy_example(example));
        let at = at.join(part);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(at.join("ptc-gateway.json")).expect("config"))
                .expect("json");
        assert_eq!(doc["listen"]["port"], port, "{example}/{part} listens on {port}, as its README says");
        let mut cmd = ptc();
        cmd.current_dir(&at).args(["gateway", "ptc-gateway.json", "--env-file", "credentials.env"]);
        running.push(Gateway::start(cmd, SocketAddr::from(([127, 0, 0, 1], port))));
    }
    for gateway in &running {
        let ready = support::http_get(gateway.addr, "/health/ready").expect("readiness");
        assert_eq!(
            (ready.status, ready.body.as_slice()),
            (200, &br#"{"status":"ready"}"#[..]),
            "{}",
            gateway.addr
        );
    }
}
