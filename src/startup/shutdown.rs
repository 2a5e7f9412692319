//! The gateway's part of the staged shutdown (lifecycle.md §7.3): the hooks it adds to the generic
//! orchestrator of `ptc_actors::shutdown`, which runs the stage table S1–S8 of `crate::codes::domain`
//! (the order, the deadlines, which stages count for the exit status) and derives the exit status.
//!
//! Stop listeners (S1) stops the listeners (their owners are retired first, so their end is not a loss);
//! admission clean (S6) closes every connection still open at the cleanup deadline; checkpoint events (S4)
//! puts the event log in shutdown mode; audit flush (S7) flushes and closes the audit and releases its lock
//! (or, when the audit caused the stop and the audit flush is skipped, the lock is released after the
//! stages); event log close (S8) closes the event log and then releases the events directory, and a lock
//! that cannot be removed makes the exit 70 (audit-events.md §1.4).

use std::sync::{Arc, Mutex};

use ptc_actors::{run_shutdown, AdmissionPool, StageOutcome, Unclean};

use crate::audit::owner::AUDIT_COMMITTER;
use crate::audit::Audit;
use crate::codes::domain::{DomainHandle, PlanExt, ShutdownPlan, StageContext};
use crate::codes::stage::CLEANUP_WINDOW;
use crate::codes::StageId;
use crate::events::owner::EVENT_LOGGER;
use crate::events::EventLog;
use crate::metrics::{write_last, Writer, METRICS_WRITER};
use crate::os::notify::{Message, Notifier, Status};
use crate::providers::owner::PROVIDERS;
use crate::providers::runtime::ProviderRuntime;
use crate::startup::fault::{self, FaultPoint};
use crate::startup::gateway::Gateway;
use crate::startup::listeners::{Stopper, LISTENERS};
use crate::startup::pools::Pools;
use crate::startup::release::{stop_subtree, CHILD_STOP_BOUND};
use crate::storage::artifact_root::ArtifactRoot;

impl Gateway {
    /// Serves until the domain's shutdown trigger fires, then runs the shutdown stages and returns the exit
    /// status.
    pub async fn serve_until_stopped(self) -> u8 {
        self.serve_until_stopped_with(Notifier::disabled()).await
    }

    /// As [`Gateway::serve_until_stopped`], sending `STOPPING=1` through `notifier` when the listeners
    /// stop.
    pub async fn serve_until_stopped_with(self, notifier: Notifier) -> u8 {
        self.ctx.trigger().triggered().await;
        if fault::injected(FaultPoint::PanicInOrchestration) {
            panic!("injected fault: a panic in the shutdown orchestration");
        }
        run(self, notifier).await
    }
}

/// Runs the shutdown stages (lifecycle.md §7.3) for `gateway` and returns the exit status (0 or 70).
/// `STOPPING=1` goes out through `notifier` at the start of the stop-listeners stage, for a signal and for an
/// abnormal stop alike (lifecycle.md §9.1, §7.5). The stages take what they close out of the gateway's
/// release stack; what is left is released last.
pub async fn run(gateway: Gateway, notifier: Notifier) -> u8 {
    let Gateway {
        mut stack,
        ctx,
        domain,
        run_owner,
        listeners,
        pools: Pools { pcc_streams, .. },
        events,
        metrics,
        providers,
        ..
    } = gateway;
    // Shared between the audit flush and the exit path: when the audit itself caused the stop, the flush is
    // skipped
    // (lifecycle.md §7.5) but the lock is still removed on the way out (audit-events.md §1.4).
    let audit = Arc::new(Mutex::new(stack.take_audit()));
    let private_audit = audit.lock().map(|a| a.is_some()).unwrap_or(false);
    let artifact_root = stack.take_artifact_root();
    // Provider cleanup closes the providers and the event-log close the event log; the root is stopped
    // after the last stage by the orchestrator.
    stack.forget_providers();
    stack.forget_event_log();
    let root = stack.take_domain().unwrap_or_else(|| domain.clone());
    let (s1, s5, s7, s8) = (domain.clone(), domain.clone(), domain.clone(), domain);
    let (stopper, closer) = (listeners.stopper(), listeners.stopper());
    let (tails, checkpoint, s7_audit) = (providers.clone(), events.clone(), audit.clone());
    let plan = ShutdownPlan::new(run_owner)
        .with_stage(StageId::StopListeners, move |_: StageContext| stop_listeners(s1, stopper, notifier))
        .with_stage(StageId::CheckpointEvents, move |_: StageContext| async move {
            // Checkpoint events: only enqueues: the stderr tail of every transport that has none yet, then
            // shutdown mode.
            tails.checkpoint();
            checkpoint.enter_shutdown_mode();
            StageOutcome::Clean
        })
        .with_stage(StageId::ProviderCleanup, move |stage| provider_cleanup(stage, providers, s5))
        .with_stage(StageId::AdmissionClean, move |stage| admission_clean(stage, pcc_streams, closer))
        .with_stage(StageId::AuditFlush, move |_: StageContext| audit_flush(s7_audit, s7))
        .with_stage(StageId::EventLogClose, move |_: StageContext| {
            event_log_close(events, metrics, artifact_root, s8)
        })
        .with_private_audit(private_audit)
        .with_domain(root, CHILD_STOP_BOUND);
    drop(listeners);
    let report = run_shutdown(&ctx, plan).await;
    for (stage, outcome) in &report.stages {
        tracing::info!(stage = ?stage, outcome = ?outcome, "shutdown stage");
    }
    let left = audit.lock().ok().and_then(|mut a| a.take());
    let mut code = report.exit_code();
    if let Some(audit) = left {
        if !audit.release_after_failure().await {
            code = 70;
        }
    }
    // The captured credentials ended with their owner, stopped with the tree after the last stage.
    // Nothing should be left; whatever is, is released like a startup's (lifecycle.md §5.2).
    if !stack.release(None).await {
        code = 70;
    }
    code
}

/// Stop listeners (lifecycle.md §7.3, S1): `STOPPING=1`, then the listeners subtree (the accept loops'
/// end is then expected, not a loss, lifecycle.md §7.5), then the loops. HTTP connections never make this
/// stage unclean (lifecycle.md §7.3); they are waited for until admission clean (S6), which also decides
/// this stage's PCC rule.
async fn stop_listeners(domain: DomainHandle, stopper: Stopper, notifier: Notifier) -> StageOutcome {
    notifier.send(&[Message::Stopping, Message::Status(Status::Draining)]);
    let _ = domain.stop_child(LISTENERS, CHILD_STOP_BOUND).await;
    if fault::injected(FaultPoint::SlowListenerStop) {
        tokio::time::sleep(fault::SLOW_LISTENER_STOP).await;
    }
    stopper.stop_accepting();
    StageOutcome::Clean
}

/// Provider cleanup (S5, providers.md §13.3): seal, wait for detached requests until the cleanup deadline,
/// then close every transport concurrently; unclean unless all were reaped, none was unsettled and admission
/// is idle. Then the providers subtree: each close retired its transport's task group, so the owners' stop is
/// expected (a subtree already lost to a fence has nothing left to stop).
async fn provider_cleanup(
    stage: StageContext,
    providers: Arc<ProviderRuntime>,
    domain: DomainHandle,
) -> StageOutcome {
    let cutoff = stage.cleanup_deadline.unwrap_or(stage.started + CLEANUP_WINDOW);
    let clean = providers.shut_down(cutoff).await;
    let stopped = stop_subtree(&domain, PROVIDERS).await;
    StageOutcome::from_bool(clean && stopped, Unclean::Failed)
}

/// The gateway's part of admission clean (S6): stop listeners (lifecycle.md §7.3, S1) is clean iff every
/// PCC stream ended by pcc.md's cutoff (pcc.md §15 step 5, the cleanup deadline): a stream still open then
/// is cut, and stop listeners becomes unclean.
/// Then every connection still open is closed.
async fn admission_clean(stage: StageContext, pcc_streams: AdmissionPool, closer: Stopper) -> StageOutcome {
    let cutoff = stage.cleanup_deadline.unwrap_or(stage.started + CLEANUP_WINDOW);
    if pcc_streams.wait_until_idle(cutoff).await.is_err() {
        tracing::warn!("a PCC stream was still open at the cutoff; S1 is unclean");
        stage.amend(StageId::StopListeners);
    }
    closer.close_all();
    StageOutcome::Clean
}

/// Audit flush (S7, audit-events.md §2.9): the audit owner first (the committer's orderly end is then no
/// loss), then flush the pending batch through the barrier, sync, close, release the lock.
async fn audit_flush(audit: Arc<Mutex<Option<Audit>>>, domain: DomainHandle) -> StageOutcome {
    let taken = audit.lock().ok().and_then(|mut a| a.take());
    let Some(audit) = taken else { return StageOutcome::Skipped };
    let stopped = stop_subtree(&domain, AUDIT_COMMITTER).await;
    StageOutcome::from_bool(audit.close().await && stopped, Unclean::Failed)
}

/// Event log close (S8, audit-events.md §3.10): the event-log owner first (the writer's orderly end is then
/// no loss), then the log closes (bounded) before its lock is released; only the lock counts
/// (audit-events.md §1.4).
async fn event_log_close(
    events: EventLog,
    metrics: Option<Writer>,
    root: Option<ArtifactRoot>,
    domain: DomainHandle,
) -> StageOutcome {
    // audit-events.md §3.12: the writer stops first; once the log's last report is written, the last file
    // says the gateway is not ready and holds every count the log reported. Its failure never makes the
    // stage unclean.
    if metrics.is_some() {
        let _ = stop_subtree(&domain, METRICS_WRITER).await;
    }
    let _ = stop_subtree(&domain, EVENT_LOGGER).await;
    let _ = events.close_async().await;
    if let Some(metrics) = metrics {
        write_last(&metrics).await;
    }
    match root {
        Some(root) => StageOutcome::from_bool(root.release().is_ok(), Unclean::Failed),
        None => StageOutcome::Clean,
    }
}
