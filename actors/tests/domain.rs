//! The domain supervisor, driven through the library: fencing on owner loss, stop-the-domain children,
//! tolerated children, start failures, and the explicit reverse-order stop (the runtime's rules, see the crate docs).

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{context, wait_for, Event, Probe, ProbeArgs, ProbeMsg, StopLog};
use common::{Cause, ChildPolicy, ChildSpec, DomainHandle, ShutdownPlan, Step, Stop};
use ptc_actors::{
    run_shutdown, AdmissionOwnerRef, AdmissionPool, ChildStatus, ChildStop, DomainError, LossKind, Phase,
    Refusal, RefusalOrder, StageOutcome,
};

const STOP_BOUND: Duration = Duration::from_secs(2);

fn runs() -> AdmissionPool {
    AdmissionPool::new("runs", 4, RefusalOrder::UnavailableFirst)
}

#[tokio::test]
async fn losing_the_run_admission_owner_fences_readiness_for_good() {
    let (ctx, recorder, mut rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let stops = StopLog::default();
    domain
        .start_child(ChildSpec::new(
            "event_logger",
            ChildPolicy::Tolerate,
            Probe,
            ProbeArgs::new("event_logger", &stops),
        ))
        .await
        .unwrap();
    let pool = runs();
    let run_owner = AdmissionOwnerRef::start(&domain, "run_admission", vec![pool.clone()], Cause::PoolGone)
        .await
        .unwrap();
    let transport = domain
        .start_child(ChildSpec::new(
            "transport_owner",
            ChildPolicy::Fence(Cause::TransportGone),
            Probe,
            ProbeArgs::new("transport_owner", &stops),
        ))
        .await
        .unwrap();
    assert!(ctx.mark_ready());
    let admitted = pool.try_reserve().unwrap();

    run_owner.actor().stop(None);
    wait_for(&mut rx, |e| matches!(e, Event::NotReady(_))).await;

    assert!(!ctx.readiness().is_ready());
    assert_eq!(ctx.readiness().phase(), Phase::Fenced);
    assert_eq!(ctx.readiness().cause(), Some(Cause::PoolGone));
    assert!(!ctx.mark_ready(), "a later mark_ready cannot revive a fenced domain");
    assert!(!ctx.readiness().is_ready());
    assert_eq!(pool.try_reserve().unwrap_err(), Refusal::Unavailable, "the owner's pool is fenced");
    drop(admitted);
    assert_eq!(pool.in_use(), 0, "an admitted run still returns its slot");

    // A second loss is recorded as a child loss, but readiness is not reported again.
    transport.send_message(ProbeMsg::Panic).unwrap();
    wait_for(&mut rx, |e| matches!(e, Event::ChildLost(name, ..) if name == "transport_owner")).await;
    assert_eq!(ctx.readiness().cause(), Some(Cause::PoolGone));
    assert_eq!(
        recorder.domain_events(),
        [
            Event::Ready,
            Event::ChildLost("run_admission".into(), ChildPolicy::Fence(Cause::PoolGone), LossKind::Stopped),
            Event::NotReady(Cause::PoolGone),
            Event::ChildLost(
                "transport_owner".into(),
                ChildPolicy::Fence(Cause::TransportGone),
                LossKind::Failed
            ),
        ],
        "the fence is recorded once, with its first cause"
    );
    assert!(!ctx.trigger().is_triggered(), "a fence does not stop the process");

    let statuses: Vec<(String, ChildStatus)> =
        domain.children().await.unwrap().into_iter().map(|c| (c.name, c.status)).collect();
    assert_eq!(
        statuses,
        [
            ("event_logger".to_string(), ChildStatus::Running),
            ("run_admission".to_string(), ChildStatus::Lost(LossKind::Stopped)),
            ("transport_owner".to_string(), ChildStatus::Lost(LossKind::Failed)),
        ]
    );
    domain.shutdown(STOP_BOUND).await;
}

#[tokio::test]
async fn a_listener_loss_stops_the_domain_abnormally_with_an_unclean_exit() {
    let (ctx, recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let stops = StopLog::default();
    let pool = runs();
    let run_owner = AdmissionOwnerRef::start(&domain, "run_admission", vec![pool.clone()], Cause::PoolGone)
        .await
        .unwrap();
    let listener = domain
        .start_child(ChildSpec::new(
            "listener",
            ChildPolicy::StopDomain(Stop::FrontGone),
            Probe,
            ProbeArgs::new("listener", &stops),
        ))
        .await
        .unwrap();
    assert!(ctx.mark_ready());

    listener.send_message(ProbeMsg::Fail).unwrap();
    let state = tokio::time::timeout(Duration::from_secs(10), ctx.trigger().triggered()).await.unwrap();
    assert_eq!(state.abnormal.map(|(cause, _)| cause), Some(Stop::FrontGone));
    assert!(!ctx.readiness().is_ready());
    assert_eq!(ctx.readiness().cause(), Some(Cause::Draining), "a drain records the drain cause");

    let report = run_shutdown(&ctx, ShutdownPlan::new(run_owner).with_domain(domain, STOP_BOUND)).await;
    assert_eq!(report.exit_code(), 1);
    assert!(report.incidents.abnormal_stop);
    assert_eq!(report.outcome(Step::Drain), Some(StageOutcome::Clean), "no run was admitted");
    assert_eq!(report.children, [("run_admission".to_string(), ChildStop::Stopped)]);
    assert_eq!(
        recorder.domain_events(),
        [
            Event::Ready,
            Event::ChildLost("listener".into(), ChildPolicy::StopDomain(Stop::FrontGone), LossKind::Failed),
            Event::NotReady(Cause::Draining),
            Event::Abnormal(Stop::FrontGone),
        ]
    );
}

#[tokio::test]
async fn an_audit_owner_loss_records_audit_unavailable_and_skips_the_audit_flush() {
    let (ctx, _recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let stops = StopLog::default();
    let audit = domain
        .start_child(ChildSpec::new(
            "audit",
            ChildPolicy::StopDomain(Stop::SinkOwnerGone),
            Probe,
            ProbeArgs::new("audit", &stops),
        ))
        .await
        .unwrap();
    let run_owner =
        AdmissionOwnerRef::start(&domain, "run_admission", vec![runs()], Cause::PoolGone).await.unwrap();
    assert!(ctx.mark_ready());

    audit.stop(None);
    tokio::time::timeout(Duration::from_secs(10), ctx.trigger().triggered()).await.unwrap();
    assert_eq!(ctx.readiness().cause(), Some(Cause::SinkDown));

    let flushed = Arc::new(Mutex::new(false));
    let flag = flushed.clone();
    let plan = ShutdownPlan::new(run_owner)
        .with_enabled(Step::Flush, true)
        .with_stage(Step::Flush, move |_| async move {
            *flag.lock().unwrap() = true;
            StageOutcome::Clean
        })
        .with_domain(domain, STOP_BOUND);
    let report = run_shutdown(&ctx, plan).await;
    assert_eq!(
        report.outcome(Step::Flush),
        Some(StageOutcome::Skipped),
        "the flush step is skipped when the sink caused the stop"
    );
    assert!(!*flushed.lock().unwrap());
    assert_eq!(report.exit_code(), 1);
}

#[tokio::test]
async fn a_tolerated_child_loss_changes_nothing() {
    let (ctx, recorder, mut rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let stops = StopLog::default();
    let logger = domain
        .start_child(ChildSpec::new(
            "event_logger",
            ChildPolicy::Tolerate,
            Probe,
            ProbeArgs::new("event_logger", &stops),
        ))
        .await
        .unwrap();
    let run_owner =
        AdmissionOwnerRef::start(&domain, "run_admission", vec![runs()], Cause::PoolGone).await.unwrap();
    assert!(ctx.mark_ready());

    logger.send_message(ProbeMsg::Panic).unwrap();
    wait_for(&mut rx, |e| matches!(e, Event::ChildLost(..))).await;
    assert!(ctx.readiness().is_ready(), "logging never changes readiness");
    assert_eq!(ctx.readiness().cause(), None);
    assert!(!ctx.trigger().is_triggered());
    assert_eq!(
        recorder.domain_events(),
        [Event::Ready, Event::ChildLost("event_logger".into(), ChildPolicy::Tolerate, LossKind::Failed)]
    );

    let report = run_shutdown(&ctx, ShutdownPlan::new(run_owner).with_domain(domain, STOP_BOUND)).await;
    assert_eq!(report.exit_code(), 0);
}

#[tokio::test]
async fn children_stop_explicitly_in_reverse_start_order() {
    let (ctx, _recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let stops = StopLog::default();
    for name in ["event_logger", "audit", "provider_runtime", "listener"] {
        domain
            .start_child(ChildSpec::new(
                name,
                ChildPolicy::Fence(Cause::ChildGone),
                Probe,
                ProbeArgs::new(name, &stops),
            ))
            .await
            .unwrap();
    }
    assert!(ctx.mark_ready());
    // A stage retires the listener on purpose: not a loss.
    assert_eq!(domain.stop_child("listener", STOP_BOUND).await, Ok(ChildStop::Stopped));
    assert_eq!(
        domain.stop_child("listener", STOP_BOUND).await,
        Err(DomainError::UnknownChild { child: "listener".into() })
    );
    let stopped = domain.shutdown(STOP_BOUND).await;
    let names: Vec<&str> = stopped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["provider_runtime", "audit", "event_logger"]);
    assert!(stopped.iter().all(|(_, how)| *how == ChildStop::Stopped));
    assert_eq!(
        *stops.lock().unwrap(),
        ["listener", "provider_runtime", "audit", "event_logger"],
        "every post_stop ran"
    );
    assert!(ctx.readiness().is_ready(), "retired children are not losses");
    assert!(!ctx.trigger().is_triggered(), "an orderly supervisor stop is not abnormal");
}

#[tokio::test]
async fn a_child_that_fails_to_start_is_a_start_error_and_fences_nothing() {
    let (ctx, recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let stops = StopLog::default();
    let args = ProbeArgs { fail_start: true, ..ProbeArgs::new("provider_runtime", &stops) };
    let err = domain
        .start_child(ChildSpec::new("provider_runtime", ChildPolicy::Fence(Cause::ChildGone), Probe, args))
        .await
        .unwrap_err();
    // The cause is the actor runtime's message, with what the child's `pre_start` returned.
    let cause = "Actor panicked during startup 'refused to start'".to_owned();
    assert_eq!(err, DomainError::ChildStartFailed { child: "provider_runtime".into(), cause });
    assert_eq!(err.kind(), "child_start_failed");
    assert!(domain.children().await.unwrap().is_empty());
    assert!(ctx.mark_ready(), "a failed start does not fence");
    assert_eq!(recorder.domain_events(), [Event::Ready]);
    domain.shutdown(STOP_BOUND).await;
}

#[tokio::test]
async fn a_child_lost_right_after_its_start_is_applied_once() {
    let (ctx, recorder, mut rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let stops = StopLog::default();
    let args = ProbeArgs { stop_in_post_start: true, ..ProbeArgs::new("credentials", &stops) };
    // Whether the loss reaches the supervisor before or after the registration, it is applied once.
    let _ = domain
        .start_child(ChildSpec::new("credentials", ChildPolicy::Fence(Cause::ChildGone), Probe, args))
        .await;
    wait_for(&mut rx, |e| matches!(e, Event::ChildLost(..))).await;
    assert_eq!(ctx.readiness().phase(), Phase::Fenced);
    assert_eq!(ctx.readiness().cause(), Some(Cause::ChildGone));
    assert!(!ctx.mark_ready(), "fenced during startup: never ready");
    assert_eq!(
        recorder.domain_events(),
        [Event::ChildLost("credentials".into(), ChildPolicy::Fence(Cause::ChildGone), LossKind::Stopped)]
    );
    domain.shutdown(STOP_BOUND).await;
}

#[tokio::test]
async fn losing_the_supervisor_itself_is_an_abnormal_stop() {
    let (ctx, _recorder, _rx) = context();
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    assert!(ctx.mark_ready());
    domain.supervisor_cell().kill();
    let state = tokio::time::timeout(Duration::from_secs(10), ctx.trigger().triggered()).await.unwrap();
    assert_eq!(state.abnormal.map(|(c, _)| c), Some(Stop::RootGone));
    assert_eq!(ctx.readiness().cause(), Some(Cause::Draining));
    assert_eq!(domain.children().await, Err(DomainError::SupervisorGone));
}

/// An observer whose `child_lost` panics: the panic happens inside the supervisor's own logic.
struct PanickingObserver;

impl ptc_actors::DomainObserver<common::Test> for PanickingObserver {
    fn child_lost(&self, _child: &str, _policy: ChildPolicy, _loss: LossKind) {
        panic!("observer defect");
    }
}

#[tokio::test]
async fn a_panic_in_the_supervisors_logic_is_an_abnormal_stop() {
    let ctx = ptc_actors::DomainContext::new(Arc::new(PanickingObserver));
    let domain = DomainHandle::start(ctx.clone()).await.unwrap();
    let stops = StopLog::default();
    let logger = domain
        .start_child(ChildSpec::new(
            "event_logger",
            ChildPolicy::Tolerate,
            Probe,
            ProbeArgs::new("event_logger", &stops),
        ))
        .await
        .unwrap();
    assert!(ctx.mark_ready());
    logger.stop(None);
    let state = tokio::time::timeout(Duration::from_secs(10), ctx.trigger().triggered()).await.unwrap();
    assert_eq!(state.abnormal.map(|(c, _)| c), Some(Stop::RootGone), "the root's loss is an abnormal stop");
    assert!(!ctx.readiness().is_ready());
}
