//! The eight shutdown stages (lifecycle.md §7.3) and the deadlines of lifecycle.md §7.2.
//!
//! Owns the stage identities, their numbers, their `shutdown_stage` record names
//! (audit-events.md §3.5), which count for the exit status (lifecycle.md §7.4), and the spec's windows and
//! bounds. The table that gives the runtime their order, built-in parts and bounds is [`super::domain`]; what
//! each stage does is the gateway's hooks (`startup::shutdown`).

use std::fmt;
use std::time::Duration;

/// The cleanup deadline is the start of provider cleanup (S5) + 10,000 ms (lifecycle.md §7.2).
pub const CLEANUP_WINDOW: Duration = Duration::from_millis(10_000);
/// Transport closes after the cleanup deadline take at most 9,000 ms more (providers.md §13.1).
pub const TRANSPORT_CLOSE_WINDOW: Duration = Duration::from_millis(9_000);
/// The audit close bound: 5,000 ms from the start of the audit flush (S7, lifecycle.md §7.2).
pub const AUDIT_CLOSE_BOUND: Duration = Duration::from_millis(5_000);
/// The event-log close bound: queued records are written for at most 1,000 ms (audit-events.md §3.10).
pub const EVENT_LOG_CLOSE_BOUND: Duration = Duration::from_millis(1_000);
/// The drain deadline is the first signal + 10,000 ms (lifecycle.md §7.2).
pub const DRAIN_WINDOW: Duration = Duration::from_millis(10_000);

/// The eight stages, in order (lifecycle.md §7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StageId {
    /// S1 stop listeners: readiness false, listeners closed.
    StopListeners,
    /// S2 quiesce: run admission refuses new reservations; provider runtimes accept only admitted runs.
    Quiesce,
    /// S3 drain runs: wait for admitted runs until the drain deadline, then cancel the rest.
    DrainRuns,
    /// S4 checkpoint events: the event logger records stderr tails and enters shutdown mode (only enqueues).
    CheckpointEvents,
    /// S5 provider cleanup: seal acquisitions, wait for borrows until the cleanup deadline, close every
    /// transport.
    ProviderCleanup,
    /// S6 admission clean: wait until run admission has nothing in use; close what is still open at the
    /// cleanup deadline.
    AdmissionClean,
    /// S7 audit flush: flush the audit's pending batch through the durability barrier, close, unlock.
    AuditFlush,
    /// S8 event log close: drain the event log's queue, write the final counters, close, unlock.
    EventLogClose,
}

impl StageId {
    /// Every stage in order.
    pub const ALL: [StageId; 8] = [
        StageId::StopListeners,
        StageId::Quiesce,
        StageId::DrainRuns,
        StageId::CheckpointEvents,
        StageId::ProviderCleanup,
        StageId::AdmissionClean,
        StageId::AuditFlush,
        StageId::EventLogClose,
    ];

    /// The stage's number, 1..=8.
    pub fn number(self) -> u8 {
        match self {
            StageId::StopListeners => 1,
            StageId::Quiesce => 2,
            StageId::DrainRuns => 3,
            StageId::CheckpointEvents => 4,
            StageId::ProviderCleanup => 5,
            StageId::AdmissionClean => 6,
            StageId::AuditFlush => 7,
            StageId::EventLogClose => 8,
        }
    }

    /// The name in `shutdown_stage` records (lifecycle.md §7.3, audit-events.md §3.5); the event log close
    /// has no record.
    pub fn record_name(self) -> Option<&'static str> {
        match self {
            StageId::StopListeners => Some("stop_listeners"),
            StageId::Quiesce => Some("quiesce"),
            StageId::DrainRuns => Some("drain_runs"),
            StageId::CheckpointEvents => Some("checkpoint_events"),
            StageId::ProviderCleanup => Some("provider_cleanup"),
            StageId::AdmissionClean => Some("admission_clean"),
            StageId::AuditFlush => Some("audit_flush"),
            StageId::EventLogClose => None,
        }
    }

    /// Whether the stage's outcome counts for the exit status (lifecycle.md §7.4: every stage but checkpoint
    /// events).
    pub fn counts_for_exit(self) -> bool {
        self != StageId::CheckpointEvents
    }
}

impl fmt::Display for StageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S{}", self.number())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_table() {
        let rows: Vec<(String, Option<&str>, bool)> =
            StageId::ALL.iter().map(|s| (s.to_string(), s.record_name(), s.counts_for_exit())).collect();
        let expected = [
            ("S1", Some("stop_listeners"), true),
            ("S2", Some("quiesce"), true),
            ("S3", Some("drain_runs"), true),
            ("S4", Some("checkpoint_events"), false),
            ("S5", Some("provider_cleanup"), true),
            ("S6", Some("admission_clean"), true),
            ("S7", Some("audit_flush"), true),
            ("S8", None, true),
        ];
        let expected: Vec<(String, Option<&str>, bool)> =
            expected.iter().map(|(n, r, c)| (n.to_string(), *r, *c)).collect();
        assert_eq!(rows, expected);
    }
}
