//! The domain's readiness flag.
//!
//! Readiness is read on every request, so it is a snapshot in one atomic, never a message round trip.
//! The transitions are one-way: `Starting → Ready`, then `Ready → Fenced` or `→ Draining`. A fence is
//! permanent: nothing ever makes a fenced domain ready again. The first cause that took readiness away
//! is kept, so that the transition is recorded once, with that cause.
//!
//! This module owns only the flag and its cause. It does not notify anyone: `DomainContext` wraps the
//! transitions and tells the `DomainObserver` exactly once.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::domain::{Code, Domain};

/// The phase of the domain as readiness sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Startup has not finished ([`Readiness::mark_ready`] not called yet).
    Starting,
    /// Serving.
    Ready,
    /// Fenced for good (an owner was lost).
    Fenced,
    /// A drain began (the staged shutdown).
    Draining,
}

const STARTING: u8 = 0;
const READY: u8 = 1;
const FENCED: u8 = 2;
const DRAINING: u8 = 3;

/// No cause recorded yet.
const NO_CAUSE: u8 = 0;

/// A cheap, cloneable handle on the domain's readiness. Every clone sees the same flag. The first cause
/// is kept as its [`Code::to_code`].
#[derive(Clone, Debug)]
pub struct Readiness<D: Domain> {
    phase: Arc<AtomicU8>,
    cause: Arc<AtomicU8>,
    domain: PhantomData<fn() -> D>,
}

impl<D: Domain> Default for Readiness<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Domain> Readiness<D> {
    /// A domain that has not started serving yet.
    pub fn new() -> Self {
        Readiness {
            phase: Arc::new(AtomicU8::new(STARTING)),
            cause: Arc::new(AtomicU8::new(NO_CAUSE)),
            domain: PhantomData,
        }
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

    /// The first cause that took readiness away (or kept a starting domain from becoming ready), if any.
    /// It never changes once set, so the transition is recorded with one cause.
    pub fn cause(&self) -> Option<D::NotReady> {
        D::NotReady::from_code(self.cause.load(Ordering::Acquire))
    }

    /// The end of startup: `Starting → Ready`. Returns false (and changes nothing) from any other phase,
    /// so a domain fenced during startup can never be revived.
    pub fn mark_ready(&self) -> bool {
        self.phase.compare_exchange(STARTING, READY, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Fences the domain for good. Returns true only for the call that made a ready
    /// domain not ready, so that the transition is recorded once. A starting domain becomes fenced too (it
    /// will never become ready) and keeps the cause, but no ready→not-ready transition happened. A draining
    /// domain stays draining (it is already not ready, and a drain's transition was already recorded);
    /// the caller remembers such a fence separately when it matters for the exit status.
    pub fn fence(&self, cause: D::NotReady) -> bool {
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

    /// The drain's readiness step (the staged shutdown's first): readiness false from now on.
    /// Returns true iff the domain was ready, in which case [`Domain::DRAIN_CAUSE`] is recorded.
    pub fn begin_drain(&self) -> bool {
        let was_ready = self.phase.swap(DRAINING, Ordering::AcqRel) == READY;
        if was_ready {
            self.record_cause(D::DRAIN_CAUSE);
        }
        was_ready
    }

    fn record_cause(&self, cause: D::NotReady) {
        // First cause wins; a failed exchange means an earlier cause is already recorded.
        let _ = self.cause.compare_exchange(NO_CAUSE, cause.to_code(), Ordering::AcqRel, Ordering::Acquire);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_domain::{Cause, Test};

    type R = Readiness<Test>;

    #[test]
    fn a_fence_is_permanent() {
        let r = R::new();
        assert!(!r.is_ready());
        assert!(r.mark_ready());
        assert!(r.is_ready());
        assert!(r.fence(Cause::PoolGone));
        assert!(!r.fence(Cause::ChildGone), "the transition is reported once");
        assert_eq!(r.cause(), Some(Cause::PoolGone), "the first cause is kept");
        assert!(!r.mark_ready(), "nothing makes a fenced domain ready again");
        assert_eq!(r.phase(), Phase::Fenced);
        assert!(!r.begin_drain(), "a fenced domain was not ready");
        assert!(!r.is_ready());
        assert_eq!(r.cause(), Some(Cause::PoolGone));
    }

    #[test]
    fn a_fence_during_startup_prevents_readiness() {
        let r = R::new();
        assert!(!r.fence(Cause::TransportGone), "no ready→not-ready transition");
        assert_eq!(r.cause(), Some(Cause::TransportGone));
        assert!(!r.mark_ready());
        assert_eq!(r.phase(), Phase::Fenced);
    }

    #[test]
    fn a_drain_records_shutdown_once_and_ignores_later_fences() {
        let r = R::new();
        assert!(r.mark_ready());
        assert!(r.begin_drain());
        assert!(!r.begin_drain());
        assert!(!r.fence(Cause::TransportGone));
        assert_eq!(r.phase(), Phase::Draining);
        assert_eq!(r.cause(), Some(Cause::Draining));
        assert!(!r.mark_ready());
    }

    #[test]
    fn codes_round_trip() {
        for cause in Cause::ALL {
            assert_eq!(Cause::from_code(cause.to_code()), Some(*cause));
        }
        assert_eq!(Cause::from_code(NO_CAUSE), None);
        assert_eq!(Cause::from_code(Cause::ALL.len() as u8 + 1), None);
    }
}
