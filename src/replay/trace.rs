//! Reading one trace file back for replay (replay.md §3, traces.md §5, §6.3): the run's input, its host
//! calls in file order with the answers they got, and what `run_end` says the run published.
//!
//! Owns which records and members a replay needs and how a record becomes the answer the script
//! received (traces.md §5.4, §5.6). Accepts both recordings: a host call with `arguments_digest` or with
//! only its whole `arguments` (the digest is then computed here), and a `run_end` with or without the
//! published `result`. Does not own whether a trace is complete for the `hist` tools (`traces::hist`) or
//! what a replay does with the calls (`port`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::apps::runtime::{ModelReply, ToolReply};
use crate::codes::model::ModelFailure;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::json::value_digest;
use crate::traces::hist::capture::parse_line;

/// A file of at most this many bytes is read (the largest `max_file_bytes`, traces.md §3).
pub(crate) const MAX_TRACE_BYTES: u64 = crate::traces::hist::capture::MAX_FILE_BYTES;

/// What kind of host call a record is (traces.md §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallKind {
    Tool,
    Model,
}

impl CallKind {
    /// The record kind, as replay.md writes it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CallKind::Tool => "tool_call",
            CallKind::Model => "model_call",
        }
    }
}

/// What identifies a host call for matching (traces.md §6.3): its kind, its alias or model declaration,
/// and the digest of its arguments or request (`None` when they did not convert).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CallKey {
    pub kind: CallKind,
    pub alias: String,
    pub digest: Option<String>,
}

/// The answer a recorded host call got.
#[derive(Clone, Debug)]
pub(crate) enum Answer {
    Tool(ToolReply),
    Model(ModelReply),
}

/// One recorded host call.
#[derive(Clone, Debug)]
pub(crate) struct HostCall {
    pub key: CallKey,
    pub answer: Answer,
}

/// One granted tool's listed facts as a `listing` record holds them (traces.md §5.8): what acquisition
/// listed, without the alias and effect, which CONFIG gives.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ListedFacts {
    pub description: Option<String>,
    pub input_schema: Arc<Value>,
    pub output_schema: Option<Arc<Value>>,
}

/// The `listing` records of a trace: by mission, then by alias (the first record of a mission).
pub(crate) type Listings = BTreeMap<String, BTreeMap<String, ListedFacts>>;

/// A trace a replay can run: everything of traces.md §6.3.
#[derive(Debug)]
pub(crate) struct Recorded {
    pub input: Value,
    pub calls: Vec<HostCall>,
    /// The granted tools' facts the recorded run was shown (traces.md §5.8).
    pub listings: Listings,
    /// `run_end.result_digest`.
    pub result_digest: String,
    /// `run_end.result` when the trace has it (a value field, as recorded).
    pub result: Option<Value>,
}

/// Why a trace cannot be replayed (replay.md §4): `run_end`'s own reason, or a record a replay needs that
/// is not whole (a trace recorded before these members existed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unreplayable {
    /// `run_end.replay_blocked` as written.
    Blocked(String),
    /// `run_end` says replayable but a host call lacks what answers it.
    NotRecorded,
}

/// One complete trace file read back.
#[derive(Debug)]
pub(crate) struct TraceFile {
    pub run_ref: String,
    pub tool: String,
    pub content: Result<Recorded, Unreplayable>,
}

/// The file is not a complete trace (traces.md §9.3): no `run_start` first, no `run_end` last, a torn
/// line, or larger than any trace.
#[derive(Debug, thiserror::Error)]
#[error("not a complete trace")]
pub(crate) struct Incomplete;

/// Why a trace file was not read back (replay.md §1): the system refused to read it, or it is not a
/// complete trace.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unread {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Incomplete(#[from] Incomplete),
}

/// Reads `path` whole (at most [`MAX_TRACE_BYTES`]) and parses it.
pub(crate) fn read(path: &Path) -> Result<TraceFile, Unread> {
    let size = std::fs::metadata(path)?.len();
    if size > MAX_TRACE_BYTES {
        return Err(Incomplete.into());
    }
    let bytes = std::fs::read(path)?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(parse(&bytes, &stem)?)
}

/// Parses the bytes of a trace file; `stem` is the file name without `.jsonl`, the run reference when
/// `run_start` has none.
pub(crate) fn parse(bytes: &[u8], stem: &str) -> Result<TraceFile, Incomplete> {
    let body = bytes.strip_suffix(b"\n").ok_or(Incomplete)?;
    let mut records = Vec::new();
    for line in body.split(|b| *b == b'\n') {
        records.push(parse_line(line).ok_or(Incomplete)?);
    }
    let (Some(start), Some(end)) = (records.first(), records.last()) else { return Err(Incomplete) };
    if kind(start) != Some("run_start") || kind(end) != Some("run_end") || records.len() < 2 {
        return Err(Incomplete);
    }
    let tool = text(start, "tool").ok_or(Incomplete)?;
    let run_ref = text(start, "run_ref").unwrap_or_else(|| stem.to_owned());
    let result_digest = text(end, "result_digest").ok_or(Incomplete)?;
    let content = match (end.get("replayable"), end.get("replay_blocked")) {
        (Some(Value::Bool(true)), _) => recorded(start, &records[1..records.len() - 1], end, result_digest),
        (_, Some(Value::String(reason))) => Err(Unreplayable::Blocked(reason.clone())),
        _ => return Err(Incomplete),
    };
    Ok(TraceFile { run_ref, tool, content })
}

fn kind(record: &Value) -> Option<&str> {
    record.get("kind").and_then(Value::as_str)
}

fn text(record: &Value, key: &str) -> Option<String> {
    record.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The value a value field holds whole (traces.md §6.1): `Some(Some(v))` for `{"value": v}`, `Some(None)`
/// for `null`, `None` for a cut value or anything else.
fn whole(field: Option<&Value>) -> Option<Option<Value>> {
    match field {
        None | Some(Value::Null) => Some(None),
        Some(Value::Object(members)) if members.len() == 1 => members.get("value").cloned().map(Some),
        Some(_) => None,
    }
}

fn recorded(
    start: &Value,
    between: &[Value],
    end: &Value,
    result_digest: String,
) -> Result<Recorded, Unreplayable> {
    let input = whole(start.get("input")).flatten().ok_or(Unreplayable::NotRecorded)?;
    let calls = between
        .iter()
        .filter_map(|record| match kind(record) {
            Some("tool_call") => Some(tool_call(record)),
            Some("model_call") => Some(model_call(record)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or(Unreplayable::NotRecorded)?;
    let mut listings = Listings::new();
    for record in between.iter().filter(|r| kind(r) == Some("listing")) {
        let (mission, tools) = listing(record).ok_or(Unreplayable::NotRecorded)?;
        listings.entry(mission).or_insert(tools);
    }
    let result = end.get("result").filter(|r| !r.is_null()).cloned();
    Ok(Recorded { input, calls, listings, result_digest, result })
}

/// A `listing` record (traces.md §5.8): its mission and each tool's facts by alias.
fn listing(record: &Value) -> Option<(String, BTreeMap<String, ListedFacts>)> {
    let mission = text(record, "mission")?;
    let tools = whole(Some(record.get("tools")?))??;
    let mut facts = BTreeMap::new();
    for tool in tools.as_array()? {
        let description = match tool.get("description")? {
            Value::String(description) => Some(description.clone()),
            Value::Null => None,
            _ => return None,
        };
        let output_schema = match tool.get("output_schema")? {
            Value::Null => None,
            schema => Some(Arc::new(schema.clone())),
        };
        let input_schema = Arc::new(tool.get("input_schema")?.clone());
        facts.insert(text(tool, "alias")?, ListedFacts { description, input_schema, output_schema });
    }
    Some((mission, facts))
}

fn dispatch(record: &Value) -> Option<Dispatch> {
    match record.get("dispatch")?.as_str()? {
        "true" => Some(Dispatch::True),
        "false" => Some(Dispatch::False),
        "unknown" => Some(Dispatch::Unknown),
        _ => None,
    }
}

/// The digest a record names (`member`), or the one of its whole value (`value`) when it has no such
/// member (traces.md §6.3: a trace recorded without `replay`).
fn digest_of(record: &Value, member: &str, value: &str) -> Option<Option<String>> {
    match record.get(member) {
        Some(Value::String(digest)) => Some(Some(digest.clone())),
        Some(Value::Null) => Some(None),
        Some(_) => None,
        None => whole(record.get(value)).map(|v| v.as_ref().map(value_digest)),
    }
}

/// A `tool_call` record (traces.md §5.4) as the call a replay matches and the table the script received.
fn tool_call(record: &Value) -> Option<HostCall> {
    let alias = text(record, "alias")?;
    let digest = digest_of(record, "arguments_digest", "arguments")?;
    // A value field (traces.md §5.4): `{"value": [...]}` whole, `null` when the script received none; an
    // absent member or a cut value cannot answer the call.
    let content = whole(Some(record.get("content")?))?;
    let reply = match record.get("ok")?.as_bool()? {
        true => ToolReply::Ok { value: whole(record.get("value"))?, content: content? },
        false => {
            let class = record.get("class")?.as_str()?;
            let class = FailureClass::ALL.into_iter().find(|c| c.as_str() == class)?;
            ToolReply::Failed { class, dispatch: dispatch(record)?, content }
        }
    };
    Some(HostCall { key: CallKey { kind: CallKind::Tool, alias, digest }, answer: Answer::Tool(reply) })
}

/// A `model_call` record (traces.md §5.6) as the call a replay matches and the answer the run received.
fn model_call(record: &Value) -> Option<HostCall> {
    let provider = text(record, "provider")?;
    let digest = match record.get("request_digest")? {
        Value::String(digest) => Some(digest.clone()),
        Value::Null => None,
        _ => return None,
    };
    let reply = match record.get("ok")?.as_bool()? {
        true => ModelReply::Ok {
            message: whole(record.get("message"))??,
            finish_reason: match record.get("finish_reason")? {
                Value::String(reason) => Some(reason.clone()),
                Value::Null => None,
                _ => return None,
            },
            usage: record.get("usage")?.clone(),
        },
        false => {
            let class = record.get("class")?.as_str()?;
            let class = ModelFailure::ALL.into_iter().find(|c| c.as_str() == class)?;
            ModelReply::Failed { class, dispatch: dispatch(record)? }
        }
    };
    let key = CallKey { kind: CallKind::Model, alias: provider, digest };
    Some(HostCall { key, answer: Answer::Model(reply) })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn file(lines: &[Value]) -> Vec<u8> {
        lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect()
    }

    fn start() -> Value {
        json!({"kind": "run_start", "seq": 1, "run_ref": "r", "tool": "t", "input": {"value": {"a": 1}}})
    }

    fn end(extra: Value) -> Value {
        let mut end = json!({"kind": "run_end", "seq": 9, "result_digest": "sha256:x"});
        if let (Some(end), Value::Object(extra)) = (end.as_object_mut(), extra) {
            end.extend(extra);
        }
        end
    }

    /// A `tool_call` without `arguments_digest` is matched by the digest of its whole `arguments`; one
    /// with it by the recorded digest; a `run_end` without `result` has none.
    #[test]
    fn both_recordings_are_read() {
        let call = |digest: Option<&str>| {
            let mut call = json!({"kind": "tool_call", "alias": "fs.read", "ok": true, "class": null,
                "dispatch": "true", "arguments": {"value": {"p": 1}}, "value": {"value": 2}, "content": {"value": []}});
            if let Some(d) = digest {
                call["arguments_digest"] = json!(d);
            }
            call
        };
        let bytes =
            file(&[start(), call(None), call(Some("sha256:given")), end(json!({"replayable": true}))]);
        let trace = parse(&bytes, "stem").expect("complete");
        let recorded = trace.content.expect("replayable");
        let digests: Vec<_> = recorded.calls.iter().map(|c| c.key.digest.clone()).collect();
        assert_eq!(digests, [Some(value_digest(&json!({"p": 1}))), Some("sha256:given".to_owned())]);
        assert_eq!(recorded.result, None);
        assert_eq!(recorded.input, json!({"a": 1}));
    }

    /// A file the system refuses to read keeps the system's error (replay.md §1 prints its description);
    /// a file that reads but is no trace is `Incomplete`.
    #[test]
    fn an_unreadable_file_keeps_the_system_error() {
        let dir = std::env::temp_dir().join(format!("ptc-replay-unread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let unread = read(&dir).map(|_| ()).unwrap_err();
        assert!(
            matches!(&unread, Unread::Io(e) if e.raw_os_error() == Some(nix::libc::EISDIR)),
            "{unread:?}"
        );
        let file = dir.join("t.jsonl");
        std::fs::write(&file, b"{}\n").expect("write");
        assert_eq!(read(&file).map(|_| ()).unwrap_err().to_string(), "not a complete trace");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn blocked_incomplete_and_unrecorded() {
        let blocked = file(&[start(), end(json!({"replayable": false, "replay_blocked": "value_cut"}))]);
        let content = parse(&blocked, "s").expect("complete").content;
        assert_eq!(content.err(), Some(Unreplayable::Blocked("value_cut".to_owned())));
        let torn = b"{\"kind\":\"run_start\"}\n{\"kind\":";
        assert!(parse(torn, "s").is_err());
        let only_start = file(&[start()]);
        assert!(parse(&only_start, "s").is_err());
        // A call without `content`, or with it cut (traces.md §6.1), cannot be answered whole.
        let cut = json!({"bytes": 5000, "prefix": "[", "truncated": true});
        for content in [None, Some(cut)] {
            let mut call = json!({"kind": "tool_call", "alias": "a", "ok": true, "dispatch": "true",
                "arguments": {"value": {}}, "value": null});
            if let Some(content) = content {
                call["content"] = content;
            }
            let bytes = file(&[start(), call, end(json!({"replayable": true}))]);
            assert_eq!(parse(&bytes, "s").expect("complete").content.err(), Some(Unreplayable::NotRecorded));
        }
    }

    /// traces.md §5.8: a `listing` record is read by mission and alias (the first of a mission kept); a
    /// cut or malformed one cannot show the facts whole.
    #[test]
    fn listings_are_read() {
        let listing = |mission: &str, description: &str| {
            json!({"kind": "listing", "mission": mission, "tools": {"value": [{"alias": "fx.echo",
                "description": description, "effect": "read", "input_schema": {"type": "object"},
                "output_schema": null}]}})
        };
        let bytes = file(&[
            start(),
            listing("m", "Echoes."),
            listing("m", "Later."),
            listing("n", "Other."),
            end(json!({"replayable": true})),
        ]);
        let recorded = parse(&bytes, "s").expect("complete").content.expect("replayable");
        let facts = |mission: &str| recorded.listings.get(mission).and_then(|m| m.get("fx.echo")).cloned();
        let echo = ListedFacts {
            description: Some("Echoes.".to_owned()),
            input_schema: Arc::new(json!({"type": "object"})),
            output_schema: None,
        };
        assert_eq!(facts("m"), Some(echo));
        assert_eq!(facts("n").and_then(|f| f.description), Some("Other.".to_owned()));
        assert_eq!(recorded.calls.len(), 0);
        for tools in
            [json!({"bytes": 5000, "prefix": "[", "truncated": true}), json!({"value": [{"alias": 1}]})]
        {
            let record = json!({"kind": "listing", "mission": "m", "tools": tools});
            let bytes = file(&[start(), record, end(json!({"replayable": true}))]);
            assert_eq!(parse(&bytes, "s").expect("complete").content.err(), Some(Unreplayable::NotRecorded));
        }
    }
}
