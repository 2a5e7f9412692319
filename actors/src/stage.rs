//! The vocabulary of the staged shutdown (lifecycle.md §7.3): stage names, outcomes, what a stage hook
//! is given, and the hook trait the gateway implements (or passes a closure for).
//!
//! Owns: [`StageId`], [`StageOutcome`], [`StageContext`], [`Stage`]. Does not own the order or the
//! deadlines (`shutdown.rs`) or the exit status (`exit.rs`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use tokio::time::Instant;

use crate::trigger::AbnormalCause;

/// The eight stages, in order (lifecycle.md §7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StageId {
    /// S1: readiness false, listeners closed.
    StopListeners,
    /// S2: run admission refuses new reservations; provider runtimes accept only admitted runs.
    Quiesce,
    /// S3: wait for admitted runs until the drain deadline, then cancel the rest.
    DrainRuns,
    /// S4: the event logger records stderr tails and enters shutdown mode (only enqueues).
    CheckpointEvents,
    /// S5: seal acquisitions, wait for borrows until the cleanup deadline, close every transport.
    ProviderCleanup,
    /// S6: wait until run admission has nothing in use; close what is still open at the cleanup deadline.
    AdmissionClean,
    /// S7: flush the audit's pending batch through the durability barrier, close, unlock.
    AuditFlush,
    /// S8: drain the event log's queue, write the final counters, close, unlock.
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

    /// The name in `shutdown_stage` records (lifecycle.md §7.3, audit-events.md §3.5); S8 has no record.
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

    /// Whether the stage's outcome counts for the exit status (lifecycle.md §7.4: every stage but S4).
    pub fn counts_for_exit(self) -> bool {
        self != StageId::CheckpointEvents
    }

    fn bit(self) -> u8 {
        1 << (self.number() - 1)
    }
}

/// Why a stage was not clean. Closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unclean {
    /// The stage's work did not finish within its bound; the hook was abandoned.
    DeadlineExceeded,
    /// An owner did not acknowledge (S2).
    NotAcknowledged,
    /// Runs were still admitted at the drain deadline and were cancelled (S3).
    RunsCancelled,
    /// Run admission still had runs in use at the cleanup deadline (S6).
    RunsRemaining,
    /// Run admission was fenced (S6).
    AdmissionFenced,
    /// The hook reported a failure of its own (e.g. a transport not reaped, a sync failed).
    Failed,
    /// A later stage found that this stage's condition did not hold after all (S1's PCC cutoff is only
    /// known at the cleanup deadline), see [`StageContext::amend`].
    Amended,
}

impl Unclean {
    /// A stable name for logs and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Unclean::DeadlineExceeded => "deadline_exceeded",
            Unclean::NotAcknowledged => "not_acknowledged",
            Unclean::RunsCancelled => "runs_cancelled",
            Unclean::RunsRemaining => "runs_remaining",
            Unclean::AdmissionFenced => "admission_fenced",
            Unclean::Failed => "failed",
            Unclean::Amended => "amended",
        }
    }
}

/// How a stage ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StageOutcome {
    Clean,
    Unclean(Unclean),
    /// Not run: S7 without `private_audit`, or with the audit as the abnormal cause (lifecycle.md §7.5).
    /// Counts as clean.
    Skipped,
}

impl StageOutcome {
    /// True for `Clean` and `Skipped`.
    pub fn is_clean(self) -> bool {
        !matches!(self, StageOutcome::Unclean(_))
    }

    /// The worse of two outcomes of one stage (the first unclean reason wins).
    pub fn and(self, other: StageOutcome) -> StageOutcome {
        match (self, other) {
            (StageOutcome::Unclean(u), _) | (_, StageOutcome::Unclean(u)) => StageOutcome::Unclean(u),
            (StageOutcome::Skipped, StageOutcome::Skipped) => StageOutcome::Skipped,
            _ => StageOutcome::Clean,
        }
    }

    /// `Clean` if `clean`, else `Unclean(reason)`.
    pub fn from_bool(clean: bool, reason: Unclean) -> StageOutcome {
        if clean {
            StageOutcome::Clean
        } else {
            StageOutcome::Unclean(reason)
        }
    }
}

/// Late verdicts on earlier stages, shared by every [`StageContext`] of one shutdown.
#[derive(Clone, Debug, Default)]
pub(crate) struct Amendments(Arc<AtomicU8>);

impl Amendments {
    pub(crate) fn mark(&self, stage: StageId) {
        self.0.fetch_or(stage.bit(), Ordering::AcqRel);
    }

    pub(crate) fn contains(&self, stage: StageId) -> bool {
        self.0.load(Ordering::Acquire) & stage.bit() != 0
    }
}

/// What a stage hook is told. Owned and cloneable so hooks can move it into their futures.
#[derive(Clone, Debug)]
pub struct StageContext {
    /// Which stage this is.
    pub stage: StageId,
    /// When the stage started.
    pub started: Instant,
    /// The drain deadline as known when the stage started (lifecycle.md §7.2; now, after an abnormal stop).
    pub drain_deadline: Instant,
    /// The cleanup deadline, from S5 on (S5 start + 10 s).
    pub cleanup_deadline: Option<Instant>,
    /// When the orchestrator abandons this hook and marks the stage unclean. The hook should enforce
    /// the spec's own bounds (e.g. 9,000 ms per transport close) and finish before this.
    pub bound: Instant,
    /// The abnormal cause, if the domain stopped abnormally (lifecycle.md §7.5).
    pub abnormal: Option<AbnormalCause>,
    pub(crate) amendments: Amendments,
}

impl StageContext {
    /// Marks an earlier stage unclean after the fact, e.g. S1 when a PCC stream had to be closed at the
    /// cleanup deadline (lifecycle.md §7.3 S1 "ended by pcc.md's cutoff", pcc.md §15 step 5). The final
    /// report and the exit status see it; the observer already heard the stage's own outcome.
    pub fn amend(&self, earlier: StageId) {
        self.amendments.mark(earlier);
    }
}

/// A boxed stage future.
pub type StageFuture = Pin<Box<dyn Future<Output = StageOutcome> + Send + 'static>>;

/// The gateway's part of one stage. Implemented for every `FnOnce(StageContext) -> impl Future`.
pub trait Stage: Send + 'static {
    /// Runs the stage once.
    fn run(self: Box<Self>, ctx: StageContext) -> StageFuture;
}

impl<F, Fut> Stage for F
where
    F: FnOnce(StageContext) -> Fut + Send + 'static,
    Fut: Future<Output = StageOutcome> + Send + 'static,
{
    fn run(self: Box<Self>, ctx: StageContext) -> StageFuture {
        Box::pin((*self)(ctx))
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

    #[test]
    fn outcomes_combine_to_the_worse() {
        use StageOutcome::*;
        let failed = Unclean(super::Unclean::Failed);
        let table = [
            (Clean, Clean, Clean),
            (Clean, Skipped, Clean),
            (Skipped, Skipped, Skipped),
            (Clean, failed, failed),
            (failed, Clean, failed),
            (Unclean(super::Unclean::NotAcknowledged), failed, Unclean(super::Unclean::NotAcknowledged)),
        ];
        for (a, b, expected) in table {
            assert_eq!(a.and(b), expected, "{a:?} and {b:?}");
        }
        assert!(Skipped.is_clean());
        assert!(!failed.is_clean());
    }

    #[test]
    fn amendments_mark_single_stages() {
        let a = Amendments::default();
        a.mark(StageId::StopListeners);
        assert!(a.contains(StageId::StopListeners));
        assert!(!StageId::ALL[1..].iter().any(|s| a.contains(*s)));
    }
}
