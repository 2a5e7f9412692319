//! The end of a run (execution.md §6.3, §7.2, §8 steps 1–2, execution.md §12.8): which [`RunEnd`] a finished
//! or interrupted run is, and the fail-detail rule.
//!
//! Owns the precedence among what can end a run (cancellation and deadline over everything, then the
//! interrupt budget, then the workflow's `fail`, then an uncaught error, then the value) and the messages
//! of mission errors. Does not own outcome codes or texts: the call executor maps a [`RunEnd`] to them.

use std::time::Instant;

use serde_json::Value;

use super::{FailCause, LuauError, RunEnd};
use crate::apps::luau::budget::{Budget, Exhaustion};
use crate::apps::luau::convert::NotConvertible;

/// execution.md §7.2: a `fail` string reaches the client only with 1..=1,024 bytes.
pub const MAX_DETAIL_BYTES: usize = 1_024;

/// What the workflow code did, before classification.
pub(super) type Finished = Result<Result<Value, NotConvertible>, mlua::Error>;

/// Classifies a run. `failed` is the workflow's `fail` detail when it called `fail`.
pub(super) fn classify(
    budget: &Budget,
    deadline: Instant,
    failed: Option<Option<String>>,
    finished: Finished,
) -> RunEnd {
    // execution.md §6.3: `cancelled` beats every other outcome; a deadline that passes while the value is
    // still being converted still counts (execution.md §5.4), so the clock and the flag are read now, after
    // conversion.
    let exhausted = budget.check().err().or(budget.exhausted());
    if Instant::now() >= deadline || matches!(exhausted, Some(Exhaustion::Deadline | Exhaustion::Cancelled)) {
        return RunEnd::Cancelled;
    }
    // A run tried on the calling thread that did not finish within its slice is abandoned, whatever it
    // did after (an exhausted budget ends everything; only straight-line code after a `pcall` could run).
    if exhausted == Some(Exhaustion::SliceEnded) {
        return RunEnd::Unfinished;
    }
    if exhausted == Some(Exhaustion::Interrupts) {
        return RunEnd::Failed { detail: None, cause: FailCause::InterruptBudget, error: None };
    }
    if let Some(detail) = failed {
        return RunEnd::Failed { detail, cause: FailCause::Fail, error: None };
    }
    match finished {
        Err(e) if is_memory_error(&e) => {
            RunEnd::Failed { detail: None, cause: FailCause::Memory, error: None }
        }
        // traces.md §5.5: only the uncaught error has a message and a traceback; `fail` is the script's
        // own answer, and memory and the budget are classes with nothing more to say.
        Err(e) => {
            RunEnd::Failed { detail: None, cause: FailCause::UncaughtError, error: Some(LuauError::of(&e)) }
        }
        Ok(Err(_)) => RunEnd::NotConvertible,
        Ok(Ok(value)) => RunEnd::Returned(value),
    }
}

/// Whether `error` is Luau's memory error, also when it surfaced through a host function.
pub(super) fn is_memory_error(error: &mlua::Error) -> bool {
    match error {
        mlua::Error::MemoryError(_) => true,
        mlua::Error::CallbackError { cause, .. } => is_memory_error(cause),
        _ => false,
    }
}

/// execution.md §7.2 / §12.5: the detail of `fail(value)`: a string of 1..=1,024 bytes of valid UTF-8, else
/// nothing.
pub(super) fn fail_detail(value: &mlua::Value) -> Option<String> {
    let mlua::Value::String(s) = value else { return None };
    let bytes = s.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_DETAIL_BYTES {
        return None;
    }
    std::str::from_utf8(&bytes).ok().map(str::to_owned)
}

/// The text of a mission's `{ kind = "error" }` failure (execution.md §12.5): the Luau message without
/// tracebacks. It reaches the workflow only, never a client (execution.md §12.2).
pub(super) fn message(error: &mlua::Error) -> String {
    match error {
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        mlua::Error::MemoryError(_) => "not enough memory".to_owned(),
        mlua::Error::CallbackError { cause, .. } => message(cause),
        other => other.to_string(),
    }
}
