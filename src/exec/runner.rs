//! The seam between a call's driver and the application it runs (execution.md §4.4, §5.3, §12).
//!
//! Owns the contract of one activation: start the application with the validated input and the call's
//! deadline, be told to cancel, and report how the run settled. The Luau runtime implements it
//! (`luau_runner`); tests drive the call path with scripted runners, so the stream, heartbeat, disconnect
//! and release rules are tested without Luau.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use crate::apps::runtime::{FailCause, LuauError};
use crate::apps::ServedTool;
use crate::providers::trace::TraceId;
use crate::traces::RunFiles;
use serde_json::Value;

/// How a run settled, before the driver classifies it (execution.md §6.1).
#[derive(Debug, PartialEq)]
pub enum Ran {
    /// The entry (or the forward) produced this value, converted to JSON within the JSON bounds
    /// (execution.md §8 steps 1–2); the driver checks the result contract and the response next.
    Returned(Value),
    /// The value could not be converted to JSON or exceeded its bounds: `invalid_result`.
    NotConvertible,
    /// The application failed: `execution_failed`; `detail` is a `fail` message that may reach the client;
    /// `why`, for a Luau run, what the operator's trace says of it (traces.md §5.5), never the client.
    Failed { detail: Option<String>, why: Option<Why> },
    /// The run stopped because it was cancelled or its deadline passed: `cancelled`.
    Cancelled,
    /// The task executing the run was lost (a panic) before it settled: `internal_error`, dispatch
    /// `unknown` (execution.md §6.2).
    Lost,
    /// The run's provider work did not settle within the settlement deadline (providers.md §10.2):
    /// `cleanup_failed`, dispatch `unknown`; it beats every other condition (execution.md §6.3).
    CleanupFailed,
}

/// Why a Luau run failed, for its trace (traces.md §5.5): the cause class and, for an uncaught error,
/// its message and traceback.
#[derive(Clone, Debug, PartialEq)]
pub struct Why {
    pub cause: FailCause,
    pub error: Option<LuauError>,
}

/// One started run.
pub struct Activation {
    /// Completes when the run has settled.
    pub settled: Pin<Box<dyn Future<Output = Ran> + Send>>,
    /// Asks the run to stop: no further application code runs (execution.md §5.3). Idempotent.
    pub cancel: Box<dyn Fn() + Send + Sync>,
}

/// Starts runs.
pub trait Runner: Send + Sync + 'static {
    /// Activates the served tool `tool` for `input` (already valid against the input contract), bounded
    /// by `deadline`. Called only after the commit is complete (execution.md §4.2). `trace` is the call's
    /// trace id (execution.md §2): every provider call the run makes carries it in `_meta.traceparent`
    /// (providers.md §11); on the PCC front it is the stream's (pcc.md §12). `files` are the call's trace,
    /// which hears every mission invocation and `tool` call of the run (traces.md §5), and its inspection
    /// file, which every provider call of the run writes its bodies to (traces.md §8).
    fn activate(
        &self,
        tool: &ServedTool,
        input: Value,
        deadline: Instant,
        trace: TraceId,
        files: &RunFiles,
    ) -> Activation;

    /// True when a run of `tool` can reach no provider: such a run may be activated before its commit is
    /// written, so that one that settles in its first slice leaves with its commit in one write
    /// (execution.md §4.5). The default keeps the order of execution.md §4.2 for every run; a runner whose
    /// first poll of [`Activation::settled`] reaches outside the process must keep it.
    fn provider_free(&self, tool: &ServedTool) -> bool {
        let _ = tool;
        false
    }
}
