//! The PCC front against a gateway started in-process through the library (pcc.md §17 V41, V54), for the
//! rows whose setup needs a hand inside: a fenced domain without upstreams to kill, and a drain whose
//! start is observed by the front while the listener still accepts (black-box, a drain closes the
//! listener at once, so a new stream usually finds no listener: tests/black_box/pcc_front/drain.rs).

use crate::support;
use crate::support::{pcc_client as client, pcc_fixture as fixture};

use ptc_gateway::testing::codes::NotReadyCause;
use serde_json::json;
use tonic::Code;

use client::{body, call, err, open};
use fixture::{auth, deployment_with, ready_stream};

/// The fixture with the bearer in a file (the test never touches its own environment).
fn deployment() -> support::Deployment {
    deployment_with(64, 4, |d| {
        d.host["credentials"]["gateway"] = json!({"file": "token"});
        d.write_file("token", support::TOKEN);
    })
}

/// §17 V41: a fenced domain (here fenced directly, as the loss of an upstream child would): `connect`
/// and `initialize` as usual, `tools/list` and `tools/call` -31998.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_domain_answers_list_and_call_unavailable() {
    let d = deployment();
    let _audit_hooks = support::process_state_shared().await;
    let gateway = support::start_inproc(&d).await;
    let port = gateway.pcc_addr().expect("pcc").port();
    assert!(gateway.context().fence(NotReadyCause::ProviderRuntimeLost));
    let mut conv = ready_stream(port).await;
    conv.send(&body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)).await;
    assert_eq!(conv.next().await, err(-31998, "Server unavailable", None, "2"), "V41");
    conv.send(&call("3", "alpha", r#"{"text":"hi"}"#)).await;
    assert_eq!(conv.next().await, err(-31998, "Server unavailable", None, "3"), "V41");
    gateway.context().trigger().signal();
    gateway.serve_until_stopped().await;
}

/// §4 check 4 and §17 V54: once a drain has begun, a new stream is refused `UNAVAILABLE` `draining`
/// before any message is read. The drain's first step (readiness turns draining, lifecycle.md S1) is
/// taken by hand so that the listener still accepts the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_stream_during_a_drain_is_refused_draining() {
    let d = deployment();
    let _audit_hooks = support::process_state_shared().await;
    let gateway = support::start_inproc(&d).await;
    let port = gateway.pcc_addr().expect("pcc").port();
    assert!(gateway.readiness().begin_drain());
    let auth = auth();
    let status = open(port, &[("authorization", auth.as_str())]).await.err().expect("V54: refused");
    assert_eq!((status.code(), status.message()), (Code::Unavailable, "draining"), "V54");
    // Check 2 precedes check 4: without the bearer it is still `unauthorized`.
    let status = open(port, &[]).await.err().expect("refused");
    assert_eq!((status.code(), status.message()), (Code::Unauthenticated, "unauthorized"));
    gateway.context().trigger().signal();
    gateway.serve_until_stopped().await;
}
