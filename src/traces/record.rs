//! The exact trace records (traces.md §5) and their value fields (traces.md §6.1).
//!
//! Owns the key sets and value domains of `run_start`, `mission`, `tool_call`, `model_call`, `listing` and
//! `run_end`,
//! each a `Serialize` type whose fields are its members, the value field's two forms, the member a trace
//! recorded for replay adds, whether a record holds a value cut at the ceiling (traces.md §6.3), what
//! `run_end` says the run published and its digest ([`Publication`], traces.md §5.5.2), the error field of
//! a failed mission or run (bounded by `apps::runtime::failure`, which reads it), and the encoding of one
//! record as one line ([`Draft`]). Does not own the file ceiling (`file.rs`), when a record is written,
//! which form of `run_end`'s `result` fits, or whether the run is replayable (`run.rs`), or the inspection
//! file's records (`inspection.rs`).

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::apps::runtime::{
    ApiTool, LuauError, MissionEnded, ModelReply, ModelReturned, ToolReply, ToolReturned, ToolsListed,
};
use crate::codes::model::ModelFailure;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::config::host::ToolEffect;
use crate::events::time::event_timestamp;
use crate::json::{sha256_qualified, to_deterministic};

/// traces.md §6.1: the value ceiling of a value field.
pub const VALUE_CEILING: usize = 4_096;

/// The value field of a value (traces.md §6.1): the value whole, or the truncation marker with the length
/// of its encoding and its first bytes, cut back to a UTF-8 boundary.
#[derive(Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ValueField<'a> {
    Whole { value: &'a Value },
    Cut { bytes: usize, prefix: String, truncated: bool },
}

/// The value field of `value`.
pub fn value_field(value: &Value) -> ValueField<'_> {
    measured(value, &to_deterministic(value))
}

/// The value field of `value`, whose deterministic encoding is `encoded`.
fn measured<'a>(value: &'a Value, encoded: &[u8]) -> ValueField<'a> {
    if encoded.len() <= VALUE_CEILING {
        return ValueField::Whole { value };
    }
    let end = char_boundary(encoded, VALUE_CEILING);
    let prefix = String::from_utf8_lossy(&encoded[..end]).into_owned();
    ValueField::Cut { bytes: encoded.len(), prefix, truncated: true }
}

/// The value field of `value` (as [`field`]) and its digest (traces.md §6.3), from one encoding.
fn digested(value: &Value, replay: bool) -> (ValueField<'_>, String) {
    let encoded = to_deterministic(value);
    let digest = sha256_qualified(&encoded);
    let field = if replay { ValueField::Whole { value } } else { measured(value, &encoded) };
    (field, digest)
}

/// The value field of `value` in a trace that records for replay or not (traces.md §6.3): whole with
/// `replay`, otherwise under the ceiling.
fn field(value: &Value, replay: bool) -> ValueField<'_> {
    if replay {
        ValueField::Whole { value }
    } else {
        value_field(value)
    }
}

impl ValueField<'_> {
    /// The value was cut at the ceiling.
    fn is_cut(&self) -> bool {
        matches!(self, ValueField::Cut { .. })
    }
}

/// Whether any of `fields` is cut.
fn any_cut<'f, 'a: 'f>(fields: impl IntoIterator<Item = &'f Option<ValueField<'a>>>) -> bool {
    fields.into_iter().any(|f| f.as_ref().is_some_and(ValueField::is_cut))
}

/// The length of the longest prefix of `bytes` of at most `ceiling` bytes that does not end inside a
/// UTF-8 character (a character is at most 4 bytes, so at most 3 bytes are given back).
pub fn char_boundary(bytes: &[u8], ceiling: usize) -> usize {
    let mut cut = bytes.len().min(ceiling);
    let floor = cut.saturating_sub(3);
    while cut > floor && cut < bytes.len() && (bytes[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    cut
}

/// The `*_at` timestamp (audit-events.md §1.1, 27 characters); `None` (written `null`) for a time the
/// format cannot hold.
pub fn timestamp(at: SystemTime) -> Option<String> {
    event_timestamp(at)
}

/// A duration in microseconds, saturating at 2^64 − 1 µs (about 584,000 years), the greatest JSON integer
/// (config.md §2.3).
fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A record of a trace or inspection file: a serializable type with its `kind` (traces.md §5, §8).
pub trait TraceRecord: Serialize {
    const KIND: &'static str;

    /// The record holds a value a replay needs cut at the ceiling (traces.md §6.3); none by default.
    fn cut(&self) -> bool {
        false
    }
}

/// A record made and not yet written: its kind-specific members, encoded when made (the run's values
/// may be gone by the time a held record is written); `kind`, `seq` and `at` are added when written.
pub struct Draft {
    kind: &'static str,
    at: SystemTime,
    /// `None` for a record the encoder could not represent (none of the types below can give one); it is
    /// left out and counted like a record over the ceiling.
    members: Option<Map<String, Value>>,
    cut: bool,
}

impl Draft {
    /// `record`, made at `at`.
    pub fn new<R: TraceRecord>(record: &R, at: SystemTime) -> Draft {
        let members = match serde_json::to_value(record) {
            Ok(Value::Object(members)) => Some(members),
            _ => None,
        };
        Draft { kind: R::KIND, at, members, cut: record.cut() }
    }

    /// The record holds a value a replay needs cut at the ceiling.
    pub(crate) fn cut(&self) -> bool {
        self.cut
    }

    /// `record`, made now.
    pub fn now<R: TraceRecord>(record: &R) -> Draft {
        Draft::new(record, SystemTime::now())
    }

    /// The line: the deterministic encoding with `kind`, `seq` and `at`, and LF (traces.md §5.1).
    pub fn line(self, seq: u64) -> Option<Vec<u8>> {
        let mut members = self.members?;
        members.insert("kind".to_owned(), Value::from(self.kind));
        members.insert("seq".to_owned(), Value::from(seq));
        members.insert("at".to_owned(), timestamp(self.at).map_or(Value::Null, Value::String));
        let mut line = to_deterministic(&Value::Object(members));
        line.push(b'\n');
        Some(line)
    }
}

/// What `run_start` says (traces.md §5.2).
pub struct RunStart<'a> {
    pub run_ref: &'a str,
    pub tool: &'a str,
    pub front: &'static str,
    pub call_id: &'a str,
    pub trace_id: &'a str,
    pub deadline_ms: u64,
    pub input: &'a Value,
}

/// `run_start` (traces.md §5.2): its `input` whole in a trace recorded for replay (traces.md §6.3), unless
/// it had to be cut to fit the file (`run.rs` decides).
#[derive(Serialize)]
pub(crate) struct RunStartRecord<'a> {
    run_ref: &'a str,
    tool: &'a str,
    front: &'static str,
    call_id: &'a str,
    trace_id: &'a str,
    deadline_ms: u64,
    input: ValueField<'a>,
}

impl TraceRecord for RunStartRecord<'_> {
    const KIND: &'static str = "run_start";

    fn cut(&self) -> bool {
        self.input.is_cut()
    }
}

impl<'a> RunStartRecord<'a> {
    pub(crate) fn of(start: &'a RunStart<'a>, whole: bool) -> RunStartRecord<'a> {
        RunStartRecord {
            run_ref: start.run_ref,
            tool: start.tool,
            front: start.front,
            call_id: start.call_id,
            trace_id: start.trace_id,
            deadline_ms: start.deadline_ms,
            input: field(start.input, whole),
        }
    }
}

/// `mission` (traces.md §5.3): one mission invocation that ended.
#[derive(Serialize)]
pub struct Mission<'a> {
    mission: &'a str,
    op: &'static str,
    target: Option<&'a str>,
    input: Option<ValueField<'a>>,
    started_at: Option<String>,
    duration_us: u64,
    failure: Option<&'static str>,
    result: Option<ValueField<'a>>,
    error: Option<ErrorField<'a>>,
    input_digest: Option<String>,
}

impl TraceRecord for Mission<'_> {
    const KIND: &'static str = "mission";

    fn cut(&self) -> bool {
        any_cut([&self.input, &self.result])
    }
}

impl<'a> Mission<'a> {
    pub fn of(ended: &'a MissionEnded, replay: bool) -> Mission<'a> {
        let (input, input_digest) = ended.input.as_ref().map(|v| digested(v, replay)).unzip();
        Mission {
            mission: &ended.mission,
            op: ended.op.as_str(),
            target: ended.target.as_deref(),
            input,
            started_at: timestamp(ended.started_at),
            duration_us: micros(ended.duration),
            failure: ended.failure.map(|f| f.as_str()),
            result: ended.result.as_ref().map(|v| field(v, replay)),
            error: ended.error.as_ref().map(ErrorField::of),
            input_digest,
        }
    }
}

/// `tool_call` (traces.md §5.4): one `tool()` that returned to the script.
#[derive(Serialize)]
pub struct ToolCall<'a> {
    mission: &'a str,
    alias: &'a str,
    request_id: Option<u64>,
    started_at: Option<String>,
    duration_us: u64,
    arguments: Option<ValueField<'a>>,
    ok: bool,
    class: Option<FailureClass>,
    dispatch: Dispatch,
    value: Option<ValueField<'a>>,
    /// With `ok`, `class`, `dispatch` and `value`, the whole table the script received.
    content: Option<ValueField<'a>>,
    /// Only in a trace recorded for replay (traces.md §6.3).
    #[serde(flatten)]
    replay: Option<ToolReplay>,
}

/// The member `tool_call` gains in a trace recorded for replay: the digest of the arguments, which a
/// reader of another trace computes from their whole value field.
#[derive(Serialize)]
struct ToolReplay {
    arguments_digest: Option<String>,
}

impl TraceRecord for ToolCall<'_> {
    const KIND: &'static str = "tool_call";

    fn cut(&self) -> bool {
        any_cut([&self.arguments, &self.value, &self.content])
    }
}

impl<'a> ToolCall<'a> {
    pub fn of(returned: &'a ToolReturned, replay: bool) -> ToolCall<'a> {
        let (ok, class, dispatch, value, content) = match &returned.reply {
            ToolReply::Ok { value, content } => (true, None, Dispatch::True, value.as_ref(), Some(content)),
            ToolReply::Failed { class, dispatch, content } => {
                (false, Some(*class), *dispatch, None, content.as_ref())
            }
        };
        let (arguments, replay) = match (&returned.arguments, replay) {
            (Some(arguments), true) => {
                let (field, digest) = digested(arguments, true);
                (Some(field), Some(ToolReplay { arguments_digest: Some(digest) }))
            }
            (None, true) => (None, Some(ToolReplay { arguments_digest: None })),
            (arguments, false) => (arguments.as_ref().map(value_field), None),
        };
        ToolCall {
            mission: &returned.mission,
            alias: &returned.alias,
            request_id: returned.request_id,
            started_at: timestamp(returned.started_at),
            duration_us: micros(returned.duration),
            arguments,
            ok,
            class,
            dispatch,
            value: value.map(|v| field(v, replay.is_some())),
            content: content.map(|c| field(c, replay.is_some())),
            replay,
        }
    }
}

/// `model_call` (traces.md §5.6): one model call that answered the run: classes, numbers, the
/// assistant's message and the request's digest, never the request, the endpoint or the credential.
#[derive(Serialize)]
pub struct ModelCall<'a> {
    provider: &'a str,
    started_at: Option<String>,
    duration_us: u64,
    ok: bool,
    class: Option<ModelFailure>,
    dispatch: Dispatch,
    finish_reason: Option<&'a str>,
    /// `null` for a failed call.
    usage: &'a Value,
    message: Option<ValueField<'a>>,
    request_digest: Option<&'a str>,
}

impl TraceRecord for ModelCall<'_> {
    const KIND: &'static str = "model_call";

    fn cut(&self) -> bool {
        any_cut([&self.message])
    }
}

impl<'a> ModelCall<'a> {
    pub fn of(returned: &'a ModelReturned, replay: bool) -> ModelCall<'a> {
        let (ok, class, dispatch, finish_reason, usage, message) = match &returned.reply {
            ModelReply::Ok { message, finish_reason, usage } => {
                (true, None, Dispatch::True, finish_reason.as_deref(), usage, Some(field(message, replay)))
            }
            ModelReply::Failed { class, dispatch } => {
                (false, Some(*class), *dispatch, None, &Value::Null, None)
            }
        };
        ModelCall {
            provider: &returned.provider,
            started_at: timestamp(returned.started_at),
            duration_us: micros(returned.duration),
            ok,
            class,
            dispatch,
            finish_reason,
            usage,
            message,
            request_digest: returned.request_digest.as_deref(),
        }
    }
}

/// `listing` (traces.md §5.8): the listed facts of a mission's granted tools, the first time the run was
/// shown them. `tools` is a value field of [`listed_tools`].
#[derive(Serialize)]
pub struct Listing<'a> {
    mission: &'a str,
    tools: ValueField<'a>,
}

impl TraceRecord for Listing<'_> {
    const KIND: &'static str = "listing";

    fn cut(&self) -> bool {
        self.tools.is_cut()
    }
}

impl<'a> Listing<'a> {
    /// The record of `listed`, whose tools' value (`listed_tools`) is `tools`.
    pub fn of(listed: &'a ToolsListed, tools: &'a Value, replay: bool) -> Listing<'a> {
        Listing { mission: &listed.mission, tools: field(tools, replay) }
    }
}

/// traces.md §5.8: the value of `listing.tools`, one object per tool in the order shown (by alias), each
/// `{"alias", "description", "effect", "input_schema", "output_schema"}` with `null` for a missing
/// description or output schema.
pub fn listed_tools(tools: &[ApiTool]) -> Value {
    let tool = |tool: &ApiTool| {
        let mut members = Map::new();
        members.insert("alias".to_owned(), Value::from(tool.alias.as_str()));
        members
            .insert("description".to_owned(), tool.description.as_deref().map_or(Value::Null, Value::from));
        let effect = match tool.effect {
            ToolEffect::Read => "read",
            ToolEffect::Write => "write",
        };
        members.insert("effect".to_owned(), Value::from(effect));
        members.insert("input_schema".to_owned(), Value::clone(&tool.input_schema));
        let output = tool.output_schema.as_deref().cloned().unwrap_or(Value::Null);
        members.insert("output_schema".to_owned(), output);
        Value::Object(members)
    };
    Value::Array(tools.iter().map(tool).collect())
}

/// The `error` member of `mission` and `run_end` (traces.md §5.3, §5.5): an error's message and traceback,
/// already bounded when the run read them (`apps::runtime::failure`).
#[derive(Serialize)]
pub struct ErrorField<'a> {
    message: &'a str,
    traceback: Option<&'a str>,
}

impl<'a> ErrorField<'a> {
    pub fn of(error: &'a LuauError) -> ErrorField<'a> {
        ErrorField { message: &error.message, traceback: error.traceback.as_deref() }
    }
}

/// How the run ended, as the settle path knows it (traces.md §5.5).
pub struct RunEnd<'a> {
    pub outcome: &'static str,
    pub dispatch: &'static str,
    pub disconnected: bool,
    /// For `execution_failed` of a Luau run, the cause class (`FailCause::as_str`).
    pub failure: Option<&'static str>,
    /// For an uncaught error, its message and traceback.
    pub error: Option<&'a LuauError>,
    /// What the run published (traces.md §5.5.2).
    pub published: &'a Publication,
    /// The outcome was decided outside the run (traces.md §6.3: `interrupted`).
    pub interrupted: bool,
}

/// What a call published (traces.md §5.5.2): a value, the structured result of a success or the tool
/// error's `content` array carrying the run's `fail` detail, or, when it published neither, the failure
/// class or the outcome.
#[derive(Clone, Debug, PartialEq)]
pub enum Publication {
    Value(Value),
    Class(&'static str),
}

/// `run_end`'s `result` and `result_digest` (traces.md §5.5, §5.5.2), from one encoding of what the call
/// published.
pub(crate) struct Published<'a> {
    value: Option<&'a Value>,
    encoded: Vec<u8>,
    digest: String,
}

impl<'a> Published<'a> {
    pub(crate) fn of(publication: &'a Publication) -> Published<'a> {
        let (value, encoded) = match publication {
            Publication::Value(value) => (Some(value), to_deterministic(value)),
            Publication::Class(class) => (None, to_deterministic(&Value::from(*class))),
        };
        let digest = sha256_qualified(&encoded);
        Published { value, encoded, digest }
    }

    /// The forms of `result`, largest first (traces.md §6.2): whole in a trace recorded for replay, its
    /// value field (traces.md §6.1), and the truncation marker with an empty prefix, which always fits; only `null`
    /// for a call that published a class.
    pub(crate) fn results(&self, replay: bool) -> Vec<Option<ValueField<'a>>> {
        let Some(value) = self.value else { return vec![None] };
        let field = measured(value, &self.encoded);
        let mut forms = Vec::with_capacity(3);
        if replay && field.is_cut() {
            forms.push(Some(ValueField::Whole { value }));
        }
        forms.push(Some(field));
        forms.push(Some(ValueField::Cut {
            bytes: self.encoded.len(),
            prefix: String::new(),
            truncated: true,
        }));
        forms
    }
}

/// Why a trace cannot be replayed (traces.md §6.3): a closed set, in the order the first that applies is
/// reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayBlocked {
    /// A value field a replay needs holds the truncation marker.
    ValueCut,
    /// The file ceiling left records out.
    RecordsOmitted,
    /// The outcome was decided outside the run (its deadline, its client, its loss, its cleanup, the
    /// commit), so a replay could not publish it.
    Interrupted,
}

/// `run_end` (traces.md §5.5).
#[derive(Serialize)]
pub struct RunEndRecord<'a> {
    outcome: &'a str,
    dispatch: &'a str,
    disconnected: bool,
    duration_us: u64,
    omitted_records: u64,
    failure: Option<&'a str>,
    error: Option<ErrorField<'a>>,
    /// Shown beside a replayed result, never compared: a cut `result` does not block replay.
    result: Option<ValueField<'a>>,
    result_digest: &'a str,
    replayable: bool,
    replay_blocked: Option<ReplayBlocked>,
}

impl TraceRecord for RunEndRecord<'_> {
    const KIND: &'static str = "run_end";
}

/// What `run_end` says of the trace itself: its length and the records left out, and why it cannot be
/// replayed.
#[derive(Clone, Copy)]
pub(crate) struct Closing {
    pub duration: Duration,
    pub omitted_records: u64,
    pub blocked: Option<ReplayBlocked>,
}

impl<'a> RunEndRecord<'a> {
    /// `run_end` with `result` in one of the forms of [`Published::results`].
    pub(crate) fn of(
        end: &'a RunEnd<'a>,
        closing: Closing,
        published: &'a Published<'a>,
        result: Option<ValueField<'a>>,
    ) -> RunEndRecord<'a> {
        RunEndRecord {
            outcome: end.outcome,
            dispatch: end.dispatch,
            disconnected: end.disconnected,
            duration_us: micros(closing.duration),
            omitted_records: closing.omitted_records,
            failure: end.failure,
            error: end.error.map(ErrorField::of),
            result,
            result_digest: &published.digest,
            replayable: closing.blocked.is_none(),
            replay_blocked: closing.blocked,
        }
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
