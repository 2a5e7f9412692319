//! lifecycle.md §9.1 in-process, for the cases a signal cannot produce: `STOPPING=1` for an abnormal
//! stop (§7.5), and `WATCHDOG=1` continuing while the domain is fenced and while it drains.

use crate::support;

use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

use ptc_gateway::testing::codes::AbnormalCause;
use ptc_gateway::testing::notify::Notifier;
use ptc_gateway::testing::startup::gateway::Gateway;
use ptc_gateway::testing::startup::watchdog;
use serde_json::json;
use support::Deployment;

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

/// A test-owned notify socket and the notifier aimed at it.
fn socket() -> (tempfile::TempDir, UnixDatagram, Notifier) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notify");
    let socket = UnixDatagram::bind(&path).unwrap();
    socket.set_nonblocking(true).unwrap();
    let notifier = Notifier::from_value(Some(path.as_os_str()));
    (dir, socket, notifier)
}

/// Waits (polling, with a deadline) for a datagram holding `line`.
async fn expect_line(socket: &UnixDatagram, line: &str, deadline: Duration) {
    let start = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        if let Ok(n) = socket.recv(&mut buf) {
            if std::str::from_utf8(&buf[..n]).unwrap().lines().any(|l| l == line) {
                return;
            }
        }
        assert!(start.elapsed() < deadline, "no {line} within {deadline:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abnormal_stop_sends_stopping_and_exits_70() {
    let d = deployment();
    let gateway = start(&d).await;
    let (_dir, socket, notifier) = socket();
    gateway.context().stop_abnormally(AbnormalCause::ListenerLost);
    let code = gateway.serve_until_stopped_with(notifier).await;
    assert_eq!(code, 70, "lifecycle.md §7.5");
    expect_line(&socket, "STOPPING=1", Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_keeps_pinging_while_fenced_and_while_draining() {
    let d = deployment();
    let gateway = start(&d).await;
    let (_dir, socket, notifier) = socket();
    let probe = watchdog::Probe::default();
    probe.register(gateway.domain().clone());
    watchdog::spawn(notifier.clone(), Some(Duration::from_millis(20)), probe);
    expect_line(&socket, "WATCHDOG=1", Duration::from_secs(5)).await;

    // Fence: provider-call admission's owner is lost (lifecycle.md §6.3); the process stays up.
    gateway.owners()[2].actor().stop(Some("test: owner lost".into()));
    let readiness = gateway.readiness().clone();
    let start = Instant::now();
    while readiness.is_ready() {
        assert!(start.elapsed() < Duration::from_secs(2), "no fence");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    while socket.recv(&mut [0u8; 64]).is_ok() {}
    expect_line(&socket, "WATCHDOG=1", Duration::from_secs(5)).await;

    gateway.context().trigger().signal();
    let code = gateway.serve_until_stopped_with(notifier).await;
    assert_eq!(code, 0, "a fence by an owner loss alone leaves the exit clean (lifecycle.md §7.4)");
    while socket.recv(&mut [0u8; 64]).is_ok() {}
    // After S8 the supervisor is stopped; the ticker still claims liveness until the process exits.
    expect_line(&socket, "WATCHDOG=1", Duration::from_secs(5)).await;
}
