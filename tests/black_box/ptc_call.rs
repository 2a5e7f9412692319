//! lifecycle.md §1.2 against the real binaries: `ptc call` on the quickstart (config-examples/quickstart)
//! and on the http-mcp.md §12.1 fixture (whose `weather` tool projects `Mcp-Param-*` headers), with the
//! exact stdout, stderr and exit status of each outcome.

use crate::support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use support::{free_port, ptc, run_with_deadline, Gateway, TOKEN};

/// The quickstart's fake token (config-examples/quickstart/credentials.env).
const QUICKSTART_TOKEN: &str = "quickstart-FAKE-token-0000000000000000";

/// The quickstart copied to a temporary directory, on a free port instead of 8765 (the port is not part
/// of any pin), started with its own command line from the README.
fn quickstart() -> (tempfile::TempDir, Gateway, String) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples/quickstart");
    let dir = tempfile::tempdir().unwrap();
    support::copy_tree(&source, dir.path());
    let port = free_port("127.0.0.1");
    let config = dir.path().join("ptc-gateway.json");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("\"port\": 8765"), "the quickstart listens on 8765");
    std::fs::write(&config, text.replace("\"port\": 8765", &format!("\"port\": {port}"))).unwrap();
    let mut cmd = ptc();
    cmd.current_dir(dir.path())
        .args(["gateway", "ptc-gateway.json", "--env-file", "credentials.env"])
        .env_remove("PTC_QUICKSTART_TOKEN");
    let gateway = Gateway::start(cmd, SocketAddr::from(([127, 0, 0, 1], port)));
    (dir, gateway, format!("http://127.0.0.1:{port}/mcp"))
}

fn call(token: Option<&str>, argv: &[&str]) -> Output {
    let mut cmd = ptc();
    cmd.arg("call").args(argv).env_remove("PTC_GATEWAY_TOKEN");
    if let Some(token) = token {
        cmd.env("PTC_GATEWAY_TOKEN", token);
    }
    run_with_deadline(cmd, Duration::from_secs(30))
}

/// (exit, stdout, stderr) of one `ptc call`.
fn outcome(output: &Output) -> (Option<i32>, String, String) {
    (
        output.status.code(),
        String::from_utf8(output.stdout.clone()).unwrap(),
        String::from_utf8(output.stderr.clone()).unwrap(),
    )
}

#[test]
fn the_quickstart_answers_ptc_call_with_the_documented_exit_codes() {
    let (_dir, _gateway, endpoint) = quickstart();
    let wrong_token = "b".repeat(40);
    let refused = format!("http://127.0.0.1:{}/mcp", free_port("127.0.0.1"));
    let refused_authority = refused.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let e = endpoint.as_str();
    type Row<'a> = (Option<&'a str>, Vec<&'a str>, (Option<i32>, String, String));
    let rows: Vec<Row> = vec![
        // Success: structuredContent as deterministic JSON + LF on stdout, exit 0.
        (
            Some(QUICKSTART_TOKEN),
            vec![e, "greet", "--arguments", r#"{"name":"Ada"}"#],
            (Some(0), "{\"greeting\":\"Hello, Ada!\"}\n".into(), String::new()),
        ),
        // A tool error (the input contract requires `name`): its one text item on stderr, exit 1.
        (
            Some(QUICKSTART_TOKEN),
            vec![e, "greet"],
            (Some(1), String::new(), "Tool input did not satisfy its contract\n".into()),
        ),
        // A wrong token: the 401 of M5, exit 2, and the token never appears.
        (
            Some(&wrong_token),
            vec![e, "greet", "--arguments", r#"{"name":"Ada"}"#],
            (Some(2), String::new(), "ptc call: tools/list answered HTTP 401: unauthorized\n".into()),
        ),
        // A refused connection.
        (
            Some(QUICKSTART_TOKEN),
            vec![&refused, "greet"],
            (Some(2), String::new(), format!("ptc call: cannot connect to {refused_authority}: connection refused\n")),
        ),
        // An unknown tool, found in the listing before any call is made.
        (
            Some(QUICKSTART_TOKEN),
            vec![e, "nope"],
            (Some(2), String::new(), "ptc call: the gateway serves no tool named nope\n".into()),
        ),
        // No token at all.
        (None, vec![e, "greet"], (Some(2), String::new(), "ptc call: PTC_GATEWAY_TOKEN is not set\n".into())),
        // A usage error: a remote endpoint.
        (
            Some(QUICKSTART_TOKEN),
            vec!["http://localhost:8765/mcp", "greet"],
            (
                Some(2),
                String::new(),
                "ptc call: usage: ENDPOINT must be http://127.0.0.1:PORT/mcp or http://[::1]:PORT/mcp (ptc call ENDPOINT TOOL [--arguments JSON])\n".into(),
            ),
        ),
    ];
    for (token, argv, expected) in rows {
        let got = outcome(&call(token, &argv));
        assert_eq!(got, expected, "ptc call {argv:?}");
        for secret in [QUICKSTART_TOKEN, wrong_token.as_str()] {
            assert!(!got.2.contains(secret), "the token reached stderr");
        }
    }
}

#[test]
fn mcp_param_headers_are_derived_from_the_listed_schema() {
    // weather projects region, days and metric (http-mcp.md §12.1); C3 refuses any mismatch with 400.
    let mut d = support::mcp::fixture("127.0.0.1");
    // Four run slots: sequential calls never meet the instant between a stream's last byte and the release
    // of its slot (execution.md §10), which a one-slot fixture would expose as a 429.
    d.gateway["admission"]["max_concurrent_runs"] = serde_json::json!(4);
    d.write_file("ptc-gateway.json", &serde_json::to_string_pretty(&d.gateway).unwrap());
    let addr = SocketAddr::from(([127, 0, 0, 1], d.port));
    let _gateway = Gateway::start(d.command(), addr);
    let endpoint = format!("http://127.0.0.1:{}/mcp", d.port);
    type Expected<'a> = (Option<i32>, &'a str, &'a str);
    let rows: &[(&str, Expected)] = &[
        (r#"{"region":"us-west1","days":3,"metric":true}"#, (Some(0), "{\"region\":\"us-west1\"}\n", "")),
        // Not header-safe: only the base64 form matches (§9.2 rule 4).
        (r#"{"region":" Grüße, 世界 "}"#, (Some(0), "{\"region\":\" Grüße, 世界 \"}\n", "")),
        // 3.0 mirrors as `3` and null expects no header: C3 passes (a mismatch would be exit 2 with
        // -32020), and the input contract (C5) then refuses the float and the null as a tool error.
        (
            r#"{"region":"eu","days":3.0,"metric":null}"#,
            (Some(1), "", "Tool input did not satisfy its contract\n"),
        ),
        // A fraction cannot be mirrored: refused before the call, exit 2.
        (
            r#"{"region":"eu","days":1.5}"#,
            (Some(2), "", "ptc call: an argument projected to an Mcp-Param header cannot be sent as one\n"),
        ),
    ];
    for (arguments, (code, stdout, stderr)) in rows {
        let got = outcome(&call(Some(TOKEN), &[&endpoint, "weather", "--arguments", arguments]));
        assert_eq!(got, (*code, stdout.to_string(), stderr.to_string()), "{arguments}");
    }
}

/// The baseline deployment also serving `refuse`, whose run fails with `fail(input.text)` (execution.md §7.2).
fn refusing_deployment() -> support::Deployment {
    let mut d = support::Deployment::baseline();
    let any = r#"{"type":"object","properties":{"text":{"type":"string"}}}"#;
    let manifest = serde_json::json!({
        "version": 1,
        "effect": "read",
        "contracts": {"input_schema": {"path": "input.json"}, "result_schema": {"path": "result.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
        "limits": {},
    });
    d.write_file("refuse/ptc.json", &serde_json::to_string_pretty(&manifest).unwrap());
    d.write_file("refuse/app.luau", "local M = {}\nfunction M.run(input) fail(input.text) end\nreturn M\n");
    d.write_file("refuse/input.json", any);
    d.write_file("refuse/result.json", any);
    let refuse = serde_json::json!({
        "name": "refuse", "title": "refuse", "description": "fixture",
        "application": {"manifest": "refuse/ptc.json"},
        "expected_application_content_digest": support::content_pin::of(&d.path("refuse/ptc.json")),
        "installation_config_pins": {}, "provider_snapshot_pins": {}
    });
    d.gateway["tools"].as_array_mut().expect("the baseline's tools").push(refuse);
    d.write_documents();
    d
}

#[test]
fn a_tool_error_prints_every_text_item() {
    // lifecycle.md §1.2: the fixed text and the run's message, each on its own line on stderr, exit 1;
    // without a message, the fixed text alone.
    let d = refusing_deployment();
    let _gateway = Gateway::start(d.command(), SocketAddr::from(([127, 0, 0, 1], d.port)));
    let endpoint = format!("http://127.0.0.1:{}/mcp", d.port);
    let rows: &[(&str, &str)] = &[
        (r#"{"text":"clock_now failed"}"#, "Tool execution failed\nclock_now failed\n"),
        (r#"{"text":""}"#, "Tool execution failed\n"),
    ];
    for (arguments, stderr) in rows {
        let got = outcome(&call(Some(TOKEN), &[&endpoint, "refuse", "--arguments", arguments]));
        assert_eq!(got, (Some(1), String::new(), stderr.to_string()), "{arguments}");
    }
}

#[test]
fn the_ipv6_loopback_endpoint_carries_its_bracketed_authority() {
    let d = support::mcp::fixture("::1");
    let addr = SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, d.port));
    let _gateway = Gateway::start(d.command(), addr);
    let endpoint = format!("http://[::1]:{}/mcp", d.port);
    let got = outcome(&call(Some(TOKEN), &[&endpoint, "echo", "--arguments", r#"{"text":"hi"}"#]));
    assert_eq!(got, (Some(0), "{\"text\":\"hi\"}\n".to_owned(), String::new()));
}

#[test]
fn sigint_ends_a_call_that_waits_with_exit_2() {
    // A peer that accepts and never answers: the client waits (no read timeout, §1.2) until interrupted.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://127.0.0.1:{}/mcp", listener.local_addr().unwrap().port());
    let mut cmd = ptc();
    cmd.args(["call", &endpoint, "greet"]).env("PTC_GATEWAY_TOKEN", QUICKSTART_TOKEN);
    let child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Reaped on every path; the accepted connection proves the client is inside its exchange.
    let gateway = Gateway { child, addr: listener.local_addr().unwrap() };
    listener.set_nonblocking(true).unwrap();
    let start = std::time::Instant::now();
    let _conn = loop {
        match listener.accept() {
            Ok((conn, _)) => break conn,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(start.elapsed() < Duration::from_secs(10), "ptc call never connected");
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("accept: {e}"),
        }
    };
    let (code, _, stdout, stderr) =
        gateway.signal_and_wait(nix::sys::signal::Signal::SIGINT, Duration::from_secs(10));
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert_eq!(String::from_utf8(stderr).unwrap(), "ptc call: interrupted\n");
}

fn list(token: Option<&str>, argv: &[&str]) -> Output {
    let mut cmd = ptc();
    cmd.arg("list").args(argv).env_remove("PTC_GATEWAY_TOKEN");
    if let Some(token) = token {
        cmd.env("PTC_GATEWAY_TOKEN", token);
    }
    run_with_deadline(cmd, Duration::from_secs(30))
}

/// lifecycle.md §1.4, vectors LS4–LS8: `ptc list` on the quickstart: the human listing, the raw listing,
/// and the failures with `ptc call`'s exit status and never the token.
#[test]
fn the_quickstart_answers_ptc_list() {
    let (_dir, _gateway, endpoint) = quickstart();
    let e = endpoint.as_str();
    let wrong_token = "c".repeat(40);
    let human = list(Some(QUICKSTART_TOKEN), &[e]);
    assert_eq!(
        outcome(&human),
        (Some(0), "greet  read   Greet — Return a greeting for the given name.\n".to_owned(), String::new()),
        "LS4"
    );
    let raw = list(Some(QUICKSTART_TOKEN), &["--json", e]);
    let (status, stdout, stderr) = outcome(&raw);
    assert_eq!((status, stderr.as_str()), (Some(0), ""), "LS5");
    let listing: serde_json::Value = serde_json::from_str(&stdout).expect("LS5: JSON");
    assert_eq!(listing["tools"][0]["name"], "greet", "LS5");
    assert_eq!(listing["tools"][0]["annotations"]["readOnlyHint"], true, "LS5");
    assert!(stdout.ends_with("}\n") && !stdout.trim_end().contains('\n'), "LS5: one line");
    let cases: &[(&str, Option<&str>, &[&str], &str)] = &[
        ("LS6 no token", None, &[e], "ptc list: PTC_GATEWAY_TOKEN is not set\n"),
        (
            "LS7 usage",
            Some(QUICKSTART_TOKEN),
            &[e, "extra"],
            "ptc list: usage: expected exactly ENDPOINT (ptc list ENDPOINT [--json])\n",
        ),
        (
            "LS7 usage",
            Some(QUICKSTART_TOKEN),
            &["--json", "--json", e],
            "ptc list: usage: --json given twice (ptc list ENDPOINT [--json])\n",
        ),
        (
            "LS8 a wrong token",
            Some(&wrong_token),
            &[e],
            "ptc list: tools/list answered HTTP 401: unauthorized\n",
        ),
    ];
    for (what, token, argv, stderr) in cases {
        let out = list(*token, argv);
        assert_eq!(outcome(&out), (Some(2), String::new(), (*stderr).to_owned()), "{what}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains(&wrong_token), "{what}: no token");
    }
}
