//! The call's trace around its run (traces.md §4.2, §5.2, §5.5, §7): reserved after the run slot and
//! before the commit, ended after the audit and before publication, and every failure counted.
//!
//! Owns the order of these steps for both fronts and the `artifact_failed` counts. Does not own the files
//! or the records (`crate::traces`), nor the run's own records (its observer, `luau_runner`).

use serde_json::Value;

use super::runner::Why;
use super::Shared;
use crate::apps::ServedTool;
use crate::audit::CallId;
use crate::codes::outcome::{Dispatch, Outcome};
use crate::providers::trace::TraceId;
use crate::traces::{OutOfDescriptors, RunEnd, RunFiles, RunStart};

/// Which front the call came through (the trace's `front`, traces.md §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Front {
    Mcp,
    Pcc,
}

/// The reservation failed: the call is refused before it runs (traces.md §4.2).
pub(crate) struct Refused;

/// What identifies the call in its `run_start` record.
pub(crate) struct Start<'a> {
    pub tool: &'a ServedTool,
    pub front: Front,
    pub call_id: &'a CallId,
    pub trace_id: &'a TraceId,
    pub deadline_ms: u64,
    pub input: &'a Value,
}

/// traces.md §4.2: the call's files (none when neither traces nor inspection is configured).
pub(crate) fn reserve(shared: &Shared, start: Start<'_>) -> Result<RunFiles, Refused> {
    let Some(artifacts) = &shared.artifacts else { return Ok(RunFiles::default()) };
    let (call_id, trace_id) = (start.call_id.hex(), start.trace_id.hex());
    let front = match start.front {
        Front::Mcp => "mcp",
        Front::Pcc => "pcc",
    };
    let run_start = RunStart {
        run_ref: "",
        tool: &start.tool.name,
        front,
        call_id: &call_id,
        trace_id: &trace_id,
        deadline_ms: start.deadline_ms,
        input: start.input,
    };
    match artifacts.reserve(run_start) {
        Err(OutOfDescriptors) => {
            shared.events.artifact_failed(start.tool.index());
            Err(Refused)
        }
        Ok(files) => {
            if files.failed_now {
                shared.events.artifact_failed(start.tool.index());
            }
            Ok(files)
        }
    }
}

/// How the call ended, as its `run_end` says (traces.md §5.5).
pub(crate) struct Ended {
    pub outcome: Outcome,
    pub dispatch: Dispatch,
    pub disconnected: bool,
    /// Why a Luau run failed; written only when the outcome stayed `execution_failed`.
    pub why: Option<Why>,
}

/// traces.md §5.5 and §8: `inspection_end`, then `run_end`; a count when a file failed later
/// (traces.md §7; a failure already counted at the reservation is not counted again).
pub(crate) fn end(shared: &Shared, tool: &ServedTool, files: RunFiles, ended: Ended) {
    let Ended { outcome, dispatch, disconnected, why } = ended;
    let mut clean = true;
    if let Some(inspection) = files.inspection {
        clean &= inspection.end();
    }
    if let Some(trace) = files.trace {
        // A client that stopped the call makes it `cancelled` (execution.md §6.3): the failure is then not
        // what the call's outcome says, and is not recorded.
        let why = why.as_ref().filter(|_| outcome == Outcome::ExecutionFailed);
        let end = RunEnd {
            outcome: outcome.as_str(),
            dispatch: dispatch.as_str(),
            disconnected,
            failure: why.map(|w| w.cause.as_str()),
            error: why.and_then(|w| w.error.as_ref()),
        };
        clean &= trace.end(&end);
    }
    if !clean && !files.failed_now {
        shared.events.artifact_failed(tool.index());
    }
}
