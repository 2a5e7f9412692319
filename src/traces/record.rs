//! The exact trace records (traces.md §5) and their value fields (traces.md §6.1).
//!
//! Owns the key sets and value domains of `run_start`, `mission`, `tool_call` and `run_end`, the value
//! field's two forms, and the encoding of one record as one line. Does not own the file ceiling or when a
//! record is written (`run.rs`).

use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};

use crate::apps::runtime::{MissionEnded, ModelReply, ModelReturned, ToolReply, ToolReturned};
use crate::events::time::event_timestamp;
use crate::json::to_deterministic;

/// traces.md §6.1: the value ceiling of a value field.
pub const VALUE_CEILING: usize = 4_096;

/// The value field of `value` (traces.md §6.1): `{"value": v}`, or the truncation marker with the length
/// of the encoding and its first bytes, cut back to a UTF-8 boundary.
pub fn value_field(value: &Value) -> Value {
    let encoded = to_deterministic(value);
    let mut field = Map::new();
    if encoded.len() <= VALUE_CEILING {
        field.insert("value".to_owned(), value.clone());
        return Value::Object(field);
    }
    let end = char_boundary(&encoded, VALUE_CEILING);
    let prefix = String::from_utf8_lossy(&encoded[..end]).into_owned();
    field.insert("bytes".to_owned(), Value::from(encoded.len()));
    field.insert("prefix".to_owned(), Value::String(prefix));
    field.insert("truncated".to_owned(), Value::Bool(true));
    Value::Object(field)
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

fn optional_field(value: Option<&Value>) -> Value {
    value.map(value_field).unwrap_or(Value::Null)
}

/// The `*_at` timestamp (audit-events.md §1.1, 27 characters); `null` for a time the format cannot hold.
pub fn timestamp(at: SystemTime) -> Value {
    event_timestamp(at).map(Value::String).unwrap_or(Value::Null)
}

fn micros(d: Duration) -> Value {
    // Saturates at 2^64 − 1 µs (about 584,000 years), the greatest JSON integer (config.md §2.3).
    Value::from(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

fn text(s: &str) -> Value {
    Value::String(s.to_owned())
}

/// A record under construction: its kind-specific members; `kind`, `seq` and `at` are added when written.
pub struct Draft {
    pub kind: &'static str,
    pub at: SystemTime,
    pub members: Map<String, Value>,
}

impl Draft {
    /// The line: the deterministic encoding with `kind`, `seq` and `at`, and LF (traces.md §5.1).
    pub fn line(mut self, seq: u64) -> Vec<u8> {
        self.members.insert("kind".to_owned(), text(self.kind));
        self.members.insert("seq".to_owned(), Value::from(seq));
        self.members.insert("at".to_owned(), timestamp(self.at));
        let mut line = to_deterministic(&Value::Object(self.members));
        line.push(b'\n');
        line
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

pub fn run_start(start: &RunStart<'_>, at: SystemTime) -> Draft {
    let mut m = Map::new();
    m.insert("run_ref".to_owned(), text(start.run_ref));
    m.insert("tool".to_owned(), text(start.tool));
    m.insert("front".to_owned(), text(start.front));
    m.insert("call_id".to_owned(), text(start.call_id));
    m.insert("trace_id".to_owned(), text(start.trace_id));
    m.insert("deadline_ms".to_owned(), Value::from(start.deadline_ms));
    m.insert("input".to_owned(), value_field(start.input));
    Draft { kind: "run_start", at, members: m }
}

pub fn mission(ended: &MissionEnded) -> Draft {
    let mut m = Map::new();
    m.insert("mission".to_owned(), text(&ended.mission));
    m.insert("op".to_owned(), text(ended.op.as_str()));
    m.insert("target".to_owned(), ended.target.as_deref().map(text).unwrap_or(Value::Null));
    m.insert("input".to_owned(), optional_field(ended.input.as_ref()));
    m.insert("started_at".to_owned(), timestamp(ended.started_at));
    m.insert("duration_us".to_owned(), micros(ended.duration));
    m.insert("failure".to_owned(), ended.failure.map(|f| text(f.as_str())).unwrap_or(Value::Null));
    m.insert("result".to_owned(), optional_field(ended.result.as_ref()));
    Draft { kind: "mission", at: SystemTime::now(), members: m }
}

pub fn tool_call(returned: &ToolReturned) -> Draft {
    let mut m = Map::new();
    m.insert("mission".to_owned(), text(&returned.mission));
    m.insert("alias".to_owned(), text(&returned.alias));
    let request_id = returned.request_id.map(Value::from).unwrap_or(Value::Null);
    m.insert("request_id".to_owned(), request_id);
    m.insert("started_at".to_owned(), timestamp(returned.started_at));
    m.insert("duration_us".to_owned(), micros(returned.duration));
    m.insert("arguments".to_owned(), optional_field(returned.arguments.as_ref()));
    let (ok, class, dispatch, value) = match &returned.reply {
        ToolReply::Ok { value, .. } => (true, Value::Null, "true", optional_field(value.as_ref())),
        ToolReply::Failed { class, dispatch, .. } => {
            (false, text(class.as_str()), dispatch.as_str(), Value::Null)
        }
    };
    m.insert("ok".to_owned(), Value::Bool(ok));
    m.insert("class".to_owned(), class);
    m.insert("dispatch".to_owned(), text(dispatch));
    m.insert("value".to_owned(), value);
    Draft { kind: "tool_call", at: SystemTime::now(), members: m }
}

/// traces.md §5.6: one model call that answered the run: classes, numbers and the assistant's message,
/// never the request, the endpoint or the credential.
pub fn model_call(returned: &ModelReturned) -> Draft {
    let mut m = Map::new();
    m.insert("provider".to_owned(), text(&returned.provider));
    m.insert("started_at".to_owned(), timestamp(returned.started_at));
    m.insert("duration_us".to_owned(), micros(returned.duration));
    let (ok, class, dispatch) = match &returned.reply {
        ModelReply::Ok { .. } => (true, Value::Null, "true"),
        ModelReply::Failed { class, dispatch } => (false, text(class.as_str()), dispatch.as_str()),
    };
    m.insert("ok".to_owned(), Value::Bool(ok));
    m.insert("class".to_owned(), class);
    m.insert("dispatch".to_owned(), text(dispatch));
    let (finish_reason, usage, message) = match &returned.reply {
        ModelReply::Ok { message, finish_reason, usage } => (
            finish_reason.as_deref().map(text).unwrap_or(Value::Null),
            usage.clone(),
            optional_field(Some(message)),
        ),
        ModelReply::Failed { .. } => (Value::Null, Value::Null, Value::Null),
    };
    m.insert("finish_reason".to_owned(), finish_reason);
    m.insert("usage".to_owned(), usage);
    m.insert("message".to_owned(), message);
    Draft { kind: "model_call", at: SystemTime::now(), members: m }
}

/// What `run_end` says (traces.md §5.5).
pub struct RunEnd {
    pub outcome: &'static str,
    pub dispatch: &'static str,
    pub disconnected: bool,
}

pub fn run_end(end: &RunEnd, duration: Duration, omitted: u64) -> Draft {
    let mut m = Map::new();
    m.insert("outcome".to_owned(), text(end.outcome));
    m.insert("dispatch".to_owned(), text(end.dispatch));
    m.insert("disconnected".to_owned(), Value::Bool(end.disconnected));
    m.insert("duration_us".to_owned(), micros(duration));
    m.insert("omitted_records".to_owned(), Value::from(omitted));
    Draft { kind: "run_end", at: SystemTime::now(), members: m }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_deterministic_string;

    /// traces.md §6.1 and vector T6: the two exact forms, and the cut on a character boundary.
    #[test]
    fn value_fields() {
        let small = Value::String("x".repeat(4_094));
        assert_eq!(
            to_deterministic_string(&value_field(&small)),
            format!("{{\"value\":\"{}\"}}", "x".repeat(4_094))
        );
        let big = Value::String("y".repeat(4_998));
        let want = format!("{{\"bytes\":5000,\"prefix\":\"\\\"{}\",\"truncated\":true}}", "y".repeat(4_095));
        assert_eq!(to_deterministic_string(&value_field(&big)), want);
        // "é" is two bytes: the 4,096th byte would split one, so the prefix stops one byte short.
        let accents = Value::String("é".repeat(3_000));
        let field = value_field(&accents);
        let prefix = field.get("prefix").and_then(Value::as_str).unwrap_or_default();
        assert_eq!(prefix.len(), 4_095);
        assert_eq!(field.get("bytes"), Some(&Value::from(6_002)));
    }
}
