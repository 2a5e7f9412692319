//! The domain's outward notifications: what the gateway's event log records about the domain.
//!
//! Owns: the [`DomainObserver`] trait and a no-op implementation. Every method is called at most once per
//! transition (a fence is reported once, audit-events.md §4.2), synchronously, from whoever made the
//! transition; an implementation must therefore only enqueue (the event logger's bounded queue) and never
//! block or panic.
//!
//! Does not own: the record format (`src/events/`) or the decision of what to record during shutdown
//! mode (audit-events.md §3.6).

use crate::domain::Domain;
use crate::stage::StageOutcome;
use crate::supervisor::{ChildPolicy, LossKind};

/// Receives the domain's transitions. Names only, never credentials or payloads (audit-events.md §3.9).
pub trait DomainObserver<D: Domain>: Send + Sync + 'static {
    /// Readiness became true (stage 12; audit-events.md §4.2 cause `startup`).
    fn ready(&self) {}

    /// Readiness went from true to false, with the cause of audit-events.md §4.2. Called once per process.
    fn not_ready(&self, cause: D::NotReady) {
        let _ = cause;
    }

    /// A supervised child stopped without being retired. `child` is the name it was started with.
    fn child_lost(&self, child: &str, policy: ChildPolicy<D>, loss: LossKind) {
        let _ = (child, policy, loss);
    }

    /// The domain stopped abnormally (lifecycle.md §7.5). Called once, for the first cause.
    fn abnormal_stop(&self, cause: D::Abnormal) {
        let _ = cause;
    }

    /// A shutdown stage began (audit-events.md §3.6: `started` precedes each stage's outcome). Called
    /// only for stages that run: a skipped stage (S7 without `private_audit`) never starts.
    fn shutdown_stage_started(&self, stage: D::Stage) {
        let _ = stage;
    }

    /// A shutdown stage ended (audit-events.md §3.5 `shutdown_stage`). The gateway writes a record only
    /// for stages that have a record name and whose outcome is not [`StageOutcome::Skipped`] (S7 exists
    /// only with `private_audit`, lifecycle.md §7.3).
    fn shutdown_stage(&self, stage: D::Stage, outcome: StageOutcome) {
        let _ = (stage, outcome);
    }
}

/// An observer that records nothing (for tests and for `--print-pins`, which has no event log).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopObserver;

impl<D: Domain> DomainObserver<D> for NoopObserver {}
