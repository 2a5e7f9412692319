//! Whether a trace can be replayed (traces.md §6.3): `run_end`'s `replayable` and `replay_blocked` from
//! what the run's records kept whole, with and without `replay`.

use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use tempfile::TempDir;

use super::*;
use crate::apps::runtime::ToolReply;
use crate::codes::provider::{Dispatch, FailureClass};

const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// A run of a trace with `max_file_bytes` and `replay`: its input, then what `act` makes; the records.
fn run(max_file_bytes: u64, replay: bool, input: Value, act: impl FnOnce(&RunTrace)) -> Vec<Value> {
    ending(max_file_bytes, replay, input, false, act)
}

/// [`run`], whose outcome was decided outside the run when `interrupted`.
fn ending(
    max_file_bytes: u64,
    replay: bool,
    input: Value,
    interrupted: bool,
    act: impl FnOnce(&RunTrace),
) -> Vec<Value> {
    let tmp = TempDir::new().unwrap();
    let path = tmp.path().join("t.jsonl");
    let file = std::fs::File::create(&path).unwrap();
    let start = RunStart {
        run_ref: "r",
        tool: "t",
        front: "mcp",
        call_id: "00112233445566778899aabbccddeeff",
        trace_id: "0af7651916cd43dd8448eb211c80319c",
        deadline_ms: 1,
        input: &input,
    };
    let trace = RunTrace::begin(file, max_file_bytes, replay, &start);
    act(&trace);
    let end = RunEnd {
        outcome: "success",
        dispatch: "true",
        disconnected: false,
        failure: None,
        error: None,
        result_digest: DIGEST,
        interrupted,
    };
    assert!(trace.end(&end));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.len() as u64 <= max_file_bytes, "{} bytes", text.len());
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn tool(value: Value) -> ToolReturned {
    ToolReturned {
        mission: "m".into(),
        alias: "fx.echo".into(),
        request_id: Some(1),
        started_at: SystemTime::now(),
        duration: Duration::ZERO,
        arguments: Some(json!({"k": 1})),
        reply: ToolReply::Ok { value: Some(value), content: json!([]) },
    }
}

/// `replayable` and `replay_blocked` of the last record.
fn verdict(records: &[Value]) -> (Value, Value) {
    let end = records.last().unwrap();
    assert_eq!(end["kind"], "run_end");
    assert_eq!(end["result_digest"], DIGEST);
    (end["replayable"].clone(), end["replay_blocked"].clone())
}

fn big(bytes: usize) -> Value {
    json!("b".repeat(bytes))
}

/// Vectors R3 and R4: without `replay`, a run is replayable when it made no host call and nothing was
/// cut; a host call blocks it (`not_recorded`); a value cut blocks it first (`value_cut`).
#[test]
fn without_replay() {
    let pure = run(1_048_576, false, json!({"k": 1}), |_| {});
    assert_eq!(verdict(&pure), (json!(true), Value::Null));
    let called = run(1_048_576, false, json!({}), |t| t.tool_returned(tool(json!(1))));
    assert_eq!(verdict(&called), (json!(false), json!("not_recorded")));
    assert!(called[1].get("content").is_none(), "no replay member without replay");
    let cut = run(1_048_576, false, json!({}), |t| t.tool_returned(tool(big(5_000))));
    assert_eq!(verdict(&cut), (json!(false), json!("value_cut")));
    let cut_input = run(1_048_576, false, big(5_000), |_| {});
    assert_eq!(verdict(&cut_input), (json!(false), json!("value_cut")));
}

/// Vector R1: with `replay`, values over the value ceiling stay whole and the run is replayable.
#[test]
fn with_replay_values_stay_whole() {
    let records = run(1_048_576, true, big(5_000), |t| t.tool_returned(tool(big(6_000))));
    assert_eq!(verdict(&records), (json!(true), Value::Null));
    assert_eq!(records[0]["input"], json!({"value": big(5_000)}));
    assert_eq!(records[1]["value"], json!({"value": big(6_000)}));
    assert_eq!(records[1]["content"], json!([]));
    assert_eq!(records[1]["arguments_digest"], json!(crate::json::value_digest(&json!({"k": 1}))));
}

/// Vector R5: with `replay`, `max_file_bytes` decides: an input that does not leave room for the
/// records between is cut (`value_cut`); a record that does not fit is left out (`records_omitted`).
#[test]
fn with_replay_the_file_ceiling_blocks() {
    let records = run(16_384, true, big(13_000), |_| {});
    assert_eq!(records[0]["input"]["truncated"], json!(true));
    assert_eq!(verdict(&records), (json!(false), json!("value_cut")));
    let records = run(16_384, true, json!({}), |t| t.tool_returned(tool(big(14_000))));
    assert_eq!(records.len(), 2, "the tool_call is left out");
    assert_eq!(records[1]["omitted_records"], json!(1));
    assert_eq!(verdict(&records), (json!(false), json!("records_omitted")));
}

/// Records held for a try on the async worker mean for replay what they would have meant written.
#[test]
fn held_records_count_when_taken() {
    let records = run(1_048_576, false, json!({}), |t| {
        let held = t.held();
        held.tool_returned(tool(json!(1)));
        t.take(&held);
    });
    assert_eq!(verdict(&records), (json!(false), json!("not_recorded")));
    let records = run(1_048_576, true, json!({}), |t| {
        let held = t.held();
        assert!(held.replay());
        held.tool_returned(ToolReturned {
            reply: ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False),
            ..tool(json!(1))
        });
        t.take(&held);
    });
    assert_eq!(records[1]["content"], Value::Null);
    assert_eq!(verdict(&records), (json!(true), Value::Null));
}

/// traces.md §6.3: an outcome decided outside the run (a deadline, the client) cannot be replayed; a
/// reason about the trace itself is reported first.
#[test]
fn an_interrupted_run_is_not_replayable() {
    let records = ending(1_048_576, true, json!({}), true, |t| t.tool_returned(tool(json!(1))));
    assert_eq!(verdict(&records), (json!(false), json!("interrupted")));
    let records = ending(1_048_576, false, json!({}), true, |t| t.tool_returned(tool(json!(1))));
    assert_eq!(verdict(&records), (json!(false), json!("not_recorded")));
}
