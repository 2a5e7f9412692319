//! What starts the staged shutdown, and when (lifecycle.md §7.1, §7.2, §7.5, §8.2).
//!
//! Owns: the first trigger (a signal or an abnormal stop) with its instant, the first abnormal stop with
//! its cause and instant, and the drain deadline derived from them. Any owner can report an abnormal
//! stop; the gateway's signal task reports signals; the main task waits on [`ShutdownTrigger::triggered`]
//! and then runs the stages (`shutdown.rs`).
//!
//! Does not own: readiness or the event log (that is `DomainContext`, which also tells the observer), or
//! the stages themselves.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// The drain deadline is the first signal + 10,000 ms (lifecycle.md §7.2).
pub const DRAIN_WINDOW: Duration = Duration::from_millis(10_000);

/// Why the domain stopped abnormally (lifecycle.md §7.5). The set is closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbnormalCause {
    /// The audit owner stopped unexpectedly.
    AuditOwnerLost,
    /// An audit write or sync failed (audit-events.md §2.8).
    AuditWriteFailed,
    /// The HTTP listener stopped unexpectedly.
    ListenerLost,
    /// The PCC listener stopped unexpectedly.
    PccListenerLost,
    /// The domain supervisor's own logic failed (a panic or an error in its handler).
    SupervisorLost,
}

impl AbnormalCause {
    /// A stable name for logs and tests.
    pub fn as_str(self) -> &'static str {
        match self {
            AbnormalCause::AuditOwnerLost => "audit_owner_lost",
            AbnormalCause::AuditWriteFailed => "audit_write_failed",
            AbnormalCause::ListenerLost => "listener_lost",
            AbnormalCause::PccListenerLost => "pcc_listener_lost",
            AbnormalCause::SupervisorLost => "supervisor_lost",
        }
    }

    /// True when the audit is the cause: then shutdown skips S7 (lifecycle.md §7.5) and readiness
    /// records `audit_unavailable` rather than `shutdown` (audit-events.md §4.2).
    pub fn is_audit(self) -> bool {
        matches!(self, AbnormalCause::AuditOwnerLost | AbnormalCause::AuditWriteFailed)
    }
}

/// What started the shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    /// The first SIGTERM or SIGINT (or an equivalent request from the gateway's main task).
    Signal,
    /// An abnormal domain stop (lifecycle.md §7.5).
    Abnormal(AbnormalCause),
}

/// A snapshot of the trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TriggerState {
    /// The first trigger and its instant; `None` while the domain runs.
    pub first: Option<(TriggerKind, Instant)>,
    /// The first abnormal stop and its instant, even if a signal came first.
    pub abnormal: Option<(AbnormalCause, Instant)>,
}

impl TriggerState {
    /// The drain deadline (lifecycle.md §7.2, §7.5): the first signal + 10 s, or the instant of an
    /// abnormal stop if that is earlier. `None` before any trigger.
    pub fn drain_deadline(&self) -> Option<Instant> {
        let by_signal = match self.first {
            Some((TriggerKind::Signal, at)) => Some(at + DRAIN_WINDOW),
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
pub struct ShutdownTrigger {
    state: watch::Sender<TriggerState>,
}

impl Default for ShutdownTrigger {
    fn default() -> Self {
        Self::new()
    }
}

impl ShutdownTrigger {
    /// A trigger that has not fired.
    pub fn new() -> Self {
        let (state, _) = watch::channel(TriggerState::default());
        ShutdownTrigger { state }
    }

    /// Records a SIGTERM/SIGINT. Only the first one counts: a repeated signal changes nothing, in
    /// particular not the drain deadline (lifecycle.md §8.2). Returns true iff this call started the
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

    /// Records an abnormal stop (lifecycle.md §7.5). The first abnormal stop is kept; it starts the shutdown
    /// if nothing did, and otherwise brings the drain deadline forward to now (a drain in progress cancels
    /// its runs at once). Returns true iff this was the first abnormal stop.
    pub fn stop_abnormally(&self, cause: AbnormalCause) -> bool {
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
    pub fn state(&self) -> TriggerState {
        *self.state.borrow()
    }

    /// True once anything triggered the shutdown.
    pub fn is_triggered(&self) -> bool {
        self.state().first.is_some()
    }

    /// The first abnormal stop, if any. Its presence alone makes the exit status 70 (lifecycle.md §7.5).
    pub fn abnormal(&self) -> Option<AbnormalCause> {
        self.state().abnormal.map(|(cause, _)| cause)
    }

    /// Waits until the shutdown is triggered and returns the state at that moment. Returns at once if it
    /// already was. This is how the gateway's main task observes "domain stopped abnormally" from any
    /// owner as well as a signal.
    pub async fn triggered(&self) -> TriggerState {
        let mut rx = self.state.subscribe();
        let seen = match rx.wait_for(|s| s.first.is_some()).await {
            Ok(state) => *state,
            // Unreachable while `self` holds the sender; answer with the current state anyway.
            Err(_) => self.state(),
        };
        seen
    }

    /// A receiver that sees every later change (used by the drain stage to react to an abnormal stop).
    pub fn subscribe(&self) -> watch::Receiver<TriggerState> {
        self.state.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_first_signal_sets_the_drain_deadline_and_repeats_change_nothing() {
        let t = ShutdownTrigger::new();
        assert!(!t.is_triggered());
        assert_eq!(t.state().drain_deadline(), None);
        let start = Instant::now();
        assert!(t.signal());
        tokio::time::advance(Duration::from_secs(3)).await;
        assert!(!t.signal(), "lifecycle.md §8.2: a second signal changes nothing");
        assert_eq!(t.state().first, Some((TriggerKind::Signal, start)));
        assert_eq!(t.state().drain_deadline(), Some(start + Duration::from_millis(10_000)));
        assert_eq!(t.abnormal(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_abnormal_stop_sets_the_drain_deadline_to_now() {
        let t = ShutdownTrigger::new();
        let start = Instant::now();
        assert!(t.stop_abnormally(AbnormalCause::ListenerLost));
        assert!(!t.stop_abnormally(AbnormalCause::AuditWriteFailed), "the first cause is kept");
        assert_eq!(t.state().drain_deadline(), Some(start));
        assert_eq!(t.abnormal(), Some(AbnormalCause::ListenerLost));
        assert!(!t.signal(), "already triggered");
        assert_eq!(
            t.triggered().await.first,
            Some((TriggerKind::Abnormal(AbnormalCause::ListenerLost), start))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_abnormal_stop_during_a_drain_brings_the_deadline_forward() {
        let t = ShutdownTrigger::new();
        let start = Instant::now();
        t.signal();
        tokio::time::advance(Duration::from_secs(2)).await;
        t.stop_abnormally(AbnormalCause::AuditOwnerLost);
        assert_eq!(t.state().drain_deadline(), Some(start + Duration::from_secs(2)));
        assert_eq!(t.state().first, Some((TriggerKind::Signal, start)));
    }

    #[tokio::test(start_paused = true)]
    async fn triggered_wakes_a_waiter() {
        let t = ShutdownTrigger::new();
        let waiter = {
            let t = t.clone();
            tokio::spawn(async move { t.triggered().await })
        };
        tokio::task::yield_now().await;
        t.signal();
        assert!(matches!(waiter.await.unwrap().first, Some((TriggerKind::Signal, _))));
    }

    #[test]
    fn audit_causes_are_marked() {
        let audit: Vec<bool> = [
            AbnormalCause::AuditOwnerLost,
            AbnormalCause::AuditWriteFailed,
            AbnormalCause::ListenerLost,
            AbnormalCause::PccListenerLost,
            AbnormalCause::SupervisorLost,
        ]
        .iter()
        .map(|c| c.is_audit())
        .collect();
        assert_eq!(audit, [true, true, false, false, false]);
    }
}
