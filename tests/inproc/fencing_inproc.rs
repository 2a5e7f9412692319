//! lifecycle.md §6.3–§6.4 in-process: the domain is started through the library, an owner actor is
//! stopped, and readiness turns 503 for good while liveness stays 200 (issue: "owner loss is tested
//! in-process"). Also the `listener_policy` report of stage 6 (lifecycle.md §10.2).

use crate::support;

use std::time::Duration;

use ptc_gateway::testing::startup::gateway::Gateway;
use serde_json::json;
use support::{http_get, wait_until, Deployment};

/// The provider-free baseline with the bearer in a file (the test never touches its own environment).
fn deployment() -> Deployment {
    let mut d = Deployment::baseline();
    d.host["credentials"]["gateway"] = json!({"file": "token"});
    d.write_file("token", support::TOKEN);
    d.write_documents();
    d
}

async fn start(d: &Deployment) -> Gateway {
    support::start_inproc(d).await
}

async fn status(addr: std::net::SocketAddr, path: &'static str) -> (u16, String) {
    tokio::task::spawn_blocking(move || {
        let resp = http_get(addr, path).expect("exchange");
        (resp.status, String::from_utf8_lossy(&resp.body).into_owned())
    })
    .await
    .expect("join")
}

async fn check_owner_loss(owner: usize, name: &str, cause: &str, exit: u8) {
    let d = deployment();
    let gateway = start(&d).await;
    let addr = gateway.http_addr();
    assert_eq!(status(addr, "/health/ready").await, (200, r#"{"status":"ready"}"#.into()));

    gateway.owners()[owner].actor().stop(Some("test: owner lost".into()));
    let readiness = gateway.readiness().clone();
    wait_until("readiness false", Duration::from_secs(2), || !readiness.is_ready()).await;
    assert_eq!(readiness.cause().map(|c| c.as_str()), Some(cause), "{name}: audit-events.md §4.2 cause");

    // For good: readiness stays 503 and cannot be revived, liveness stays 200.
    for _ in 0..3 {
        assert_eq!(status(addr, "/health/ready").await, (503, r#"{"status":"not_ready"}"#.into()), "{name}");
        assert_eq!(status(addr, "/health/live").await, (200, r#"{"status":"live"}"#.into()), "{name}");
    }
    assert!(!gateway.context().mark_ready(), "{name}: a fence is permanent");
    assert!(!readiness.is_ready());

    gateway.context().trigger().signal();
    let code = gateway.serve_until_stopped().await;
    assert_eq!(code, exit, "{name}: exit status after the fence (lifecycle.md §7.4)");

    // audit-events.md §3.6: one `ready`, then one `not_ready` naming the first cause; the later drain
    // writes no second readiness record.
    let readiness: Vec<(String, String)> = event_records(&d)
        .into_iter()
        .filter(|r| r["kind"] == "readiness")
        .map(|r| (r["transition"].as_str().unwrap().to_owned(), r["cause"].as_str().unwrap().to_owned()))
        .collect();
    let want = [("ready".to_owned(), "startup".to_owned()), ("not_ready".to_owned(), cause.to_owned())];
    assert_eq!(readiness, want, "{name}: readiness records");
}

/// Every event record of the deployment, file by file, line by line.
fn event_records(d: &Deployment) -> Vec<serde_json::Value> {
    let dir = d.path("artifacts/events");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        out.extend(
            bytes
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| serde_json::from_slice(l).unwrap()),
        );
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_run_admission_fences_for_good_and_exits_70() {
    // lifecycle.md §7.4: a fenced run admission makes the exit unclean.
    check_owner_loss(0, "run admission", "admission_lost", 70).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_request_admission_fences_for_good() {
    check_owner_loss(1, "request admission", "admission_lost", 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_provider_call_admission_fences_for_good() {
    check_owner_loss(2, "provider-call admission", "owner_lost", 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listener_policy_is_returned_by_the_library() {
    let d = deployment();
    let gateway = start(&d).await;
    let soft = match nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE) {
        Ok((soft, _)) if soft == nix::sys::resource::RLIM_INFINITY => "\"unlimited\"".to_string(),
        Ok((soft, _)) => soft.to_string(),
        Err(e) => panic!("getrlimit: {e}"),
    };
    // The provider-free baseline: 16 + 8 = 24; reserve 128 + 1×4 + 0 + 2×4 = 140; 24 + 64 + 2 + 140 = 230.
    let expected = format!(
        "{{\"descriptor_budget\":230,\"pcc_transport\":{{\"num_acceptors\":1,\"num_connections\":64}},\"transport\":{{\"descriptor_reserve\":140,\"handler_ceiling\":24,\"idle_headroom\":8,\"num_acceptors\":1,\"num_connections\":24,\"soft_descriptor_limit\":{soft}}}}}"
    );
    let report = ptc_gateway::testing::json::to_deterministic_string(&gateway.listener_policy().to_value());
    assert_eq!(report, expected);
    gateway.context().trigger().signal();
    assert_eq!(gateway.serve_until_stopped().await, 0);
}
