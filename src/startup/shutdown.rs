//! The gateway's part of the staged shutdown (lifecycle.md §7.3): the hooks it adds to the generic
//! orchestrator of `ptc_actors::shutdown`, which runs the S1–S8 table of `crate::codes::domain` (the
//! order, the deadlines, which stages count for the exit status) and derives the exit status.
//!
//! S1 stops the listeners (their owners are retired first, so their end is not a loss); S6 closes every
//! connection still open at the cleanup deadline; S4 puts the event log in shutdown mode; S7 flushes and
//! closes the audit and releases its lock (or, when the audit caused the stop and S7 is skipped, the lock
//! is released after the stages); S8 closes the event log and then releases the events directory, and a
//! lock that cannot be removed makes the exit 70 (audit-events.md §1.4).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ptc_actors::{run_shutdown, StageOutcome, Unclean};

use crate::codes::domain::{PlanExt, ShutdownPlan, StageContext};
use crate::codes::StageId;
use crate::notify::{Message, Notifier, Status};
use crate::startup::serve::RunningGateway;

/// The bound on stopping each remaining domain child after S8.
const CHILD_BOUND: Duration = Duration::from_secs(2);

/// Runs S1–S8 for `gateway` and returns the exit status (0 or 70). `STOPPING=1` goes out through
/// `notifier` at the start of S1, for a signal and for an abnormal stop alike (lifecycle.md §9.1, §7.5).
pub async fn run(gateway: RunningGateway, notifier: Notifier) -> u8 {
    let parts = gateway.into_parts();
    let listeners = parts.listeners;
    let stopper = listeners.stopper();
    let closer = listeners.stopper();
    let domain = parts.domain.clone();
    // Shared between S7 and the exit path: when the audit itself caused the stop, S7 is skipped
    // (lifecycle.md §7.5) but the lock is still removed on the way out (audit-events.md §1.4).
    let audit = Arc::new(Mutex::new(parts.audit));
    let private_audit = audit.lock().map(|a| a.is_some()).unwrap_or(false);
    let s7_audit = audit.clone();
    let artifact_root = parts.artifact_root;
    let checkpoint = parts.events.clone();
    let events = parts.events;
    let providers = parts.providers;
    let pcc_streams = parts.pcc_streams;
    let tails = providers.clone();
    let plan = ShutdownPlan::new(parts.run_owner)
        .with_stage(StageId::StopListeners, move |stage: StageContext| async move {
            notifier.send(&[Message::Stopping, Message::Status(Status::Draining)]);
            // Stop the listeners subtree first: the accept loops' end is now expected, not a loss
            // (lifecycle.md §7.5).
            let _ = domain.stop_child(crate::startup::listeners::LISTENERS, CHILD_BOUND).await;
            if crate::startup::fault::injected(crate::startup::fault::FaultPoint::SlowListenerStop) {
                tokio::time::sleep(crate::startup::fault::SLOW_LISTENER_STOP).await;
            }
            stopper.stop_accepting();
            // HTTP connections never make S1 unclean (lifecycle.md §7.3); they are waited for until S6.
            let _ = stage;
            StageOutcome::Clean
        })
        .with_stage(StageId::CheckpointEvents, move |_stage: StageContext| async move {
            // S4: only enqueues: the stderr tail of every transport that has none yet, then shutdown mode.
            tails.checkpoint();
            checkpoint.enter_shutdown_mode();
            StageOutcome::Clean
        })
        .with_stage(StageId::ProviderCleanup, move |stage: StageContext| async move {
            // S5 (providers.md §13.3): seal, wait for detached requests until the cleanup deadline, then
            // close every transport concurrently; unclean unless all were reaped, none was unsettled and
            // admission is idle.
            let cutoff =
                stage.cleanup_deadline.unwrap_or(stage.started + crate::codes::stage::CLEANUP_WINDOW);
            let clean = providers.shut_down(cutoff).await;
            StageOutcome::from_bool(clean, Unclean::Failed)
        })
        .with_stage(StageId::AdmissionClean, move |stage: StageContext| async move {
            // lifecycle.md §7.3 S1 is clean iff every PCC stream ended by pcc.md's cutoff (pcc.md §15
            // step 5, the cleanup deadline): a stream still open then is cut, and S1 becomes unclean.
            let cutoff =
                stage.cleanup_deadline.unwrap_or(stage.started + crate::codes::stage::CLEANUP_WINDOW);
            if pcc_streams.wait_until_idle(cutoff).await.is_err() {
                tracing::warn!("a PCC stream was still open at the cutoff; S1 is unclean");
                stage.amend(StageId::StopListeners);
            }
            closer.close_all();
            StageOutcome::Clean
        })
        .with_stage(StageId::AuditFlush, move |_stage: StageContext| async move {
            // audit-events.md §2.9: flush the pending batch through the barrier, sync, close, release the
            // lock.
            let taken = s7_audit.lock().ok().and_then(|mut a| a.take());
            match taken {
                Some(audit) => StageOutcome::from_bool(audit.close().await, Unclean::Failed),
                None => StageOutcome::Skipped,
            }
        })
        .with_stage(StageId::EventLogClose, move |_stage: StageContext| async move {
            // audit-events.md §3.10: the log closes (bounded) before its lock is released; only the lock
            // counts.
            let _ = events.close_async().await;
            match artifact_root {
                Some(root) => StageOutcome::from_bool(root.release().is_ok(), Unclean::Failed),
                None => StageOutcome::Clean,
            }
        })
        .with_private_audit(private_audit)
        .with_domain(parts.domain, CHILD_BOUND);
    drop(listeners);
    let report = run_shutdown(&parts.ctx, plan).await;
    for (stage, outcome) in &report.stages {
        tracing::info!(stage = ?stage, outcome = ?outcome, "shutdown stage");
    }
    let left = audit.lock().ok().and_then(|mut a| a.take());
    let mut code = report.exit.code();
    if let Some(audit) = left {
        if !audit.release_after_failure().await {
            code = 70;
        }
    }
    code
}
