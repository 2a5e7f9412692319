//! The per-call Luau runtime (execution.md §12, §14): one run of a Luau application's entry for one
//! admitted call, synchronous and blocking, meant for `tokio::task::spawn_blocking`.
//!
//! * `call` drives the run: the thread's Luau state (`apps::luau::vm`), the fresh workflow sandbox from
//!   startup bytecode (execution.md §12.6), the shared interrupt budget, deadline and cancellation
//!   (execution.md §12.8), the entry call and the conversion of its first return value (execution.md §8
//!   steps 1–2);
//! * `run` is the per-call state every host function finds (the budget, the mission sandboxes so far, the
//!   workflow's `fail`, the ports), below everything that acts within a run;
//! * `missions` owns mission sandboxes (created lazily, one per mission per call), `:call`/`:eval` and the
//!   by-value crossing of execution.md §14.3, and the failure tables of execution.md §12.5;
//! * `host` owns the host globals (`mission`, `fail`, `tool`, `json`) of execution.md §12.4–§12.5;
//! * `api` owns the value of `handle:api()` (execution.md §12.5), built from what startup computed;
//! * `models` is the seam to the model sites ([`ModelPort`]) behind `model(name):chat` (models.md §7),
//!   `agent` the model-driven mission `handle:agent` (models.md §8) and `signature` its API text;
//! * `outcome` owns how the end of a run is classified into a [`RunEnd`] and the fail-detail rule
//!   (execution.md §7.2).
//!
//! Does not own the outcome codes, result contracts, responses, audit or publication (the call executor's),
//! nor compilation and the startup probe (`apps::luau`). `tools` is the seam to the provider runtime
//! ([`ToolPort`]); a run without a port answers `tool_not_granted` for every alias.

mod agent;
mod api;
mod call;
pub mod failure;
mod host;
mod missions;
pub mod models;
pub mod observe;
mod outcome;
mod run;
pub mod signature;
pub mod tools;

pub use failure::LuauError;
pub use models::{ModelPort, ModelReply};
pub use observe::{
    MissionEnded, MissionFailure, MissionOp, ModelReturned, RunObserver, ToolReturned, ToolsListed,
};
pub use tools::{ApiTool, ToolAnswer, ToolPort, ToolReply};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::luau::budget::INTERRUPT_BUDGET;
use super::luau::CompiledLuau;

/// The bounds of one run.
#[derive(Clone, Copy, Debug)]
pub struct CallLimits {
    /// Luau heap of all sandboxes of the call together (`limits.memory_bytes`, execution.md §12.8).
    pub memory_bytes: usize,
    /// Interrupt points across all sandboxes of the call (100,000,000 in production, execution.md §12.8).
    pub interrupts: u64,
    /// The run's deadline (execution.md §3.2, §5.4).
    pub deadline: Instant,
}

impl CallLimits {
    /// The limits of execution.md §12.8 for an application whose `limits.memory_bytes` is `memory_bytes`
    /// (`Template::memory_bytes`), ending at `deadline`.
    pub fn for_application(memory_bytes: u64, deadline: Instant) -> CallLimits {
        CallLimits {
            memory_bytes: usize::try_from(memory_bytes).unwrap_or(usize::MAX),
            interrupts: INTERRUPT_BUDGET,
            deadline,
        }
    }
}

/// Set from another thread to cancel the run (client gone, drain cutoff).
#[derive(Clone, Debug, Default)]
pub struct CancelToken {
    flag: Arc<AtomicBool>,
    /// Wakes an upstream call the run is waiting on (providers.md §10.1), which no interrupt point reaches.
    wake: Arc<tokio::sync::Notify>,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Cancels the run: its next interrupt point or host-function boundary ends it
    /// (execution.md §5.3, §12.8).
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
        self.wake.notify_waiters();
    }

    /// Whether [`CancelToken::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Completes once the token is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }

    fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RunEnd {
    /// The entry's first return value, converted to JSON (execution.md §14.2) and within depth 64 / 100,000
    /// nodes (execution.md §8.1–8.2).
    Returned(serde_json::Value),
    /// execution.md §8 step 1 or 2 failed: not convertible, or over the JSON bounds (outcome
    /// `invalid_result`).
    NotConvertible,
    /// `execution_failed`: uncaught error, `fail` in the workflow, unhandled mission failure, interrupt
    /// budget, uncaught memory error. `detail` is `Some` only for `fail(s)` with a string of 1..=1024 bytes
    /// of valid UTF-8; `cause` says which of these it was, and `error`, for an uncaught error only, its
    /// message and traceback: both for the operator's debug log and the trace (traces.md §5.5), never for
    /// a client.
    Failed { detail: Option<String>, cause: FailCause, error: Option<LuauError> },
    /// The deadline passed or the token was cancelled before the outcome was classified.
    Cancelled,
    /// Only from [`try_workflow_here`]: the slice ended first. Nothing of the run is kept; it is run
    /// again from the start, on a run thread.
    Unfinished,
}

/// Why a run ended `execution_failed` (execution.md §12.8, §12.5): a class for the operator's debug log and
/// the trace's `run_end.failure` (traces.md §5.5), never a value of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailCause {
    /// An allocation over `limits.memory_bytes` that nothing caught.
    Memory,
    /// The 100,000,000 interrupt points of execution.md §12.8 were spent.
    InterruptBudget,
    /// Any other error nothing caught, an unhandled mission failure included.
    UncaughtError,
    /// The workflow called `fail`.
    Fail,
}

impl FailCause {
    /// The class as the log and the trace write it.
    pub fn as_str(self) -> &'static str {
        match self {
            FailCause::Memory => "memory",
            FailCause::InterruptBudget => "interrupt_budget",
            FailCause::UncaughtError => "uncaught_error",
            FailCause::Fail => "fail",
        }
    }
}

/// What a run reaches outside its sandboxes: the provider runtime behind `tool` (execution.md §12.5) and
/// the observer of its trace (traces.md §5). Both are optional; a run with neither is pure.
#[derive(Clone, Default)]
pub struct RunPorts {
    pub tools: Option<Arc<dyn ToolPort>>,
    /// The model sites behind `model` (models.md §7).
    pub models: Option<Arc<dyn ModelPort>>,
    pub observer: Option<Arc<dyn RunObserver>>,
}

/// Runs the entry of `luau` with `input` under `limits` until it ends or is cancelled. Blocking: run it
/// on a blocking thread. A forward application (no workflow) is a caller defect and gives an
/// `UncaughtError` failure.
pub fn run_workflow(
    luau: &CompiledLuau,
    input: &serde_json::Value,
    limits: CallLimits,
    cancel: &CancelToken,
) -> RunEnd {
    call::run(luau, input, limits, cancel, &|| {}, RunPorts::default(), None)
}

/// How much CPU time a run tried on the calling thread may use before it is abandoned
/// ([`try_workflow_here`]; at most `apps::luau::budget::SLICE_WALL_CAP` of wall time, however little CPU
/// the machine gave it): short enough that the thread's other work (an async worker's) waits no longer
/// than this, long enough for the trivial runs that make up most calls.
pub const HERE_SLICE: Duration = Duration::from_millis(1);

/// [`run_workflow`] for a run with no upstream (no provider port: nothing it does reaches outside its
/// sandboxes), tried on the calling thread for at most `slice` of its CPU time ([`HERE_SLICE`] in the
/// gateway), counted from when the thread's Luau state is ready. Saves the two thread hand-offs of
/// a run thread for the short runs most calls are. `Unfinished` means the slice ended first: the caller
/// runs it again with [`run_workflow`] on a run thread, which a pure run cannot tell from one run (its
/// interrupt budget starts afresh there; its deadline is the same).
pub fn try_workflow_here(
    luau: &CompiledLuau,
    input: &serde_json::Value,
    limits: CallLimits,
    cancel: &CancelToken,
    slice: Duration,
    observer: Option<Arc<dyn RunObserver>>,
) -> RunEnd {
    let ports = RunPorts { tools: None, models: None, observer };
    call::run(luau, input, limits, cancel, &|| {}, ports, Some(slice))
}

/// [`run_workflow`] with the provider runtime's port behind `tool` (execution.md §12.5) and the trace's
/// observer (traces.md §5), each when present.
pub fn run_workflow_with(
    luau: &CompiledLuau,
    input: &serde_json::Value,
    limits: CallLimits,
    cancel: &CancelToken,
    ports: RunPorts,
) -> RunEnd {
    call::run(luau, input, limits, cancel, &|| {}, ports, None)
}

/// Collects what finished runs left in this thread's Luau state, when enough has gathered. A run thread
/// calls it after the answer of its run is on its way, so the collection is off the answer's path.
pub fn tidy_after_run() {
    call::tidy();
}

/// [`run_workflow`], calling `on_entry` just before the entry function is called: lets tests cancel a
/// run that is known to be executing Luau, without sleeping, and lets the bench hook time a fresh
/// sandbox up to that instant (issue 14, goal G7).
pub(crate) fn run_workflow_observed(
    luau: &CompiledLuau,
    input: &serde_json::Value,
    limits: CallLimits,
    cancel: &CancelToken,
    on_entry: &dyn Fn(),
) -> RunEnd {
    call::run(luau, input, limits, cancel, on_entry, RunPorts::default(), None)
}
