//! Served tools reaching a Streamable HTTP upstream end to end: the real binary over the project's HTTP fault
//! fixture (`tests/fixtures/mcp_http_fixture.py`, run with `auth`, the bearer bound from a credential). The
//! library-level tests (`tests/inproc/providers_http.rs`) own each HTTP class; this file owns what the gateway makes
//! of them: the class the mission sees, readiness and liveness, the MCP answer after a fence, the event-log
//! records, the legacy `DELETE` at close and the exit status.
//!
//! - `f28_a_lost_session_reinitialises_once_and_a_second_loss_fences_the_domain`: providers.md §16.2 F28,
//!   §5.4 (loss, re-initialisation, the 30 s guard, close), §12.1 (loss effects and record order), §12.2
//!   (`transport_error`, `exit_status` null for HTTP), §13.1 (HTTP close sends the legacy `DELETE`);
//!   audit-events.md §3.5–§3.6, §3.8 (no `stderr_tail` for HTTP), §4.2; lifecycle.md §6.4, §7.4 (a fence
//!   by transport loss alone still exits 0).
//! - `per_request_http_failures_have_their_class_and_never_fence`: F26, F27, F29, F30 (call half) and F31
//!   (redirect) through a mission, with the classes and dispatch of providers.md §5.3 and §14; §12.1 "not
//!   fenced".
//! - `a_legacy_shutdown_deletes_each_session_and_exits_0`: §5.4 close, §13.1, §13.3 and lifecycle.md §7.4.
//!
//! Every test ends with SIGTERM, the exit status, an empty stdout, and the check that the gateway never
//! spawned a process for an HTTP installation (the stdio suite's "no process remains" has nothing to find).

use crate::support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use support::http_fixture::HttpFixture;
use support::providers::{call, mission_args, mission_error, structured, wait, Fx, HTTP_TOKEN};
use support::{http_get, Gateway};

/// The fixture tools this file maps, as `fx.<name>`.
const TOOLS: [&str; 8] =
    ["echo", "forget", "status500", "status404", "status401", "status307", "garbage_sse", "short_sse"];

/// The fixture in `mode` (plus `auth`) and a pinned deployment over it.
fn deployment(mode: &str) -> (HttpFixture, Fx) {
    let up = HttpFixture::start(&format!("{mode},auth"));
    let mut fx = Fx::http(&up, &TOOLS);
    let pins = fx.pin();
    assert!(pins["mission"]["provider_snapshot_pins"]["mission/fx"].as_str().unwrap().starts_with("sha256:"));
    (up, fx)
}

fn start(fx: &Fx) -> Gateway {
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    assert_eq!(children(&gateway), BTreeSet::new(), "an HTTP installation spawns no process");
    gateway
}

/// The gateway's child processes, from every thread's `children` list.
fn children(gateway: &Gateway) -> BTreeSet<String> {
    let tasks = std::fs::read_dir(format!("/proc/{}/task", gateway.child.id())).unwrap();
    tasks
        .flatten()
        .flat_map(|t| {
            let text = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            text.split_whitespace().map(str::to_owned).collect::<Vec<_>>()
        })
        .collect()
}

/// SIGTERM: exit `code`, nothing on stdout, no child ever.
fn stop(gateway: Gateway, code: i32) {
    assert_eq!(children(&gateway), BTreeSet::new(), "an HTTP installation spawns no process");
    let (status, _, out, err) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
    assert_eq!(status, Some(code), "exit status; stderr: {}", String::from_utf8_lossy(&err));
    assert!(out.is_empty(), "stdout must stay empty: {}", String::from_utf8_lossy(&out));
}

fn ready(fx: &Fx) -> u16 {
    http_get(fx.addr(), "/health/ready").unwrap().status
}

/// The mission calls `fx.echo` and gets its arguments back.
fn echo_succeeds(fx: &Fx, id: usize) {
    let (status, text) = call(fx.addr(), "mission", id, &mission_args("fx.echo", json!({"n": id})));
    assert_eq!(status, 200, "{text}");
    assert_eq!(structured(&text), Some(json!({"content": [], "ok": true, "value": {"n": id}})), "{text}");
}

/// docs/security.md section 7, lifecycle.md §2.1: with every diagnostic of every crate on (`PTC_LOG=trace`),
/// the credential the gateway sends to an HTTP upstream (`Authorization: Bearer s3cret`, which the fixture
/// requires) is in no diagnostic line, nor are the call's arguments.
#[test]
fn the_upstream_credential_is_in_no_diagnostic() {
    let (_up, fx) = deployment("modern");
    let mut cmd = fx.command("none");
    cmd.env("PTC_LOG", "trace");
    let mut gateway = Gateway::start(cmd, fx.addr());
    let drained = gateway.drain_stderr();
    let sentinel = "sentinel-argument-5e8b1d";
    let (status, text) = call(fx.addr(), "mission", 1, &mission_args("fx.echo", json!({"s": sentinel})));
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        structured(&text),
        Some(json!({"content": [], "ok": true, "value": {"s": sentinel}})),
        "{text}"
    );
    stop(gateway, 0);
    let stderr = String::from_utf8_lossy(&drained.join().unwrap()).into_owned();
    assert!(stderr.contains("ready"), "the diagnostics were on: {stderr}");
    for secret in [HTTP_TOKEN, sentinel] {
        assert!(!stderr.contains(secret), "{secret} found in the diagnostics");
    }
}

/// The mission calls `alias` with `{}`; the `(code, dispatch, retryable)` it saw.
fn mission_fails(fx: &Fx, id: usize, alias: &str) -> (String, String, bool) {
    let (status, text) = call(fx.addr(), "mission", id, &mission_args(alias, json!({})));
    assert_eq!(status, 200, "{alias}: {text}");
    mission_error(&text)
}

fn class(code: &str, dispatch: &str) -> (String, String, bool) {
    (code.into(), dispatch.into(), false)
}

/// The `tools/call` requests the fixture received, in order.
fn upstream_calls(fx: &Fx) -> Vec<Value> {
    fx.marker().into_iter().filter(|e| e["event"] == "recv" && e["method"] == "tools/call").collect()
}

fn initializes(fx: &Fx) -> usize {
    fx.marker().iter().filter(|e| e["event"] == "recv" && e["method"] == "initialize").count()
}

/// The session ids the fixture assigned since pinning, in order: the id on each `notifications/initialized`
/// (the fixture numbers its sessions, and `--print-pins` took the first ones).
fn sessions(fx: &Fx) -> Vec<String> {
    fx.marker()
        .iter()
        .filter(|e| e["event"] == "recv" && e["method"] == "notifications/initialized")
        .map(|e| e["headers"]["mcp-session-id"].as_str().unwrap().to_owned())
        .collect()
}

/// The `DELETE`s the fixture received, as `(session, authorization)`, sorted.
fn deletes(fx: &Fx) -> Vec<(String, String)> {
    let of = |e: &Value, k: &str| e[k].as_str().unwrap_or("<none>").to_owned();
    let mut all: Vec<_> = fx
        .marker()
        .iter()
        .filter(|e| e["event"] == "delete")
        .map(|e| (of(e, "session"), of(e, "authorization")))
        .collect();
    all.sort();
    all
}

fn records(fx: &Fx, kind: &str) -> Vec<Value> {
    fx.events().into_iter().filter(|e| e["kind"] == kind).collect()
}

/// A `transport` record: exactly its keys (audit-events.md §3.4), `exit_status` null for HTTP (§12.2).
fn assert_transport(record: &Value, tool: &str, fault: &str) {
    let keys: Vec<&str> = record.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["exit_status", "fault", "kind", "provider", "timestamp", "tool"], "{record}");
    assert_eq!(
        (&record["tool"], &record["provider"], &record["fault"], &record["exit_status"]),
        (&json!(tool), &json!("fx"), &json!(fault), &Value::Null),
        "{record}"
    );
}

/// After the exit: one `transport` record per acquisition (`fwd`, `mission`) with these faults, no
/// `stderr_tail` although `stderr` is on (HTTP has no stderr), no `publication_failed`, and the credential
/// nowhere in the log.
fn assert_ends(fx: &Fx, fwd: &str, mission: &str) {
    let mut transports = records(fx, "transport");
    transports.sort_by_key(|r| r["tool"].as_str().unwrap().to_owned());
    assert_eq!(transports.len(), 2, "{transports:?}");
    assert_transport(&transports[0], "fwd", fwd);
    assert_transport(&transports[1], "mission", mission);
    assert_eq!(records(fx, "stderr_tail"), Vec::<Value>::new(), "HTTP transports have no stderr");
    // Every answer reached the client whole (read to EOF), so none counts as `publication_failed` (§3.5).
    assert_eq!(records(fx, "publication_failed"), Vec::<Value>::new());
    let log = serde_json::to_string(&fx.events()).unwrap();
    assert!(!log.contains(HTTP_TOKEN) && !log.contains("127.0.0.1"), "no credential or address in the log");
}

/// The readiness records of the whole log, as `(transition, cause, tool, provider)`.
fn readiness(fx: &Fx) -> Vec<(Value, Value, Value, Value)> {
    records(fx, "readiness")
        .into_iter()
        .map(|r| (r["transition"].clone(), r["cause"].clone(), r["tool"].clone(), r["provider"].clone()))
        .collect()
}

/// §12.1 step 4 for the lost `mission` transport: its `transport` record says `transport_error`, and the
/// readiness records are exactly `ready`, then `not_ready` `provider_runtime_lost` with the pair.
fn assert_mission_transport_lost(fx: &Fx) {
    let transport = fx.wait_event("transport", |e| e["kind"] == "transport" && e["tool"] == "mission");
    assert_transport(&transport, "mission", "transport_error");
    fx.wait_event("not_ready", |e| e["kind"] == "readiness" && e["transition"] == "not_ready");
    let lost = (json!("not_ready"), json!("provider_runtime_lost"), json!("mission"), json!("fx"));
    assert_eq!(readiness(fx), [startup_ready(), lost]);
}

fn startup_ready() -> (Value, Value, Value, Value) {
    (json!("ready"), json!("startup"), Value::Null, Value::Null)
}

#[test]
fn f28_a_lost_session_reinitialises_once_and_a_second_loss_fences_the_domain() {
    let (_up, fx) = deployment("legacy,session");
    let gateway = start(&fx);
    // Both tools' acquisitions initialised once each (F34 over HTTP), each with its own session id.
    assert_eq!(initializes(&fx), 2);
    let startup = sessions(&fx);
    assert!(startup.len() == 2 && startup[0] != startup[1], "{startup:?}");
    // First loss: the request that met the 404 fails `mcp_transport_error`, dispatch `true` (§5.3, §5.4).
    assert_eq!(mission_fails(&fx, 1, "fx.forget"), class("mcp_transport_error", "true"));
    assert_eq!(ready(&fx), 200, "a loss that re-initialises does not fence (§12.1)");
    echo_succeeds(&fx, 2);
    // Exactly one new `initialize`; the forget carried one of the startup ids, the echo the new one.
    assert_eq!(initializes(&fx), 3);
    let all = sessions(&fx);
    assert_eq!(all.len(), 3, "{all:?}");
    let calls = upstream_calls(&fx);
    assert_eq!(calls.len(), 2, "the failed request is never retried: {calls:?}");
    let old = calls[0]["headers"]["mcp-session-id"].as_str().unwrap().to_owned();
    let fwd = startup.iter().find(|s| **s != old).unwrap().clone();
    assert!(startup.contains(&old), "{old} {startup:?}");
    let new = all[2].clone();
    assert!(!startup.contains(&new), "{all:?}");
    assert_eq!(calls[1]["headers"]["mcp-session-id"], json!(new));
    assert_eq!(ready(&fx), 200);
    assert_eq!(records(&fx, "transport"), Vec::<Value>::new(), "no transport ended yet");

    // Second loss within 30 s of the re-initialisation: transport-owner loss, no further attempt.
    assert_eq!(mission_fails(&fx, 3, "fx.forget"), class("mcp_transport_error", "true"));
    let answered = Instant::now();
    wait("ready 503", Duration::from_secs(1), || (ready(&fx) == 503).then_some(()));
    assert!(answered.elapsed() < Duration::from_secs(1), "fenced after {:?}", answered.elapsed());
    assert_eq!(http_get(fx.addr(), "/health/live").unwrap().status, 200, "a fenced gateway is live");
    let (status, text) = call(fx.addr(), "mission", 4, &mission_args("fx.echo", json!({})));
    assert_eq!(status, 503, "{text}");
    assert!(
        text.contains(r#"{"error":{"code":-31998,"message":"Server unavailable"},"id":4,"jsonrpc":"2.0"}"#)
    );
    assert_mission_transport_lost(&fx);
    // §12.1 step 4: `transport`, then `readiness`; no `stderr_tail` for an HTTP transport (counters aside).
    let kinds: Vec<Value> = fx
        .events()
        .into_iter()
        .filter(|e| e["tool"] == "mission" && e.get("count").is_none())
        .map(|e| e["kind"].clone())
        .collect();
    assert_eq!(kinds, ["transport", "readiness"], "{kinds:?}");
    assert_eq!(initializes(&fx), 3, "nothing is re-acquired");
    assert_eq!(upstream_calls(&fx).len(), 3, "the refused call never reached the upstream");
    // lifecycle.md §7.4: a fence caused only by a lost transport owner leaves the exit clean.
    stop(gateway, 0);
    assert_ends(&fx, "close", "transport_error");
    // §5.4 close: the `fwd` acquisition still holds its id and sends its `DELETE` with the static header.
    // Whether the lost acquisition deletes the id its upstream just forgot the spec leaves open (§12.1 step
    // 3 closes it; this gateway sends none): its `DELETE`, if any, is not asserted.
    let bearer = format!("Bearer {HTTP_TOKEN}");
    let mut sent = deletes(&fx);
    sent.retain(|(session, _)| *session != new);
    assert_eq!(sent, [(fwd, bearer)], "the fwd acquisition's DELETE, once, at shutdown");
    assert_eq!(readiness(&fx).len(), 2, "at most one not_ready: the drain writes none after a fence");
}

/// providers.md §12.1 "the transport owner itself fails (its task ends or panics)" for HTTP: the
/// re-initialisation task of a lost legacy session panics (`PTC_FAULT=panic_task:http_reinitialise`); the
/// transport's owner hears it through the transport's task group, so the domain is fenced within 1 s with
/// `provider_runtime_lost` and the (tool, provider) pair, the `transport` record says `transport_error`,
/// and the exit stays 0 (lifecycle.md §7.4).
#[test]
fn a_panicking_reinitialisation_is_the_transport_owners_loss() {
    let (_up, fx) = deployment("legacy,session");
    let mut command = fx.command("none");
    command.env("PTC_FAULT", "panic_task:http_reinitialise");
    let gateway = Gateway::start(command, fx.addr());
    assert_eq!(mission_fails(&fx, 1, "fx.forget"), class("mcp_transport_error", "true"));
    let answered = Instant::now();
    wait("ready 503", Duration::from_secs(1), || (ready(&fx) == 503).then_some(()));
    assert!(answered.elapsed() < Duration::from_secs(1), "fenced after {:?}", answered.elapsed());
    assert_eq!(http_get(fx.addr(), "/health/live").unwrap().status, 200);
    let (status, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
    assert_eq!(status, 503, "{text}");
    assert_mission_transport_lost(&fx);
    stop(gateway, 0);
    assert_ends(&fx, "close", "transport_error");
}

/// providers.md §12.1 for the HTTP pool's tasks: the idle-connection reaper and a pooled connection's
/// driver run in the transport's task group, so a panic of either (`PTC_FAULT=panic_task:<task>`, fired
/// once the gateway serves, in both transports) fences within 1 s with `provider_runtime_lost`; both
/// `transport` records say `transport_error`; the exit stays 0.
#[test]
fn a_panicking_pool_task_is_the_transport_owners_loss() {
    for task in ["http_pool_reaper", "http_connection"] {
        let (_up, fx) = deployment("modern");
        let mut command = fx.command("none");
        command.env("PTC_FAULT", format!("panic_task:{task}"));
        let child = command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        let gateway = Gateway { child, addr: fx.addr() };
        fx.wait_event("ready", |e| e["kind"] == "readiness" && e["transition"] == "ready");
        wait("ready 503", Duration::from_secs(1), || (ready(&fx) == 503).then_some(()));
        assert_eq!(http_get(fx.addr(), "/health/live").unwrap().status, 200, "{task}");
        let not_ready =
            fx.wait_event("not_ready", |e| e["kind"] == "readiness" && e["transition"] == "not_ready");
        assert_eq!(not_ready["cause"], json!("provider_runtime_lost"), "{task}");
        stop(gateway, 0);
        assert_ends(&fx, "transport_error", "transport_error");
    }
}

#[test]
fn per_request_http_failures_have_their_class_and_never_fence() {
    let (_up, fx) = deployment("modern");
    let gateway = start(&fx);
    // (alias, class and dispatch the mission sees: providers.md §5.3, §14; scenario)
    let rows = [
        ("fx.status500", "mcp_transport_error", "true"),       // F26
        ("fx.status404", "mcp_upstream_error", "true"),        // F27
        ("fx.status401", "mcp_authentication_failed", "true"), // F30, call half
        ("fx.status307", "mcp_transport_error", "true"),       // F31: no redirect followed
        ("fx.garbage_sse", "mcp_protocol_error", "unknown"),   // F29, first half
        ("fx.short_sse", "mcp_transport_error", "unknown"),    // F29, second half
    ];
    for (i, (alias, code, dispatch)) in rows.into_iter().enumerate() {
        assert_eq!(mission_fails(&fx, 10 * i + 1, alias), class(code, dispatch), "{alias}");
        assert_eq!(ready(&fx), 200, "{alias} must not fence");
        echo_succeeds(&fx, 10 * i + 2);
    }
    let calls = upstream_calls(&fx);
    assert_eq!(calls.len(), 2 * rows.len(), "one request each, never retried");
    assert!(calls.iter().all(|c| c["headers"].get("mcp-session-id").is_none()), "modern: no session");
    assert_eq!(records(&fx, "transport"), Vec::<Value>::new(), "no transport ended while serving");
    assert_eq!(readiness(&fx), [startup_ready()]);
    stop(gateway, 0);
    assert_ends(&fx, "close", "close");
    assert_eq!(
        readiness(&fx),
        [startup_ready(), (json!("not_ready"), json!("shutdown"), Value::Null, Value::Null)]
    );
    assert_eq!(deletes(&fx), [], "a modern acquisition never sends DELETE (§5.4)");
}

#[test]
fn a_legacy_shutdown_deletes_each_session_and_exits_0() {
    let (_up, fx) = deployment("legacy,session");
    let gateway = start(&fx);
    echo_succeeds(&fx, 1);
    let (status, text) = call(fx.addr(), "fwd", 2, &json!({"via": "forward"}));
    assert_eq!(status, 200, "{text}");
    assert_eq!(structured(&text), Some(json!({"via": "forward"})), "{text}");
    let sessions: BTreeSet<String> = upstream_calls(&fx)
        .iter()
        .map(|c| c["headers"]["mcp-session-id"].as_str().unwrap().to_owned())
        .collect();
    let startup: BTreeSet<String> = self::sessions(&fx).into_iter().collect();
    assert_eq!((sessions.len(), &sessions), (2, &startup), "one session per tool, as assigned at startup");
    assert_eq!(deletes(&fx), [], "nothing is deleted while serving");
    stop(gateway, 0);
    assert_ends(&fx, "close", "close");
    let bearer = format!("Bearer {HTTP_TOKEN}");
    let expected: Vec<_> = sessions.into_iter().map(|s| (s, bearer.clone())).collect();
    assert_eq!(deletes(&fx), expected, "one DELETE per session, with the static header (§5.4 close)");
}
