//! The call's trace around its run (traces.md §4.2, §5.2, §5.5, §7): reserved after the run slot and
//! before the commit, ended after the audit and before publication, and every failure counted.
//!
//! Owns the order of these steps for both fronts, the `artifact_failed` counts, and what the run
//! published as `run_end`'s `result` and `result_digest` cover it (traces.md §5.5.2). Does not own the
//! files or the records (`crate::traces`), nor the run's own records (its observer, `luau_runner`).

use serde_json::Value;

use super::outcome::fixed_text;
use super::result::{tool_error_content, MAX_DETAIL_BYTES};
use super::runner::{Ran, Why};
use super::Shared;
use crate::apps::ServedTool;
use crate::audit::CallId;
use crate::codes::outcome::{Dispatch, Outcome};
use crate::config::manifest::Effect;
use crate::providers::trace::TraceId;
use crate::traces::{OutOfDescriptors, Publication, RunEnd, RunFiles, RunStart};

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
    /// What the run produced for the client ([`published`]).
    pub published: Published,
}

/// What a run produced for its client, as far as `run_end`'s `result` and `result_digest` need it
/// (traces.md §5.5.2): taken only for a traced call, before the value goes into the response.
#[derive(Default)]
pub(crate) struct Published {
    /// The value the run returned.
    returned: Option<Value>,
    /// The `fail` detail the run gave.
    detail: Option<String>,
}

/// What `ran` produced for the client, when the call has a trace: a copy of the returned value, which
/// `run_end` encodes once for its `result` and `result_digest` (traces.md §6.3).
pub(crate) fn published(files: &RunFiles, ran: &Ran) -> Published {
    if files.trace.is_none() {
        return Published::default();
    }
    match ran {
        Ran::Returned(value) => Published { returned: Some(value.clone()), detail: None },
        Ran::Failed { detail, .. } => Published { returned: None, detail: detail.clone() },
        _ => Published::default(),
    }
}

/// traces.md §5.5.2: what the call published: the structured result of a success; the tool error's
/// content when it carries the run's `fail` detail; otherwise the failure class (`failure`) or the
/// outcome.
fn publication(
    effect: Effect,
    (outcome, dispatch): (Outcome, Dispatch),
    failure: Option<&'static str>,
    published: Published,
) -> Publication {
    if let (Outcome::Success, Some(returned)) = (outcome, published.returned) {
        return Publication::Value(returned);
    }
    let detail = published.detail.filter(|d| !d.is_empty() && d.len() <= MAX_DETAIL_BYTES);
    if let (Outcome::ExecutionFailed, Some(detail)) = (outcome, detail) {
        let content = tool_error_content(fixed_text(effect, dispatch, outcome), Some(&detail));
        return Publication::Value(Value::Array(content));
    }
    Publication::Class(failure.unwrap_or(outcome.as_str()))
}

/// traces.md §5.5 and §8: `inspection_end`, then `run_end`; a count when a file failed later
/// (traces.md §7; a failure already counted at the reservation is not counted again).
pub(crate) fn end(shared: &Shared, tool: &ServedTool, files: RunFiles, ended: Ended) {
    let Ended { outcome, dispatch, disconnected, why, published } = ended;
    let mut clean = true;
    if let Some(inspection) = files.inspection {
        clean &= inspection.end();
    }
    if let Some(trace) = files.trace {
        // A client that stopped the call makes it `cancelled` (execution.md §6.3): the failure is then not
        // what the call's outcome says, and is not recorded.
        let why = why.as_ref().filter(|_| outcome == Outcome::ExecutionFailed);
        let failure = why.map(|w| w.cause.as_str());
        let published = publication(tool.effect, (outcome, dispatch), failure, published);
        let end = RunEnd {
            outcome: outcome.as_str(),
            dispatch: dispatch.as_str(),
            disconnected,
            failure,
            error: why.and_then(|w| w.error.as_ref()),
            published: &published,
            interrupted: interrupted(outcome),
        };
        clean &= trace.end(&end);
    }
    if !clean && !files.failed_now {
        shared.events.artifact_failed(tool.index());
    }
}

/// traces.md §6.3: an outcome decided outside the run (its deadline or its client, its loss, its cleanup,
/// a commit that could not be written), which a replay could not reproduce.
fn interrupted(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Cancelled | Outcome::InternalError | Outcome::CleanupFailed | Outcome::PublicationFailed
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn returned(value: &Value) -> Published {
        Published { returned: Some(value.clone()), detail: None }
    }

    fn detail(text: &str) -> Published {
        Published { returned: None, detail: Some(text.to_owned()) }
    }

    /// traces.md §5.5.2 and vector R2: the structured result, the tool error's content when it carries the
    /// `fail` detail, otherwise the failure class or the outcome (their digests: `traces::record`).
    #[test]
    fn publication_is_what_was_published() {
        let (read, write) = (Effect::Read, Effect::Write);
        let ok = (Outcome::Success, Dispatch::True);
        let failed = (Outcome::ExecutionFailed, Dispatch::True);
        let value = json!({"text": "hi"});
        let content = |text: &str, detail: &str| {
            Publication::Value(json!([{"text": text, "type": "text"}, {"text": detail, "type": "text"}]))
        };
        let class = Publication::Class;
        let table = [
            (publication(read, ok, None, returned(&value)), Publication::Value(value.clone())),
            (
                publication(read, failed, Some("fail"), detail("no such note")),
                content("Tool execution failed", "no such note"),
            ),
            (
                publication(write, failed, Some("fail"), detail("no")),
                content("Operation may have changed data; do not retry automatically", "no"),
            ),
            // A detail that does not reach the client (empty, over 1,024 bytes) is not published.
            (publication(read, failed, Some("fail"), detail("")), class("fail")),
            (publication(read, failed, Some("fail"), detail(&"x".repeat(1_025))), class("fail")),
            (
                publication(read, failed, Some("uncaught_error"), Published::default()),
                class("uncaught_error"),
            ),
            // The forward form's failed upstream call has no failure class: the outcome.
            (publication(read, failed, None, Published::default()), class("execution_failed")),
            // A run whose value did not become the response, or whose client stopped it.
            (
                publication(read, (Outcome::InvalidResult, Dispatch::True), None, returned(&value)),
                class("invalid_result"),
            ),
            (publication(read, (Outcome::Cancelled, Dispatch::True), None, detail("x")), class("cancelled")),
        ];
        for (i, (got, want)) in table.into_iter().enumerate() {
            assert_eq!(got, want, "row {i}");
        }
    }
}
