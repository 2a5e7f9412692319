//! The private audit read from inside the gateway (audit-events.md §2.2, §2.6, §2.8; execution.md §10;
//! §6.1 AU10, AU12): a storm of 64 write calls, the run slot held until the record is durable, and a
//! failed sync. One test function: the sync gate of the test build is process-wide.

#![cfg(feature = "fault-injection")]

use crate::support;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ptc_gateway::testing::audit::store::hooks;
use ptc_gateway::testing::codes::NotReadyCause;
use ptc_gateway::testing::startup::gateway::Gateway;
use serde_json::{json, Value};
use support::audit::{all_records, deployment, exchange, got_success};
use support::{wait_until, Deployment, TOKEN};

async fn start(d: &mut Deployment) -> Gateway {
    d.host["credentials"]["gateway"] = json!({"file": "token"});
    d.write_file("token", TOKEN);
    d.write_documents();
    support::start_inproc(d).await
}

/// Calls `note` with id `id` until it is not refused for run capacity (or 30 s pass).
fn call_until_admitted(addr: SocketAddr, id: usize) -> (u16, String) {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, text) = exchange(addr, "note", id);
        if status != 429 || Instant::now() > end {
            return (status, text);
        }
        std::thread::yield_now();
    }
}

/// Maximum number of records whose [started_at, ended_at] intervals overlap.
fn max_overlap(records: &[Value]) -> usize {
    let spans: Vec<(String, String)> = records
        .iter()
        .map(|r| (r["started_at"].as_str().unwrap().to_owned(), r["ended_at"].as_str().unwrap().to_owned()))
        .collect();
    spans.iter().map(|(s, _)| spans.iter().filter(|(a, b)| a <= s && s <= b).count()).max().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_calls_are_durable_before_publication_and_release() {
    let _alone = support::process_state_exclusive().await;
    storm_of_64().await;
    slot_held_while_the_sync_is_held().await;
    a_failed_sync_stops_the_gateway().await;
}

/// AU10: 64 concurrent write calls with `max_concurrent_runs` 4.
///
/// The committer flushes a batch at once when no sync is in progress (audit-events.md §2.6), so how many
/// records share a sync depends on how long a sync takes on this disk. To assert group commit without
/// timing, the first sync is held until all four runs have submitted their records: the three queued
/// behind it form one batch.
async fn storm_of_64() {
    let mut d = deployment(4, 64, 1 << 20, 4);
    let gateway = start(&mut d).await;
    let addr = gateway.http_addr();
    let runs = gateway.pools().runs.clone();
    let log = gateway.audit_log().expect("audit configured");
    hooks::hold_syncs(true);
    let clients: Vec<_> =
        (0..64).map(|id| std::thread::spawn(move || call_until_admitted(addr, id))).collect();
    wait_until("four records submitted behind the held first sync", Duration::from_secs(20), || {
        log.stats().submitted() == 4 && log.stats().batches() == 1
    })
    .await;
    hooks::hold_syncs(false);
    let results: Vec<(u16, String)> =
        tokio::task::spawn_blocking(move || clients.into_iter().map(|c| c.join().unwrap()).collect())
            .await
            .unwrap();
    let ok = results
        .iter()
        .enumerate()
        .filter(|(id, (status, text))| *status == 200 && got_success(text, *id))
        .count();
    assert_eq!(ok, 64, "every call eventually ran: {:?}", &results[0]);
    wait_until("every run slot returned", Duration::from_secs(5), || runs.in_use() == 0).await;
    let stats = (log.stats().records(), log.stats().syncs(), log.stats().batches());
    gateway.context().trigger().signal();
    assert_eq!(gateway.serve_until_stopped().await, 0);

    let records = all_records(&d.path("audit"));
    assert_eq!(records.len(), 64, "exactly one record per 200 response");
    for r in &records {
        assert_eq!(r["outcome_code"], "success");
        assert_eq!(r["cleanup_status"], "complete");
        assert_eq!(r["disconnected"], false);
        assert_eq!(r["dispatch_state"], "true");
        assert_eq!(r["tool_name"], "note");
    }
    let ids: HashSet<&str> = records.iter().map(|r| r["call_id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 64, "call ids are unique");
    assert!(runs.peak() >= 2 && runs.peak() <= 4, "run peak {}", runs.peak());
    assert!(max_overlap(&records) >= 2, "records show concurrent runs");
    assert_eq!(stats.0, 64);
    assert_eq!(stats.1, stats.2, "one sync per batch");
    assert!(stats.1 <= 62, "group commit: {} syncs for 64 records", stats.1);
    assert!(!d.path("audit/.gateway-lock").exists(), "S7 released the lock");
}

/// execution.md §10: the run slot is released only after the record is durable.
async fn slot_held_while_the_sync_is_held() {
    let mut d = deployment(1, 8, 1 << 20, 4);
    let gateway = start(&mut d).await;
    let addr = gateway.http_addr();
    let runs = gateway.pools().runs.clone();
    let log = gateway.audit_log().unwrap();
    hooks::hold_syncs(true);
    let first = std::thread::spawn(move || exchange(addr, "note", 1));
    wait_until("the record's batch is written and its sync held", Duration::from_secs(10), || {
        log.stats().batches() == 1
    })
    .await;
    assert_eq!(log.stats().syncs(), 0);
    assert_eq!(runs.in_use(), 1, "the run ended but its slot is held until the record is durable");
    assert!(!first.is_finished(), "nothing was published before the record is durable");
    // AU16's second half: meanwhile another call is refused for run capacity.
    let (status, text) = tokio::task::spawn_blocking(move || exchange(addr, "note", 2)).await.unwrap();
    assert_eq!(status, 429, "{text}");
    assert!(text.contains("run_capacity_exhausted"), "{text}");
    assert_eq!(runs.in_use(), 1);
    hooks::hold_syncs(false);
    let (status, text) = tokio::task::spawn_blocking(move || first.join().unwrap()).await.unwrap();
    assert_eq!(status, 200);
    assert!(got_success(&text, 1), "{text}");
    wait_until("the slot returned", Duration::from_secs(5), || runs.in_use() == 0).await;
    assert_eq!(log.stats().syncs(), 1);
    gateway.context().trigger().signal();
    assert_eq!(gateway.serve_until_stopped().await, 0);
    assert_eq!(all_records(&d.path("audit")).len(), 1);
}

/// AU12: the third batch sync fails during 8 concurrent writers.
async fn a_failed_sync_stops_the_gateway() {
    let mut d = deployment(4, 16, 1 << 20, 4);
    std::env::set_var("PTC_AUDIT_FAIL_SYNC", "2");
    let gateway = start(&mut d).await;
    std::env::remove_var("PTC_AUDIT_FAIL_SYNC");
    let addr = gateway.http_addr();
    let log = gateway.audit_log().unwrap();
    let clients: Vec<_> = (0..8)
        .map(|c| {
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                for k in 0..20 {
                    let id = c * 100 + k;
                    let (status, text) = call_until_admitted(addr, id);
                    let ok = status == 200 && got_success(&text, id);
                    seen.push((status, ok, text));
                    if status != 200 {
                        break;
                    }
                }
                seen
            })
        })
        .collect();
    wait_until("readiness false", Duration::from_secs(20), || !gateway.readiness().is_ready()).await;
    assert_eq!(gateway.readiness().cause(), Some(NotReadyCause::AuditUnavailable));
    let seen: Vec<_> = tokio::task::spawn_blocking(move || {
        clients.into_iter().flat_map(|c| c.join().unwrap()).collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let acknowledged = log.stats().records();
    assert_eq!(gateway.serve_until_stopped().await, 70, "an audit write failure exits 70");
    let successes = seen.iter().filter(|(_, ok, _)| *ok).count() as u64;
    assert_eq!(successes, acknowledged, "no client got a success the audit did not acknowledge");
    // A stream of an affected call was closed without its message event.
    assert!(
        seen.iter().any(|(status, ok, text)| *status == 200 && !ok && !text.contains("event: message")),
        "an affected call's stream ends without a message"
    );
    let records = all_records_prefix(&d);
    assert!(records >= acknowledged, "nothing acknowledged is lost: {records} lines, {acknowledged} acks");
    assert!(!d.path("audit/.gateway-lock").exists(), "the lock is removed even after the failure");
}

/// Valid complete lines in the files (the failed batch may have been written but not synced).
fn all_records_prefix(d: &Deployment) -> u64 {
    let mut n = 0;
    for f in support::audit::audit_files(&d.path("audit")) {
        let content = std::fs::read_to_string(f).unwrap();
        n += content.lines().count() as u64;
    }
    n
}
