//! The exact trace records (traces.md §5) and their value fields (traces.md §6.1).
//!
//! Owns the key sets and value domains of `run_start`, `mission`, `tool_call`, `model_call` and `run_end`,
//! each a `Serialize` type whose fields are its members, the value field's two forms, the members a trace
//! recorded for replay adds and what each record means for replay ([`Marks`], traces.md §6.3), the
//! error field of a failed mission or run (bounded by `apps::runtime::failure`, which reads it), and the
//! encoding of one record as one line ([`Draft`]). Does not own the file ceiling (`file.rs`), when a
//! record is written or whether the run is replayable (`run.rs`), or the inspection file's records
//! (`inspection.rs`).

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::apps::runtime::{LuauError, MissionEnded, ModelReply, ModelReturned, ToolReply, ToolReturned};
use crate::codes::model::ModelFailure;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::events::time::event_timestamp;
use crate::json::{to_deterministic, value_digest};

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
    let encoded = to_deterministic(value);
    if encoded.len() <= VALUE_CEILING {
        return ValueField::Whole { value };
    }
    let end = char_boundary(&encoded, VALUE_CEILING);
    let prefix = String::from_utf8_lossy(&encoded[..end]).into_owned();
    ValueField::Cut { bytes: encoded.len(), prefix, truncated: true }
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

/// What one record means for replay (traces.md §6.3): whether it holds a value cut at the ceiling, and
/// whether it is a host call a replay answers from the trace (`tool_call`, `model_call`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    pub cut: bool,
    pub host_call: bool,
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

    /// What the record means for replay (traces.md §6.3); nothing by default.
    fn marks(&self) -> Marks {
        Marks::default()
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
    marks: Marks,
}

impl Draft {
    /// `record`, made at `at`.
    pub fn new<R: TraceRecord>(record: &R, at: SystemTime) -> Draft {
        let members = match serde_json::to_value(record) {
            Ok(Value::Object(members)) => Some(members),
            _ => None,
        };
        Draft { kind: R::KIND, at, members, marks: record.marks() }
    }

    /// What the record means for replay.
    pub(crate) fn marks(&self) -> Marks {
        self.marks
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

    fn marks(&self) -> Marks {
        Marks { cut: self.input.is_cut(), host_call: false }
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
    /// Only in a trace recorded for replay (traces.md §6.3).
    #[serde(flatten)]
    replay: Option<MissionReplay>,
}

/// The member `mission` gains in a trace recorded for replay.
#[derive(Serialize)]
struct MissionReplay {
    input_digest: Option<String>,
}

impl TraceRecord for Mission<'_> {
    const KIND: &'static str = "mission";

    fn marks(&self) -> Marks {
        Marks { cut: any_cut([&self.input, &self.result]), host_call: false }
    }
}

impl<'a> Mission<'a> {
    pub fn of(ended: &'a MissionEnded, replay: bool) -> Mission<'a> {
        Mission {
            mission: &ended.mission,
            op: ended.op.as_str(),
            target: ended.target.as_deref(),
            input: ended.input.as_ref().map(|v| field(v, replay)),
            started_at: timestamp(ended.started_at),
            duration_us: micros(ended.duration),
            failure: ended.failure.map(|f| f.as_str()),
            result: ended.result.as_ref().map(|v| field(v, replay)),
            error: ended.error.as_ref().map(ErrorField::of),
            replay: replay.then(|| MissionReplay { input_digest: ended.input.as_ref().map(value_digest) }),
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
    /// Only in a trace recorded for replay (traces.md §6.3).
    #[serde(flatten)]
    replay: Option<ToolReplay<'a>>,
}

/// The members `tool_call` gains in a trace recorded for replay: with `ok`, `class`, `dispatch` and
/// `value` they are the whole table the script received.
#[derive(Serialize)]
struct ToolReplay<'a> {
    arguments_digest: Option<String>,
    content: Option<&'a Value>,
}

impl TraceRecord for ToolCall<'_> {
    const KIND: &'static str = "tool_call";

    fn marks(&self) -> Marks {
        Marks { cut: any_cut([&self.arguments, &self.value]), host_call: true }
    }
}

impl<'a> ToolCall<'a> {
    pub fn of(returned: &'a ToolReturned, replay: bool) -> ToolCall<'a> {
        let (ok, class, dispatch, value, content) = match &returned.reply {
            ToolReply::Ok { value, content } => {
                (true, None, Dispatch::True, value.as_ref().map(|v| field(v, replay)), Some(content))
            }
            ToolReply::Failed { class, dispatch, content } => {
                (false, Some(*class), *dispatch, None, content.as_ref())
            }
        };
        let replay = replay
            .then(|| ToolReplay { arguments_digest: returned.arguments.as_ref().map(value_digest), content });
        ToolCall {
            mission: &returned.mission,
            alias: &returned.alias,
            request_id: returned.request_id,
            started_at: timestamp(returned.started_at),
            duration_us: micros(returned.duration),
            arguments: returned.arguments.as_ref().map(|v| field(v, replay.is_some())),
            ok,
            class,
            dispatch,
            value,
            replay,
        }
    }
}

/// `model_call` (traces.md §5.6): one model call that answered the run: classes, numbers and the
/// assistant's message, never the request, the endpoint or the credential.
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
    /// Only in a trace recorded for replay (traces.md §6.3).
    #[serde(flatten)]
    replay: Option<ModelReplay<'a>>,
}

/// The member `model_call` gains in a trace recorded for replay.
#[derive(Serialize)]
struct ModelReplay<'a> {
    request_digest: Option<&'a str>,
}

impl TraceRecord for ModelCall<'_> {
    const KIND: &'static str = "model_call";

    fn marks(&self) -> Marks {
        Marks { cut: any_cut([&self.message]), host_call: true }
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
            replay: replay.then_some(ModelReplay { request_digest: returned.request_digest.as_deref() }),
        }
    }
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
    /// The digest of what the run published (traces.md §5.5.2).
    pub result_digest: &'a str,
    /// The outcome was decided outside the run (traces.md §6.3: `interrupted`).
    pub interrupted: bool,
}

/// Why a trace cannot be replayed (traces.md §6.3): a closed set, in the order the first that applies is
/// reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayBlocked {
    /// A value field of the trace holds the truncation marker.
    ValueCut,
    /// The file ceiling left records out.
    RecordsOmitted,
    /// Recorded without `replay`, the run made a host call whose answer the trace does not hold whole.
    NotRecorded,
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
    result_digest: &'a str,
    replayable: bool,
    replay_blocked: Option<ReplayBlocked>,
}

impl TraceRecord for RunEndRecord<'_> {
    const KIND: &'static str = "run_end";
}

impl<'a> RunEndRecord<'a> {
    pub fn of(
        end: &'a RunEnd<'a>,
        duration: Duration,
        omitted_records: u64,
        blocked: Option<ReplayBlocked>,
    ) -> RunEndRecord<'a> {
        RunEndRecord {
            outcome: end.outcome,
            dispatch: end.dispatch,
            disconnected: end.disconnected,
            duration_us: micros(duration),
            omitted_records,
            failure: end.failure,
            error: end.error.map(ErrorField::of),
            result_digest: end.result_digest,
            replayable: blocked.is_none(),
            replay_blocked: blocked,
        }
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
