//! The exact trace records (traces.md §5) and their value fields (traces.md §6.1).
//!
//! Owns the key sets and value domains of `run_start`, `mission`, `tool_call`, `model_call` and `run_end`,
//! each a `Serialize` type whose fields are its members, the value field's two forms, the error field of a
//! failed mission or run (bounded by `apps::runtime::failure`, which reads it), and the encoding of
//! one record as one line ([`Draft`]). Does not own the file ceiling (`file.rs`), when a record is written
//! (`run.rs`), or the inspection file's records (`inspection.rs`).

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::apps::runtime::{LuauError, MissionEnded, ModelReply, ModelReturned, ToolReply, ToolReturned};
use crate::codes::model::ModelFailure;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::events::time::event_timestamp;
use crate::json::to_deterministic;

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
}

/// A record made and not yet written: its kind-specific members, encoded when made (the run's values
/// may be gone by the time a held record is written); `kind`, `seq` and `at` are added when written.
pub struct Draft {
    kind: &'static str,
    at: SystemTime,
    /// `None` for a record the encoder could not represent (none of the types below can give one); it is
    /// left out and counted like a record over the ceiling.
    members: Option<Map<String, Value>>,
}

impl Draft {
    /// `record`, made at `at`.
    pub fn new<R: TraceRecord>(record: &R, at: SystemTime) -> Draft {
        let members = match serde_json::to_value(record) {
            Ok(Value::Object(members)) => Some(members),
            _ => None,
        };
        Draft { kind: R::KIND, at, members }
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
#[derive(Serialize)]
pub struct RunStart<'a> {
    pub run_ref: &'a str,
    pub tool: &'a str,
    pub front: &'static str,
    pub call_id: &'a str,
    pub trace_id: &'a str,
    pub deadline_ms: u64,
    #[serde(serialize_with = "whole_or_cut")]
    pub input: &'a Value,
}

impl TraceRecord for RunStart<'_> {
    const KIND: &'static str = "run_start";
}

fn whole_or_cut<S: serde::Serializer>(value: &&Value, serializer: S) -> Result<S::Ok, S::Error> {
    value_field(value).serialize(serializer)
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
}

impl TraceRecord for Mission<'_> {
    const KIND: &'static str = "mission";
}

impl<'a> Mission<'a> {
    pub fn of(ended: &'a MissionEnded) -> Mission<'a> {
        Mission {
            mission: &ended.mission,
            op: ended.op.as_str(),
            target: ended.target.as_deref(),
            input: ended.input.as_ref().map(value_field),
            started_at: timestamp(ended.started_at),
            duration_us: micros(ended.duration),
            failure: ended.failure.map(|f| f.as_str()),
            result: ended.result.as_ref().map(value_field),
            error: ended.error.as_ref().map(ErrorField::of),
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
}

impl TraceRecord for ToolCall<'_> {
    const KIND: &'static str = "tool_call";
}

impl<'a> ToolCall<'a> {
    pub fn of(returned: &'a ToolReturned) -> ToolCall<'a> {
        let (ok, class, dispatch, value) = match &returned.reply {
            ToolReply::Ok { value, .. } => (true, None, Dispatch::True, value.as_ref().map(value_field)),
            ToolReply::Failed { class, dispatch, .. } => (false, Some(*class), *dispatch, None),
        };
        ToolCall {
            mission: &returned.mission,
            alias: &returned.alias,
            request_id: returned.request_id,
            started_at: timestamp(returned.started_at),
            duration_us: micros(returned.duration),
            arguments: returned.arguments.as_ref().map(value_field),
            ok,
            class,
            dispatch,
            value,
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
}

impl TraceRecord for ModelCall<'_> {
    const KIND: &'static str = "model_call";
}

impl<'a> ModelCall<'a> {
    pub fn of(returned: &'a ModelReturned) -> ModelCall<'a> {
        let (ok, class, dispatch, finish_reason, usage, message) = match &returned.reply {
            ModelReply::Ok { message, finish_reason, usage } => {
                (true, None, Dispatch::True, finish_reason.as_deref(), usage, Some(value_field(message)))
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
}

impl TraceRecord for RunEndRecord<'_> {
    const KIND: &'static str = "run_end";
}

impl<'a> RunEndRecord<'a> {
    pub fn of(end: &'a RunEnd<'a>, duration: Duration, omitted_records: u64) -> RunEndRecord<'a> {
        RunEndRecord {
            outcome: end.outcome,
            dispatch: end.dispatch,
            disconnected: end.disconnected,
            duration_us: micros(duration),
            omitted_records,
            failure: end.failure,
            error: end.error.map(ErrorField::of),
        }
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
