//! Whether a trace can be replayed (traces.md §6.3): `run_end`'s `replayable` and `replay_blocked` from
//! what the run's records kept whole, with and without `replay`; `run_end`'s `result` in the largest form
//! that fits the file (traces.md §6.2).

use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use tempfile::TempDir;

use super::*;
use crate::apps::runtime::ToolReply;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::json::sha256_qualified;
use crate::traces::record::Publication;

/// The digest of `"success"`, what [`run`]'s calls publish.
fn digest() -> String {
    sha256_qualified(b"\"success\"")
}

/// A run of a trace with `max_file_bytes` and `replay`: its input, then what `act` makes; the records.
fn run(max_file_bytes: u64, replay: bool, input: Value, act: impl FnOnce(&RunTrace)) -> Vec<Value> {
    ending(
        max_file_bytes,
        replay,
        input,
        Ends { interrupted: false, published: Publication::Class("success") },
        act,
    )
}

/// How [`ending`]'s run ends.
struct Ends {
    interrupted: bool,
    published: Publication,
}

/// [`run`], whose outcome was decided outside the run when `interrupted`, and which published `published`.
fn ending(
    max_file_bytes: u64,
    replay: bool,
    input: Value,
    ends: Ends,
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
        published: &ends.published,
        interrupted: ends.interrupted,
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
    assert_eq!((&end["result"], &end["result_digest"]), (&Value::Null, &json!(digest())));
    (end["replayable"].clone(), end["replay_blocked"].clone())
}

fn big(bytes: usize) -> Value {
    json!("b".repeat(bytes))
}

/// Vectors R3 and R4: without `replay`, a run is replayable when nothing a replay needs was cut: each
/// host call's answer is there, `content` included; a value cut blocks it (`value_cut`).
#[test]
fn without_replay() {
    let pure = run(1_048_576, false, json!({"k": 1}), |_| {});
    assert_eq!(verdict(&pure), (json!(true), Value::Null));
    let called = run(1_048_576, false, json!({}), |t| t.tool_returned(tool(json!(1))));
    assert_eq!(verdict(&called), (json!(true), Value::Null));
    assert_eq!(called[1]["content"], json!({"value": []}));
    assert!(called[1].get("arguments_digest").is_none(), "a replay member only with replay");
    let cut = run(1_048_576, false, json!({}), |t| t.tool_returned(tool(big(5_000))));
    assert_eq!(verdict(&cut), (json!(false), json!("value_cut")));
    let cut_input = run(1_048_576, false, big(5_000), |_| {});
    assert_eq!(verdict(&cut_input), (json!(false), json!("value_cut")));
    // The content the script received is needed as much as its value.
    let cut_content = run(1_048_576, false, json!({}), |t| {
        t.tool_returned(ToolReturned {
            reply: ToolReply::Ok {
                value: None,
                content: json!([{"text": "c".repeat(5_000), "type": "text"}]),
            },
            ..tool(json!(1))
        })
    });
    assert_eq!(cut_content[1]["content"]["truncated"], json!(true));
    assert_eq!(verdict(&cut_content), (json!(false), json!("value_cut")));
}

/// Vector R1: with `replay`, values over the value ceiling stay whole and the run is replayable.
#[test]
fn with_replay_values_stay_whole() {
    let records = run(1_048_576, true, big(5_000), |t| t.tool_returned(tool(big(6_000))));
    assert_eq!(verdict(&records), (json!(true), Value::Null));
    assert_eq!(records[0]["input"], json!({"value": big(5_000)}));
    assert_eq!(records[1]["value"], json!({"value": big(6_000)}));
    assert_eq!(records[1]["content"], json!({"value": []}));
    assert_eq!(records[1]["arguments_digest"], json!(sha256_qualified(b"{\"k\":1}")));
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
        held.tool_returned(tool(big(5_000)));
        t.take(&held);
    });
    assert_eq!(verdict(&records), (json!(false), json!("value_cut")));
    let records = run(1_048_576, true, json!({}), |t| {
        let held = t.held();
        held.tool_returned(ToolReturned {
            reply: ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False),
            ..tool(big(5_000))
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
    let interrupted = || Ends { interrupted: true, published: Publication::Class("success") };
    let records = ending(1_048_576, true, json!({}), interrupted(), |t| t.tool_returned(tool(json!(1))));
    assert_eq!(verdict(&records), (json!(false), json!("interrupted")));
    let records = ending(1_048_576, false, json!({}), interrupted(), |t| t.tool_returned(tool(big(5_000))));
    assert_eq!(verdict(&records), (json!(false), json!("value_cut")));
}

/// traces.md §5.5 and §6.2: `run_end`'s `result` is what the run published, whole with `replay`, its
/// value field without; when the file cannot hold that, its value field, then the marker with an empty
/// prefix. A cut `result` does not block replay, and `result_digest` is always of the whole value.
#[test]
fn the_result_takes_the_largest_form_that_fits() {
    let value = big(6_000);
    let digest = sha256_qualified(format!("\"{}\"", "b".repeat(6_000)).as_bytes());
    let published = || Ends { interrupted: false, published: Publication::Value(big(6_000)) };
    let cut = json!({"bytes": 6_002, "prefix": format!("\"{}", "b".repeat(4_095)), "truncated": true});
    let marker = json!({"bytes": 6_002, "prefix": "", "truncated": true});
    // A tool_call of about `n` bytes between, so that the room left for `run_end` shrinks.
    let filler = |n: usize| move |t: &RunTrace| t.tool_returned(tool(big(n)));
    let table = [
        (1_048_576, true, 0, json!({"value": value})),
        (1_048_576, false, 0, cut.clone()),
        // 16,384 bytes: after a record of about 10,000 the whole value does not fit, its value field does;
        // after one of about 11,500 only the marker does.
        (16_384, true, 10_000, cut.clone()),
        (16_384, true, 11_500, marker.clone()),
        (16_384, false, 0, cut),
    ];
    for (i, (max, replay, between, want)) in table.into_iter().enumerate() {
        let records = if between == 0 {
            ending(max, replay, json!({}), published(), |_| {})
        } else {
            ending(max, replay, json!({}), published(), filler(between))
        };
        let end = records.last().unwrap();
        assert_eq!(end["kind"], "run_end", "row {i}");
        assert_eq!(end["omitted_records"], json!(0), "row {i}");
        assert_eq!(
            (&end["result"], &end["result_digest"], &end["replayable"]),
            (&want, &json!(digest), &json!(true)),
            "row {i}"
        );
    }
    // What published a class has no `result`.
    let class = Ends { interrupted: false, published: Publication::Class("uncaught_error") };
    let records = ending(1_048_576, true, json!({}), class, |_| {});
    let end = records.last().unwrap();
    assert_eq!(
        (&end["result"], &end["result_digest"]),
        (&Value::Null, &json!(sha256_qualified(b"\"uncaught_error\"")))
    );
}
