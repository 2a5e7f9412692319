//! pcc.md §17 with the fixture §17 describes: `beta` is a write tool whose mission calls an upstream
//! `slow` tool that answers when the test releases it, and returns `{"done":true}`. Here the upstream is
//! the stdio fault fixture (`tests/fixtures/mcp_fixture.py`), whose `slow` answers on SIGUSR1, so
//! "held" and "released" are the test's to decide, and the upstream side of a cancellation is visible
//! in the fixture's marker file.
//!
//! | Row | Test |
//! | --- | --- |
//! | V36, V43 | `v36_v43_a_held_call_refuses_a_second_ignores_other_cancellations_and_succeeds_on_release` |
//! | V42 | `v42_a_cancelled_call_is_cancelled_upstream_and_never_answered` |
//! | V48 | `v48_a_call_held_for_75_s_is_not_timed_out` |
//! | V52 | `v52_a_call_released_within_the_drain_deadline_is_answered_with_its_result` |
//! | V53 | `v53_a_call_never_released_is_cancelled_upstream_and_answered_cancelled` |
//! | V56 | `v56_a_half_close_waits_for_the_released_call` |
//!
//! The tests of the same rows against provider-free tools, where `beta` runs until cancelled and the
//! released call computes for a few seconds, are in tests/pcc_front; the trace-context rows (V45, V46)
//! are in tests/providers_gateway.

use crate::support;
use crate::support::{pcc_client as client, pcc_fixture as fixture};

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use tonic::Code;

use client::{body, call, end, err, ping, pong, In};
use fixture::{done, ready_stream, summary, write_cancelled};
use support::providers::{wait, Fx};
use support::Gateway;

/// §17's `beta`: one call of the upstream's `slow`, then `{"done":true}` if it succeeded.
const BETA: &str = "local M = {}\nfunction M.run(input)\n  local r = tool(\"fx.slow\", {})\n  if r.ok then return { done = true } end\n  return { failed = r.error.code }\nend\nreturn M\n";
/// §17: `beta`'s run deadline and the upstream's `ceilings.timeout_ms`.
const BETA_DEADLINE_MS: u64 = 120_000;

/// The mission tool `mission` as §17's `beta` (write, over `fx.slow`), pinned and started.
fn start_beta() -> (Fx, Gateway) {
    let mut fx = Fx::new("modern");
    fx.make_mission_write();
    fx.ceilings(BETA_DEADLINE_MS, 1_048_576);
    fx.d.host["limits"] = json!({"run_duration_ms": BETA_DEADLINE_MS});
    let manifest = fx.d.path("mission/ptc.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m["limits"] = json!({"run_duration_ms": BETA_DEADLINE_MS});
    fx.d.write_file("mission/ptc.json", &serde_json::to_string_pretty(&m).unwrap());
    fx.d.write_file("mission/calls.luau", BETA);
    fx.pin();
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    (fx, gateway)
}

/// Calls `beta` with `id` and waits until the upstream holds its `slow` call; returns the upstream
/// request id of that call.
async fn hold(fx: &Fx, conv: &mut client::Conv, id: &str) -> Value {
    let before = fx.calls_received();
    conv.send(&call(id, "mission", "{}")).await;
    let events = fx.wait_marker("the upstream holds slow", |e| {
        e.iter().filter(|e| e["event"] == "recv" && e["method"] == "tools/call").count() > before
    });
    let held = events.iter().rfind(|e| e["event"] == "recv" && e["method"] == "tools/call").unwrap();
    assert_eq!(held["params"]["name"], "slow", "{held}");
    held["id"].clone()
}

/// The test's release: the fixture answers every held `slow` call.
fn release(fx: &Fx) {
    kill(Pid::from_raw(fx.fixture_pid()), Signal::SIGUSR1).unwrap();
}

/// Waits until the fixture recorded a `notifications/cancelled` for `upstream_id`.
fn until_cancelled_upstream(fx: &Fx, upstream_id: &Value) {
    fx.wait_marker("the upstream receives the cancellation", |e| {
        e.iter().any(|e| e["event"] == "cancelled" && e["requestId"] == *upstream_id)
    });
}

/// The private audit's records once there are `n` (exactly `n`).
fn audit_records(fx: &Fx, n: usize) -> Vec<Value> {
    let records = wait("audit records", Duration::from_secs(20), || {
        let records = fx.audit_records();
        (records.len() >= n).then_some(records)
    });
    assert_eq!(records.len(), n, "exactly {n} record(s): {records:?}");
    records
}

/// SIGTERM, then the exit status; stdout stays empty and every fixture process is gone.
async fn stop(fx: Fx, gateway: Gateway) -> Option<i32> {
    tokio::task::spawn_blocking(move || {
        let (status, _, out, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
        assert!(out.is_empty(), "stdout must stay empty");
        fx.assert_all_gone();
        status
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v36_v43_a_held_call_refuses_a_second_ignores_other_cancellations_and_succeeds_on_release() {
    let (fx, gateway) = start_beta();
    let mut conv = ready_stream(fx.d.pcc_port).await;
    let upstream_id = hold(&fx, &mut conv, r#""call-3""#).await;
    conv.send(&call(r#""call-4""#, "mission", "{}")).await;
    assert_eq!(
        conv.next().await,
        err(-32600, "Invalid Request", Some("call_in_flight"), r#""call-4""#),
        "V36"
    );
    conv.send(&body(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other","reason":"user"}}"#)).await;
    conv.send(&ping(1)).await;
    assert_eq!(conv.next().await, pong(1), "V43: the other cancellation is ignored");
    release(&fx);
    assert_eq!(conv.next().await, done(r#""call-3""#), "V36, V43: the success result after release");
    assert!(
        !fx.marker().iter().any(|e| e["event"] == "cancelled" && e["requestId"] == upstream_id),
        "nothing was cancelled upstream"
    );
    assert_eq!(fx.calls_received(), 1, "call-4 never reached the upstream");
    assert_eq!(summary(&audit_records(&fx, 1)[0]), ("mission", "success", false));
    drop(conv);
    assert_eq!(stop(fx, gateway).await, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v42_a_cancelled_call_is_cancelled_upstream_and_never_answered() {
    let (fx, gateway) = start_beta();
    let mut conv = ready_stream(fx.d.pcc_port).await;
    let upstream_id = hold(&fx, &mut conv, r#""call-6""#).await;
    conv.send(&body(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-6","reason":"user"}}"#)).await;
    until_cancelled_upstream(&fx, &upstream_id);
    // The next call is accepted once the cancelled call's cleanup has finished (§11; until then
    // `call_in_flight`), and is held upstream too.
    let started = std::time::Instant::now();
    loop {
        conv.send(&call(r#""call-7""#, "mission", "{}")).await;
        conv.send(&ping(1)).await;
        let got = conv.next().await;
        if got == pong(1) {
            break;
        }
        assert_eq!(got, err(-32600, "Invalid Request", Some("call_in_flight"), r#""call-7""#), "V42");
        assert_eq!(conv.next().await, pong(1));
        assert!(started.elapsed() < Duration::from_secs(20), "V42: no call accepted within 20 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    fx.wait_marker("the upstream holds call-7's slow", |e| {
        e.iter().filter(|e| e["event"] == "recv" && e["method"] == "tools/call").count() == 2
    });
    // One release answers both held upstream requests: the cancelled one's late answer is discarded,
    // so the stream's next message is call-7's result.
    release(&fx);
    assert_eq!(conv.next().await, done(r#""call-7""#), "V42: no response for call-6");
    let records = audit_records(&fx, 2);
    assert_eq!(summary(&records[0]), ("mission", "cancelled", false), "V42");
    assert_eq!(summary(&records[1]), ("mission", "success", false));
    drop(conv);
    assert_eq!(stop(fx, gateway).await, Some(0));
}

/// §5.1: the 60 s idle clock runs only while no call is in flight. Nothing is sent on the stream for
/// 75 s after the call and nothing arrives (the HTTP/2 keepalive PINGs of §3 are acknowledged by the
/// client below the stream); then the release gives the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v48_a_call_held_for_75_s_is_not_timed_out() {
    let (fx, gateway) = start_beta();
    let mut conv = ready_stream(fx.d.pcc_port).await;
    hold(&fx, &mut conv, r#""call-5""#).await;
    let quiet = tokio::time::timeout(Duration::from_secs(75), conv.next_unbounded()).await;
    assert!(quiet.is_err(), "V48: nothing while the call is held, no idle_timeout: {quiet:?}");
    release(&fx);
    assert_eq!(conv.next().await, done(r#""call-5""#), "V48: the result after release");
    assert_eq!(summary(&audit_records(&fx, 1)[0]), ("mission", "success", false));
    drop(conv);
    assert_eq!(stop(fx, gateway).await, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v52_a_call_released_within_the_drain_deadline_is_answered_with_its_result() {
    let (fx, gateway) = start_beta();
    let mut conv = ready_stream(fx.d.pcc_port).await;
    hold(&fx, &mut conv, r#""call-1""#).await;
    kill(Pid::from_raw(gateway.child.id() as i32), Signal::SIGTERM).unwrap();
    conv.until_unavailable().await;
    conv.send(&ping(4)).await;
    assert_eq!(conv.next().await, pong(4), "§15 step 3: ping is answered during the drain");
    release(&fx);
    assert_eq!(conv.next().await, done(r#""call-1""#), "V52: the real outcome");
    assert_eq!(conv.next().await, end(Code::Unavailable, "draining"), "V52");
    assert_eq!(summary(&audit_records(&fx, 1)[0]), ("mission", "success", false));
    assert_eq!(stop(fx, gateway).await, Some(0), "no run had to be cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v53_a_call_never_released_is_cancelled_upstream_and_answered_cancelled() {
    let (fx, gateway) = start_beta();
    let mut conv = ready_stream(fx.d.pcc_port).await;
    let upstream_id = hold(&fx, &mut conv, r#""call-9""#).await;
    kill(Pid::from_raw(gateway.child.id() as i32), Signal::SIGTERM).unwrap();
    conv.until_unavailable().await;
    let got = tokio::time::timeout(Duration::from_secs(30), conv.next_unbounded()).await;
    assert_eq!(got.expect("an answer within 30 s"), write_cancelled(r#""call-9""#), "V53");
    assert_eq!(conv.next().await, end(Code::Unavailable, "draining"), "V53");
    until_cancelled_upstream(&fx, &upstream_id);
    assert_eq!(summary(&audit_records(&fx, 1)[0]), ("mission", "cancelled", false), "no disconnect");
    assert_eq!(stop(fx, gateway).await, Some(70), "lifecycle.md §7.3: S3 had to cancel a run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v56_a_half_close_waits_for_the_released_call() {
    let (fx, gateway) = start_beta();
    let mut conv = ready_stream(fx.d.pcc_port).await;
    hold(&fx, &mut conv, r#""call-2""#).await;
    conv.send(&In::HalfClose).await;
    release(&fx);
    assert_eq!(conv.next().await, done(r#""call-2""#), "V56");
    assert_eq!(conv.next().await, end(Code::Ok, ""), "V56");
    assert_eq!(summary(&audit_records(&fx, 1)[0]), ("mission", "success", false));
    assert_eq!(stop(fx, gateway).await, Some(0));
}
