//! The domain context: readiness, the shutdown trigger and the observer, bound together so that every
//! transition is made once and reported once.
//!
//! Owns: fencing with a cause, the abnormal-stop report, the drain's readiness step (the staged
//! shutdown's first), and the process-lifetime incident "a fence whose cause counts for the exit status
//! happened" ([`Domain::fence_counts_for_exit`]) that makes the exit unclean.
//!
//! Does not own: which child loss means what (`supervisor.rs`), pool state (`admission.rs`), or the
//! stages (`shutdown.rs`).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::domain::Domain;
use crate::observer::DomainObserver;
use crate::readiness::Readiness;
use crate::trigger::ShutdownTrigger;

/// Everything an owner needs to fence the domain or stop it. Cheap to clone; clones share state.
pub struct DomainContext<D: Domain> {
    readiness: Readiness<D>,
    trigger: ShutdownTrigger<D>,
    observer: Arc<dyn DomainObserver<D>>,
    exit_fence: Arc<AtomicBool>,
}

impl<D: Domain> Clone for DomainContext<D> {
    fn clone(&self) -> Self {
        DomainContext {
            readiness: self.readiness.clone(),
            trigger: self.trigger.clone(),
            observer: self.observer.clone(),
            exit_fence: self.exit_fence.clone(),
        }
    }
}

impl<D: Domain> fmt::Debug for DomainContext<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DomainContext")
            .field("readiness", &self.readiness.phase())
            .field("cause", &self.readiness.cause())
            .field("trigger", &self.trigger.state())
            .field("exit_fence", &self.exit_fence())
            .finish()
    }
}

impl<D: Domain> DomainContext<D> {
    /// A fresh context: readiness `Starting`, no trigger, reporting to `observer`.
    pub fn new(observer: Arc<dyn DomainObserver<D>>) -> Self {
        DomainContext {
            readiness: Readiness::new(),
            trigger: ShutdownTrigger::new(),
            observer,
            exit_fence: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The readiness snapshot that the fronts read on every request.
    pub fn readiness(&self) -> &Readiness<D> {
        &self.readiness
    }

    /// The shutdown trigger: the program's signal task calls [`ShutdownTrigger::signal`] on it.
    pub fn trigger(&self) -> &ShutdownTrigger<D> {
        &self.trigger
    }

    /// The observer (e.g. an event log).
    pub fn observer(&self) -> &Arc<dyn DomainObserver<D>> {
        &self.observer
    }

    /// The end of startup: readiness becomes true and the observer hears it. Returns false if the domain
    /// was fenced or a drain began during startup; then it never becomes ready.
    pub fn mark_ready(&self) -> bool {
        let became_ready = self.readiness.mark_ready();
        if became_ready {
            self.observer.ready();
        }
        became_ready
    }

    /// Fences the domain for good. The observer hears the transition once, with the first
    /// cause. A fence whose cause counts for the exit status ([`Domain::fence_counts_for_exit`]) is also
    /// remembered, also when it happens during a drain. Returns true iff
    /// this call made a ready domain not ready.
    pub fn fence(&self, cause: D::NotReady) -> bool {
        self.remember_for_exit(cause);
        let transitioned = self.readiness.fence(cause);
        if transitioned {
            self.observer.not_ready(cause);
        }
        transitioned
    }

    /// As [`DomainContext::fence`], but the observer is *not* told: the caller records the transition
    /// itself, later and with more detail (e.g. after it released what the lost child held). Returns true
    /// iff this call made a
    /// ready domain not ready, i.e. iff the caller must record it.
    pub fn fence_unreported(&self, cause: D::NotReady) -> bool {
        self.remember_for_exit(cause);
        self.readiness.fence(cause)
    }

    fn remember_for_exit(&self, cause: D::NotReady) {
        if D::fence_counts_for_exit(cause) {
            self.exit_fence.store(true, Ordering::Release);
        }
    }

    /// True once a fence whose cause counts for the exit status happened in this process.
    pub fn exit_fence(&self) -> bool {
        self.exit_fence.load(Ordering::Acquire)
    }

    /// Stops the domain abnormally: readiness false at once (fenced with the cause
    /// [`Domain::abnormal_fence`] names, or else drained with [`Domain::DRAIN_CAUSE`]), then the trigger
    /// fires, so
    /// the main task runs the stages with the drain deadline set to now. Returns true for the first
    /// abnormal stop.
    pub fn stop_abnormally(&self, cause: D::Abnormal) -> bool {
        match D::abnormal_fence(cause) {
            Some(fence) => {
                self.fence(fence);
            }
            None => {
                self.begin_drain();
            }
        }
        let first = self.trigger.stop_abnormally(cause);
        if first {
            self.observer.abnormal_stop(cause);
        }
        first
    }

    /// The drain's readiness step (the staged shutdown's first): draining from now on. The observer hears
    /// [`Domain::DRAIN_CAUSE`] iff the domain was ready. Returns true iff it was.
    pub fn begin_drain(&self) -> bool {
        let was_ready = self.readiness.begin_drain();
        if was_ready {
            self.observer.not_ready(D::DRAIN_CAUSE);
        }
        was_ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Code;
    use crate::readiness::Phase;
    use crate::test_domain::{Cause, Stop, Test};
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

    impl DomainObserver<Test> for Log {
        fn ready(&self) {
            self.push("ready".into());
        }
        fn not_ready(&self, cause: Cause) {
            self.push(format!("not_ready {}", cause.as_str()));
        }
        fn abnormal_stop(&self, cause: Stop) {
            self.push(format!("abnormal {}", cause.as_str()));
        }
    }

    fn context() -> (DomainContext<Test>, Arc<Log>) {
        let log = Arc::new(Log::default());
        (DomainContext::new(log.clone()), log)
    }

    #[test]
    fn a_fence_is_reported_once_with_the_first_cause() {
        let (ctx, log) = context();
        assert!(ctx.mark_ready());
        assert!(ctx.fence(Cause::TransportGone));
        assert!(!ctx.fence(Cause::PoolGone));
        assert!(!ctx.mark_ready());
        assert_eq!(log.lines(), ["ready", "not_ready transport_gone"]);
        assert!(!ctx.exit_fence(), "this fence does not count for the exit status");
    }

    #[tokio::test]
    async fn a_counted_fence_during_a_drain_is_remembered_but_not_reported_as_a_transition() {
        let (ctx, log) = context();
        ctx.mark_ready();
        ctx.trigger().signal();
        assert!(ctx.begin_drain());
        assert!(!ctx.fence(Cause::CleanupBroken));
        assert!(ctx.exit_fence());
        assert_eq!(log.lines(), ["ready", "not_ready draining"]);
    }

    #[tokio::test]
    async fn abnormal_stop_table() {
        // (cause, readiness cause recorded, phase after)
        let table = [
            (Stop::SinkOwnerGone, "not_ready sink_down", Phase::Fenced),
            (Stop::SinkBroken, "not_ready sink_down", Phase::Fenced),
            (Stop::FrontGone, "not_ready draining", Phase::Draining),
            (Stop::SecondFrontGone, "not_ready draining", Phase::Draining),
            (Stop::RootGone, "not_ready draining", Phase::Draining),
        ];
        for (cause, recorded, phase) in table {
            let (ctx, log) = context();
            ctx.mark_ready();
            assert!(ctx.stop_abnormally(cause));
            assert_eq!(ctx.readiness().phase(), phase);
            assert!(!ctx.stop_abnormally(Stop::FrontGone));
            assert_eq!(
                log.lines(),
                ["ready".to_string(), recorded.to_string(), format!("abnormal {}", cause.as_str())]
            );
            assert_eq!(ctx.trigger().abnormal(), Some(cause));
            assert!(!ctx.begin_drain(), "the drain does not record a second transition");
        }
    }
}
