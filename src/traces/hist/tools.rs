//! The four cold tools over one capture (traces.md §9.4): `hist.runs`, `hist.open`, `hist.read` and
//! `hist.counters`.
//!
//! Owns each tool's exact input (only the listed members, of their types and within their bounds), its
//! result, the cursor rule, the summary's shape, and the descriptions and input schemas the mission lists.
//! Does not own reading the directory (`capture.rs`), the upstream-shaped answer around a result, or the
//! mapping of a failure onto a class (`mod.rs` and the mission's `tool()` dispatch).

use std::path::Path;

use serde_json::{Map, Value};

use super::capture::{is_run_ref, parse_line, Capture, RunSummary};
use super::HistFailure;
use crate::json::{as_integer, integer_value};
use crate::storage::StorageError;

/// traces.md §9.4, §11: the `hist.runs` limit and its default.
pub const RUNS_LIMIT: (i128, i128, i128) = (1, 100, 20);
/// traces.md §9.4, §11: the `hist.read` limit and its default.
pub const READ_LIMIT: (i128, i128, i128) = (1, 200, 50);
/// The `run_ref` and `cursor` pattern (traces.md §4.1).
pub const RUN_REF_PATTERN: &str = "^[0-9a-f]{32}-[0-9]{20}$";

/// The input object, refused when it is not an object or has a member outside `allowed`.
fn members<'a>(input: &'a Value, allowed: &[&str]) -> Result<&'a Map<String, Value>, HistFailure> {
    let map = input.as_object().ok_or(HistFailure::InvalidInput)?;
    if map.keys().any(|key| !allowed.contains(&key.as_str())) {
        return Err(HistFailure::InvalidInput);
    }
    Ok(map)
}

/// An optional string member (`null` is another type).
fn string<'a>(map: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, HistFailure> {
    match map.get(key) {
        None => Ok(None),
        Some(value) => value.as_str().map(Some).ok_or(HistFailure::InvalidInput),
    }
}

/// An optional run reference (`run_ref`, `cursor`): a string that is a run reference (traces.md §4.1).
fn run_ref<'a>(map: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, HistFailure> {
    match string(map, key)? {
        Some(s) if !is_run_ref(s) => Err(HistFailure::InvalidInput),
        other => Ok(other),
    }
}

/// An optional integer member within `min..=max`, or `default` when absent (a float such as `20.0` is
/// another type).
fn integer(
    map: &Map<String, Value>,
    key: &str,
    min: i128,
    max: i128,
    default: i128,
) -> Result<i128, HistFailure> {
    match map.get(key) {
        None => Ok(default),
        Some(value) => as_integer(value).filter(|n| (min..=max).contains(n)).ok_or(HistFailure::InvalidInput),
    }
}

fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(members.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
}

/// A run's summary (traces.md §9.4).
pub fn summary_value(summary: &RunSummary) -> Value {
    object(vec![
        ("run_ref", Value::from(summary.run_ref.as_str())),
        ("tool", Value::from(summary.tool.as_str())),
        ("outcome", Value::from(summary.outcome.as_str())),
        ("dispatch", Value::from(summary.dispatch.as_str())),
        ("started_at", Value::from(summary.started_at.as_str())),
        ("duration_us", integer_value(summary.duration_us)),
        ("records", integer_value(summary.records)),
    ])
}

/// `hist.runs`: the matching runs newest first after the cursor, and the cursor of the next page.
pub fn runs(dir: &Path, input: &Value) -> Result<Value, HistFailure> {
    let map = members(input, &["tool", "outcome", "limit", "cursor"])?;
    let tool = string(map, "tool")?;
    let outcome = string(map, "outcome")?;
    let (min, max, default) = RUNS_LIMIT;
    let limit = integer(map, "limit", min, max, default)?;
    let cursor = run_ref(map, "cursor")?;
    let mut capture = Capture::open(dir).map_err(unavailable)?;
    if let Some(cursor) = cursor {
        capture.skip_to_after(cursor);
    }
    let matches = |s: &RunSummary| tool.is_none_or(|t| t == s.tool) && outcome.is_none_or(|o| o == s.outcome);
    let mut listed: Vec<RunSummary> = Vec::new();
    let mut more = false;
    while let Some(summary) = capture.next_summary() {
        if !matches(&summary) {
            continue;
        }
        if listed.len() as i128 == limit {
            more = true;
            break;
        }
        listed.push(summary);
    }
    let next_cursor = match listed.last() {
        Some(last) if more => Value::from(last.run_ref.as_str()),
        _ => Value::Null,
    };
    let runs = listed.iter().map(summary_value).collect();
    Ok(object(vec![("runs", Value::Array(runs)), ("next_cursor", next_cursor)]))
}

/// The capture of `dir` and the `run_ref` the input names (required).
fn capture_for(dir: &Path, map: &Map<String, Value>) -> Result<(Capture, String), HistFailure> {
    let run_ref = run_ref(map, "run_ref")?.ok_or(HistFailure::InvalidInput)?.to_owned();
    let capture = Capture::open(dir).map_err(unavailable)?;
    Ok((capture, run_ref))
}

/// `hist.open`: the run's summary with `call_id`, `trace_id`, `front` and `omitted_records` added.
pub fn open(dir: &Path, input: &Value) -> Result<Value, HistFailure> {
    let map = members(input, &["run_ref"])?;
    let (mut capture, run_ref) = capture_for(dir, map)?;
    let content = capture.find(&run_ref).ok_or(HistFailure::UnknownRun)?;
    let summary = &content.summary;
    let mut value = summary_value(summary);
    if let Value::Object(map) = &mut value {
        map.insert("call_id".to_owned(), Value::from(summary.call_id.as_str()));
        map.insert("trace_id".to_owned(), Value::from(summary.trace_id.as_str()));
        map.insert("front".to_owned(), Value::from(summary.front.as_str()));
        map.insert("omitted_records".to_owned(), integer_value(summary.omitted_records));
    }
    Ok(value)
}

/// `hist.read`: the run's records from `offset` (0 is `run_start`), at most `limit`, each the parsed line
/// (`null` for a line that is not a JSON object), and the offset of the next page or `null` at the end.
pub fn read(dir: &Path, input: &Value) -> Result<Value, HistFailure> {
    let map = members(input, &["run_ref", "offset", "limit"])?;
    let offset = integer(map, "offset", 0, i128::from(u64::MAX), 0)?;
    let (min, max, default) = READ_LIMIT;
    let limit = integer(map, "limit", min, max, default)?;
    let (mut capture, run_ref) = capture_for(dir, map)?;
    let content = capture.find(&run_ref).ok_or(HistFailure::UnknownRun)?;
    let mut lines = content.lines().skip(usize::try_from(offset).unwrap_or(usize::MAX));
    let page = usize::try_from(limit).unwrap_or(usize::MAX);
    let records = lines.by_ref().take(page).map(|line| parse_line(line).unwrap_or(Value::Null)).collect();
    let more = lines.next().is_some();
    let next_offset = if more { integer_value(offset + limit) } else { Value::Null };
    Ok(object(vec![("records", Value::Array(records)), ("next_offset", next_offset)]))
}

/// `hist.counters`: the runs of the whole capture, and per tool the runs per outcome; with `tool`, only
/// that tool's runs.
pub fn counters(dir: &Path, input: &Value) -> Result<Value, HistFailure> {
    let map = members(input, &["tool"])?;
    let tool = string(map, "tool")?;
    let mut capture = Capture::open(dir).map_err(unavailable)?;
    let mut runs: i128 = 0;
    let mut by_tool = Map::new();
    while let Some(summary) = capture.next_summary() {
        if tool.is_some_and(|t| t != summary.tool) {
            continue;
        }
        runs += 1;
        let outcomes = by_tool.entry(summary.tool).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(outcomes) = outcomes {
            let n = outcomes.entry(summary.outcome).or_insert(Value::from(0));
            *n = integer_value(as_integer(n).unwrap_or(0) + 1);
        }
    }
    Ok(object(vec![("runs", integer_value(runs)), ("by_tool", Value::Object(by_tool))]))
}

/// The tools' descriptions (traces.md §9.4): one or two plain sentences each.
pub const RUNS_DESCRIPTION: &str =
    "Lists the complete runs of the analysed gateway's trace directory, newest \
     first, optionally only those of one tool or one outcome. Pass the returned next_cursor as cursor to \
     list the following page.";
pub const OPEN_DESCRIPTION: &str =
    "Returns the summary of one run: its tool, outcome, dispatch state, start \
     time, duration and number of records, with its call id, trace id, front and omitted records.";
pub const READ_DESCRIPTION: &str =
    "Returns one page of a run's trace records, from offset (0 is run_start), \
     with the offset of the next page, or null at the end.";
pub const COUNTERS_DESCRIPTION: &str = "Counts the complete runs of the analysed gateway's trace directory \
     per tool and outcome, optionally for one tool only.";

fn schema_string(description: &str) -> Value {
    object(vec![("type", Value::from("string")), ("description", Value::from(description))])
}

fn schema_run_ref(description: &str) -> Value {
    object(vec![
        ("type", Value::from("string")),
        ("pattern", Value::from(RUN_REF_PATTERN)),
        ("description", Value::from(description)),
    ])
}

fn schema_integer(min: i128, max: Option<i128>, default: i128, description: &str) -> Value {
    let mut members = vec![
        ("type", Value::from("integer")),
        ("minimum", integer_value(min)),
        ("default", integer_value(default)),
        ("description", Value::from(description)),
    ];
    if let Some(max) = max {
        members.push(("maximum", integer_value(max)));
    }
    object(members)
}

/// An input schema: an object of `properties` with no other member, `required` when any is.
fn schema(properties: Vec<(&str, Value)>, required: &[&str]) -> Value {
    let mut members = vec![
        ("type", Value::from("object")),
        ("properties", object(properties)),
        ("additionalProperties", Value::Bool(false)),
    ];
    if !required.is_empty() {
        members.push(("required", Value::Array(required.iter().map(|r| Value::from(*r)).collect())));
    }
    object(members)
}

pub fn runs_schema() -> Value {
    let (min, max, default) = RUNS_LIMIT;
    schema(
        vec![
            ("tool", schema_string("Only runs of this served tool.")),
            ("outcome", schema_string("Only runs with this outcome, for example success.")),
            ("limit", schema_integer(min, Some(max), default, "The most runs to list.")),
            ("cursor", schema_run_ref("The next_cursor of the previous page.")),
        ],
        &[],
    )
}

pub fn open_schema() -> Value {
    schema(vec![("run_ref", schema_run_ref("The run reference, as hist.runs lists it."))], &["run_ref"])
}

pub fn read_schema() -> Value {
    let (min, max, default) = READ_LIMIT;
    schema(
        vec![
            ("run_ref", schema_run_ref("The run reference, as hist.runs lists it.")),
            ("offset", schema_integer(0, None, 0, "The position of the first record to return.")),
            ("limit", schema_integer(min, Some(max), default, "The most records to return.")),
        ],
        &["run_ref"],
    )
}

pub fn counters_schema() -> Value {
    schema(vec![("tool", schema_string("Count only the runs of this served tool."))], &[])
}

/// The capture of a snapshot directory failed: the operator's cause at debug, the closed failure for the
/// call (traces.md §9).
fn unavailable(error: StorageError) -> HistFailure {
    tracing::debug!(%error, "the trace snapshot directory could not be captured");
    HistFailure::Unavailable
}
