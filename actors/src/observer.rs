//! The domain's outward notifications: what an event log can record about the domain.
//!
//! Owns: the [`DomainObserver`] trait and a no-op implementation. Every method is called at most once per
//! transition (a fence is reported once, with its first cause), synchronously, from whoever made the
//! transition; an implementation must therefore only enqueue (e.g. the event logger's bounded queue) and
//! never block or panic.
//!
//! Does not own: the record format or the decision of what to record during a shutdown (the
//! implementation's).

use crate::domain::Domain;
use crate::policy::{ChildPolicy, LossKind};
use crate::stage::StageOutcome;

/// Receives the domain's transitions. It is given names and codes only, never payloads.
pub trait DomainObserver<D: Domain>: Send + Sync + 'static {
    /// Readiness became true (the end of startup).
    fn ready(&self) {}

    /// Readiness went from true to false, with its first cause. Called once per process.
    fn not_ready(&self, cause: D::NotReady) {
        let _ = cause;
    }

    /// A supervised child stopped without being retired. `child` is the name it was started with.
    fn child_lost(&self, child: &str, policy: ChildPolicy<D>, loss: LossKind) {
        let _ = (child, policy, loss);
    }

    /// The domain stopped abnormally. Called once, for the first cause.
    fn abnormal_stop(&self, cause: D::Abnormal) {
        let _ = cause;
    }

    /// A shutdown stage began, before anything of the stage happens. Called only for stages that run:
    /// a skipped stage never starts.
    fn shutdown_stage_started(&self, stage: D::Stage) {
        let _ = stage;
    }

    /// A shutdown stage ended, with its outcome ([`StageOutcome::Skipped`] for a stage that never
    /// started). Called for every stage of the table, in order.
    fn shutdown_stage(&self, stage: D::Stage, outcome: StageOutcome) {
        let _ = (stage, outcome);
    }
}

/// An observer that records nothing (for tests, and for a program run without an event log).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopObserver;

impl<D: Domain> DomainObserver<D> for NoopObserver {}
