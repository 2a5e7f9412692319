//! What a run reports while it runs (traces.md §5.3, §5.4, §5.6, §5.8): each mission invocation that ended,
//! each `tool` call that returned, each model call that answered and the granted tools' listed facts the
//! first time a mission's are shown, for the call's trace.
//!
//! Owns the [`RunObserver`] contract and the facts it is handed. Does not own the trace's records, files or
//! ceilings (the `traces` module), nor deciding whether a call is traced (the call executor's). A run without
//! an observer reports nothing and pays nothing for it.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::failure::LuauError;
use super::models::ModelReply;
use super::tools::{ApiTool, ToolReply};

/// `handle:call` or `handle:eval` (execution.md §12.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissionOp {
    Call,
    Eval,
}

impl MissionOp {
    /// The trace's `op` (traces.md §5.3).
    pub fn as_str(self) -> &'static str {
        match self {
            MissionOp::Call => "call",
            MissionOp::Eval => "eval",
        }
    }
}

/// The `kind` of the failure table a mission invocation raised (execution.md §12.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissionFailure {
    Fail,
    Error,
}

impl MissionFailure {
    /// The trace's `failure` (traces.md §5.3).
    pub fn as_str(self) -> &'static str {
        match self {
            MissionFailure::Fail => "fail",
            MissionFailure::Error => "error",
        }
    }
}

/// One mission invocation that ended (traces.md §5.3).
#[derive(Clone, Debug, PartialEq)]
pub struct MissionEnded {
    pub mission: String,
    pub op: MissionOp,
    /// The `:call` target as given, when it was a string; `None` for `:eval`.
    pub target: Option<String>,
    /// The `:call` argument (`Null` for `nil`) or the `:eval` source as a string; `None` when it could
    /// not be taken out of the workflow (a target or source of the wrong type, a value that does not
    /// convert).
    pub input: Option<Value>,
    pub started_at: SystemTime,
    pub duration: Duration,
    /// `None` when it returned.
    pub failure: Option<MissionFailure>,
    /// Its first return value (`Null` for `nil`) when it returned.
    pub result: Option<Value>,
    /// For an `error` failure, its message and traceback (traces.md §5.3); `None` otherwise.
    pub error: Option<LuauError>,
}

/// One `tool(alias, arguments)` that returned to the script (traces.md §5.4).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolReturned {
    pub mission: String,
    pub alias: String,
    /// The upstream request's JSON-RPC id, when a request was sent.
    pub request_id: Option<u64>,
    pub started_at: SystemTime,
    pub duration: Duration,
    /// The arguments as sent (`{}` for `nil`); `None` when they did not convert to an object.
    pub arguments: Option<Value>,
    pub reply: ToolReply,
}

/// One model call (`m:chat` or an agent turn) whose answer reached the run (traces.md §5.6).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelReturned {
    /// The `providers.workflow` declaration.
    pub provider: String,
    pub started_at: SystemTime,
    pub duration: Duration,
    /// The digest of the request as sent (traces.md §5.6, §6.3); `None` when it did not convert (nothing
    /// was sent).
    pub request_digest: Option<String>,
    pub reply: ModelReply,
}

/// The listed facts of a mission's granted tools as the run was first shown them (traces.md §5.8): by
/// `handle:api()` or an agent's system message, sorted by alias.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolsListed {
    pub mission: String,
    pub tools: Vec<ApiTool>,
}

/// Hears a run's mission invocations, `tool` calls and model calls as they end, and each mission's granted
/// tools the first time the run is shown them. Called on the run's thread, in the order they happened; it
/// must not block for long (a trace appends one line).
pub trait RunObserver: Send + Sync {
    fn mission_ended(&self, ended: MissionEnded);
    fn tool_returned(&self, returned: ToolReturned);
    fn model_returned(&self, returned: ModelReturned);
    /// Once per mission per run, the first time the run is shown its granted tools' listed facts.
    fn tools_listed(&self, listed: ToolsListed);
}
