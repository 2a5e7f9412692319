//! Admission under load and faults, through the library: bounds are asserted from inside (peak gauge),
//! leases come back on drop, panic and abort, quiesce refuses with its own reason, the owner reports.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::context;
use common::{Cause, DomainHandle};
use ptc_actors::{AdmissionOwnerRef, AdmissionPool, PoolState, Refusal, RefusalOrder};
use tokio::sync::oneshot;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concurrent_storm_never_exceeds_the_bound() {
    const BOUND: u32 = 8;
    const TASKS: usize = 2_000;
    let pool = AdmissionPool::new("runs", BOUND, RefusalOrder::UnavailableFirst);
    let holding = Arc::new(AtomicUsize::new(0));
    let most_held = Arc::new(AtomicUsize::new(0));
    let granted = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(TASKS);
    for _ in 0..TASKS {
        let (pool, holding, most_held) = (pool.clone(), holding.clone(), most_held.clone());
        let (granted, refused) = (granted.clone(), refused.clone());
        tasks.push(tokio::spawn(async move {
            match pool.try_reserve() {
                Ok(lease) => {
                    granted.fetch_add(1, Ordering::Relaxed);
                    let now = holding.fetch_add(1, Ordering::AcqRel) + 1;
                    most_held.fetch_max(now, Ordering::AcqRel);
                    for _ in 0..4 {
                        tokio::task::yield_now().await;
                    }
                    holding.fetch_sub(1, Ordering::AcqRel);
                    drop(lease);
                }
                Err(refusal) => {
                    assert_eq!(refusal, Refusal::Exhausted);
                    refused.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert!(pool.peak() <= BOUND as usize, "peak {} > bound", pool.peak());
    assert!(most_held.load(Ordering::Acquire) <= BOUND as usize);
    assert!(pool.peak() >= 1);
    assert_eq!(pool.in_use(), 0);
    assert_eq!(granted.load(Ordering::Relaxed) + refused.load(Ordering::Relaxed), TASKS);
}

#[tokio::test]
async fn a_lease_returns_on_task_panic() {
    let pool = AdmissionPool::new("requests", 1, RefusalOrder::UnavailableFirst);
    let held = pool.clone();
    let task = tokio::spawn(async move {
        let _lease = held.try_reserve().unwrap();
        panic!("the request task panicked");
    });
    assert!(task.await.unwrap_err().is_panic());
    assert_eq!(pool.in_use(), 0);
    assert!(pool.try_reserve().is_ok(), "the slot came back");
}

#[tokio::test]
async fn a_lease_returns_on_task_abort() {
    let pool = AdmissionPool::new("requests", 1, RefusalOrder::UnavailableFirst);
    let held = pool.clone();
    let (reserved_tx, reserved_rx) = oneshot::channel();
    let task = tokio::spawn(async move {
        let _lease = held.try_reserve().unwrap();
        let _ = reserved_tx.send(());
        std::future::pending::<()>().await;
    });
    reserved_rx.await.unwrap();
    assert_eq!(pool.in_use(), 1);
    assert_eq!(pool.try_reserve().unwrap_err(), Refusal::Exhausted);
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(pool.in_use(), 0);
    assert_eq!(pool.peak(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_owner_quiesces_with_the_quiescing_reason_and_reports() {
    let (ctx, _recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let runs = AdmissionPool::new("runs", 2, RefusalOrder::UnavailableFirst);
    let owner = AdmissionOwnerRef::start(&domain, "run_admission", vec![runs.clone()], Cause::PoolGone)
        .await
        .unwrap();
    let admitted = runs.try_reserve().unwrap();
    let acked = owner.quiesce(Duration::from_secs(1)).await.unwrap();
    assert_eq!(acked.len(), 1);
    assert_eq!((acked[0].name, acked[0].in_use, acked[0].state), ("runs", 1, PoolState::Quiescing));
    assert_eq!(runs.try_reserve().unwrap_err(), Refusal::Quiescing, "not Exhausted: a slot is free");
    drop(admitted);
    let report = owner.report(Duration::from_secs(1)).await.unwrap();
    assert_eq!((report[0].in_use, report[0].peak, report[0].capacity), (0, 1, 2));
    domain.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(start_paused = true)]
async fn the_request_owner_loss_fences_both_of_its_pools() {
    let (ctx, _recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let requests = AdmissionPool::new("requests", 1, RefusalOrder::UnavailableFirst);
    let streams = AdmissionPool::new("pcc_streams", 1, RefusalOrder::ExhaustedFirst);
    let owner = AdmissionOwnerRef::start(
        &domain,
        "request_admission",
        vec![requests.clone(), streams.clone()],
        Cause::PoolGone,
    )
    .await
    .unwrap();
    assert!(ctx.mark_ready());
    let open_stream = streams.try_reserve().unwrap();
    owner.actor().stop(None);
    tokio::time::timeout(Duration::from_secs(10), async {
        while ctx.readiness().is_ready() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    assert_eq!(
        requests.try_reserve().unwrap_err(),
        Refusal::Unavailable,
        "a fenced request pool is unavailable"
    );
    assert_eq!(
        streams.try_reserve().unwrap_err(),
        Refusal::Exhausted,
        "exhaustion is checked before the owner"
    );
    drop(open_stream);
    assert_eq!(streams.try_reserve().unwrap_err(), Refusal::Unavailable, "then unavailability");
    assert_eq!(ctx.readiness().cause(), Some(Cause::PoolGone));
    domain.shutdown(Duration::from_secs(1)).await;
}

/// A task linked to an owner (`spawn_linked`): its value when it returns; when it panics, `None`, and the
/// owner's pools are fenced at once (the work it admitted was lost before it settled).
#[tokio::test(start_paused = true)]
async fn a_linked_task_returns_its_value_and_a_panicking_one_fences_the_pools() {
    let (ctx, _recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let runs = AdmissionPool::new("runs", 2, RefusalOrder::UnavailableFirst);
    let owner = AdmissionOwnerRef::start(&domain, "run_admission", vec![runs.clone()], Cause::PoolGone)
        .await
        .unwrap();
    let returned = owner.spawn_linked(async {
        tokio::task::yield_now().await;
        7
    });
    assert_eq!(returned.await.unwrap(), Some(7));
    drop(runs.try_reserve().expect("a returning task fences nothing"));
    let panicked = owner.spawn_linked(async {
        tokio::task::yield_now().await;
        panic!("a panic in linked work");
    });
    assert_eq!(panicked.await.unwrap(), None, "the panic is the owner's, not the handle's");
    assert_eq!(runs.try_reserve().unwrap_err(), Refusal::Unavailable, "fenced at once");
    domain.shutdown(Duration::from_secs(1)).await;
}
