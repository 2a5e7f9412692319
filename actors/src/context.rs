//! The domain context: readiness, the shutdown trigger and the observer, bound together so that every
//! transition is made once and reported once (lifecycle.md §6.3, §6.4, §7.4, §7.5).
//!
//! Owns: fencing with a cause, the abnormal-stop report, the drain's readiness step (S1), and the
//! process-lifetime incident "a provider cleanup failed" that makes the exit status 70 (lifecycle.md §7.4).
//!
//! Does not own: which child loss means what (`supervisor.rs`), pool state (`admission.rs`), or the
//! stages (`shutdown.rs`).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::observer::DomainObserver;
use crate::readiness::{NotReadyCause, Readiness};
use crate::trigger::{AbnormalCause, ShutdownTrigger};

/// Everything an owner needs to fence the domain or stop it. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct DomainContext {
    readiness: Readiness,
    trigger: ShutdownTrigger,
    observer: Arc<dyn DomainObserver>,
    provider_cleanup_failed: Arc<AtomicBool>,
}

impl fmt::Debug for DomainContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DomainContext")
            .field("readiness", &self.readiness.phase())
            .field("cause", &self.readiness.cause())
            .field("trigger", &self.trigger.state())
            .field("provider_cleanup_failed", &self.provider_cleanup_failed())
            .finish()
    }
}

impl DomainContext {
    /// A fresh context: readiness `Starting`, no trigger, reporting to `observer`.
    pub fn new(observer: Arc<dyn DomainObserver>) -> Self {
        DomainContext {
            readiness: Readiness::new(),
            trigger: ShutdownTrigger::new(),
            observer,
            provider_cleanup_failed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The readiness snapshot that the fronts read on every request.
    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }

    /// The shutdown trigger: the gateway's signal task calls [`ShutdownTrigger::signal`] on it.
    pub fn trigger(&self) -> &ShutdownTrigger {
        &self.trigger
    }

    /// The observer (the event log).
    pub fn observer(&self) -> &Arc<dyn DomainObserver> {
        &self.observer
    }

    /// Stage 12: readiness becomes true and the observer hears `ready`. Returns false if the domain was
    /// fenced or a drain began during startup; then it never becomes ready (lifecycle.md §6.4).
    pub fn mark_ready(&self) -> bool {
        let became_ready = self.readiness.mark_ready();
        if became_ready {
            self.observer.ready();
        }
        became_ready
    }

    /// Fences the domain for good (lifecycle.md §6.3). The observer hears the transition once, with the first
    /// cause. A `provider_cleanup_failed` fence is also remembered for the exit status, even during a drain
    /// (lifecycle.md §7.4: "during serving or during S5"). Returns true iff this call made a ready domain not
    /// ready.
    pub fn fence(&self, cause: NotReadyCause) -> bool {
        if cause == NotReadyCause::ProviderCleanupFailed {
            self.provider_cleanup_failed.store(true, Ordering::Release);
        }
        let transitioned = self.readiness.fence(cause);
        if transitioned {
            self.observer.not_ready(cause);
        }
        transitioned
    }

    /// As [`DomainContext::fence`], but the observer is *not* told: the caller records the transition
    /// itself, later and with more detail (a provider loss names its (tool, provider) pair and is recorded
    /// only after its transport was closed, providers.md §12.1 step 4). Returns true iff this call made a
    /// ready domain not ready, i.e. iff the caller must record it.
    pub fn fence_unreported(&self, cause: NotReadyCause) -> bool {
        if cause == NotReadyCause::ProviderCleanupFailed {
            self.provider_cleanup_failed.store(true, Ordering::Release);
        }
        self.readiness.fence(cause)
    }

    /// True once a provider cleanup failed in this process (lifecycle.md §7.4).
    pub fn provider_cleanup_failed(&self) -> bool {
        self.provider_cleanup_failed.load(Ordering::Acquire)
    }

    /// Stops the domain abnormally (lifecycle.md §7.5): readiness false at once (cause `audit_unavailable`
    /// for an audit cause, `shutdown` otherwise, audit-events.md §4.2), then the trigger fires, so the main
    /// task runs the stages with the drain deadline set to now. Returns true for the first abnormal stop.
    pub fn stop_abnormally(&self, cause: AbnormalCause) -> bool {
        if cause.is_audit() {
            self.fence(NotReadyCause::AuditUnavailable);
        } else {
            self.begin_drain();
        }
        let first = self.trigger.stop_abnormally(cause);
        if first {
            self.observer.abnormal_stop(cause);
        }
        first
    }

    /// Shutdown stage S1's readiness step: draining from now on. The observer hears `shutdown` iff the
    /// domain was ready. Returns true iff it was.
    pub fn begin_drain(&self) -> bool {
        let was_ready = self.readiness.begin_drain();
        if was_ready {
            self.observer.not_ready(NotReadyCause::Shutdown);
        }
        was_ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readiness::Phase;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);

    impl Log {
        fn push(&self, line: String) {
            if let Ok(mut lines) = self.0.lock() {
                lines.push(line);
            }
        }
        fn lines(&self) -> Vec<String> {
            self.0.lock().map(|l| l.clone()).unwrap_or_default()
        }
    }

    impl DomainObserver for Log {
        fn ready(&self) {
            self.push("ready".into());
        }
        fn not_ready(&self, cause: NotReadyCause) {
            self.push(format!("not_ready {}", cause.as_str()));
        }
        fn abnormal_stop(&self, cause: AbnormalCause) {
            self.push(format!("abnormal {}", cause.as_str()));
        }
    }

    fn context() -> (DomainContext, Arc<Log>) {
        let log = Arc::new(Log::default());
        (DomainContext::new(log.clone()), log)
    }

    #[test]
    fn a_fence_is_reported_once_with_the_first_cause() {
        let (ctx, log) = context();
        assert!(ctx.mark_ready());
        assert!(ctx.fence(NotReadyCause::ProviderRuntimeLost));
        assert!(!ctx.fence(NotReadyCause::AdmissionLost));
        assert!(!ctx.mark_ready());
        assert_eq!(log.lines(), ["ready", "not_ready provider_runtime_lost"]);
        assert!(!ctx.provider_cleanup_failed(), "a transport loss is not a cleanup failure");
    }

    #[tokio::test]
    async fn a_cleanup_failure_during_a_drain_is_remembered_but_not_reported_as_a_transition() {
        let (ctx, log) = context();
        ctx.mark_ready();
        ctx.trigger().signal();
        assert!(ctx.begin_drain());
        assert!(!ctx.fence(NotReadyCause::ProviderCleanupFailed));
        assert!(ctx.provider_cleanup_failed());
        assert_eq!(log.lines(), ["ready", "not_ready shutdown"]);
    }

    #[tokio::test]
    async fn abnormal_stop_table() {
        // (cause, readiness cause recorded, phase after)
        let table = [
            (AbnormalCause::AuditOwnerLost, "not_ready audit_unavailable", Phase::Fenced),
            (AbnormalCause::AuditWriteFailed, "not_ready audit_unavailable", Phase::Fenced),
            (AbnormalCause::ListenerLost, "not_ready shutdown", Phase::Draining),
            (AbnormalCause::PccListenerLost, "not_ready shutdown", Phase::Draining),
            (AbnormalCause::SupervisorLost, "not_ready shutdown", Phase::Draining),
        ];
        for (cause, recorded, phase) in table {
            let (ctx, log) = context();
            ctx.mark_ready();
            assert!(ctx.stop_abnormally(cause));
            assert_eq!(ctx.readiness().phase(), phase);
            assert!(!ctx.stop_abnormally(AbnormalCause::ListenerLost));
            assert_eq!(
                log.lines(),
                ["ready".to_string(), recorded.to_string(), format!("abnormal {}", cause.as_str())]
            );
            assert_eq!(ctx.trigger().abnormal(), Some(cause));
            assert!(!ctx.begin_drain(), "S1 does not record a second transition");
        }
    }
}
