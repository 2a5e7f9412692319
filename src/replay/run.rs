//! One recorded run replayed (replay.md §3–§4): the tool as CONFIG now builds it, run again with the
//! recorded input and every host call answered from the trace, classified as the gateway classifies a run
//! (execution.md §6, §8), and compared with what the recorded run published (traces.md §5.5.2).
//!
//! Owns the verdict and its detail. Does not own reading the trace (`trace`), the answers (`port`) or the
//! printed forms (`render`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::port::{Divergence, Script};
use super::trace::{Recorded, TraceFile, Unreplayable};
use crate::apps::runtime::{
    run_workflow_with, tidy_after_run, CallLimits, CancelToken, LuauError, ModelPort, RunEnd, RunPorts,
    ToolPort, ToolReply,
};
use crate::apps::{Built, Run, ServedTool};
use crate::codes::outcome::{Dispatch, Outcome};
use crate::exec::outcome::fixed_text;
use crate::exec::result::{success_response, tool_error_content};
use crate::json::value_digest;
use crate::mcp::rpc::RequestId;

/// Why a run is not replayed (replay.md §4): a closed set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// `run_end.replay_blocked` (traces.md §6.3), as the trace says it.
    Blocked(String),
    /// A host call record lacks a member a replay needs (a trace recorded before it existed).
    NotRecorded,
    /// CONFIG serves no tool of the recorded name.
    ToolUnknown,
    /// The recorded input does not satisfy the tool's input contract as CONFIG now has it.
    InputInvalid,
    /// The run asked for an upstream tool's listing facts (`handle:api()`, an agent's signatures) that the
    /// trace has no `listing` record of (traces.md §5.8).
    ListingUnknown,
}

impl Reason {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Reason::Blocked(reason) => reason,
            Reason::NotRecorded => "not_recorded",
            Reason::ToolUnknown => "tool_unknown",
            Reason::InputInvalid => "input_invalid",
            Reason::ListingUnknown => "listing_unknown",
        }
    }
}

/// What the replayed run published (traces.md §5.5.2).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Replayed {
    pub outcome: Outcome,
    /// The value `result_digest` covers: the structured result, the tool error's content, or the class.
    pub result: Value,
    pub result_digest: String,
    /// For an uncaught error, its message and traceback (traces.md §5.5.1).
    pub error: Option<LuauError>,
}

/// One run's verdict (replay.md §4).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Verdict {
    Same { result_digest: String },
    Different { recorded_digest: String, recorded_result: Option<Value>, replayed: Replayed },
    Diverged { divergence: Divergence, error: Option<LuauError> },
    NotReplayable(Reason),
}

impl Verdict {
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Verdict::Same { .. } => "same",
            Verdict::Different { .. } => "different",
            Verdict::Diverged { .. } => "diverged",
            Verdict::NotReplayable(_) => "not_replayable",
        }
    }
}

/// One run's result.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunResult {
    pub run_ref: String,
    pub tool: String,
    pub verdict: Verdict,
}

/// Replays `trace` against `built`. Blocking (the run is a Luau run on this thread).
pub(crate) fn replay(built: &Built, trace: TraceFile) -> RunResult {
    let TraceFile { run_ref, tool: name, content } = trace;
    let verdict = match (content, built.find(&name)) {
        (Err(Unreplayable::Blocked(reason)), _) => Verdict::NotReplayable(Reason::Blocked(reason)),
        (Err(Unreplayable::NotRecorded), _) => Verdict::NotReplayable(Reason::NotRecorded),
        (Ok(_), None) => Verdict::NotReplayable(Reason::ToolUnknown),
        (Ok(recorded), Some(tool)) => verdict(&tool, recorded),
    };
    RunResult { run_ref, tool: name, verdict }
}

fn verdict(tool: &ServedTool, recorded: Recorded) -> Verdict {
    let Recorded { input, calls, listings, result_digest, result } = recorded;
    // execution.md §3.1: a call whose input fails the contract never runs.
    if !tool.input.is_valid(&input) {
        return Verdict::NotReplayable(Reason::InputInvalid);
    }
    let cancel = CancelToken::new();
    let script = Script::new(tool.selections.clone(), calls, listings, cancel.clone());
    let end = match &tool.run {
        Run::Forward { mission, tool: alias } => forward(script.as_ref(), mission, alias, input),
        Run::Luau => Ending::Run(luau(tool, &script, &input, &cancel)),
    };
    let replayed = published(tool, end);
    if script.needed_listing() {
        return Verdict::NotReplayable(Reason::ListingUnknown);
    }
    if let Some(divergence) = script.divergence() {
        return Verdict::Diverged { divergence, error: replayed.error };
    }
    if replayed.result_digest == result_digest {
        return Verdict::Same { result_digest };
    }
    Verdict::Different { recorded_digest: result_digest, recorded_result: result, replayed }
}

/// The tool's Luau run with the trace's answers behind `tool` and `model`. Its deadline is the tool's
/// effective run duration from now (replay.md §5: a replay has no clock of the recorded run's).
fn luau(tool: &ServedTool, script: &Arc<Script>, input: &Value, cancel: &CancelToken) -> Option<RunEnd> {
    let deadline = Instant::now() + Duration::from_millis(tool.run_duration_ms);
    let limits = CallLimits::for_application(tool.memory_bytes, deadline);
    // As the gateway's runner (`exec::luau_runner`): a tool without grants or models has no model port, so
    // `model` and `:agent` refuse as they did when recorded. Its `tool` calls, which the runtime answers
    // `tool_not_granted` without a port, are answered by their records, which say exactly that.
    let selections = &tool.selections;
    let reaches = selections.missions.values().any(|g| !g.is_empty()) || !selections.models.is_empty();
    let ports = match reaches {
        true => RunPorts {
            tools: Some(script.clone() as Arc<dyn ToolPort>),
            models: Some(script.clone() as Arc<dyn ModelPort>),
            observer: None,
        },
        false => RunPorts { tools: Some(script.clone() as Arc<dyn ToolPort>), models: None, observer: None },
    };
    let end = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_workflow_with(&tool.luau, input, limits, cancel, ports)
    }))
    .ok();
    tidy_after_run();
    end
}

/// How a replayed run ended: a Luau run's end (`None` for a run lost to a panic), or the forward form's
/// failed call, which has no cause class (traces.md §5.5: its published value is the outcome).
enum Ending {
    Run(Option<RunEnd>),
    ForwardFailed,
}

/// execution.md §13: the forward form's one call, answered from the trace.
fn forward(script: &Script, mission: &str, alias: &str, input: Value) -> Ending {
    let answer = script.call(mission, alias, Some(input));
    if script.divergence().is_some_and(|d| d.replayed.is_some()) {
        return Ending::Run(Some(RunEnd::Cancelled));
    }
    match answer.reply {
        ToolReply::Ok { value: Some(value), .. } => Ending::Run(Some(RunEnd::Returned(value))),
        ToolReply::Ok { value: None, .. } => Ending::Run(Some(RunEnd::NotConvertible)),
        ToolReply::Failed { .. } => Ending::ForwardFailed,
    }
}

/// The outcome of a replayed run and what it published (execution.md §6, §8; traces.md §5.5.2): the same
/// table the gateway's settle path applies, without a front.
fn published(tool: &ServedTool, end: Ending) -> Replayed {
    let class = |outcome: Outcome, class: &str, error: Option<LuauError>| Replayed {
        outcome,
        result: Value::from(class),
        result_digest: value_digest(&Value::from(class)),
        error,
    };
    let end = match end {
        Ending::Run(end) => end,
        Ending::ForwardFailed => {
            return class(Outcome::ExecutionFailed, Outcome::ExecutionFailed.as_str(), None);
        }
    };
    match end {
        Some(RunEnd::Returned(value)) => {
            // execution.md §8 steps 3 and 4.
            let sendable = tool.result.is_valid(&value)
                && success_response(&RequestId::Integer(1), value.clone()).is_ok();
            if !sendable {
                return class(Outcome::InvalidResult, Outcome::InvalidResult.as_str(), None);
            }
            Replayed {
                outcome: Outcome::Success,
                result_digest: value_digest(&value),
                result: value,
                error: None,
            }
        }
        Some(RunEnd::NotConvertible) => class(Outcome::InvalidResult, Outcome::InvalidResult.as_str(), None),
        Some(RunEnd::Failed { detail, cause, error }) => {
            let detail = detail.filter(|d| !d.is_empty() && d.len() <= crate::exec::result::MAX_DETAIL_BYTES);
            match detail {
                Some(detail) => {
                    let text = fixed_text(tool.effect, Dispatch::True, Outcome::ExecutionFailed);
                    let content = Value::Array(tool_error_content(text, Some(&detail)));
                    Replayed {
                        outcome: Outcome::ExecutionFailed,
                        result_digest: value_digest(&content),
                        result: content,
                        error,
                    }
                }
                None => class(Outcome::ExecutionFailed, cause.as_str(), error),
            }
        }
        Some(RunEnd::Cancelled) => class(Outcome::Cancelled, Outcome::Cancelled.as_str(), None),
        Some(RunEnd::Unfinished) | None => {
            class(Outcome::InternalError, Outcome::InternalError.as_str(), None)
        }
    }
}
