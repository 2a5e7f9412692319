//! Served tools reaching stdio upstreams end to end, against the real binary and the fault fixture
//! (providers.md §7–§13, §16.2 at gateway level; execution.md §12.5, §13; pins.md §9–§10).
//!
//! Every scenario ends by asserting that no process of any group the fixture's marker recorded remains
//! and that the gateway wrote nothing on stdout.

use crate::support;
use crate::support::pcc_client as client;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use support::providers::{
    admission_held_by_a_holder, call, mission_args, mission_error, structured, wait, Fx,
};
use support::sse::{chunked, fill, first_read, parse_stream, read_stream, success};
use support::{http_get, Gateway};

fn start(fx: &Fx) -> Gateway {
    start_with(fx, "none")
}

fn start_with(fx: &Fx, flags: &str) -> Gateway {
    Gateway::start(fx.command(flags), fx.addr())
}

/// SIGTERM, exit `code`, stdout empty, every recorded process gone, and no answer counted as
/// `publication_failed` (every test here reads its answers whole; audit-events.md §3.5).
fn stop(fx: &Fx, gateway: Gateway, code: i32) {
    let (status, _, out, err) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
    assert_eq!(status, Some(code), "exit status; stderr: {}", String::from_utf8_lossy(&err));
    assert!(out.is_empty(), "stdout must stay empty");
    fx.assert_all_gone();
    let failed: Vec<Value> = fx.events().into_iter().filter(|e| e["kind"] == "publication_failed").collect();
    assert_eq!(failed, Vec::<Value>::new(), "answers read whole are published");
}

/// A `tools/call` on a kept-alive connection; the body of its stream, read exactly.
fn exact(fx: &Fx, tool: &str, id: usize, arguments: &Value) -> String {
    let mut s = TcpStream::connect(fx.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(&support::tools_call_request(fx.addr(), tool, id, &arguments.to_string(), false)).unwrap();
    let stream = read_stream(&mut s);
    assert_eq!(stream.status, 200);
    String::from_utf8(stream.body()).unwrap()
}

#[test]
fn forward_and_mission_tools_answer_exact_streams() {
    let mut fx = Fx::new("modern");
    let pins = fx.pin();
    assert_eq!(pins["fwd"]["installation_config_pins"].as_object().unwrap().len(), 1);
    assert!(pins["mission"]["provider_snapshot_pins"]["mission/fx"].as_str().unwrap().starts_with("sha256:"));
    let gateway = start(&fx);
    // execution.md §13: the forward form hands the decoded arguments over and returns structuredContent.
    assert_eq!(exact(&fx, "fwd", 1, &json!({"a": [1, "x"]})), success(1, r#"{"a":[1,"x"]}"#));
    // §12.5: the table `tool` returned, exactly.
    let got = exact(&fx, "mission", 2, &mission_args("fx.echo", json!({"k": true})));
    assert_eq!(got, success(2, r#"{"content":[],"ok":true,"value":{"k":true}}"#));
    // `nil` arguments are `{}`; an alias the mission is not granted never reaches a transport.
    let got = exact(&fx, "mission", 3, &json!({"alias": "fx.echo"}));
    assert_eq!(got, success(3, r#"{"content":[],"ok":true,"value":{}}"#));
    let (_, text) = call(fx.addr(), "mission", 4, &mission_args("nope", json!({})));
    assert_eq!(mission_error(&text), ("tool_not_granted".into(), "false".into(), false));
    let (_, text) = call(fx.addr(), "mission", 5, &mission_args("fx.echo", json!([1])));
    assert_eq!(mission_error(&text), ("mcp_request_invalid".into(), "false".into(), false));
    // Three `tools/call` reached the fixture, each with a fresh parent id in the traceparent.
    let parents = fx.traceparents(3);
    for tp in &parents {
        assert!(tp.len() == 55 && tp.starts_with("00-") && tp.ends_with("-01"), "{tp}");
    }
    assert_ne!(parents[1][36..52], parents[2][36..52]);
    // One spawn per tool at startup, none per call (A1, F34).
    assert_eq!(fx.marker().iter().filter(|e| e["event"] == "spawn").count(), 2);
    stop(&fx, gateway, 0);
    let faults: Vec<Value> = fx.events().into_iter().filter(|e| e["kind"] == "transport").collect();
    assert_eq!(faults.len(), 2, "one transport record per transport: {faults:?}");
    assert!(faults.iter().all(|f| f["fault"] == "close" && f["exit_status"] == 0), "{faults:?}");
}

/// docs/security.md section 9: an upstream answer whose text imitates the gateway's own framing (an SSE event
/// boundary, an `event:` and a `data:` line carrying a JSON-RPC frame for the same id, a CR, an error
/// frame) stays inside the result's value: the client's stream is the one success message, exactly, with
/// every line break escaped inside the JSON string.
#[test]
fn upstream_text_that_imitates_frames_stays_inside_the_result() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start(&fx);
    let forged =
        "x\n\nevent: message\ndata: {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"isError\":false}}\n\n\
                  \r\ndata: {\"error\":{\"code\":-32603},\"id\":1,\"jsonrpc\":\"2.0\"}\r\n\r\n: comment\n";
    let value = r#"{"t":"x\n\nevent: message\ndata: {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"isError\":false}}\n\n\r\ndata: {\"error\":{\"code\":-32603},\"id\":1,\"jsonrpc\":\"2.0\"}\r\n\r\n: comment\n"}"#;
    // The forward form hands the arguments to the fixture's `echo`, which answers them as its
    // structuredContent: the forged text comes back from the upstream.
    let got = exact(&fx, "fwd", 1, &json!({ "t": forged }));
    assert_eq!(got, success(1, value));
    assert_eq!(got.matches("\ndata: ").count(), 1, "{got}");
    assert_eq!(got.matches("\nevent: message").count(), 1, "{got}");
    stop(&fx, gateway, 0);
}

/// execution.md §12.5 vector API8: `mission("default"):api()` through the gateway lists the mission's
/// function with its doc and its granted aliases (here `config.allow` of two) with the description and
/// `inputSchema` the fixture listed (and the snapshot pin covers) and the operator's effect; no upstream
/// request is made for it.
#[test]
fn api8_the_mission_api_lists_granted_tools_from_the_pinned_listing() {
    let mut fx = Fx::new("modern");
    let app = "local M = {}\nfunction M.run(input)\n  return mission(\"default\"):api()\nend\nreturn M\n";
    fx.d.write_file("mission/app.luau", app);
    let calls = "local M = {}\n-- Calls one granted tool.\nfunction M.run(input)\n  return tool(input.alias, input.args)\nend\nreturn M\n";
    fx.d.write_file("mission/calls.luau", calls);
    let path = fx.d.path("mission/ptc.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    manifest["providers"]["mission"] = json!([{"name": "fx", "config": {"allow": ["fx.echo", "fx.big"]}}]);
    fx.d.write_file("mission/ptc.json", &manifest.to_string());
    fx.pin();
    let gateway = start(&fx);
    let want = concat!(
        r#"{"functions":[{"doc":"Calls one granted tool.","name":"calls.run"}],"mission":"default","tools":["#,
        r#"{"alias":"fx.big","description":"big","effect":"read","input_schema":{"type":"object"}},"#,
        r#"{"alias":"fx.echo","description":"echo","effect":"read","input_schema":{"type":"object"}}]}"#
    );
    assert_eq!(exact(&fx, "mission", 1, &json!({})), success(1, want));
    assert_eq!(fx.calls_received(), 0, "api() sends nothing upstream");
    stop(&fx, gateway, 0);
}

#[test]
fn f1_f2_f6_a_lost_child_fences_the_domain_with_records() {
    // (tool, class the mission sees, transport fault, exit status, a stderr line of the fixture)
    let table = [
        ("fx.crash", "mcp_transport_error", "server_exit", json!(3), Some("crashing now")),
        ("fx.segv", "mcp_transport_error", "server_signal", Value::Null, None),
        ("fx.garbage", "mcp_protocol_error", "protocol_error", json!(0), None),
    ];
    for (alias, class, fault, exit_status, stderr) in table {
        let mut fx = Fx::new("modern");
        fx.pin();
        let gateway = start(&fx);
        let (_, text) = call(fx.addr(), "mission", 1, &mission_args(alias, json!({})));
        assert_eq!(mission_error(&text), (class.into(), "unknown".into(), false), "{alias}");
        let ready = wait("ready 503", Duration::from_secs(1), || {
            http_get(fx.addr(), "/health/ready").ok().filter(|r| r.status == 503)
        });
        assert_eq!(ready.status, 503);
        assert_eq!(http_get(fx.addr(), "/health/live").unwrap().status, 200);
        let (status, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
        assert_eq!(status, 503, "{text}");
        assert!(text.contains("-31998"), "{text}");
        let transport =
            fx.wait_event("transport record", |e| e["kind"] == "transport" && e["tool"] == "mission");
        assert_eq!(
            (transport["fault"].clone(), transport["exit_status"].clone()),
            (json!(fault), exit_status)
        );
        let readiness =
            fx.wait_event("readiness", |e| e["kind"] == "readiness" && e["transition"] == "not_ready");
        assert_eq!(
            (readiness["cause"].clone(), readiness["tool"].clone(), readiness["provider"].clone()),
            (json!("provider_runtime_lost"), json!("mission"), json!("fx"))
        );
        let tail = fx.wait_event("stderr tail", |e| e["kind"] == "stderr_tail" && e["tool"] == "mission");
        if let Some(line) = stderr {
            assert!(tail["text"].as_str().unwrap().contains(line), "{tail}");
        }
        // Order of §12.1 step 4: transport, readiness, stderr_tail.
        let kinds: Vec<String> = fx
            .events()
            .into_iter()
            .filter(|e| e["tool"] == "mission" && e["kind"] != "busy")
            .map(|e| e["kind"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(kinds[..3], ["transport", "readiness", "stderr_tail"], "{kinds:?}");
        stop(&fx, gateway, 0);
    }
}

/// providers.md §12.2 (issue 27 review): the `transport` record of a loss from a framing violation says
/// `protocol_error` only; the `warn` line of the loss names the rule broken, and none of the line's text.
#[test]
fn the_loss_line_names_the_violation_and_not_the_text() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let mut cmd = fx.command("none");
    cmd.env("PTC_LOG", "ptc_gateway=warn");
    let gateway = Gateway::start(cmd, fx.addr());
    let (_, text) = call(fx.addr(), "mission", 1, &mission_args("fx.garbage", json!({})));
    assert_eq!(mission_error(&text), ("mcp_protocol_error".into(), "unknown".into(), false), "{text}");
    let transport = fx.wait_event("transport record", |e| e["kind"] == "transport" && e["tool"] == "mission");
    assert_eq!(transport["fault"], json!("protocol_error"));
    let (_, _, _, err) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
    let err = String::from_utf8_lossy(&err);
    let lines: Vec<&str> =
        err.lines().filter_map(|l| l.split_once("ptc_gateway::providers::owner: ")).map(|(_, r)| r).collect();
    assert_eq!(
        lines,
        ["provider transport lost; fenced tool=mission provider=fx \
             violation=the line is not strict JSON: syntax at byte 0 (line 1, column 1)"],
        "{err}"
    );
    assert!(!err.contains("hello world"), "{err}");
    fx.assert_all_gone();
}

/// §4.3 and §12.1: EPIPE on a child that closed its stdin but lives on is transport-owner loss with
/// fault `transport_error`; the domain is fenced. The close procedure still reaps the child (SIGTERM), so
/// the fence alone does not make the exit unclean (lifecycle.md §7.4): exit 0.
#[test]
fn a_child_that_closes_its_stdin_fences_with_transport_error_and_still_exits_0() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start(&fx);
    let addr = fx.addr();
    let held = std::thread::spawn(move || call(addr, "mission", 1, &mission_args("fx.closein", json!({}))));
    fx.wait_marker("stdin closed", |e| e.iter().any(|e| e["event"] == "stdin_closed"));
    // The next request cannot be written: the write fails and fences the domain.
    let (_, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
    assert_eq!(mission_error(&text).0, "mcp_transport_error", "{text}");
    let (_, text) = held.join().unwrap();
    assert_eq!(mission_error(&text), ("mcp_transport_error".into(), "unknown".into(), false), "{text}");
    wait("ready 503", Duration::from_secs(1), || {
        http_get(fx.addr(), "/health/ready").ok().filter(|r| r.status == 503)
    });
    let readiness =
        fx.wait_event("readiness", |e| e["kind"] == "readiness" && e["transition"] == "not_ready");
    assert_eq!(readiness["cause"], "provider_runtime_lost", "{readiness}");
    stop(&fx, gateway, 0);
    let transport = fx.wait_event("transport", |e| e["kind"] == "transport" && e["tool"] == "mission");
    assert_eq!(
        (transport["fault"].clone(), transport["exit_status"].clone()),
        (json!("transport_error"), json!(0))
    );
}

fn counter(fx: &Fx, kind: &str) -> u64 {
    fx.events()
        .iter()
        .filter(|e| e["kind"] == kind && e["tool"] == "mission" && e["provider"] == "fx")
        .map(|e| e["count"].as_u64().unwrap())
        .sum()
}

fn sigusr1(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGUSR1);
}

/// The pid of the fixture serving `mission` (its spawn has the mission tool's marker; the forward tool's
/// transport spawned first, in tool-name order).
fn mission_pid(fx: &Fx) -> i32 {
    let events = fx.wait_marker("two spawns", |e| e.iter().filter(|e| e["event"] == "spawn").count() >= 2);
    let spawns: Vec<&Value> = events.iter().filter(|e| e["event"] == "spawn").collect();
    spawns[1]["pid"].as_i64().unwrap() as i32
}

#[test]
fn an_external_kill_of_the_child_fences_within_one_second() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start(&fx);
    let pid = mission_pid(&fx);
    let killed = Instant::now();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    wait("ready 503", Duration::from_secs(5), || {
        http_get(fx.addr(), "/health/ready").ok().filter(|r| r.status == 503)
    });
    assert!(killed.elapsed() < Duration::from_secs(1), "fenced after {:?}", killed.elapsed());
    let transport = fx.wait_event("transport", |e| e["kind"] == "transport" && e["tool"] == "mission");
    assert_eq!(
        (transport["fault"].clone(), transport["exit_status"].clone()),
        (json!("server_signal"), Value::Null)
    );
    stop(&fx, gateway, 0);
}

#[test]
fn f3_f4_a_timed_out_call_is_cancelled_upstream_and_a_late_answer_is_discarded() {
    for flags in ["none", "late_answer"] {
        let mut fx = Fx::new("modern");
        fx.ceilings(500, 262144);
        fx.pin();
        let gateway = start_with(&fx, flags);
        let began = Instant::now();
        let (_, text) = call(fx.addr(), "mission", 1, &mission_args("fx.slow", json!({})));
        assert!(began.elapsed() >= Duration::from_millis(500));
        assert_eq!(mission_error(&text), ("mcp_timeout".into(), "unknown".into(), false), "{flags}");
        let events = fx.wait_marker("cancellation", |e| e.iter().any(|e| e["event"] == "cancelled"));
        let call_id = events.iter().find(|e| e["method"] == "tools/call").unwrap()["id"].clone();
        let cancelled = events.iter().find(|e| e["event"] == "cancelled").unwrap();
        assert_eq!(
            (cancelled["requestId"].clone(), cancelled["reason"].clone()),
            (call_id, json!("timeout"))
        );
        // The next call gets its own result; readiness stays green.
        let (_, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({"n": 2})));
        assert_eq!(structured(&text).unwrap()["value"], json!({"n": 2}), "{flags}: {text}");
        assert_eq!(http_get(fx.addr(), "/health/ready").unwrap().status, 200);
        wait("detached counter", Duration::from_secs(5), || (counter(&fx, "detached") == 1).then_some(()));
        stop(&fx, gateway, 0);
        assert_eq!(counter(&fx, "settlement_timeout"), 0);
        assert_eq!(counter(&fx, "detached"), 1);
    }
}

#[test]
fn f5_an_unsettled_request_is_cleanup_failed_and_shutdown_exits_70() {
    // A write tool, so that its audit record shows the uncertain cleanup.
    let mut fx = Fx::new("modern");
    fx.make_mission_write();
    fx.ceilings(500, 262144);
    fx.pin();
    let gateway = start(&fx);
    // The fixture stops reading stdin; the next request (1 MiB) can never be written completely.
    let (_, text) = call(fx.addr(), "mission", 1, &mission_args("fx.stall", json!({})));
    assert_eq!(mission_error(&text).0, "mcp_timeout");
    fx.wait_marker("stalled", |e| e.iter().any(|e| e["event"] == "stalled"));
    let pad = "x".repeat(1 << 20);
    let began = Instant::now();
    let (_, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({"pad": pad})));
    assert!(began.elapsed() >= Duration::from_secs(10), "settlement deadline: {:?}", began.elapsed());
    assert!(text.contains(r#""isError":true"#) && structured(&text).is_none(), "cleanup_failed: {text}");
    let readiness =
        fx.wait_event("readiness", |e| e["kind"] == "readiness" && e["transition"] == "not_ready");
    assert_eq!(
        (readiness["cause"].clone(), readiness["tool"].clone(), readiness["provider"].clone()),
        (json!("provider_cleanup_failed"), json!("mission"), json!("fx"))
    );
    wait("settlement_timeout", Duration::from_secs(5), || {
        (counter(&fx, "settlement_timeout") == 1).then_some(())
    });
    stop(&fx, gateway, 70);
}

#[test]
fn startup_failures_report_their_class_and_close_everything() {
    // F7 (a banner line before reading) and F16 (a mapped tool not listed): 78 with the public code, the
    // §14 class in the event log, and the failed transport's record.
    for (flags, class) in [("banner", "mcp_protocol_error"), ("hide_echo", "provider_tool_missing")] {
        let mut fx = Fx::new("modern");
        fx.pin();
        let out = support::run_with_deadline(fx.command(flags), Duration::from_secs(30));
        support::assert_startup_error(&out, "provider_runtime_unavailable", flags);
        let failed = fx.events().into_iter().find(|e| e["kind"] == "startup_failed").expect("startup_failed");
        assert_eq!(
            (failed["code"].clone(), failed["reason_class"].clone()),
            (json!("provider_runtime_unavailable"), json!(class))
        );
        assert!(fx.events().iter().any(|e| e["kind"] == "transport" && e["tool"] == "fwd"), "{flags}");
        assert!(
            !fx.events().iter().any(|e| e["kind"] == "startup_stage" && e["stage"] == "listener"),
            "{flags}"
        );
        fx.assert_all_gone();
    }
}

#[test]
fn f18_an_oversized_result_fails_only_the_call() {
    let mut fx = Fx::new("modern");
    fx.ceilings(5000, 1024);
    fx.pin();
    let gateway = start(&fx);
    let (_, text) = call(fx.addr(), "mission", 1, &mission_args("fx.big", json!({"size": 2048})));
    assert_eq!(mission_error(&text), ("mcp_result_too_large".into(), "true".into(), false));
    let (_, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
    assert_eq!(structured(&text).unwrap()["ok"], true, "{text}");
    assert_eq!(http_get(fx.addr(), "/health/ready").unwrap().status, 200);
    stop(&fx, gateway, 0);
}

/// execution.md §4.5 vector SG5: a run that reaches a provider has its commit written before it is
/// activated, so a client waiting in `read` gets the head and `: accepted` alone while the upstream holds
/// the call, and the message event only after the upstream answered.
#[test]
fn sg5_a_run_that_reaches_a_provider_is_committed_before_its_upstream_answers() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start(&fx);
    let pid = mission_pid(&fx);
    let arguments = mission_args("fx.slow", json!({})).to_string();
    let request = support::tools_call_request(fx.addr(), "mission", 1, &arguments, false);
    let (mut connection, bytes, _) = first_read(fx.addr(), &request);
    let (stream, body) = parse_stream(&bytes);
    assert_eq!(stream.status, 200);
    let accepted: &[u8] = b": accepted\n\n";
    assert_eq!(String::from_utf8_lossy(&body), String::from_utf8_lossy(&chunked(&[accepted], false)));
    wait("the upstream holds the call", Duration::from_secs(10), || (fx.calls_received() == 1).then_some(()));
    sigusr1(pid);
    let expected =
        success(1, r#"{"content":[{"text":"\"released\"","type":"text"}],"ok":true,"value":"released"}"#);
    let event = &expected.as_bytes()[": accepted\n\n".len()..];
    let rest = chunked(&[event], true);
    let mut got = Vec::new();
    fill(&mut connection, &mut got, rest.len()).unwrap();
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&rest));
    drop(connection);
    stop(&fx, gateway, 0);
}

#[test]
fn f19_the_129th_concurrent_call_is_busy_and_all_slots_return() {
    let mut fx = Fx::new("modern");
    fx.ceilings(60000, 262144);
    let admission = json!({"max_inflight_requests": 200, "max_concurrent_runs": 200,
                           "max_active_provider_calls": 1, "max_waiting_provider_calls": 200});
    fx.d.gateway["admission"] = admission;
    fx.d.host["limits"] = json!({"run_duration_ms": 120000});
    fx.pin();
    let gateway = start(&fx);
    let pid = mission_pid(&fx);
    let addr = fx.addr();
    let calls: Vec<_> = (0..129)
        .map(|i| std::thread::spawn(move || call(addr, "mission", i, &mission_args("fx.slow", json!({})))))
        .collect();
    // Exactly one is refused at once, before anything is released.
    let busy = fx.wait_event("busy counter", |e| e["kind"] == "busy" && e["tool"] == "mission");
    assert_eq!(busy["count"], 1);
    assert_eq!(fx.calls_received(), 1, "one active slot: one tools/call before release");
    assert_eq!(http_get(fx.addr(), "/health/ready").unwrap().status, 200);
    // Release one at a time (the fixture answers pending `slow` calls on SIGUSR1).
    for n in 1..=128 {
        wait(&format!("answer {n}"), Duration::from_secs(30), || {
            sigusr1(pid);
            std::thread::sleep(Duration::from_millis(20));
            let answered =
                fx.marker().iter().filter(|e| e["event"] == "signal" && e["signal"] == "SIGUSR1").count();
            (fx.calls_received() > n || (n == 128 && answered >= 128)).then_some(())
        });
    }
    let results: Vec<String> = calls.into_iter().map(|c| c.join().unwrap().1).collect();
    let busy: Vec<&String> = results.iter().filter(|t| t.contains("mcp_transport_busy")).collect();
    assert_eq!(busy.len(), 1);
    assert_eq!(mission_error(busy[0]), ("mcp_transport_busy".into(), "false".into(), true));
    let ok = results.iter().filter(|t| structured(t).is_some_and(|v| v["ok"] == true)).count();
    assert_eq!(ok, 128);
    assert_eq!(fx.calls_received(), 128);
    stop(&fx, gateway, 0);
}

#[test]
fn f20_f21_provider_admission_refuses_and_times_out_waiters() {
    // F20: one active slot, no queue: the second concurrent call is refused.
    let (fx, gateway, holder) = admission_held_by_a_holder(0, None, |_| {});
    let (_, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
    assert_eq!(mission_error(&text), ("provider_capacity_exhausted".into(), "false".into(), true));
    wait("provider_busy", Duration::from_secs(5), || (counter(&fx, "provider_busy") == 1).then_some(()));
    drop(gateway);
    let _ = holder.join();

    // F21: one waiter, timeout 300 ms, the active slot held elsewhere: the waiter times out undispatched.
    let (fx, gateway, holder) = admission_held_by_a_holder(1, Some(300), |_| {});
    let (_, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
    assert_eq!(mission_error(&text), ("mcp_timeout".into(), "false".into(), false));
    assert_eq!(fx.calls_received(), 0, "the waiter's request never reached the fixture");
    drop(gateway);
    let _ = holder.join();
}

#[test]
fn f23_the_child_environment_through_the_gateway() {
    // inherit_environment false: exactly the binding plus PATH.
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start_with(&fx, "dump_env");
    let events = fx.wait_marker("spawn", |e| e.iter().any(|e| e["event"] == "spawn"));
    let env = events.iter().find(|e| e["event"] == "spawn").unwrap()["env"].as_object().unwrap().clone();
    let names: Vec<&str> = env.keys().map(String::as_str).filter(|k| *k != "LC_CTYPE").collect();
    assert_eq!(names, ["FIXTURE_FLAGS", "PATH"]);
    assert_eq!(env["FIXTURE_FLAGS"], "dump_env");
    stop(&fx, gateway, 0);

    // inherit_environment true: inherited variables stay; the bearer's variable and env-file-only
    // variables never reach the child.
    let mut fx = Fx::new("modern");
    fx.d.host["install"]["fx"]["transport"]["inherit_environment"] = json!(true);
    fx.d.write_file("extra.env", "ENVFILE_ONLY=from-file\n");
    fx.pin();
    let mut cmd = fx.command("dump_env");
    cmd.arg("--env-file").arg("extra.env").env("INHERITED_VAR", "yes");
    let gateway = Gateway::start(cmd, fx.addr());
    let events = fx.wait_marker("spawn", |e| e.iter().any(|e| e["event"] == "spawn"));
    let env = events.iter().find(|e| e["event"] == "spawn").unwrap()["env"].as_object().unwrap().clone();
    assert_eq!(env.get("INHERITED_VAR"), Some(&json!("yes")));
    assert!(!env.contains_key("GATEWAY_TOKEN"), "the bearer's variable leaked");
    assert!(!env.contains_key("FX_FLAGS"), "a credential variable leaked");
    assert!(!env.contains_key("ENVFILE_ONLY"), "an env-file value leaked");
    stop(&fx, gateway, 0);
}

#[test]
fn f24_a_sigterm_ignoring_child_and_its_grandchild_are_killed_at_shutdown() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start_with(&fx, "grandchild,ignore_term,ignore_eof");
    fx.wait_marker("grandchildren", |e| e.iter().filter(|e| e["event"] == "grandchild").count() == 2);
    stop(&fx, gateway, 0);
    let faults: Vec<Value> =
        fx.events().into_iter().filter(|e| e["kind"] == "transport").map(|e| e["fault"].clone()).collect();
    assert_eq!(faults, [json!("killed"), json!("killed")]);
}

#[test]
fn f25_a_killed_gateway_takes_its_children_with_it() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let mut gateway = start(&fx);
    let pids: Vec<i32> = fx
        .wait_marker("two spawns", |e| e.iter().filter(|e| e["event"] == "spawn").count() == 2)
        .iter()
        .filter(|e| e["event"] == "spawn")
        .map(|e| e["pid"].as_i64().unwrap() as i32)
        .collect();
    gateway.child.kill().unwrap();
    let killed = Instant::now();
    let _ = gateway.child.wait();
    // Dead is enough: the orphaned zombie is reaped by init (a container's init may take its time).
    let dead = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_or(true, |s| s.lines().any(|l| l.starts_with("State:") && l.contains("Z (zombie)")))
    };
    for pid in pids {
        wait("fixture dead", Duration::from_secs(5), || dead(pid).then_some(()));
    }
    let after = killed.elapsed();
    assert!(
        after < Duration::from_millis(1000),
        "children outlived the gateway by {after:?}: {:?}",
        fx.marker()
    );
}

#[test]
fn pins_refuse_a_changed_upstream_or_declaration_and_discovery_restores_serving() {
    let mut fx = Fx::new("modern");
    fx.pin();
    // A changed tool description ("rug pull"): provider_pin_mismatch after acquisition.
    let out = support::run_with_deadline(fx.command("desc_changed"), Duration::from_secs(30));
    support::assert_startup_error(&out, "provider_pin_mismatch", "description changed");
    fx.assert_all_gone();
    // A changed declaration: installation_pin_mismatch before anything is spawned.
    let _ = std::fs::remove_file(&fx.marker);
    fx.d.host["install"]["fx"]["tools"]["echo"]["description"] = json!("Echo, described by the operator.");
    fx.d.write_documents();
    let out = support::run_with_deadline(fx.command("none"), Duration::from_secs(30));
    support::assert_startup_error(&out, "installation_pin_mismatch", "declaration changed");
    assert!(fx.marker().is_empty(), "nothing was launched: {:?}", fx.marker());
    // Discovery's output makes serving start again.
    let pins = fx.pin();
    assert!(pins["fwd"]["provider_snapshot_pins"]["mission/fx"].is_string());
    let gateway = start(&fx);
    stop(&fx, gateway, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f33_the_pcc_stream_trace_id_reaches_every_provider_call() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start(&fx);
    let auth = format!("Bearer {}", support::TOKEN);
    let mut conv = client::open(fx.d.pcc_port, &[("authorization", auth.as_str())]).await.unwrap();
    for step in std::iter::once(client::c()).chain(client::h()) {
        conv.send(&step).await;
    }
    assert_eq!(conv.next().await, client::Out::Connected);
    assert_eq!(conv.next().await, client::initialized(0, "2025-11-25"));
    for id in ["1", "2"] {
        conv.send(&client::call(id, "mission", r#"{"alias":"fx.echo","args":{}}"#)).await;
        let client::Out::Json(answer) = conv.next().await else { panic!("no answer") };
        assert!(answer.contains(r#""ok":true"#), "{answer}");
    }
    drop(conv);
    let parents = fx.traceparents(2);
    for tp in &parents {
        let (trace, parent) = (&tp[..36], &tp[36..52]);
        assert_eq!(trace, "00-4bf92f3577b34da6a3ce929d0e0e4736-", "{tp}");
        assert!(
            parent.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) && tp.ends_with("-01"),
            "{tp}"
        );
    }
    assert_ne!(parents[0], parents[1], "a fresh parent id per provider call");
    tokio::task::spawn_blocking(move || stop(&fx, gateway, 0)).await.unwrap();
}

/// pcc.md §17 V45 and the upstream half of V58: a `trace_id` that is not lowercase hex is replaced by a
/// fresh one, never passed on; tenant information, `request_id`, `server_cloudos_version` and
/// `apple-request-uuid` never reach the upstream (nothing the fixture received carries them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v45_v58_an_invalid_trace_id_is_replaced_and_connect_metadata_never_reaches_the_upstream() {
    const SENTINELS: client::Sentinels = client::Sentinels {
        bundle_id: "sentinel-bundle-51c9",
        feature_id: "sentinel-feature-51c9",
        client_info: "sentinel-client-info-51c9",
        device_group: "sentinel-group-51c9",
        request_id: "sentinel-request-id-51c9",
        cloudos: "sentinel-cloudos-51c9",
        uuid: "sentinel-uuid-51c9",
    };
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start(&fx);
    let trace_id = "4BF92F3577B34DA6A3CE929D0E0E4736";
    let mut conv = client::open_with_sentinels(fx.d.pcc_port, &SENTINELS, trace_id).await;
    // V37: with `apple-request-uuid` the call's id must equal it (the id is a sentinel too).
    let id = SENTINELS.call_id();
    conv.send(&client::call(&id, "mission", r#"{"alias":"fx.echo","args":{}}"#)).await;
    let client::Out::Json(answer) = conv.next().await else { panic!("no answer") };
    assert!(answer.contains(r#""ok":true"#), "{answer}");
    drop(conv);
    let tp = &fx.traceparents(1)[0];
    let trace = &tp[3..35];
    assert!(tp.starts_with("00-") && tp.ends_with("-01") && tp.len() == 55, "{tp}");
    assert!(trace.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{tp}");
    assert_ne!(trace, "4bf92f3577b34da6a3ce929d0e0e4736", "an invalid trace id is never passed on");
    let received = std::fs::read_to_string(&fx.marker).unwrap();
    for sentinel in SENTINELS.all() {
        assert!(!received.contains(sentinel), "{sentinel} reached the upstream");
    }
    tokio::task::spawn_blocking(move || stop(&fx, gateway, 0)).await.unwrap();
}
