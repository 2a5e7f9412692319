//! The gateway's part of the staged shutdown (lifecycle.md §7.3): the hooks it adds to the generic
//! S1–S8 orchestrator of `ptc_actors::shutdown`, which owns the order, the deadlines and the exit status.
//!
//! S1 stops the listeners (their owners are retired first, so their end is not a loss); S6 closes every
//! connection still open at the cleanup deadline; S7 releases the audit directory; S4 puts the event log in shutdown mode; S8 closes
//! the event log and then releases the events directory, and a lock that cannot be removed makes the exit 70 (audit-events.md §1.4).

use std::time::Duration;

use ptc_actors::{run_shutdown, ShutdownPlan, StageContext, StageId, StageOutcome, Unclean};

use crate::startup::serve::RunningGateway;

/// The bound on stopping each remaining domain child after S8.
const CHILD_BOUND: Duration = Duration::from_secs(2);

/// Runs S1–S8 for `gateway` and returns the exit status (0 or 70).
pub async fn run(gateway: RunningGateway) -> u8 {
    let parts = gateway.into_parts();
    let listeners = parts.listeners;
    let stopper = listeners.stopper();
    let closer = listeners.stopper();
    let domain = parts.domain.clone();
    let audit = parts.audit;
    let private_audit = audit.is_some();
    let artifact_root = parts.artifact_root;
    let checkpoint = parts.events.clone();
    let events = parts.events;
    let plan = ShutdownPlan::new(parts.run_owner)
        .with_stage(StageId::StopListeners, move |stage: StageContext| async move {
            // Retire the listener owners first: their end is now expected, not a loss (§7.5).
            for name in crate::startup::listeners::CHILD_NAMES {
                let _ = domain.stop_child(name, CHILD_BOUND).await;
            }
            stopper.stop_accepting();
            // HTTP connections never make S1 unclean (§7.3); they are waited for until S6.
            let _ = stage;
            StageOutcome::Clean
        })
        .with_stage(StageId::CheckpointEvents, move |_stage: StageContext| async move {
            // S4: only enqueues (stderr tails arrive with the providers), then shutdown mode.
            checkpoint.enter_shutdown_mode();
            StageOutcome::Clean
        })
        .with_stage(StageId::AdmissionClean, move |_stage: StageContext| async move {
            closer.close_all();
            StageOutcome::Clean
        })
        .with_stage(StageId::AuditFlush, move |_stage: StageContext| async move {
            match audit {
                Some(dir) => StageOutcome::from_bool(dir.release().is_ok(), Unclean::Failed),
                None => StageOutcome::Skipped,
            }
        })
        .with_stage(StageId::EventLogClose, move |_stage: StageContext| async move {
            // §3.10: the log closes (bounded) before its lock is released; only the lock counts.
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
    report.exit.code()
}
