//! Each record kind's exact line (traces.md §5) and the value field's two forms (traces.md §6.1).

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

use super::*;
use crate::apps::runtime::failure::{bounded, MESSAGE_BYTES, TRACEBACK_BYTES};
use crate::apps::runtime::{MissionFailure, MissionOp};
use crate::json::to_deterministic_record;

const AT: Duration = Duration::from_micros(1_789_545_600_010_203); // 2026-09-16T08:00:00.010203Z
const TS: &str = "2026-09-16T08:00:00.010203Z";

fn line(draft: Draft, seq: u64) -> String {
    String::from_utf8(draft.line(seq).unwrap()).unwrap()
}

fn encoded(field: &ValueField<'_>) -> String {
    to_deterministic_record(field).unwrap()
}

/// traces.md §6.1 and vector T6: the two exact forms, and the cut on a character boundary.
#[test]
fn value_fields() {
    let small = Value::String("x".repeat(4_094));
    assert_eq!(encoded(&value_field(&small)), format!("{{\"value\":\"{}\"}}", "x".repeat(4_094)));
    let big = Value::String("y".repeat(4_998));
    let want = format!("{{\"bytes\":5000,\"prefix\":\"\\\"{}\",\"truncated\":true}}", "y".repeat(4_095));
    assert_eq!(encoded(&value_field(&big)), want);
    // "é" is two bytes: the 4,096th byte would split one, so the prefix stops one byte short.
    let accents = Value::String("é".repeat(3_000));
    let ValueField::Cut { bytes, prefix, truncated: true } = value_field(&accents) else {
        panic!("6,002 bytes are over the ceiling")
    };
    assert_eq!(prefix.len(), 4_095);
    assert_eq!(bytes, 6_002);
}

/// traces.md §5.2–§5.6: every member of every kind, in byte order, with `kind`, `seq` and `at` added.
#[test]
fn exact_lines() {
    let at = UNIX_EPOCH + AT;
    let input = json!({"q": "x"});
    let start = RunStart {
        run_ref: "r1",
        tool: "briefs",
        front: "mcp",
        call_id: "00112233445566778899aabbccddeeff",
        trace_id: "0af7651916cd43dd8448eb211c80319c",
        deadline_ms: 30_000,
        input: &input,
    };
    let mission = MissionEnded {
        mission: "notes".into(),
        op: MissionOp::Call,
        target: Some("notes.find".into()),
        input: Some(json!([1])),
        started_at: at,
        duration: Duration::from_micros(1_500),
        failure: Some(MissionFailure::Fail),
        result: None,
        error: None,
    };
    let raised = LuauError {
        message: "mission/notes/find (notes/find.luau):3: boom".into(),
        traceback: Some("mission/notes/find (notes/find.luau):3: in function 'find'".into()),
    };
    let errored = MissionEnded {
        op: MissionOp::Eval,
        target: None,
        input: Some(json!("error('x')")),
        failure: Some(MissionFailure::Error),
        error: Some(LuauError { message: "mission/notes/eval:1: x".into(), traceback: None }),
        ..mission.clone()
    };
    let ok_call = ToolReturned {
        mission: "notes".into(),
        alias: "fs.read".into(),
        request_id: Some(7),
        started_at: at,
        duration: Duration::from_micros(12),
        arguments: Some(json!({})),
        reply: ToolReply::Ok { value: Some(json!(2)), content: json!([]) },
    };
    let refused = ToolReturned {
        request_id: None,
        arguments: None,
        reply: ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False),
        ..ok_call.clone()
    };
    let answered = ModelReturned {
        provider: "llm".into(),
        started_at: at,
        duration: Duration::from_micros(9),
        reply: ModelReply::Ok {
            message: json!({"role": "assistant"}),
            finish_reason: Some("stop".into()),
            usage: json!({"total_tokens": 3}),
        },
    };
    let failed = ModelReturned {
        reply: ModelReply::Failed { class: ModelFailure::Timeout, dispatch: Dispatch::Unknown },
        ..answered.clone()
    };
    let end =
        RunEnd { outcome: "success", dispatch: "true", disconnected: false, failure: None, error: None };
    let failed_end = RunEnd {
        outcome: "execution_failed",
        dispatch: "true",
        disconnected: false,
        failure: Some("uncaught_error"),
        error: Some(&raised),
    };
    let table = [
        (
            Draft::new(&start, at),
            format!(
                "{{\"at\":\"{TS}\",\"call_id\":\"00112233445566778899aabbccddeeff\",\"deadline_ms\":30000,\
                 \"front\":\"mcp\",\"input\":{{\"value\":{{\"q\":\"x\"}}}},\"kind\":\"run_start\",\
                 \"run_ref\":\"r1\",\"seq\":1,\"tool\":\"briefs\",\
                 \"trace_id\":\"0af7651916cd43dd8448eb211c80319c\"}}"
            ),
        ),
        (
            Draft::new(&Mission::of(&mission), at),
            format!(
                "{{\"at\":\"{TS}\",\"duration_us\":1500,\"error\":null,\"failure\":\"fail\",\
                 \"input\":{{\"value\":[1]}},\"kind\":\"mission\",\"mission\":\"notes\",\"op\":\"call\",\
                 \"result\":null,\"seq\":1,\"started_at\":\"{TS}\",\"target\":\"notes.find\"}}"
            ),
        ),
        (
            Draft::new(&Mission::of(&errored), at),
            format!(
                "{{\"at\":\"{TS}\",\"duration_us\":1500,\
                 \"error\":{{\"message\":\"mission/notes/eval:1: x\",\"traceback\":null}},\"failure\":\"error\",\
                 \"input\":{{\"value\":\"error('x')\"}},\"kind\":\"mission\",\"mission\":\"notes\",\
                 \"op\":\"eval\",\"result\":null,\"seq\":1,\"started_at\":\"{TS}\",\"target\":null}}"
            ),
        ),
        (
            Draft::new(&ToolCall::of(&ok_call), at),
            format!(
                "{{\"alias\":\"fs.read\",\"arguments\":{{\"value\":{{}}}},\"at\":\"{TS}\",\"class\":null,\
                 \"dispatch\":\"true\",\"duration_us\":12,\"kind\":\"tool_call\",\"mission\":\"notes\",\
                 \"ok\":true,\"request_id\":7,\"seq\":1,\"started_at\":\"{TS}\",\"value\":{{\"value\":2}}}}"
            ),
        ),
        (
            Draft::new(&ToolCall::of(&refused), at),
            format!(
                "{{\"alias\":\"fs.read\",\"arguments\":null,\"at\":\"{TS}\",\"class\":\"tool_not_granted\",\
                 \"dispatch\":\"false\",\"duration_us\":12,\"kind\":\"tool_call\",\"mission\":\"notes\",\
                 \"ok\":false,\"request_id\":null,\"seq\":1,\"started_at\":\"{TS}\",\"value\":null}}"
            ),
        ),
        (
            Draft::new(&ModelCall::of(&answered), at),
            format!(
                "{{\"at\":\"{TS}\",\"class\":null,\"dispatch\":\"true\",\"duration_us\":9,\
                 \"finish_reason\":\"stop\",\"kind\":\"model_call\",\
                 \"message\":{{\"value\":{{\"role\":\"assistant\"}}}},\"ok\":true,\"provider\":\"llm\",\
                 \"seq\":1,\"started_at\":\"{TS}\",\"usage\":{{\"total_tokens\":3}}}}"
            ),
        ),
        (
            Draft::new(&ModelCall::of(&failed), at),
            format!(
                "{{\"at\":\"{TS}\",\"class\":\"model_timeout\",\"dispatch\":\"unknown\",\"duration_us\":9,\
                 \"finish_reason\":null,\"kind\":\"model_call\",\"message\":null,\"ok\":false,\
                 \"provider\":\"llm\",\"seq\":1,\"started_at\":\"{TS}\",\"usage\":null}}"
            ),
        ),
        (
            Draft::new(&RunEndRecord::of(&end, Duration::from_micros(2_000), 3), at),
            format!(
                "{{\"at\":\"{TS}\",\"disconnected\":false,\"dispatch\":\"true\",\"duration_us\":2000,\
                 \"error\":null,\"failure\":null,\"kind\":\"run_end\",\"omitted_records\":3,\
                 \"outcome\":\"success\",\"seq\":1}}"
            ),
        ),
        (
            Draft::new(&RunEndRecord::of(&failed_end, Duration::from_micros(2_000), 0), at),
            format!(
                "{{\"at\":\"{TS}\",\"disconnected\":false,\"dispatch\":\"true\",\"duration_us\":2000,\
                 \"error\":{{\"message\":\"mission/notes/find (notes/find.luau):3: boom\",\
                 \"traceback\":\"mission/notes/find (notes/find.luau):3: in function 'find'\"}},\
                 \"failure\":\"uncaught_error\",\"kind\":\"run_end\",\"omitted_records\":0,\
                 \"outcome\":\"execution_failed\",\"seq\":1}}"
            ),
        ),
    ];
    for (draft, want) in table {
        assert_eq!(line(draft, 1), format!("{want}\n"));
    }
}

/// A time before the epoch has no timestamp: `at` and `started_at` are `null` (traces.md §5.1).
#[test]
fn a_time_the_format_cannot_hold_is_null() {
    let early = UNIX_EPOCH - Duration::from_micros(1);
    let end =
        RunEnd { outcome: "cancelled", dispatch: "unknown", disconnected: true, failure: None, error: None };
    let got = line(Draft::new(&RunEndRecord::of(&end, Duration::ZERO, 0), early), 4);
    assert_eq!(
        got,
        "{\"at\":null,\"disconnected\":true,\"dispatch\":\"unknown\",\"duration_us\":0,\"error\":null,\
         \"failure\":null,\"kind\":\"run_end\",\"omitted_records\":0,\"outcome\":\"cancelled\",\"seq\":4}\n"
    );
}

/// traces.md §5.5: the error texts are cut so that their encoding fits the bound, never inside a character
/// or an escape; the largest `run_end` stays within the room kept for it (traces.md §6.2).
#[test]
fn error_texts_are_bounded_by_their_encoding() {
    assert_eq!(bounded("abc", 3), "abc");
    assert_eq!(bounded("abcd", 3), "abc");
    // "é" is two bytes: one that would cross the bound is left out whole.
    assert_eq!(bounded("aéé", 4), "aé");
    // A quote encodes as two bytes, a control character as six: never half an escape.
    assert_eq!(bounded("a\"b", 2), "a");
    assert_eq!(bounded("ab\u{1}", 7), "ab");
    assert_eq!(bounded(&"\u{1}".repeat(400), MESSAGE_BYTES).len(), 170);
    let worst = LuauError {
        message: bounded(&"\u{1}".repeat(4_000), MESSAGE_BYTES),
        traceback: Some(bounded(&"\"".repeat(4_000), TRACEBACK_BYTES)),
    };
    let end = RunEnd {
        outcome: "execution_failed",
        dispatch: "unknown",
        disconnected: true,
        failure: Some("interrupt_budget"),
        error: Some(&worst),
    };
    let early = UNIX_EPOCH + AT;
    let record = RunEndRecord::of(&end, Duration::from_micros(u64::MAX), u64::MAX);
    let got = line(Draft::new(&record, early), u64::MAX);
    assert!(got.len() <= 4_096, "{} bytes", got.len());
    assert!(got.contains(&format!("\"message\":\"{}\"", "\\u0001".repeat(170))), "{got}");
    assert!(got.contains(&format!("\"traceback\":\"{}\"", "\\\"".repeat(1_024))), "{got}");
}
