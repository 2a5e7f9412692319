//! A small domain of the crate's own, for its unit tests and (included by path from
//! `tests/common/mod.rs`) its integration tests: the runtime is tested without the gateway's codes. Its
//! spellings are deliberately not the gateway's. It names the runtime only through `super::`, which is
//! the crate root here and the tests' `common` module there.

use std::time::Duration;

use super::{Bound, Builtin, Code, Domain, StageSpec};

/// The runtime's action bound and hook grace (`shutdown::ACTION_BOUND`, `shutdown::HOOK_GRACE`), written
/// out so that this file imports no sibling but the crate root.
const ACTION_BOUND: Duration = Duration::from_millis(2_000);
const HOOK_GRACE: Duration = Duration::from_millis(1_000);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Test;

/// Readiness causes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    TransportGone,
    CleanupBroken,
    PoolGone,
    SinkDown,
    ChildGone,
    Draining,
}

impl Code for Cause {
    const ALL: &'static [Cause] = &[
        Cause::TransportGone,
        Cause::CleanupBroken,
        Cause::PoolGone,
        Cause::SinkDown,
        Cause::ChildGone,
        Cause::Draining,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Cause::TransportGone => "transport_gone",
            Cause::CleanupBroken => "cleanup_broken",
            Cause::PoolGone => "pool_gone",
            Cause::SinkDown => "sink_down",
            Cause::ChildGone => "child_gone",
            Cause::Draining => "draining",
        }
    }
}

/// Abnormal-stop causes; the first two are the sink's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stop {
    SinkOwnerGone,
    SinkBroken,
    FrontGone,
    SecondFrontGone,
    RootGone,
}

impl Stop {
    pub fn is_sink(self) -> bool {
        matches!(self, Stop::SinkOwnerGone | Stop::SinkBroken)
    }
}

impl Code for Stop {
    const ALL: &'static [Stop] =
        &[Stop::SinkOwnerGone, Stop::SinkBroken, Stop::FrontGone, Stop::SecondFrontGone, Stop::RootGone];

    fn as_str(self) -> &'static str {
        match self {
            Stop::SinkOwnerGone => "sink_owner_gone",
            Stop::SinkBroken => "sink_broken",
            Stop::FrontGone => "front_gone",
            Stop::SecondFrontGone => "second_front_gone",
            Stop::RootGone => "root_gone",
        }
    }
}

/// Eight steps, shaped like a real staged shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    Front,
    Hold,
    Drain,
    Mark,
    Cleanup,
    Idle,
    Flush,
    Last,
}

impl Step {
    pub const ALL: [Step; 8] = [
        Step::Front,
        Step::Hold,
        Step::Drain,
        Step::Mark,
        Step::Cleanup,
        Step::Idle,
        Step::Flush,
        Step::Last,
    ];
}

pub const CLEANUP: Duration = Duration::from_secs(10);

impl Domain for Test {
    type NotReady = Cause;
    type Abnormal = Stop;
    type Stage = Step;

    const DRAIN_CAUSE: Cause = Cause::Draining;
    const UNREGISTERED_CAUSE: Cause = Cause::ChildGone;
    const ROOT_LOST: Stop = Stop::RootGone;
    const DRAIN_WINDOW: Duration = Duration::from_secs(10);
    const UNCLEAN_EXIT: u8 = 1;

    fn abnormal_fence(cause: Stop) -> Option<Cause> {
        cause.is_sink().then_some(Cause::SinkDown)
    }

    fn fence_counts_for_exit(cause: Cause) -> bool {
        cause == Cause::CleanupBroken
    }

    fn stages() -> Vec<StageSpec<Test>> {
        vec![
            StageSpec::new(Step::Front, Bound::FromStart(ACTION_BOUND)).builtin(Builtin::BeginDrain),
            StageSpec::new(Step::Hold, Bound::FromStart(ACTION_BOUND)).builtin(Builtin::StopAdmitting),
            StageSpec::new(Step::Drain, Bound::FromBuiltin(ACTION_BOUND)).builtin(Builtin::DrainAdmitted),
            StageSpec::new(Step::Mark, Bound::FromStart(ACTION_BOUND)).not_counted(),
            StageSpec::new(Step::Cleanup, Bound::FromCleanupDeadline(Duration::from_secs(9) + HOOK_GRACE))
                .builtin(Builtin::StartCleanup(CLEANUP)),
            StageSpec::new(Step::Idle, Bound::FromCleanupDeadline(HOOK_GRACE))
                .builtin(Builtin::AwaitAdmissionIdle),
            StageSpec::new(Step::Flush, Bound::FromStart(Duration::from_secs(5)))
                .optional()
                .skip_on_abnormal(Stop::is_sink),
            StageSpec::new(Step::Last, Bound::FromStart(Duration::from_secs(1) + HOOK_GRACE)),
        ]
    }
}
