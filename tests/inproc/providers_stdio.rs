//! The stdio upstream client layer against the project's fault fixture (providers.md §16, the scenarios
//! this layer can exercise without startup wiring: F1–F4, F5, F6, F8–F19 minus admission, F22–F24).
//!
//! Every test asserts that each process the fixture recorded is gone (no process, no zombie) afterwards.
//! Waits are on marker-file conditions with deadlines, never sleeps.

use crate::support::marker as support_marker;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ptc_gateway::testing::config::host::{ProtocolEra, ToolEffect, ToolMapping};
use ptc_gateway::testing::providers::acquire::{acquire, AcquireError, AcquireSpec, Acquired};
use ptc_gateway::testing::providers::child::LaunchSpec;
use ptc_gateway::testing::providers::listing::Era;
use ptc_gateway::testing::providers::provider_call::{call, CallOutcome, CallRequest};
use ptc_gateway::testing::providers::transport::{LossFault, TransportFault};
use ptc_gateway::testing::providers::{CallFailure, Dispatch, FailureClass};
use serde_json::Value as Json;
use serde_json::{Map, Value};
use support_marker::MarkerFile;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The real interpreter (not a version-manager shim, which would add its own environment and processes).
fn python() -> String {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = std::process::Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        })
        .clone()
}

struct Fixture {
    dir: tempfile::TempDir,
    marker: PathBuf,
}

impl MarkerFile for Fixture {
    fn marker_path(&self) -> &Path {
        &self.marker
    }
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("marker.jsonl");
        Fixture { dir, marker }
    }

    fn spec(&self, mode: &str, protocol: ProtocolEra, start_timeout_ms: u64) -> AcquireSpec {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_fixture.py");
        let mut env = BTreeMap::new();
        env.insert("PATH".to_owned(), std::env::var("PATH").unwrap());
        let tools = BTreeMap::from(
            ["echo", "slow", "crash", "segv", "garbage", "oversize", "big", "chatty", "stall"].map(|n| {
                (
                    n.to_owned(),
                    ToolMapping { alias: format!("fx.{n}"), effect: ToolEffect::Read, description: None },
                )
            }),
        );
        AcquireSpec {
            launch: LaunchSpec {
                command: python(),
                args: vec![script.display().to_string(), mode.to_owned(), self.marker.display().to_string()],
                cwd: self.dir.path().to_path_buf(),
                env,
            },
            protocol,
            start_timeout_ms,
            tools,
            version: "0.1.0".to_owned(),
        }
    }

    /// Every recorded process (spawns and grandchildren) is gone: no process, no zombie, empty group.
    fn assert_all_gone(&self) {
        for event in self.events() {
            if event["event"] == "spawn" || event["event"] == "grandchild" {
                let pid = event["pid"].as_i64().unwrap();
                assert!(!Path::new(&format!("/proc/{pid}")).exists(), "process {pid} remains: {event}");
                if event["event"] == "spawn" {
                    // A killed grandchild is a zombie until init (its new parent) reaps it; wait for
                    // that, with a deadline.
                    let deadline = Instant::now() + Duration::from_secs(5);
                    while nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid as i32), None).is_ok() {
                        assert!(Instant::now() < deadline, "group {pid} remains");
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        }
    }
}

fn request(
    acquired: &Acquired,
    name: &'static str,
    arguments: Value,
    timeout_ms: u64,
    max: u64,
) -> CallRequest<'static> {
    CallRequest {
        era: acquired.facts.era,
        version: "0.1.0",
        name,
        arguments,
        traceparent: TRACEPARENT,
        deadline: tokio::time::Instant::now() + Duration::from_millis(timeout_ms),
        max_result_bytes: max,
        inspect: None,
    }
}

fn args(pairs: &[(&str, Value)]) -> Value {
    Value::Object(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<Map<String, Value>>())
}

async fn call_tool(
    acquired: &Acquired,
    name: &'static str,
    arguments: Value,
    timeout_ms: u64,
) -> CallOutcome {
    call(&acquired.transport, request(acquired, name, arguments, timeout_ms, 262_144), std::future::pending())
        .await
}

fn failure_of(outcome: &CallOutcome) -> CallFailure {
    outcome.result.as_ref().unwrap_err().failure
}

async fn echo_succeeds(acquired: &Acquired) {
    let outcome = call_tool(acquired, "echo", args(&[("n", Value::from(7))]), 5_000).await;
    let value = outcome.result.unwrap().value.unwrap();
    assert_eq!(value, args(&[("n", Value::from(7))]));
}

async fn acquired(fx: &Fixture, mode: &str) -> Acquired {
    match acquire(&fx.spec(mode, ProtocolEra::Auto, 5_000)).await {
        Ok(acquired) => acquired,
        Err(e) => panic!("acquisition of {mode} failed: {e:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_upstream_is_acquired_with_one_spawn_and_closes_cleanly() {
    let fx = Fixture::new();
    let acquired = acquired(&fx, "modern").await;
    assert_eq!((acquired.facts.era, acquired.spawns), (Era::Modern, 1));
    assert_eq!(acquired.facts.protocol_version, "2026-07-28");
    assert_eq!(
        ptc_gateway::testing::json::to_deterministic_string(&acquired.facts.server_info),
        r#"{"name":"fixture","version":"1.0"}"#
    );
    assert!(acquired.facts.executable_digest.as_deref().is_some_and(|d| d.starts_with("sha256:")));
    echo_succeeds(&acquired).await;
    let calls = fx.of("recv");
    assert_eq!(fx.methods(), ["server/discover", "tools/list", "tools/call"]);
    assert_eq!(calls[0]["id"], 1);
    assert_eq!(calls[2]["params"]["_meta"]["traceparent"], TRACEPARENT);
    let end = acquired.transport.close(false).await;
    assert_eq!((end.fault, end.exit_status), (TransportFault::Close, Some(0)));
    assert_eq!(fx.of("spawn").len(), 1);
    fx.assert_all_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_falls_back_to_a_fresh_legacy_process() {
    // F9 (silent probe), F10 (exit on pre-initialize request), F12 first half, and an error answer.
    for mode in ["legacy", "legacy,legacy_silent", "legacy,legacy_exit", "legacy,err32022_legacy"] {
        let fx = Fixture::new();
        let started = Instant::now();
        let acquired = match acquire(&fx.spec(mode, ProtocolEra::Auto, 4_000)).await {
            Ok(a) => a,
            Err(e) => panic!("{mode}: {e:?}"),
        };
        assert_eq!((acquired.facts.era, acquired.spawns), (Era::Legacy, 2), "{mode}");
        assert_eq!(acquired.facts.protocol_version, "2025-11-25");
        if mode.contains("silent") {
            assert!(started.elapsed() >= Duration::from_millis(2_000), "{mode}: probe window not waited");
        }
        let spawns = fx.of("spawn");
        assert_eq!(spawns.len(), 2, "{mode}");
        let first_pid = spawns[0]["pid"].as_i64().unwrap();
        assert!(!Path::new(&format!("/proc/{first_pid}")).exists(), "{mode}: probe process not reaped");
        echo_succeeds(&acquired).await;
        let last = fx.of("recv").into_iter().filter(|e| e["method"] == "initialize").collect::<Vec<_>>();
        assert_eq!(last.len(), 1, "{mode}");
        assert_eq!(last[0]["id"], 1, "{mode}: initialize is the first request of the fresh process");
        acquired.transport.close(false).await;
        fx.assert_all_gone();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_modes_spawn_once() {
    // F11: a modern-only child succeeds with auto and 2026-07-28 with one spawn.
    for protocol in [ProtocolEra::Auto, ProtocolEra::Modern] {
        let fx = Fixture::new();
        let acquired = acquire(&fx.spec("modern_only", protocol, 4_000)).await.unwrap();
        assert_eq!((acquired.facts.era, acquired.spawns), (Era::Modern, 1));
        acquired.transport.close(false).await;
        fx.assert_all_gone();
    }
    // F9 with `legacy`: one spawn, no server/discover.
    let fx = Fixture::new();
    let acquired = acquire(&fx.spec("legacy,legacy_silent", ProtocolEra::Legacy, 4_000)).await.unwrap();
    assert_eq!((acquired.facts.era, acquired.spawns), (Era::Legacy, 1));
    assert_eq!(fx.methods(), ["initialize", "notifications/initialized", "tools/list"]);
    acquired.transport.close(false).await;
    fx.assert_all_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acquisition_failures_have_their_class_and_leave_nothing() {
    use FailureClass::*;
    // (mode, protocol, start_timeout_ms, class) — F7, F9, F10, F11, F12, F13, F14, F17.
    let rows: &[(&str, ProtocolEra, u64, FailureClass)] = &[
        ("modern,banner", ProtocolEra::Auto, 4_000, McpProtocolError),
        ("legacy,legacy_silent", ProtocolEra::Modern, 2_000, ProviderAcquisitionTimeout),
        ("legacy,legacy_exit", ProtocolEra::Modern, 4_000, McpTransportError),
        ("modern_only", ProtocolEra::Legacy, 4_000, ProviderProtocolError),
        ("legacy,err32022_legacy", ProtocolEra::Modern, 4_000, ProviderProtocolVersionUnsupported),
        ("legacy,err32022_future", ProtocolEra::Auto, 4_000, ProviderProtocolVersionUnsupported),
        ("legacy,err32022_future", ProtocolEra::Modern, 4_000, ProviderProtocolVersionUnsupported),
        ("legacy,legacy_old", ProtocolEra::Legacy, 4_000, ProviderProtocolVersionUnsupported),
        ("modern,sleep_start", ProtocolEra::Auto, 1_000, ProviderAcquisitionTimeout),
        ("modern,repeat_cursor", ProtocolEra::Auto, 4_000, McpProtocolError),
    ];
    for (mode, protocol, timeout, class) in rows {
        let fx = Fixture::new();
        let started = Instant::now();
        let error = acquire(&fx.spec(mode, *protocol, *timeout)).await.err().unwrap();
        assert_eq!(error.class(), Some(*class), "{mode} {protocol:?}");
        assert!(started.elapsed() < Duration::from_millis(timeout + 9_500), "{mode}: too slow");
        if let AcquireError::Failed { end, .. } = &error {
            assert!(end.is_some(), "{mode}: the failed transport's end is reported");
        }
        fx.assert_all_gone();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_follows_pages_and_requires_mapped_tools() {
    let fx = Fixture::new();
    let acquired = acquired(&fx, "modern,pages").await;
    assert_eq!(acquired.facts.tools.len(), 9);
    let cursors: Vec<Json> = fx
        .of("recv")
        .iter()
        .filter(|e| e["method"] == "tools/list")
        .map(|e| e["params"]["cursor"].clone())
        .collect();
    assert_eq!(cursors, [Json::Null, Json::from("p2"), Json::from("p3")]);
    acquired.transport.close(false).await;
    fx.assert_all_gone();

    // F16: a mapped tool the fixture does not list.
    let fx = Fixture::new();
    let mut spec = fx.spec("modern", ProtocolEra::Auto, 4_000);
    spec.tools.insert(
        "absent".into(),
        ToolMapping { alias: "fx.absent".into(), effect: ToolEffect::Read, description: None },
    );
    assert_eq!(acquire(&spec).await.err().unwrap().class(), Some(FailureClass::ProviderToolMissing));
    fx.assert_all_gone();

    // F15: spawn failures.
    for command in ["./missing-server", "./not-executable"] {
        let fx = Fixture::new();
        std::fs::write(fx.dir.path().join("not-executable"), "#!/bin/sh\n").unwrap();
        let mut spec = fx.spec("modern", ProtocolEra::Auto, 4_000);
        spec.launch.command = command.to_owned();
        assert_eq!(
            acquire(&spec).await.err().unwrap().class(),
            Some(FailureClass::McpStdioLauncherUnavailable),
            "{command}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_or_fatal_signal_mid_call_loses_the_transport() {
    // F1, F2.
    let rows = [
        ("crash", TransportFault::ServerExit, Some(3), LossFault::ServerExit(3)),
        ("segv", TransportFault::ServerSignal, None, LossFault::ServerSignal),
    ];
    for (tool, fault, status, loss) in rows {
        let fx = Fixture::new();
        let acquired = acquired(&fx, "modern").await;
        let outcome = call_tool(&acquired, tool, args(&[]), 5_000).await;
        assert_eq!(
            failure_of(&outcome),
            CallFailure::new(FailureClass::McpTransportError, Dispatch::Unknown),
            "{tool}"
        );
        assert_eq!(*acquired.transport.events().loss.borrow(), Some(loss), "{tool}");
        let refused = call_tool(&acquired, "echo", args(&[]), 5_000).await;
        assert_eq!(
            failure_of(&refused),
            CallFailure::new(FailureClass::ProviderUnavailable, Dispatch::False)
        );
        let end = acquired.transport.close(false).await;
        assert_eq!((end.fault, end.exit_status), (fault, status), "{tool}");
        if tool == "crash" {
            assert!(String::from_utf8_lossy(&end.stderr).ends_with("crashing now\n"));
        }
        fx.assert_all_gone();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_violations_mid_call_fence_with_protocol_error() {
    // F6, F8.
    for tool in ["garbage", "oversize"] {
        let fx = Fixture::new();
        let acquired = acquired(&fx, "modern").await;
        let outcome = call_tool(&acquired, tool, args(&[]), 10_000).await;
        assert_eq!(
            failure_of(&outcome),
            CallFailure::new(FailureClass::McpProtocolError, Dispatch::Unknown),
            "{tool}"
        );
        assert_eq!(*acquired.transport.events().loss.borrow(), Some(LossFault::ProtocolError));
        let end = acquired.transport.close(false).await;
        assert_eq!(end.fault, TransportFault::ProtocolError, "{tool}");
        fx.assert_all_gone();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_and_cancellation_send_notifications_cancelled_and_discard_late_answers() {
    // F3 (ignores cancellation), F4 (answers the cancelled id late), and a run cancellation.
    for (mode, cancelled) in [("modern", false), ("modern,late_answer", false), ("legacy,late_answer", true)]
    {
        let fx = Fixture::new();
        let acquired = acquired(&fx, mode).await;
        let started = Instant::now();
        let outcome = if cancelled {
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let cancel = async move {
                let _ = rx.await;
            };
            let waiting =
                call(&acquired.transport, request(&acquired, "slow", args(&[]), 60_000, 262_144), cancel);
            let trigger = async {
                fx.wait_for("the slow call", |e| e.iter().any(|e| e["method"] == "tools/call")).await;
                let _ = tx.send(());
            };
            tokio::join!(waiting, trigger).0
        } else {
            call_tool(&acquired, "slow", args(&[]), 500).await
        };
        let class = if cancelled { FailureClass::McpCancelled } else { FailureClass::McpTimeout };
        assert_eq!(failure_of(&outcome), CallFailure::new(class, Dispatch::Unknown), "{mode}");
        if !cancelled {
            assert!(started.elapsed() >= Duration::from_millis(500));
        }
        outcome.settlement.unwrap().settled().await.unwrap();
        let call_id = fx.of("recv").iter().find(|e| e["method"] == "tools/call").unwrap()["id"].clone();
        let events = fx.wait_for("the cancellation", |e| e.iter().any(|e| e["event"] == "cancelled")).await;
        let cancellation = events.iter().find(|e| e["event"] == "cancelled").unwrap();
        assert_eq!(cancellation["requestId"], call_id);
        assert_eq!(cancellation["reason"], if cancelled { "cancelled" } else { "timeout" });
        assert_eq!(acquired.transport.counters().detached.load(std::sync::atomic::Ordering::Relaxed), 1);
        echo_succeeds(&acquired).await;
        assert_eq!(*acquired.transport.events().loss.borrow(), None, "{mode}: a late answer is discarded");
        let end = acquired.transport.close(false).await;
        assert_eq!(end.fault, TransportFault::Close);
        fx.assert_all_gone();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_129th_request_is_busy_before_dispatch() {
    // F19 without admission: 128 slots, the 129th refused at once.
    let fx = Fixture::new();
    let acquired = acquired(&fx, "modern").await;
    let pid = acquired.transport.pid().unwrap();
    let (outcomes, refused) = {
        let calls = (0..128).map(|_| call_tool(&acquired, "slow", args(&[]), 60_000));
        let all = futures::future::join_all(calls);
        let busy = async {
            fx.wait_for("128 calls", |e| e.iter().filter(|e| e["method"] == "tools/call").count() == 128)
                .await;
            let refused = call_tool(&acquired, "slow", args(&[]), 60_000).await;
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGUSR1)
                .unwrap();
            refused
        };
        tokio::join!(all, busy)
    };
    let failure = failure_of(&refused);
    assert_eq!(failure, CallFailure::new(FailureClass::McpTransportBusy, Dispatch::False));
    assert!(failure.retryable());
    assert_eq!(acquired.transport.counters().busy.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
    assert_eq!(fx.methods().iter().filter(|m| *m == "tools/call").count(), 128);
    echo_succeeds(&acquired).await;
    acquired.transport.close(false).await;
    fx.assert_all_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_requests_are_answered_and_results_are_bounded() {
    // F22, F18.
    let fx = Fixture::new();
    let acquired = acquired(&fx, "legacy").await;
    let outcome = call_tool(&acquired, "chatty", args(&[]), 5_000).await;
    assert!(outcome.result.is_ok());
    let replies: Vec<String> =
        fx.of("recv_reply").iter().map(|e| e["line"].as_str().unwrap().to_owned()).collect();
    assert_eq!(
        replies,
        [
            r#"{"id":"s1","jsonrpc":"2.0","result":{}}"#,
            r#"{"error":{"code":-32601,"message":"Method not found"},"id":"s2","jsonrpc":"2.0"}"#
        ]
    );
    let big = call(
        &acquired.transport,
        request(&acquired, "big", args(&[("size", Value::from(2048))]), 5_000, 1024),
        std::future::pending(),
    )
    .await;
    assert_eq!(failure_of(&big), CallFailure::new(FailureClass::McpResultTooLarge, Dispatch::True));
    let invalid = call_tool(&acquired, "echo", Value::Array(vec![]), 5_000).await;
    assert_eq!(failure_of(&invalid), CallFailure::new(FailureClass::McpRequestInvalid, Dispatch::False));
    echo_succeeds(&acquired).await;
    assert_eq!(*acquired.transport.events().loss.borrow(), None);
    acquired.transport.close(false).await;
    fx.assert_all_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_stops_reading_fails_settlement_after_ten_seconds() {
    // F5.
    let fx = Fixture::new();
    let acquired = acquired(&fx, "modern").await;
    let stalled = call_tool(&acquired, "stall", args(&[]), 500).await;
    fx.wait_for("the stall", |e| e.iter().any(|e| e["event"] == "stalled")).await;
    let first = stalled.settlement.unwrap();
    first.settled().await.unwrap();
    let huge = Value::String("z".repeat(1 << 20));
    let abandoned = Instant::now();
    let outcome = call_tool(&acquired, "echo", args(&[("blob", huge)]), 500).await;
    assert_eq!(failure_of(&outcome), CallFailure::new(FailureClass::McpTimeout, Dispatch::Unknown));
    let settled = outcome.settlement.unwrap().settled().await;
    assert_eq!(settled, Err(CallFailure::new(FailureClass::ProviderCleanupFailed, Dispatch::Unknown)));
    assert!(abandoned.elapsed() >= Duration::from_millis(10_000));
    assert_eq!(
        acquired.transport.counters().settlement_timeouts.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    assert!(*acquired.transport.events().cleanup_failed.borrow());
    let end = acquired.transport.close(false).await;
    assert_eq!(end.fault, TransportFault::TransportError);
    fx.assert_all_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_child_sees_exactly_the_given_environment() {
    // F23 at this layer: the environment passed is the whole environment (env.rs builds it).
    let fx = Fixture::new();
    let mut spec = fx.spec("modern,dump_env", ProtocolEra::Auto, 5_000);
    spec.launch.env.insert("BOUND".into(), "value".into());
    let acquired = acquire(&spec).await.unwrap();
    let env = fx.of("spawn")[0]["env"].as_object().unwrap().clone();
    // Python's locale coercion (PEP 538) may add LC_CTYPE inside the child itself.
    let names: Vec<&str> = env.keys().map(String::as_str).filter(|k| *k != "LC_CTYPE").collect();
    assert_eq!(names, ["BOUND", "PATH"]);
    acquired.transport.close(false).await;
    fx.assert_all_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigterm_ignoring_child_and_its_grandchild_are_killed() {
    // F24.
    let fx = Fixture::new();
    let acquired = acquired(&fx, "modern,grandchild,ignore_term,ignore_eof").await;
    let end = acquired.transport.close(false).await;
    assert_eq!((end.fault, end.exit_status), (TransportFault::Killed, None));
    assert_eq!(fx.of("grandchild").len(), 1);
    assert!(fx.of("signal").iter().any(|e| e["signal"] == "SIGTERM"));
    fx.assert_all_gone();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_transport_kills_its_group() {
    let fx = Fixture::new();
    let acquired = acquired(&fx, "modern,grandchild,ignore_term,ignore_eof").await;
    let grandchild = fx.wait_for("the grandchild", |e| e.iter().any(|e| e["event"] == "grandchild")).await;
    let pid = grandchild.iter().find(|e| e["event"] == "grandchild").unwrap()["pid"].as_i64().unwrap();
    drop(acquired);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists()
        || fx.of("spawn").iter().any(|s| Path::new(&format!("/proc/{}", s["pid"])).exists())
    {
        assert!(Instant::now() < deadline, "the group outlived its transport");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    fx.assert_all_gone();
}
