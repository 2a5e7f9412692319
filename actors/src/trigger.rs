//! What starts the staged shutdown, and when.
//!
//! Owns: the first trigger (a signal or an abnormal stop) with its instant, the first abnormal stop with
//! its cause and instant, and the drain deadline derived from them. Any owner can report an abnormal
//! stop; the program's signal task reports signals; the main task waits on [`ShutdownTrigger::triggered`]
//! and then runs the stages (`shutdown.rs`).
//!
//! Does not own: readiness or the event log (that is `DomainContext`, which also tells the observer), or
//! the stages themselves.

use tokio::sync::watch;
use tokio::time::Instant;

use crate::domain::Domain;

/// What started the shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind<D: Domain> {
    /// The first termination signal (or an equivalent request from the program's main task).
    Signal,
    /// An abnormal domain stop.
    Abnormal(D::Abnormal),
}

/// A snapshot of the trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerState<D: Domain> {
    /// The first trigger and its instant; `None` while the domain runs.
    pub first: Option<(TriggerKind<D>, Instant)>,
    /// The first abnormal stop and its instant, even if a signal came first.
    pub abnormal: Option<(D::Abnormal, Instant)>,
}

impl<D: Domain> Default for TriggerState<D> {
    fn default() -> Self {
        TriggerState { first: None, abnormal: None }
    }
}

impl<D: Domain> TriggerState<D> {
    /// The drain deadline: the first signal + [`Domain::DRAIN_WINDOW`], or the
    /// instant of an    /// abnormal stop if that is earlier. `None` before any trigger.
    pub fn drain_deadline(&self) -> Option<Instant> {
        let by_signal = match self.first {
            Some((TriggerKind::Signal, at)) => Some(at + D::DRAIN_WINDOW),
            _ => None,
        };
        let by_abnormal = self.abnormal.map(|(_, at)| at);
        match (by_signal, by_abnormal) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// A cloneable handle on the one shutdown trigger of the domain.
#[derive(Clone, Debug)]
pub struct ShutdownTrigger<D: Domain> {
    state: watch::Sender<TriggerState<D>>,
}

impl<D: Domain> Default for ShutdownTrigger<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Domain> ShutdownTrigger<D> {
    /// A trigger that has not fired.
    pub fn new() -> Self {
        let (state, _) = watch::channel(TriggerState::default());
        ShutdownTrigger { state }
    }

    /// Records a SIGTERM/SIGINT. Only the first one counts: a repeated signal changes nothing, in
    /// particular not the drain deadline. Returns true iff this call started the
    /// shutdown.
    pub fn signal(&self) -> bool {
        let now = Instant::now();
        self.state.send_if_modified(|s| {
            if s.first.is_some() {
                return false;
            }
            s.first = Some((TriggerKind::Signal, now));
            true
        })
    }

    /// Records an abnormal stop. The first abnormal stop is kept; it starts the shutdown
    /// if nothing did, and otherwise brings the drain deadline forward to now (a drain in progress cancels
    /// what it admitted at once). Returns true iff this was the first abnormal stop.
    pub fn stop_abnormally(&self, cause: D::Abnormal) -> bool {
        let now = Instant::now();
        self.state.send_if_modified(|s| {
            if s.abnormal.is_some() {
                return false;
            }
            s.abnormal = Some((cause, now));
            if s.first.is_none() {
                s.first = Some((TriggerKind::Abnormal(cause), now));
            }
            true
        })
    }

    /// The current state.
    pub fn state(&self) -> TriggerState<D> {
        *self.state.borrow()
    }

    /// True once anything triggered the shutdown.
    pub fn is_triggered(&self) -> bool {
        self.state().first.is_some()
    }

    /// The first abnormal stop, if any. Its presence alone makes the exit unclean.
    pub fn abnormal(&self) -> Option<D::Abnormal> {
        self.state().abnormal.map(|(cause, _)| cause)
    }

    /// Waits until the shutdown is triggered and returns the state at that moment. Returns at once if it
    /// already was. This is how the program's main task observes "domain stopped abnormally" from any
    /// owner as well as a signal.
    pub async fn triggered(&self) -> TriggerState<D> {
        let mut rx = self.state.subscribe();
        let seen = match rx.wait_for(|s| s.first.is_some()).await {
            Ok(state) => *state,
            // Unreachable while `self` holds the sender; answer with the current state anyway.
            Err(_) => self.state(),
        };
        seen
    }

    /// A receiver that sees every later change (used by the drain stage to react to an abnormal stop).
    pub fn subscribe(&self) -> watch::Receiver<TriggerState<D>> {
        self.state.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_domain::{Stop, Test};
    use std::time::Duration;

    type Trigger = ShutdownTrigger<Test>;

    #[tokio::test(start_paused = true)]
    async fn the_first_signal_sets_the_drain_deadline_and_repeats_change_nothing() {
        let t = Trigger::new();
        assert!(!t.is_triggered());
        assert_eq!(t.state().drain_deadline(), None);
        let start = Instant::now();
        assert!(t.signal());
        tokio::time::advance(Duration::from_secs(3)).await;
        assert!(!t.signal(), "a second signal changes nothing");
        assert_eq!(t.state().first, Some((TriggerKind::Signal, start)));
        assert_eq!(t.state().drain_deadline(), Some(start + Duration::from_millis(10_000)));
        assert_eq!(t.abnormal(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_abnormal_stop_sets_the_drain_deadline_to_now() {
        let t = Trigger::new();
        let start = Instant::now();
        assert!(t.stop_abnormally(Stop::FrontGone));
        assert!(!t.stop_abnormally(Stop::SinkBroken), "the first cause is kept");
        assert_eq!(t.state().drain_deadline(), Some(start));
        assert_eq!(t.abnormal(), Some(Stop::FrontGone));
        assert!(!t.signal(), "already triggered");
        assert_eq!(t.triggered().await.first, Some((TriggerKind::Abnormal(Stop::FrontGone), start)));
    }

    #[tokio::test(start_paused = true)]
    async fn an_abnormal_stop_during_a_drain_brings_the_deadline_forward() {
        let t = Trigger::new();
        let start = Instant::now();
        t.signal();
        tokio::time::advance(Duration::from_secs(2)).await;
        t.stop_abnormally(Stop::SinkOwnerGone);
        assert_eq!(t.state().drain_deadline(), Some(start + Duration::from_secs(2)));
        assert_eq!(t.state().first, Some((TriggerKind::Signal, start)));
    }

    #[tokio::test(start_paused = true)]
    async fn triggered_wakes_a_waiter() {
        let t = Trigger::new();
        let waiter = {
            let t = t.clone();
            tokio::spawn(async move { t.triggered().await })
        };
        tokio::task::yield_now().await;
        t.signal();
        assert!(matches!(waiter.await.unwrap().first, Some((TriggerKind::Signal, _))));
    }
}
