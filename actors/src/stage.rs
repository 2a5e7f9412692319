//! The vocabulary of the staged shutdown: outcomes, what a stage hook is given, and the hook trait the
//! embedding program implements (or passes a closure for).
//!
//! Owns: [`StageOutcome`], [`Unclean`], [`StageContext`], [`Stage`]. Does not own the stages, their
//! order or their deadlines (the domain's table, [`crate::Domain::stages`]), running them
//! (`shutdown.rs`) or the exit status (`exit.rs`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::time::Instant;

use crate::domain::Domain;

/// Why a stage was not clean. Closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unclean {
    /// The stage's work did not finish within its bound; the hook was abandoned.
    DeadlineExceeded,
    /// The drained admission's owner did not acknowledge ([`crate::Builtin::StopAdmitting`]).
    NotAcknowledged,
    /// Leases were still held at the drain deadline and their work was cancelled
    /// ([`crate::Builtin::DrainAdmitted`]).
    LeasesCancelled,
    /// The drained admission still had leases in use at the cleanup deadline
    /// ([`crate::Builtin::AwaitAdmissionIdle`]).
    LeasesRemaining,
    /// The drained admission was fenced ([`crate::Builtin::AwaitAdmissionIdle`]).
    AdmissionFenced,
    /// The hook reported a failure of its own (e.g. a resource it closes was not released, a sync
    /// failed).
    Failed,
    /// A later stage found that this stage's condition did not hold after all (some conditions are only
    /// known at a later deadline), see [`StageContext::amend`].
    Amended,
}

impl Unclean {
    /// A stable name for logs and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Unclean::DeadlineExceeded => "deadline_exceeded",
            Unclean::NotAcknowledged => "not_acknowledged",
            Unclean::LeasesCancelled => "leases_cancelled",
            Unclean::LeasesRemaining => "leases_remaining",
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
    /// Not run: an optional stage the plan did not enable, or a stage its abnormal cause skips
    /// ([`crate::StageSpec::skip_on_abnormal`]). Counts as clean.
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

/// Late verdicts on earlier stages, shared by every [`StageContext`] of one shutdown: one bit per
/// stage of the table, by position (at most 64 stages).
#[derive(Clone, Debug)]
pub(crate) struct Amendments<D: Domain> {
    order: Arc<[D::Stage]>,
    marked: Arc<AtomicU64>,
}

impl<D: Domain> Amendments<D> {
    pub(crate) fn new(order: impl IntoIterator<Item = D::Stage>) -> Self {
        Amendments { order: order.into_iter().collect(), marked: Arc::new(AtomicU64::new(0)) }
    }

    fn bit(&self, stage: D::Stage) -> u64 {
        match self.order.iter().position(|s| *s == stage) {
            Some(at) if at < 64 => 1 << at,
            _ => 0,
        }
    }

    pub(crate) fn mark(&self, stage: D::Stage) {
        self.marked.fetch_or(self.bit(stage), Ordering::AcqRel);
    }

    pub(crate) fn contains(&self, stage: D::Stage) -> bool {
        self.marked.load(Ordering::Acquire) & self.bit(stage) != 0
    }
}

/// What a stage hook is told. Owned and cloneable so hooks can move it into their futures.
#[derive(Clone, Debug)]
pub struct StageContext<D: Domain> {
    /// Which stage this is.
    pub stage: D::Stage,
    /// When the stage started.
    pub started: Instant,
    /// The drain deadline as known when the stage started (the first signal plus the domain's drain
    /// window, or the instant of an abnormal stop).
    pub drain_deadline: Instant,
    /// The cleanup deadline, from the stage that starts it on ([`crate::Builtin::StartCleanup`]).
    pub cleanup_deadline: Option<Instant>,
    /// When the orchestrator abandons this hook and marks the stage unclean. The hook should enforce
    /// its own, tighter bounds and finish before this.
    pub bound: Instant,
    /// The abnormal cause, if the domain stopped abnormally.
    pub abnormal: Option<D::Abnormal>,
    pub(crate) amendments: Amendments<D>,
}

impl<D: Domain> StageContext<D> {
    /// Marks an earlier stage unclean after the fact, for a condition of that stage that is only decided
    /// later (e.g. whether something it stopped had ended by a later deadline). The final report and the
    /// exit status see it; the observer already heard the stage's own outcome.
    pub fn amend(&self, earlier: D::Stage) {
        self.amendments.mark(earlier);
    }
}

/// A boxed stage future.
pub type StageFuture = Pin<Box<dyn Future<Output = StageOutcome> + Send + 'static>>;

/// The embedding program's part of one stage. Implemented for every `FnOnce(StageContext<D>) -> impl Future`.
pub trait Stage<D: Domain>: Send + 'static {
    /// Runs the stage once.
    fn run(self: Box<Self>, ctx: StageContext<D>) -> StageFuture;
}

impl<D, F, Fut> Stage<D> for F
where
    D: Domain,
    F: FnOnce(StageContext<D>) -> Fut + Send + 'static,
    Fut: Future<Output = StageOutcome> + Send + 'static,
{
    fn run(self: Box<Self>, ctx: StageContext<D>) -> StageFuture {
        Box::pin((*self)(ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        use crate::test_domain::{Step, Test};
        let a = Amendments::<Test>::new(Step::ALL);
        a.mark(Step::Front);
        assert!(a.contains(Step::Front));
        assert!(!Step::ALL[1..].iter().any(|s| a.contains(*s)));
    }
}
