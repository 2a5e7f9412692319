//! The domain's readiness flag (lifecycle.md §6.2–§6.4).
//!
//! Readiness is read on every request, so it is a snapshot in one atomic, never a message round trip
//! (lifecycle.md §6.2). The transitions are one-way: `Starting → Ready`, then `Ready → Fenced` or
//! `→ Draining`. A fence is permanent (lifecycle.md §6.4): nothing ever makes a fenced domain ready again.
//! The first cause that took readiness away is kept, so that the transition is recorded once
//! (lifecycle.md §6.4 step 2).
//!
//! This module owns only the flag and its cause. It does not notify anyone: `DomainContext` wraps the
//! transitions and tells the `DomainObserver` (the event log) exactly once.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Why the domain stopped being ready (audit-events.md §4.2, the `not_ready` causes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NotReadyCause {
    /// A transport owner of a provider-bearing tool was lost (providers.md §12.1).
    ProviderRuntimeLost,
    /// A detached provider request missed its settlement deadline (providers.md §10.2).
    ProviderCleanupFailed,
    /// Run admission was fenced, or the request-admission owner was lost.
    AdmissionLost,
    /// An audit write or sync failed, or the audit owner was lost (also stops the domain).
    AuditUnavailable,
    /// Any other supervised owner was lost (credentials, provider-call admission, any other child).
    OwnerLost,
    /// A drain began, or the domain stopped abnormally for a listener loss or a supervisor panic.
    Shutdown,
}

impl NotReadyCause {
    /// Every cause, in the order of audit-events.md §4.2 (for tables and tests).
    pub const ALL: [NotReadyCause; 6] = [
        NotReadyCause::ProviderRuntimeLost,
        NotReadyCause::ProviderCleanupFailed,
        NotReadyCause::AdmissionLost,
        NotReadyCause::AuditUnavailable,
        NotReadyCause::OwnerLost,
        NotReadyCause::Shutdown,
    ];

    /// The wire spelling of the cause (audit-events.md §4.2).
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

    fn code(self) -> u8 {
        match self {
            NotReadyCause::ProviderRuntimeLost => 1,
            NotReadyCause::ProviderCleanupFailed => 2,
            NotReadyCause::AdmissionLost => 3,
            NotReadyCause::AuditUnavailable => 4,
            NotReadyCause::OwnerLost => 5,
            NotReadyCause::Shutdown => 6,
        }
    }

    fn from_code(code: u8) -> Option<NotReadyCause> {
        NotReadyCause::ALL.into_iter().find(|cause| cause.code() == code)
    }
}

/// The phase of the domain as readiness sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Startup has not reached stage 12.
    Starting,
    /// Serving.
    Ready,
    /// Fenced for good (lifecycle.md §6.3).
    Fenced,
    /// A drain began (lifecycle.md §7).
    Draining,
}

const STARTING: u8 = 0;
const READY: u8 = 1;
const FENCED: u8 = 2;
const DRAINING: u8 = 3;

/// No cause recorded yet.
const NO_CAUSE: u8 = 0;

/// A cheap, cloneable handle on the domain's readiness. Every clone sees the same flag.
#[derive(Clone, Debug)]
pub struct Readiness {
    phase: Arc<AtomicU8>,
    cause: Arc<AtomicU8>,
}

impl Default for Readiness {
    fn default() -> Self {
        Self::new()
    }
}

impl Readiness {
    /// A domain that has not started serving yet.
    pub fn new() -> Self {
        Readiness { phase: Arc::new(AtomicU8::new(STARTING)), cause: Arc::new(AtomicU8::new(NO_CAUSE)) }
    }

    /// True iff the domain is serving: ready, not fenced, not draining (lifecycle.md §6.2).
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

    /// The first cause that took readiness away (or kept a starting domain from becoming ready), if any.
    /// It never changes once set, so the transition is recorded with one cause (lifecycle.md §6.4 step 2).
    pub fn cause(&self) -> Option<NotReadyCause> {
        NotReadyCause::from_code(self.cause.load(Ordering::Acquire))
    }

    /// Stage 12: `Starting → Ready`. Returns false (and changes nothing) from any other phase, so a
    /// domain fenced during startup can never be revived (lifecycle.md §6.4 step 1).
    pub fn mark_ready(&self) -> bool {
        self.phase.compare_exchange(STARTING, READY, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Fences the domain for good (lifecycle.md §6.3). Returns true only for the call that made a ready
    /// domain not ready, so that the transition is recorded once. A starting domain becomes fenced too (it
    /// will never become ready) and keeps the cause, but no ready→not-ready transition happened. A draining
    /// domain stays draining (it is already not ready, and the event log is in shutdown mode,
    /// lifecycle.md §7.3 S4); the caller remembers such a fence separately when it matters for the exit
    /// status (lifecycle.md §7.4).
    pub fn fence(&self, cause: NotReadyCause) -> bool {
        let previous = self.phase.fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| match p {
            STARTING | READY => Some(FENCED),
            _ => None,
        });
        match previous {
            Ok(previous) => {
                self.record_cause(cause);
                previous == READY
            }
            Err(_) => false,
        }
    }

    /// Shutdown stage S1: readiness false from now on. Returns true iff the domain was ready, in which
    /// case the cause `shutdown` is recorded (audit-events.md §4.2).
    pub fn begin_drain(&self) -> bool {
        let was_ready = self.phase.swap(DRAINING, Ordering::AcqRel) == READY;
        if was_ready {
            self.record_cause(NotReadyCause::Shutdown);
        }
        was_ready
    }

    fn record_cause(&self, cause: NotReadyCause) {
        // First cause wins; a failed exchange means an earlier cause is already recorded.
        let _ = self.cause.compare_exchange(NO_CAUSE, cause.code(), Ordering::AcqRel, Ordering::Acquire);
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
        assert!(r.fence(NotReadyCause::AdmissionLost));
        assert!(!r.fence(NotReadyCause::OwnerLost), "the transition is reported once");
        assert_eq!(r.cause(), Some(NotReadyCause::AdmissionLost), "the first cause is kept");
        assert!(!r.mark_ready(), "nothing makes a fenced domain ready again");
        assert_eq!(r.phase(), Phase::Fenced);
        assert!(!r.begin_drain(), "a fenced domain was not ready");
        assert!(!r.is_ready());
        assert_eq!(r.cause(), Some(NotReadyCause::AdmissionLost));
    }

    #[test]
    fn a_fence_during_startup_prevents_readiness() {
        let r = Readiness::new();
        assert!(!r.fence(NotReadyCause::ProviderRuntimeLost), "no ready→not-ready transition");
        assert_eq!(r.cause(), Some(NotReadyCause::ProviderRuntimeLost));
        assert!(!r.mark_ready());
        assert_eq!(r.phase(), Phase::Fenced);
    }

    #[test]
    fn a_drain_records_shutdown_once_and_ignores_later_fences() {
        let r = Readiness::new();
        assert!(r.mark_ready());
        assert!(r.begin_drain());
        assert!(!r.begin_drain());
        assert!(!r.fence(NotReadyCause::ProviderRuntimeLost));
        assert_eq!(r.phase(), Phase::Draining);
        assert_eq!(r.cause(), Some(NotReadyCause::Shutdown));
        assert!(!r.mark_ready());
    }

    #[test]
    fn cause_spellings_and_codes_round_trip() {
        let spelled: Vec<&str> = NotReadyCause::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            spelled,
            [
                "provider_runtime_lost",
                "provider_cleanup_failed",
                "admission_lost",
                "audit_unavailable",
                "owner_lost",
                "shutdown"
            ]
        );
        for cause in NotReadyCause::ALL {
            assert_eq!(NotReadyCause::from_code(cause.code()), Some(cause));
        }
        assert_eq!(NotReadyCause::from_code(NO_CAUSE), None);
    }
}
