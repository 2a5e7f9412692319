//! Served tools reaching stdio upstreams end to end, against the real binary and the fault fixture
//! (providers.md §7–§13, §16.2 at gateway level; execution.md §12.5, §13; pins.md §9–§10).
//!
//! Every scenario ends by asserting that no process of any group the fixture's marker recorded remains
//! and that the gateway wrote nothing on stdout.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use support::providers::{call, mission_args, structured, wait, Fx};
use support::sse::{read_stream, success};
use support::{http_get, Gateway};

fn start(fx: &Fx) -> Gateway {
    Gateway::start(fx.d.command(), fx.addr())
}

/// SIGTERM, exit `code`, stdout empty, every recorded process gone.
fn stop(fx: &Fx, gateway: Gateway, code: i32) {
    let (status, _, out, err) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
    assert_eq!(status, Some(code), "exit status; stderr: {}", String::from_utf8_lossy(&err));
    assert!(out.is_empty(), "stdout must stay empty");
    fx.assert_all_gone();
}

/// The raw bytes of a `tools/call` (for exact-stream reads).
fn call_request(fx: &Fx, tool: &str, id: u64, arguments: &Value) -> Vec<u8> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#,
        arguments
    );
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}\r\n\r\n{body}",
        support::authority(fx.addr()),
        support::TOKEN,
        body.len()
    )
    .into_bytes()
}

fn exact(fx: &Fx, tool: &str, id: u64, arguments: &Value) -> String {
    let mut s = TcpStream::connect(fx.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(&call_request(fx, tool, id, arguments)).unwrap();
    let stream = read_stream(&mut s);
    assert_eq!(stream.status, 200);
    String::from_utf8(stream.body()).unwrap()
}

/// The `error` table a mission saw, as `(code, dispatch, retryable)`.
fn mission_error(text: &str) -> (String, String, bool) {
    let v = structured(text).unwrap_or_else(|| panic!("no structured result in {text}"));
    assert_eq!(v["ok"], false, "{v}");
    let e = &v["error"];
    (
        e["code"].as_str().unwrap().into(),
        e["dispatch"].as_str().unwrap().into(),
        e["retryable"].as_bool().unwrap(),
    )
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
    let events =
        fx.wait_marker("three calls", |e| e.iter().filter(|e| e["method"] == "tools/call").count() == 3);
    let parents: Vec<String> = events
        .iter()
        .filter(|e| e["method"] == "tools/call")
        .map(|e| e["params"]["_meta"]["traceparent"].as_str().unwrap().to_owned())
        .collect();
    for tp in &parents {
        assert!(tp.len() == 55 && tp.starts_with("00-") && tp.ends_with("-01"), "{tp}");
    }
    assert_ne!(parents[1][36..52], parents[2][36..52]);
    // One spawn per tool at startup, none per call (A1, F34).
    assert_eq!(events.iter().filter(|e| e["event"] == "spawn").count(), 2);
    stop(&fx, gateway, 0);
    let faults: Vec<Value> = fx.events().into_iter().filter(|e| e["kind"] == "transport").collect();
    assert_eq!(faults.len(), 2, "one transport record per transport: {faults:?}");
    assert!(faults.iter().all(|f| f["fault"] == "close" && f["exit_status"] == 0), "{faults:?}");
}

#[test]
fn f1_child_crash_fences_the_domain_with_records() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start(&fx);
    let (_, text) = call(fx.addr(), "mission", 1, &mission_args("fx.crash", json!({})));
    assert_eq!(mission_error(&text), ("mcp_transport_error".into(), "unknown".into(), false));
    let ready = wait("ready 503", Duration::from_secs(1), || {
        http_get(fx.addr(), "/health/ready").ok().filter(|r| r.status == 503)
    });
    assert_eq!(ready.status, 503);
    assert_eq!(http_get(fx.addr(), "/health/live").unwrap().status, 200);
    let (status, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("-31998"), "{text}");
    let transport = fx.wait_event("transport record", |e| e["kind"] == "transport" && e["tool"] == "mission");
    assert_eq!(
        (transport["fault"].clone(), transport["exit_status"].clone()),
        (json!("server_exit"), json!(3))
    );
    let readiness =
        fx.wait_event("readiness", |e| e["kind"] == "readiness" && e["transition"] == "not_ready");
    assert_eq!(
        (readiness["cause"].clone(), readiness["tool"].clone(), readiness["provider"].clone()),
        (json!("provider_runtime_lost"), json!("mission"), json!("fx"))
    );
    let tail = fx.wait_event("stderr tail", |e| e["kind"] == "stderr_tail" && e["tool"] == "mission");
    assert!(tail["text"].as_str().unwrap().contains("crashing now"), "{tail}");
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
