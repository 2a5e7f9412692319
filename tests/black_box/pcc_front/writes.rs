//! Write tools over the PCC stream (pcc.md §16, audit-events.md §2.2): exactly one audit record per
//! dispatched write call, `disconnected` as §11 defines it, the client deadline, and the privacy rule of
//! §13 (V58).

use std::time::{Duration, Instant};

use tonic::Code;

use super::client::{
    body, call, end, err, h, initialized, open, open_with_sentinels, ping, pong, In, Out, Sentinels,
};
use super::fixture::{
    alpha, alpha_success, audit_records, auth, deployment, done, ready_stream, start, summary,
};
use crate::support;

/// §17 V36 with a write tool, and V43: `call_in_flight` at once, then the call's success, and one audit record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_call_in_flight_refuses_a_second_and_leaves_one_record() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let mut conv = ready_stream(d.pcc_port).await;
    conv.send(&call(r#""call-3""#, "delta", "{}")).await;
    conv.send(&alpha(r#""call-4""#)).await;
    assert_eq!(conv.next().await, err(-32600, "Invalid Request", Some("call_in_flight"), r#""call-4""#));
    // V43: a cancellation naming another id is ignored.
    conv.send(&body(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other","reason":"user"}}"#)).await;
    assert_eq!(conv.next().await, done(r#""call-3""#), "V36, V43: the write call's success after it ends");
    let records = audit_records(&d, 1).await;
    assert_eq!(summary(&records[0]), ("delta", "success", false), "V36");
}

/// §17 V42 and V44: a held write call cancelled by `notifications/cancelled` (no response, `disconnected`
/// false, the next call accepted), and one cancelled by a reset (`disconnected` true).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_write_calls_are_audited_once_each() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let mut a = ready_stream(d.pcc_port).await;
    a.send(&call(r#""call-6""#, "beta", "{}")).await;
    a.send(&body(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-6","reason":"user"}}"#)).await;
    // No response for call-6: the next message is the answer to a later call (or the refusal while the
    // cancelled call's cleanup still holds the stream, §11).
    let started = Instant::now();
    loop {
        a.send(&alpha(r#""call-7""#)).await;
        let got = a.next().await;
        if got == alpha_success(r#""call-7""#) {
            break;
        }
        assert_eq!(got, err(-32600, "Invalid Request", Some("call_in_flight"), r#""call-7""#), "V42");
        assert!(started.elapsed() < Duration::from_secs(20), "V42: no call accepted within 20 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let records = audit_records(&d, 1).await;
    assert_eq!(summary(&records[0]), ("beta", "cancelled", false), "V42");
    // V44: the client resets the stream with the call in flight.
    let mut b = ready_stream(d.pcc_port).await;
    b.send(&call(r#""call-8""#, "beta", "{}")).await;
    b.send(&ping(1)).await;
    assert_eq!(b.next().await, pong(1), "the call is in flight once the ping after it is answered");
    drop(b);
    let records = audit_records(&d, 2).await;
    assert_eq!(summary(&records[1]), ("beta", "cancelled", true), "V44");
}

/// §4 and §11: the client deadline (`grpc-timeout`) bounds the whole stream, enforced by the server: a
/// held write call is cancelled as disconnected, and an idle stream ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_deadline_cancels_the_stream() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let auth = auth();
    // Sent as plain metadata, so that only the server enforces it (the tonic client sets no timer).
    let meta = [("authorization", auth.as_str()), ("grpc-timeout", "3S")];
    let mut conv = open(d.pcc_port, &meta).await.unwrap();
    for step in std::iter::once(super::client::c()).chain(h()) {
        conv.send(&step).await;
    }
    let started = Instant::now();
    assert_eq!(conv.next().await, Out::Connected);
    assert_eq!(conv.next().await, initialized(0, "2025-11-25"));
    conv.send(&call(r#""call-1""#, "beta", "{}")).await;
    assert_eq!(conv.next().await, end(Code::DeadlineExceeded, ""));
    assert!(started.elapsed() < Duration::from_secs(15), "after {:?}", started.elapsed());
    let records = audit_records(&d, 1).await;
    assert_eq!(summary(&records[0]), ("beta", "cancelled", true), "a client deadline is a disconnect");
    // An idle stream ends at its deadline too, before the 10 s connect timer.
    let meta = [("authorization", auth.as_str()), ("grpc-timeout", "1500m")];
    let mut idle = open(d.pcc_port, &meta).await.unwrap();
    assert_eq!(idle.next().await, end(Code::DeadlineExceeded, ""));
}

const SENTINELS: Sentinels = Sentinels {
    bundle_id: "sentinel-bundle-7f3a",
    feature_id: "sentinel-feature-7f3a",
    client_info: "sentinel-client-info-7f3a",
    device_group: "sentinel-group-7f3a",
    request_id: "sentinel-request-id-7f3a",
    cloudos: "sentinel-cloudos-7f3a",
    uuid: "sentinel-uuid-7f3a",
};

/// §13, §16 and §17 V58: tenant information, `request_id`, `server_cloudos_version`,
/// `apple-request-uuid` (here also the call's id) and the bearer appear nowhere: not in the event log,
/// the audit, stderr, stdout or any other file of the deployment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_metadata_never_leaves_the_stream() {
    let d = deployment(64, 4);
    let gw = start(&d);
    let mut conv = open_with_sentinels(d.pcc_port, &SENTINELS, "4bf92f3577b34da6a3ce929d0e0e4736").await;
    let id = SENTINELS.call_id();
    conv.send(&call(&id, "delta", "{}")).await;
    assert_eq!(conv.next().await, done(&id));
    conv.send(&In::HalfClose).await;
    assert_eq!(conv.next().await, end(Code::Ok, ""));
    assert_eq!(audit_records(&d, 1).await.len(), 1);
    let (code, _, stdout, stderr) = tokio::task::spawn_blocking(move || {
        gw.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(30))
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0));
    let mut texts = vec![("stdout".to_owned(), stdout), ("stderr".to_owned(), stderr)];
    for path in d.tree() {
        if path.is_file() {
            texts.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    assert!(texts.iter().any(|(p, _)| p.contains("audit")), "the audit is among the files read");
    let mut forbidden: Vec<&str> = SENTINELS.all().to_vec();
    forbidden.push(support::TOKEN);
    for (path, content) in &texts {
        let content = String::from_utf8_lossy(content);
        for s in &forbidden {
            assert!(!content.contains(s), "V58: {path} contains a sentinel");
        }
    }
}

/// execution.md §6.2 over the PCC stream: a run task that panics outside the Luau call (the
/// `panic_in_run` fault point) is a run lost before it settled. Its owner classifies the write call
/// `internal_error`, writes its audit record with `cleanup_status` `"uncertain"` before anything is
/// published, answers with the write-effects text, and run admission's owner is lost: readiness is
/// fenced within 1 s and the exit is 70 (lifecycle.md §7.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_lost_outside_luau_is_audited_answered_and_fences() {
    let d = deployment(64, 4);
    let mut command = d.command();
    command.env("PTC_FAULT", "panic_in_run");
    let gw = support::Gateway::start(command, super::fixture::http_addr(&d));
    let mut conv = ready_stream(d.pcc_port).await;
    conv.send(&call(r#""call-1""#, "delta", "{}")).await;
    assert_eq!(
        conv.next().await,
        Out::Json(
            r#"{"id":"call-1","jsonrpc":"2.0","result":{"content":[{"text":"Operation may have changed data; do not retry automatically","type":"text"}],"isError":true,"structuredContent":{"outcome":"internal_error"}}}"#
                .to_owned()
        )
    );
    let records = audit_records(&d, 1).await;
    assert_eq!(summary(&records[0]), ("delta", "internal_error", false));
    assert_eq!(records[0]["cleanup_status"], "uncertain");
    assert_eq!(records[0]["dispatch_state"], "unknown");
    let addr = super::fixture::http_addr(&d);
    let deadline = Instant::now() + Duration::from_secs(1);
    while support::http_get(addr, "/health/ready").unwrap().status != 503 {
        assert!(Instant::now() < deadline, "run admission's loss fences within 1 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (code, _, _, _) = tokio::task::spawn_blocking(move || {
        gw.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(40))
    })
    .await
    .unwrap();
    assert_eq!(code, Some(70));
}
