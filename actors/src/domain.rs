//! What the runtime is generic over: the domain's closed codes and the few rules that bind them to the
//! runtime's mechanics.
//!
//! Owns: the [`Domain`] trait (the readiness causes, the abnormal-stop causes and the shutdown stages of
//! one domain, with the hooks and values the runtime needs to apply them: the drain window, the unclean
//! exit status), the [`Code`] trait those causes implement, and the shape of a stage table
//! ([`StageSpec`], [`Builtin`], [`Bound`]).
//!
//! Does not own any code, spelling, stage, deadline or exit status: the embedding program defines them
//! and implements [`Domain`] for a marker type. This crate's own tests use a small test domain of their
//! own. This is the bottom of the crate: it imports none of its siblings.

use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

/// A closed code: a small `Copy` enum with a fixed wire spelling per value.
pub trait Code: Copy + Eq + Hash + Debug + Send + Sync + 'static {
    /// Every value, in a fixed order. A value's position is its compact code (the readiness flag keeps
    /// the first cause in one atomic byte), so the list must have fewer than 255 values.
    const ALL: &'static [Self];

    /// The wire spelling (what the observer records and the tree listing shows).
    fn as_str(self) -> &'static str;

    /// `1 + ` the position in [`Code::ALL`]; 0 is left for "none".
    fn to_code(self) -> u8 {
        let at = Self::ALL.iter().position(|c| *c == self).unwrap_or(usize::from(u8::MAX - 1));
        u8::try_from(at + 1).unwrap_or(u8::MAX)
    }

    /// The inverse of [`Code::to_code`]; `None` for 0 and for anything out of range.
    fn from_code(code: u8) -> Option<Self> {
        usize::from(code).checked_sub(1).and_then(|at| Self::ALL.get(at)).copied()
    }
}

/// One domain: its codes and the rules that bind them to the runtime. Implemented by a marker type
/// (a unit struct, hence the derivable supertraits, which let the generic types derive theirs).
pub trait Domain: Copy + Eq + Hash + Debug + Default + Send + Sync + 'static {
    /// Why the domain stopped being ready (the readiness record's causes).
    type NotReady: Code;
    /// Why the domain stopped abnormally.
    type Abnormal: Code;
    /// The shutdown stages' identities.
    type Stage: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// The cause a drain records when it takes readiness away (shutdown's first stage).
    const DRAIN_CAUSE: Self::NotReady;
    /// The fence cause for a linked child that stopped before anyone registered it.
    const UNREGISTERED_CAUSE: Self::NotReady;
    /// The abnormal cause when the root supervisor stops other than through its shutdown.
    const ROOT_LOST: Self::Abnormal;
    /// The drain deadline is the first signal plus this window.
    const DRAIN_WINDOW: Duration;
    /// The process exit status after an unclean shutdown or an abnormal stop (a clean one is 0).
    const UNCLEAN_EXIT: u8;

    /// The readiness cause an abnormal stop fences with, or `None` when it only begins the drain (its
    /// readiness record then carries [`Domain::DRAIN_CAUSE`]).
    fn abnormal_fence(cause: Self::Abnormal) -> Option<Self::NotReady>;

    /// True for a fence cause that makes the exit status unclean whenever it happens, even during a
    /// drain (remembered by the context; the shutdown report's `Incidents::exit_fence`).
    fn fence_counts_for_exit(cause: Self::NotReady) -> bool;

    /// The shutdown stages, in the order they run, with their built-in parts and bounds.
    fn stages() -> Vec<StageSpec<Self>>;
}

/// What the orchestrator itself does in a stage, before the stage's hooks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// Nothing: the stage is its hooks.
    Hooks,
    /// Readiness false (the drain's readiness step, recorded with [`Domain::DRAIN_CAUSE`] if the
    /// domain was ready), before the stage starts.
    BeginDrain,
    /// The drained admission (the plan's admission owner) refuses new reservations; the stage is unclean
    /// without the owner's acknowledgement within the action bound (`shutdown::ACTION_BOUND`).
    StopAdmitting,
    /// Waits for the drained admission's leases until the drain deadline (which an abnormal stop brings
    /// forward), then cancels the rest; the stage is unclean iff any was cancelled.
    DrainAdmitted,
    /// The cleanup deadline is this stage's start plus the window.
    StartCleanup(Duration),
    /// Waits until the drained admission has nothing in use, up to the cleanup deadline; the stage is
    /// unclean if that was not reached or that admission was ever fenced.
    AwaitAdmissionIdle,
}

/// When the orchestrator abandons a stage's hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The stage's start plus this.
    FromStart(Duration),
    /// The end of the stage's built-in part plus this.
    FromBuiltin(Duration),
    /// The cleanup deadline (or the end of the built-in part, if that is later) plus this.
    FromCleanupDeadline(Duration),
}

/// One row of a domain's stage table.
#[derive(Clone, Copy, Debug)]
pub struct StageSpec<D: Domain> {
    pub id: D::Stage,
    pub builtin: Builtin,
    pub bound: Bound,
    /// Whether the stage's outcome counts for the exit status.
    pub counts_for_exit: bool,
    /// An optional stage runs only when the plan enables it (the plan's `with_enabled`);
    /// otherwise it is recorded as skipped without starting.
    pub optional: bool,
    /// The stage is skipped (recorded, never started) when the domain stopped abnormally for a cause
    /// this returns true for.
    pub skip_on_abnormal: Option<fn(D::Abnormal) -> bool>,
}

impl<D: Domain> StageSpec<D> {
    /// A stage that counts for the exit status, always runs, and has no built-in part.
    pub fn new(id: D::Stage, bound: Bound) -> Self {
        StageSpec {
            id,
            builtin: Builtin::Hooks,
            bound,
            counts_for_exit: true,
            optional: false,
            skip_on_abnormal: None,
        }
    }

    /// With a built-in part.
    pub fn builtin(self, builtin: Builtin) -> Self {
        StageSpec { builtin, ..self }
    }

    /// Its outcome does not count for the exit status.
    pub fn not_counted(self) -> Self {
        StageSpec { counts_for_exit: false, ..self }
    }

    /// Runs only when the plan enables it.
    pub fn optional(self) -> Self {
        StageSpec { optional: true, ..self }
    }

    /// Skipped when the abnormal cause satisfies `rule`.
    pub fn skip_on_abnormal(self, rule: fn(D::Abnormal) -> bool) -> Self {
        StageSpec { skip_on_abnormal: Some(rule), ..self }
    }
}
