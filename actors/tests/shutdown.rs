//! The staged shutdown, driven through the library on tokio's paused clock (the test domain's table):
//! stage order and deadlines, the drain cutoff, abnormal stops, and the exit status.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{context, Event, Recorder};
use common::{Cause, DomainContext, DomainHandle, ShutdownPlan, ShutdownReport, StageContext, Step, Stop};
use ptc_actors::{
    run_shutdown, AdmissionOwnerRef, AdmissionPool, Lease, Refusal, RefusalOrder, StageOutcome, Unclean,
};
use tokio::time::Instant;

struct Fixture {
    ctx: DomainContext,
    recorder: Arc<Recorder>,
    domain: DomainHandle,
    runs: AdmissionPool,
    owner: AdmissionOwnerRef,
}

async fn fixture() -> Fixture {
    let (ctx, recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let runs = AdmissionPool::new("runs", 4, RefusalOrder::UnavailableFirst);
    let owner = AdmissionOwnerRef::start(&domain, "run_admission", vec![runs.clone()], Cause::PoolGone)
        .await
        .unwrap();
    assert!(ctx.mark_ready());
    Fixture { ctx, recorder, domain, runs, owner }
}

fn plan(f: &Fixture) -> ShutdownPlan {
    ShutdownPlan::new(f.owner.clone()).with_domain(f.domain.clone(), Duration::from_secs(1))
}

/// A run that stops when the drain cancels it (or after `work`, whichever is first).
fn spawn_run(lease: Lease, work: Duration) -> tokio::task::JoinHandle<bool> {
    tokio::spawn(async move {
        let cancelled = tokio::select! {
            _ = lease.cancelled() => true,
            _ = tokio::time::sleep(work) => false,
        };
        drop(lease);
        cancelled
    })
}

fn outcomes(report: &ShutdownReport) -> Vec<StageOutcome> {
    report.stages.iter().map(|(_, o)| *o).collect()
}

#[tokio::test(start_paused = true)]
async fn the_clean_path_runs_every_stage_in_order_and_exits_0() {
    let f = fixture().await;
    let seen: Arc<Mutex<Vec<StageContext>>> = Arc::default();
    let mut plan = plan(&f).with_enabled(Step::Flush, true);
    for stage in Step::ALL {
        let seen = seen.clone();
        plan = plan.with_stage(stage, move |ctx: StageContext| async move {
            seen.lock().unwrap().push(ctx);
            StageOutcome::Clean
        });
    }
    f.ctx.trigger().signal();
    let start = Instant::now();
    let report = run_shutdown(&f.ctx, plan).await;

    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.stages.iter().map(|(s, _)| *s).collect::<Vec<_>>(), Step::ALL);
    assert_eq!(outcomes(&report), [StageOutcome::Clean; 8]);
    assert_eq!(start.elapsed(), Duration::ZERO, "an idle gateway waits for nothing");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.iter().map(|c| c.stage).collect::<Vec<_>>(), Step::ALL, "hooks run in stage order");
    assert!(
        seen.iter().all(|c| c.drain_deadline == start + Duration::from_millis(10_000)),
        "the drain deadline"
    );
    let s5 = &seen[4];
    assert_eq!(s5.cleanup_deadline, Some(s5.started + Duration::from_millis(10_000)), "the cleanup deadline");
    assert_eq!(seen[6].bound, seen[6].started + Duration::from_millis(5_000), "the flush step's bound");
    assert!(seen[..4].iter().all(|c| c.cleanup_deadline.is_none()));

    assert_eq!(f.runs.try_reserve().unwrap_err(), Refusal::Quiescing, "quiesced: new leases refused");
    assert_eq!(f.ctx.readiness().cause(), Some(Cause::Draining));
    assert_eq!(report.children, [("run_admission".to_string(), ptc_actors::ChildStop::Stopped)]);
    let stage_events: Vec<Event> =
        f.recorder.events().into_iter().filter(|e| matches!(e, Event::Stage(..))).collect();
    let expected: Vec<Event> = Step::ALL.iter().map(|s| Event::Stage(*s, StageOutcome::Clean)).collect();
    assert_eq!(stage_events, expected);
}

#[tokio::test(start_paused = true)]
async fn a_stage_reporting_unclean_exits_unclean() {
    for stage in Step::ALL {
        let f = fixture().await;
        let plan = plan(&f)
            .with_enabled(Step::Flush, true)
            .with_stage(stage, |_| async { StageOutcome::Unclean(Unclean::Failed) });
        let report = run_shutdown(&f.ctx, plan).await;
        assert_eq!(report.outcome(stage), Some(StageOutcome::Unclean(Unclean::Failed)));
        let expected = if stage == Step::Mark { 0 } else { 1 };
        assert_eq!(report.exit_code(), expected, "{stage:?}: the marking step never counts");
    }
}

#[tokio::test(start_paused = true)]
async fn the_drain_deadline_cancels_remaining_runs() {
    let f = fixture().await;
    let run = spawn_run(f.runs.try_reserve().unwrap(), Duration::from_secs(60));
    f.ctx.trigger().signal();
    let start = Instant::now();
    let report = run_shutdown(&f.ctx, plan(&f)).await;

    assert!(run.await.unwrap(), "the run was cancelled");
    assert_eq!(report.outcome(Step::Drain), Some(StageOutcome::Unclean(Unclean::LeasesCancelled)));
    assert_eq!(report.outcome(Step::Idle), Some(StageOutcome::Clean), "it settled in time");
    assert_eq!(start.elapsed(), Duration::from_millis(10_000), "cancelled exactly at the drain deadline");
    assert_eq!(f.runs.in_use(), 0);
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_run_finishing_before_the_drain_deadline_keeps_the_exit_clean() {
    let f = fixture().await;
    let run = spawn_run(f.runs.try_reserve().unwrap(), Duration::from_secs(3));
    f.ctx.trigger().signal();
    let start = Instant::now();
    let report = run_shutdown(&f.ctx, plan(&f)).await;
    assert!(!run.await.unwrap(), "the run finished on its own");
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    assert_eq!(report.exit_code(), 0);
    assert!(report.stages.iter().all(|(_, o)| o.is_clean()));
}

#[tokio::test(start_paused = true)]
async fn an_abnormal_stop_drains_with_the_deadline_set_to_now() {
    let f = fixture().await;
    let run = spawn_run(f.runs.try_reserve().unwrap(), Duration::from_secs(60));
    f.ctx.stop_abnormally(Stop::FrontGone);
    let start = Instant::now();
    let report = run_shutdown(&f.ctx, plan(&f).with_enabled(Step::Flush, true)).await;
    assert!(run.await.unwrap());
    assert_eq!(start.elapsed(), Duration::ZERO, "the drain cancels at once");
    assert_eq!(report.outcome(Step::Drain), Some(StageOutcome::Unclean(Unclean::LeasesCancelled)));
    assert_eq!(
        report.outcome(Step::Flush),
        Some(StageOutcome::Clean),
        "the flush step runs: the sink is not the cause"
    );
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_abnormal_stop_is_unclean_even_when_every_stage_is_clean() {
    let f = fixture().await;
    f.ctx.stop_abnormally(Stop::SecondFrontGone);
    let report = run_shutdown(&f.ctx, plan(&f)).await;
    assert!(report.stages.iter().all(|(_, o)| o.is_clean()));
    assert!(report.incidents.abnormal_stop);
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_abnormal_stop_during_the_drain_cancels_at_once() {
    let f = fixture().await;
    let run = spawn_run(f.runs.try_reserve().unwrap(), Duration::from_secs(60));
    f.ctx.trigger().signal();
    let start = Instant::now();
    let ctx = f.ctx.clone();
    let audit_failure = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        ctx.stop_abnormally(Stop::SinkBroken);
    });
    let report = run_shutdown(&f.ctx, plan(&f).with_enabled(Step::Flush, true)).await;
    audit_failure.await.unwrap();
    assert!(run.await.unwrap());
    assert_eq!(start.elapsed(), Duration::from_secs(2), "the drain deadline moved to the abnormal stop");
    assert_eq!(report.outcome(Step::Flush), Some(StageOutcome::Skipped));
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_transport_owner_fence_alone_keeps_the_exit_clean() {
    let f = fixture().await;
    assert!(f.ctx.fence(Cause::TransportGone));
    let report = run_shutdown(&f.ctx, plan(&f)).await;
    assert_eq!(report.exit_code(), 0, "nothing uncertain is left to clean up");
}

#[tokio::test(start_paused = true)]
async fn a_run_admission_fence_makes_the_exit_unclean() {
    let f = fixture().await;
    assert!(f.owner.fence(&f.ctx, Cause::PoolGone, Duration::from_secs(1)).await);
    assert_eq!(f.runs.try_reserve().unwrap_err(), Refusal::Unavailable);
    let report = run_shutdown(&f.ctx, plan(&f)).await;
    assert_eq!(report.outcome(Step::Idle), Some(StageOutcome::Unclean(Unclean::AdmissionFenced)));
    assert!(report.incidents.admission_fenced);
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_provider_cleanup_failure_makes_the_exit_unclean() {
    let f = fixture().await;
    let ctx = f.ctx.clone();
    // Reported during the cleanup step, while readiness is already draining.
    let plan = plan(&f).with_stage(Step::Cleanup, move |_| async move {
        ctx.fence(Cause::CleanupBroken);
        StageOutcome::Clean
    });
    let report = run_shutdown(&f.ctx, plan).await;
    assert!(report.incidents.exit_fence);
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_lost_run_admission_owner_is_not_acknowledged_and_fenced() {
    let f = fixture().await;
    f.owner.actor().stop(None);
    tokio::time::timeout(Duration::from_secs(10), async {
        while !f.runs.is_fenced() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    let report = run_shutdown(&f.ctx, plan(&f)).await;
    assert_eq!(report.outcome(Step::Hold), Some(StageOutcome::Unclean(Unclean::NotAcknowledged)));
    assert_eq!(report.outcome(Step::Idle), Some(StageOutcome::Unclean(Unclean::AdmissionFenced)));
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test(start_paused = true)]
async fn runs_that_do_not_settle_by_the_cleanup_deadline_make_s6_unclean() {
    let f = fixture().await;
    // A run that ignores cancellation and holds its slot for a minute.
    let lease = f.runs.try_reserve().unwrap();
    let stuck = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        drop(lease);
    });
    f.ctx.trigger().signal();
    let start = Instant::now();
    let report = run_shutdown(&f.ctx, plan(&f)).await;
    assert_eq!(report.outcome(Step::Idle), Some(StageOutcome::Unclean(Unclean::LeasesRemaining)));
    assert_eq!(start.elapsed(), Duration::from_millis(20_000), "drain deadline, then the cleanup deadline");
    assert_eq!(report.exit_code(), 1);
    stuck.abort();
    let _ = stuck.await;
}

#[tokio::test(start_paused = true)]
async fn a_hook_that_overruns_or_panics_makes_its_stage_unclean() {
    let f = fixture().await;
    let plan = plan(&f)
        .with_stage(Step::Mark, |_| async {
            std::future::pending::<()>().await;
            StageOutcome::Clean
        })
        .with_stage(Step::Last, |_| async { panic!("hook panicked") });
    let start = Instant::now();
    let report = run_shutdown(&f.ctx, plan).await;
    assert_eq!(report.outcome(Step::Mark), Some(StageOutcome::Unclean(Unclean::DeadlineExceeded)));
    assert_eq!(report.outcome(Step::Last), Some(StageOutcome::Unclean(Unclean::Failed)));
    assert_eq!(start.elapsed(), Duration::from_millis(2_000), "the marking step abandoned at its bound");
    assert_eq!(report.exit_code(), 1, "the last step counts, the marking step does not");
}

#[tokio::test(start_paused = true)]
async fn a_later_stage_can_amend_an_earlier_one() {
    let f = fixture().await;
    let plan = plan(&f).with_stage(Step::Idle, |ctx: StageContext| async move {
        // Something the first step stopped had to be ended at the cleanup deadline: its condition did not hold.
        ctx.amend(Step::Front);
        StageOutcome::Clean
    });
    let report = run_shutdown(&f.ctx, plan).await;
    assert_eq!(report.outcome(Step::Front), Some(StageOutcome::Unclean(Unclean::Amended)));
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test(start_paused = true)]
async fn without_a_trigger_the_call_counts_as_the_first_signal_and_repeats_change_nothing() {
    let f = fixture().await;
    let start = Instant::now();
    let run = spawn_run(f.runs.try_reserve().unwrap(), Duration::from_secs(60));
    let ctx = f.ctx.clone();
    let repeat = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!ctx.trigger().signal(), "a repeated signal changes nothing");
    });
    let report = run_shutdown(&f.ctx, plan(&f)).await;
    repeat.await.unwrap();
    assert!(run.await.unwrap());
    assert_eq!(start.elapsed(), Duration::from_millis(10_000), "the second signal did not shorten the drain");
    assert_eq!(report.exit_code(), 1);
}
