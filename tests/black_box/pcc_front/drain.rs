//! Drain and half-close with a call in flight (pcc.md §15, §5.2; §17 V51–V54, V56): the in-flight call is
//! answered with its real outcome, then the stream ends; the gateway exits within the drain deadlines.

use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use tonic::Code;

use super::client::{call, end, err, ping, pong, try_open, Conv, In};
use super::fixture::{audit_records, auth, deployment, done, ready_stream, start, summary};
use crate::support::Gateway;

/// lifecycle.md §7.2: the drain deadline (10 s after the signal) plus the cleanup deadline (10 s) and
/// the slack of the shutdown stages bound every exit after SIGTERM.
const EXIT_BOUND: Duration = Duration::from_secs(30);

/// A ready stream on which `tool` was called as `id` and is in flight (the ping after it was answered),
/// then SIGTERM to the gateway and the wait until readiness is false; the stream and the signal's instant.
async fn in_flight_at_the_signal(port: u16, gw: &Gateway, id: &str, tool: &str) -> (Conv, Instant) {
    let mut conv = ready_stream(port).await;
    conv.send(&call(id, tool, "{}")).await;
    conv.send(&ping(1)).await;
    assert_eq!(conv.next().await, pong(1));
    kill(nix::unistd::Pid::from_raw(gw.child.id() as i32), Signal::SIGTERM).unwrap();
    let signalled = Instant::now();
    conv.until_unavailable().await;
    (conv, signalled)
}

/// The gateway's exit status once the drain has run its course (a second SIGTERM changes nothing).
async fn exit_status(gw: Gateway) -> Option<i32> {
    tokio::task::spawn_blocking(move || gw.signal_and_wait(Signal::SIGTERM, EXIT_BOUND)).await.unwrap().0
}

/// §17 V52 and V54: a write call in flight at SIGTERM that ends before the drain deadline is answered
/// with its success, then `UNAVAILABLE draining`; a new stream meanwhile is refused; exit 0 (no run had
/// to be cancelled, lifecycle.md §7.3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_answers_a_call_that_ends_before_the_deadline() {
    let d = deployment(64, 4);
    let gw = start(&d);
    let (mut conv, signalled) = in_flight_at_the_signal(d.pcc_port, &gw, r#""call-1""#, "delta").await;
    // V54: the listener is closed (no connection), or a stream that still reaches the service is refused
    // `UNAVAILABLE` `draining` (the exact status is asserted in-process, tests/inproc/pcc_inproc.rs).
    let auth = auth();
    match try_open(d.pcc_port, &[("authorization", auth.as_str())]).await {
        Err(None) => {}
        Err(Some(status)) => assert_eq!(status.code(), Code::Unavailable, "V54: {status:?}"),
        Ok(mut late) => assert_eq!(late.next().await, end(Code::Unavailable, "draining"), "V54"),
    }
    assert_eq!(conv.next().await, done(r#""call-1""#), "V52: the real outcome");
    assert_eq!(conv.next().await, end(Code::Unavailable, "draining"), "V52");
    assert!(signalled.elapsed() < Duration::from_secs(10), "the call ended before the drain deadline");
    let records = audit_records(&d, 1).await;
    assert_eq!(summary(&records[0]), ("delta", "success", false));
    assert_eq!(exit_status(gw).await, Some(0));
}

/// §15 and §17 V53: a held write call at SIGTERM keeps its stream open (ping answered, `tools/list` and
/// `tools/call` -31998), is answered with its real outcome once drain's cancel-all stops it (the
/// write-effects text), and then the stream ends `UNAVAILABLE`, `draining`; the gateway exits 70
/// (lifecycle.md §7.3: S3 had to cancel a run) within the deadlines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_answers_the_call_in_flight_with_its_real_outcome() {
    let d = deployment(64, 4);
    let gw = start(&d);
    let (mut conv, _) = in_flight_at_the_signal(d.pcc_port, &gw, r#""call-9""#, "beta").await;
    conv.send(&call("3", "alpha", r#"{"text":"hi"}"#)).await;
    assert_eq!(conv.next().await, err(-31998, "Server unavailable", None, "3"));
    conv.send(&ping(4)).await;
    assert_eq!(conv.next().await, pong(4));
    assert_eq!(
        conv.next().await,
        super::fixture::write_cancelled(r#""call-9""#),
        "V53: the cancelled result after the drain deadline"
    );
    assert_eq!(conv.next().await, end(Code::Unavailable, "draining"));
    let records = audit_records(&d, 1).await;
    assert_eq!(summary(&records[0]), ("beta", "cancelled", false), "drain's cancel is no disconnect");
    assert_eq!(exit_status(gw).await, Some(70));
}

/// §15 step 3 from the signal on: readiness turns `draining` before S1 stops the listeners (held open here
/// for 1.5 s by the `slow_listener_stop` fault point), and a `tools/call` in that window, on a stream
/// with a call in flight, is -31998, never `call_in_flight`; the call in flight still gets its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_between_the_signal_and_the_listener_stop_is_unavailable() {
    let d = deployment(64, 4);
    let mut command = d.command();
    command.env("PTC_FAULT", "slow_listener_stop");
    let gw = Gateway::start(command, super::fixture::http_addr(&d));
    let (mut conv, _) = in_flight_at_the_signal(d.pcc_port, &gw, r#""call-1""#, "delta").await;
    conv.send(&call("3", "alpha", r#"{"text":"hi"}"#)).await;
    assert_eq!(conv.next().await, err(-31998, "Server unavailable", None, "3"));
    assert_eq!(conv.next().await, done(r#""call-1""#), "the real outcome");
    assert_eq!(conv.next().await, end(Code::Unavailable, "draining"));
    assert_eq!(summary(&audit_records(&d, 1).await[0]), ("delta", "success", false));
    assert_eq!(exit_status(gw).await, Some(0));
}

/// §15 and §17 V51: SIGTERM ends an idle stream with `UNAVAILABLE`, `draining`; the gateway exits 0
/// within the deadlines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_ends_idle_streams() {
    let d = deployment(64, 4);
    let gw = start(&d);
    let mut conv = ready_stream(d.pcc_port).await;
    let waited = tokio::task::spawn_blocking(move || gw.signal_and_wait(Signal::SIGTERM, EXIT_BOUND));
    assert_eq!(conv.next().await, end(Code::Unavailable, "draining"), "V51");
    let (code, _, _, _) = waited.await.unwrap();
    assert_eq!(code, Some(0));
}

/// §5.2 and §17 V56: a half-close with a call in flight ends the stream `OK` once the call's response
/// has been sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_close_waits_for_the_call_in_flight() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let mut conv = ready_stream(d.pcc_port).await;
    conv.send(&call(r#""call-2""#, "delta", "{}")).await;
    conv.send(&ping(1)).await;
    assert_eq!(conv.next().await, pong(1));
    conv.send(&In::HalfClose).await;
    assert_eq!(conv.next().await, done(r#""call-2""#), "V56");
    assert_eq!(conv.next().await, end(Code::Ok, ""), "V56");
    assert_eq!(summary(&audit_records(&d, 1).await[0]), ("delta", "success", false));
}

/// lifecycle.md §7.3 S1: clean iff every PCC stream ended by pcc.md's cutoff (§15 step 5, the cleanup
/// deadline). A stream that does not end at the drain (held open by the `stream_outlives_drain` fault
/// point) is cut at the cutoff with `UNAVAILABLE`, `draining`, and the exit is 70; nothing else was
/// unclean (no run was in flight).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_at_the_cutoff_makes_the_exit_70() {
    let d = deployment(64, 4);
    let mut command = d.command();
    command.env("PTC_FAULT", "stream_outlives_drain");
    let gw = Gateway::start(command, super::fixture::http_addr(&d));
    let mut conv = ready_stream(d.pcc_port).await;
    let signalled = Instant::now();
    let waited = tokio::task::spawn_blocking(move || gw.signal_and_wait(Signal::SIGTERM, EXIT_BOUND));
    assert_eq!(conv.next().await, end(Code::Unavailable, "draining"), "§15 step 5: cut at the cutoff");
    // The cutoff is the cleanup deadline: S5's start (after S1–S4, each well under a second here) + 10 s.
    assert!(signalled.elapsed() >= Duration::from_secs(10), "ended only at the cutoff");
    let (code, _, out, _) = waited.await.unwrap();
    assert_eq!(code, Some(70), "S1 unclean");
    assert!(out.is_empty());
}
