//! The domain's readiness flag (lifecycle.md §6.2–§6.4).
//!
//! Readiness is read on every request, so it is a snapshot in one atomic, never a message round trip.
//! The transitions are one-way: `Starting → Ready`, then `Ready → Fenced` or `→ Draining`. A fence is
//! permanent (§6.4): nothing ever makes a fenced domain ready again. The owner of the transitions is the
//! domain supervisor; everyone else only reads.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Why the domain stopped being ready (audit-events.md §4.2, the `not_ready` causes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotReadyCause {
    ProviderRuntimeLost,
    ProviderCleanupFailed,
    AdmissionLost,
    AuditUnavailable,
    OwnerLost,
    Shutdown,
}

impl NotReadyCause {
    /// The wire spelling of the cause.
    pub fn as_str(self) -> &'static str {
        match self {
            NotReadyCause::ProviderRuntimeLost => "provider_runtime_lost",
            NotReadyCause::ProviderCleanupFailed => "provider_cleanup_failed",
            NotReadyCause::AdmissionLost => "admission_lost",
            NotReadyCause::AuditUnavailable => "audit_unavailable",
            NotReadyCause::OwnerLost => "owner_lost",
            NotReadyCause::Shutdown => "shutdown",
        }
    }
}

/// The phase of the domain as readiness sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Startup has not reached stage 12.
    Starting,
    /// Serving.
    Ready,
    /// Fenced for good (§6.3).
    Fenced,
    /// A drain began (§7).
    Draining,
}

const STARTING: u8 = 0;
const READY: u8 = 1;
const FENCED: u8 = 2;
const DRAINING: u8 = 3;

/// A cheap, cloneable handle on the domain's readiness.
#[derive(Clone, Debug)]
pub struct Readiness {
    phase: Arc<AtomicU8>,
}

impl Default for Readiness {
    fn default() -> Self {
        Self::new()
    }
}

impl Readiness {
    /// A domain that has not started serving yet.
    pub fn new() -> Self {
        Readiness { phase: Arc::new(AtomicU8::new(STARTING)) }
    }

    /// True iff the domain is serving: ready, not fenced, not draining.
    pub fn is_ready(&self) -> bool {
        self.phase.load(Ordering::Acquire) == READY
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Acquire) {
            STARTING => Phase::Starting,
            READY => Phase::Ready,
            FENCED => Phase::Fenced,
            _ => Phase::Draining,
        }
    }

    /// Stage 12: `Starting → Ready`. Returns false (and changes nothing) from any other phase.
    pub fn mark_ready(&self) -> bool {
        self.phase.compare_exchange(STARTING, READY, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Fences the domain for good. Returns true only for the call that made a ready domain not ready,
    /// so that the transition is recorded once. A draining domain stays draining (it is already not
    /// ready), but a fence during a drain is still remembered by the caller for the exit status.
    pub fn fence(&self) -> bool {
        self.phase
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| match p {
                STARTING | READY => Some(FENCED),
                _ => None,
            })
            .map(|previous| previous == READY)
            .unwrap_or(false)
    }

    /// Shutdown stage S1: readiness false from now on. Returns true iff the domain was ready.
    pub fn begin_drain(&self) -> bool {
        self.phase.swap(DRAINING, Ordering::AcqRel) == READY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_permanent() {
        let r = Readiness::new();
        assert!(!r.is_ready());
        assert!(r.mark_ready());
        assert!(r.is_ready());
        assert!(r.fence());
        assert!(!r.fence(), "the transition is reported once");
        assert!(!r.mark_ready(), "nothing makes a fenced domain ready again");
        assert_eq!(r.phase(), Phase::Fenced);
        r.begin_drain();
        assert!(!r.is_ready());
    }
}
