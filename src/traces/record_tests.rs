//! Each record kind's exact line (traces.md §5) and the value field's two forms (traces.md §6.1).

use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

use super::*;
use crate::apps::runtime::failure::{bounded, MESSAGE_BYTES, TRACEBACK_BYTES};
use crate::apps::runtime::{MissionFailure, MissionOp};
use crate::json::{sha256_qualified, to_deterministic_record, value_digest};

const AT: Duration = Duration::from_micros(1_789_545_600_010_203); // 2026-09-16T08:00:00.010203Z
const TS: &str = "2026-09-16T08:00:00.010203Z";
/// A request digest (traces.md §5.6): 71 bytes.
const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// The digest of a value whose deterministic encoding is `encoding` (traces.md §6.3), computed from the
/// text, not by the encoder.
fn digest_of(encoding: &str) -> String {
    sha256_qualified(encoding.as_bytes())
}

/// `run_end` for `end` in a trace recorded for replay or not, with `result` in its first form.
fn run_end(
    end: &RunEnd<'_>,
    duration: Duration,
    omitted_records: u64,
    blocked: Option<ReplayBlocked>,
    replay: bool,
    at: SystemTime,
) -> Draft {
    let published = Published::of(end.published);
    let result = published.results(replay).into_iter().next().unwrap();
    let closing = Closing { duration, omitted_records, blocked };
    Draft::new(&RunEndRecord::of(end, closing, &published, result), at)
}

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
        request_digest: Some(DIGEST.into()),
        reply: ModelReply::Ok {
            message: json!({"role": "assistant"}),
            finish_reason: Some("stop".into()),
            usage: json!({"total_tokens": 3}),
        },
    };
    let failed = ModelReturned {
        request_digest: None,
        reply: ModelReply::Failed { class: ModelFailure::Timeout, dispatch: Dispatch::Unknown },
        ..answered.clone()
    };
    let structured = Publication::Value(json!({"text": "hi"}));
    let end = RunEnd {
        outcome: "success",
        dispatch: "true",
        disconnected: false,
        failure: None,
        error: None,
        published: &structured,
        interrupted: false,
    };
    let uncaught = Publication::Class("uncaught_error");
    let failed_end = RunEnd {
        outcome: "execution_failed",
        dispatch: "true",
        disconnected: false,
        failure: Some("uncaught_error"),
        error: Some(&raised),
        published: &uncaught,
        interrupted: false,
    };
    let (d_one, d_eval) = (digest_of("[1]"), digest_of("\"error('x')\""));
    let (d_hi, d_uncaught) = (digest_of("{\"text\":\"hi\"}"), digest_of("\"uncaught_error\""));
    let table = [
        (
            Draft::new(&RunStartRecord::of(&start, false), at),
            format!(
                "{{\"at\":\"{TS}\",\"call_id\":\"00112233445566778899aabbccddeeff\",\"deadline_ms\":30000,\
                 \"front\":\"mcp\",\"input\":{{\"value\":{{\"q\":\"x\"}}}},\"kind\":\"run_start\",\
                 \"run_ref\":\"r1\",\"seq\":1,\"tool\":\"briefs\",\
                 \"trace_id\":\"0af7651916cd43dd8448eb211c80319c\"}}"
            ),
        ),
        (
            Draft::new(&Mission::of(&mission, false), at),
            format!(
                "{{\"at\":\"{TS}\",\"duration_us\":1500,\"error\":null,\"failure\":\"fail\",\
                 \"input\":{{\"value\":[1]}},\"input_digest\":\"{d_one}\",\"kind\":\"mission\",\
                 \"mission\":\"notes\",\"op\":\"call\",\"result\":null,\"seq\":1,\"started_at\":\"{TS}\",\
                 \"target\":\"notes.find\"}}"
            ),
        ),
        (
            Draft::new(&Mission::of(&errored, false), at),
            format!(
                "{{\"at\":\"{TS}\",\"duration_us\":1500,\
                 \"error\":{{\"message\":\"mission/notes/eval:1: x\",\"traceback\":null}},\"failure\":\"error\",\
                 \"input\":{{\"value\":\"error('x')\"}},\"input_digest\":\"{d_eval}\",\"kind\":\"mission\",\
                 \"mission\":\"notes\",\"op\":\"eval\",\"result\":null,\"seq\":1,\"started_at\":\"{TS}\",\
                 \"target\":null}}"
            ),
        ),
        (
            Draft::new(&ToolCall::of(&ok_call, false), at),
            format!(
                "{{\"alias\":\"fs.read\",\"arguments\":{{\"value\":{{}}}},\"at\":\"{TS}\",\"class\":null,\
                 \"content\":{{\"value\":[]}},\"dispatch\":\"true\",\"duration_us\":12,\"kind\":\"tool_call\",\
                 \"mission\":\"notes\",\"ok\":true,\"request_id\":7,\"seq\":1,\"started_at\":\"{TS}\",\
                 \"value\":{{\"value\":2}}}}"
            ),
        ),
        (
            Draft::new(&ToolCall::of(&refused, false), at),
            format!(
                "{{\"alias\":\"fs.read\",\"arguments\":null,\"at\":\"{TS}\",\"class\":\"tool_not_granted\",\
                 \"content\":null,\"dispatch\":\"false\",\"duration_us\":12,\"kind\":\"tool_call\",\"mission\":\"notes\",\
                 \"ok\":false,\"request_id\":null,\"seq\":1,\"started_at\":\"{TS}\",\"value\":null}}"
            ),
        ),
        (
            Draft::new(&ModelCall::of(&answered, false), at),
            format!(
                "{{\"at\":\"{TS}\",\"class\":null,\"dispatch\":\"true\",\"duration_us\":9,\
                 \"finish_reason\":\"stop\",\"kind\":\"model_call\",\
                 \"message\":{{\"value\":{{\"role\":\"assistant\"}}}},\"ok\":true,\"provider\":\"llm\",\
                 \"request_digest\":\"{DIGEST}\",\"seq\":1,\"started_at\":\"{TS}\",\"usage\":{{\"total_tokens\":3}}}}"
            ),
        ),
        (
            Draft::new(&ModelCall::of(&failed, false), at),
            format!(
                "{{\"at\":\"{TS}\",\"class\":\"model_timeout\",\"dispatch\":\"unknown\",\"duration_us\":9,\
                 \"finish_reason\":null,\"kind\":\"model_call\",\"message\":null,\"ok\":false,\
                 \"provider\":\"llm\",\"request_digest\":null,\"seq\":1,\"started_at\":\"{TS}\",\"usage\":null}}"
            ),
        ),
        (
            run_end(&end, Duration::from_micros(2_000), 3, Some(ReplayBlocked::RecordsOmitted), false, at),
            format!(
                "{{\"at\":\"{TS}\",\"disconnected\":false,\"dispatch\":\"true\",\"duration_us\":2000,\
                 \"error\":null,\"failure\":null,\"kind\":\"run_end\",\"omitted_records\":3,\
                 \"outcome\":\"success\",\"replay_blocked\":\"records_omitted\",\"replayable\":false,\
                 \"result\":{{\"value\":{{\"text\":\"hi\"}}}},\"result_digest\":\"{d_hi}\",\"seq\":1}}"
            ),
        ),
        (
            run_end(&failed_end, Duration::from_micros(2_000), 0, None, false, at),
            format!(
                "{{\"at\":\"{TS}\",\"disconnected\":false,\"dispatch\":\"true\",\"duration_us\":2000,\
                 \"error\":{{\"message\":\"mission/notes/find (notes/find.luau):3: boom\",\
                 \"traceback\":\"mission/notes/find (notes/find.luau):3: in function 'find'\"}},\
                 \"failure\":\"uncaught_error\",\"kind\":\"run_end\",\"omitted_records\":0,\
                 \"outcome\":\"execution_failed\",\"replay_blocked\":null,\"replayable\":true,\
                 \"result\":null,\"result_digest\":\"{d_uncaught}\",\"seq\":1}}"
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
    let cancelled = Publication::Class("cancelled");
    let end = RunEnd {
        outcome: "cancelled",
        dispatch: "unknown",
        disconnected: true,
        failure: None,
        error: None,
        published: &cancelled,
        interrupted: false,
    };
    let got = line(run_end(&end, Duration::ZERO, 0, None, false, early), 4);
    let digest = digest_of("\"cancelled\"");
    assert_eq!(
        got,
        format!(
            "{{\"at\":null,\"disconnected\":true,\"dispatch\":\"unknown\",\"duration_us\":0,\"error\":null,\
             \"failure\":null,\"kind\":\"run_end\",\"omitted_records\":0,\"outcome\":\"cancelled\",\
             \"replay_blocked\":null,\"replayable\":true,\"result\":null,\"result_digest\":\"{digest}\",\
             \"seq\":4}}\n"
        )
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
    // The longest outcome, and the longest reason (traces.md §6.3); a run with an error field publishes a
    // class, but the bound holds even with the last form of a published value's `result` beside it.
    let value = Publication::Value(json!("v".repeat(100_000)));
    let end = RunEnd {
        outcome: "admission_unavailable",
        dispatch: "unknown",
        disconnected: true,
        failure: Some("interrupt_budget"),
        error: Some(&worst),
        published: &value,
        interrupted: false,
    };
    let early = UNIX_EPOCH + AT;
    let blocked = Some(ReplayBlocked::RecordsOmitted);
    let published = Published::of(&value);
    let marker = published.results(true).pop().unwrap();
    assert_eq!(marker, Some(ValueField::Cut { bytes: 100_002, prefix: String::new(), truncated: true }));
    let closing = Closing { duration: Duration::from_micros(u64::MAX), omitted_records: u64::MAX, blocked };
    let record = RunEndRecord::of(&end, closing, &published, marker);
    let got = line(Draft::new(&record, early), u64::MAX);
    assert!(got.len() <= 4_096, "{} bytes", got.len());
    assert!(got.contains(&format!("\"message\":\"{}\"", "\\u0001".repeat(170))), "{got}");
    assert!(got.contains(&format!("\"traceback\":\"{}\"", "\\\"".repeat(1_024))), "{got}");
}

const EMPTY_DIGEST: &str = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";

/// traces.md §6.3: a digest is `sha256:` and the hex of SHA-256 over the deterministic encoding.
#[test]
fn digests_cover_the_deterministic_encoding() {
    assert_eq!(value_digest(&json!({})), EMPTY_DIGEST);
    assert_eq!(
        value_digest(&json!({"k": 1})),
        "sha256:a0da1fce57d0e4f9f0ae4e4cbe040d34dcc046255c6c8d18e97f55aaed0655f0"
    );
    // Member order does not matter; `1` and `1.0` are different values.
    assert_eq!(value_digest(&json!({"b": 1, "a": 2})), value_digest(&json!({"a": 2, "b": 1})));
    assert_ne!(value_digest(&json!(1)), value_digest(&json!(1.0)));
}

/// traces.md §6.3 and vector R1: in a trace recorded for replay every value is whole, however long, and
/// `tool_call` also carries the digest of its arguments.
#[test]
fn replay_lines() {
    let at = UNIX_EPOCH + AT;
    let big = json!("z".repeat(5_000));
    let input = json!({"q": big});
    let start = RunStart {
        run_ref: "r1",
        tool: "briefs",
        front: "pcc",
        call_id: "00112233445566778899aabbccddeeff",
        trace_id: "0af7651916cd43dd8448eb211c80319c",
        deadline_ms: 1,
        input: &input,
    };
    let whole = line(Draft::new(&RunStartRecord::of(&start, true), at), 1);
    assert!(
        whole.contains(&format!("\"input\":{{\"value\":{{\"q\":\"{}\"}}}}", "z".repeat(5_000))),
        "{whole}"
    );
    let cut = Draft::new(&RunStartRecord::of(&start, false), at);
    assert!(cut.cut());
    assert!(!Draft::new(&RunStartRecord::of(&start, true), at).cut());

    let ok_call = ToolReturned {
        mission: "notes".into(),
        alias: "fs.read".into(),
        request_id: Some(7),
        started_at: at,
        duration: Duration::from_micros(12),
        arguments: Some(json!({})),
        reply: ToolReply::Ok { value: Some(json!(2)), content: json!([{"text": "2", "type": "text"}]) },
    };
    let tool_error = ToolReturned {
        arguments: None,
        reply: ToolReply::Failed {
            class: FailureClass::McpToolError,
            dispatch: Dispatch::True,
            content: Some(json!([{"text": "no", "type": "text"}])),
        },
        ..ok_call.clone()
    };
    let refused = ToolReturned {
        request_id: None,
        reply: ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False),
        ..ok_call.clone()
    };
    let answered = ModelReturned {
        provider: "llm".into(),
        started_at: at,
        duration: Duration::from_micros(9),
        request_digest: Some(EMPTY_DIGEST.into()),
        reply: ModelReply::Ok { message: big.clone(), finish_reason: None, usage: json!({}) },
    };
    let mission = MissionEnded {
        mission: "notes".into(),
        op: MissionOp::Call,
        target: Some("notes.find".into()),
        input: Some(json!({})),
        started_at: at,
        duration: Duration::from_micros(1_500),
        failure: None,
        result: Some(big.clone()),
        error: None,
    };
    let z = "z".repeat(5_000);
    let table = [
        (
            Draft::new(&ToolCall::of(&ok_call, true), at),
            format!(
                "{{\"alias\":\"fs.read\",\"arguments\":{{\"value\":{{}}}},\"arguments_digest\":\"{EMPTY_DIGEST}\",\
                 \"at\":\"{TS}\",\"class\":null,\"content\":{{\"value\":[{{\"text\":\"2\",\"type\":\"text\"}}]}},\
                 \"dispatch\":\"true\",\"duration_us\":12,\"kind\":\"tool_call\",\"mission\":\"notes\",\
                 \"ok\":true,\"request_id\":7,\"seq\":1,\"started_at\":\"{TS}\",\"value\":{{\"value\":2}}}}"
            ),
        ),
        (
            Draft::new(&ToolCall::of(&tool_error, true), at),
            format!(
                "{{\"alias\":\"fs.read\",\"arguments\":null,\"arguments_digest\":null,\"at\":\"{TS}\",\
                 \"class\":\"mcp_tool_error\",\"content\":{{\"value\":[{{\"text\":\"no\",\"type\":\"text\"}}]}},\
                 \"dispatch\":\"true\",\"duration_us\":12,\"kind\":\"tool_call\",\"mission\":\"notes\",\
                 \"ok\":false,\"request_id\":7,\"seq\":1,\"started_at\":\"{TS}\",\"value\":null}}"
            ),
        ),
        (
            Draft::new(&ToolCall::of(&refused, true), at),
            format!(
                "{{\"alias\":\"fs.read\",\"arguments\":{{\"value\":{{}}}},\"arguments_digest\":\"{EMPTY_DIGEST}\",\
                 \"at\":\"{TS}\",\"class\":\"tool_not_granted\",\"content\":null,\"dispatch\":\"false\",\
                 \"duration_us\":12,\"kind\":\"tool_call\",\"mission\":\"notes\",\"ok\":false,\
                 \"request_id\":null,\"seq\":1,\"started_at\":\"{TS}\",\"value\":null}}"
            ),
        ),
        (
            Draft::new(&ModelCall::of(&answered, true), at),
            format!(
                "{{\"at\":\"{TS}\",\"class\":null,\"dispatch\":\"true\",\"duration_us\":9,\
                 \"finish_reason\":null,\"kind\":\"model_call\",\"message\":{{\"value\":\"{z}\"}},\"ok\":true,\
                 \"provider\":\"llm\",\"request_digest\":\"{EMPTY_DIGEST}\",\"seq\":1,\"started_at\":\"{TS}\",\
                 \"usage\":{{}}}}"
            ),
        ),
        (
            Draft::new(&Mission::of(&mission, true), at),
            format!(
                "{{\"at\":\"{TS}\",\"duration_us\":1500,\"error\":null,\"failure\":null,\
                 \"input\":{{\"value\":{{}}}},\"input_digest\":\"{EMPTY_DIGEST}\",\"kind\":\"mission\",\
                 \"mission\":\"notes\",\"op\":\"call\",\"result\":{{\"value\":\"{z}\"}},\"seq\":1,\
                 \"started_at\":\"{TS}\",\"target\":\"notes.find\"}}"
            ),
        ),
    ];
    for (draft, want) in table {
        assert_eq!(line(draft, 1), format!("{want}\n"));
    }
}

/// traces.md §6.3: which records hold a value a replay needs cut at the ceiling: the input, a tool's
/// arguments, value and content, a model's message, a mission's input and result; never with `replay`.
#[test]
fn cut_records() {
    let at = UNIX_EPOCH + AT;
    let big = json!("z".repeat(5_000));
    let call = ToolReturned {
        mission: "m".into(),
        alias: "a".into(),
        request_id: None,
        started_at: at,
        duration: Duration::ZERO,
        arguments: Some(json!({})),
        reply: ToolReply::Ok { value: Some(json!(1)), content: json!([]) },
    };
    let big_value = ToolReturned {
        reply: ToolReply::Ok { value: Some(big.clone()), content: json!([]) },
        ..call.clone()
    };
    let big_content =
        ToolReturned { reply: ToolReply::Ok { value: None, content: json!([big.clone()]) }, ..call.clone() };
    let big_error = ToolReturned {
        reply: ToolReply::Failed {
            class: FailureClass::McpToolError,
            dispatch: Dispatch::True,
            content: Some(json!([big.clone()])),
        },
        ..call.clone()
    };
    let big_arguments = ToolReturned { arguments: Some(json!({"a": big.clone()})), ..call.clone() };
    let cut = |returned: &ToolReturned, replay| Draft::new(&ToolCall::of(returned, replay), at).cut();
    assert!(!cut(&call, false));
    for (i, returned) in [&big_value, &big_content, &big_error, &big_arguments].into_iter().enumerate() {
        assert!(cut(returned, false), "row {i}");
        assert!(!cut(returned, true), "row {i}");
    }
    let model = ModelReturned {
        provider: "llm".into(),
        started_at: at,
        duration: Duration::ZERO,
        request_digest: None,
        reply: ModelReply::Failed { class: ModelFailure::Timeout, dispatch: Dispatch::Unknown },
    };
    assert!(!Draft::new(&ModelCall::of(&model, false), at).cut());
    let long = ModelReturned {
        reply: ModelReply::Ok { message: big.clone(), finish_reason: None, usage: json!({}) },
        ..model.clone()
    };
    assert!(Draft::new(&ModelCall::of(&long, false), at).cut());
    assert!(!Draft::new(&ModelCall::of(&long, true), at).cut());
    let mission = MissionEnded {
        mission: "m".into(),
        op: MissionOp::Eval,
        target: None,
        input: Some(big),
        started_at: at,
        duration: Duration::ZERO,
        failure: None,
        result: Some(json!(1)),
        error: None,
    };
    assert!(Draft::new(&Mission::of(&mission, false), at).cut());
    assert!(!Draft::new(&Mission::of(&mission, true), at).cut());
}

/// traces.md §5.3: a mission's `input_digest` is of its whole input in every trace, also when the value
/// field is cut; `null` when the input could not be taken.
#[test]
fn input_digest_of_the_whole_input() {
    let at = UNIX_EPOCH + AT;
    let long = "q".repeat(5_000);
    let mission = MissionEnded {
        mission: "m".into(),
        op: MissionOp::Eval,
        target: None,
        input: Some(json!(long)),
        started_at: at,
        duration: Duration::ZERO,
        failure: None,
        result: None,
        error: None,
    };
    let want = json!(digest_of(&format!("\"{long}\"")));
    for replay in [false, true] {
        let record: Value =
            serde_json::from_slice(&Draft::new(&Mission::of(&mission, replay), at).line(1).unwrap()).unwrap();
        assert_eq!(record["input_digest"], want, "replay {replay}");
    }
    let untaken = MissionEnded { input: None, ..mission };
    let record: Value =
        serde_json::from_slice(&Draft::new(&Mission::of(&untaken, false), at).line(1).unwrap()).unwrap();
    assert_eq!((&record["input"], &record["input_digest"]), (&Value::Null, &Value::Null));
}

/// traces.md §5.5 and §6.2: the forms of `run_end`'s `result`, largest first, and the digest of the whole
/// value whatever the form.
#[test]
fn result_forms() {
    let small = Publication::Value(json!({"k": 1}));
    let long = Publication::Value(json!("r".repeat(5_000)));
    let class = Publication::Class("fail");
    let marker = |bytes| Some(ValueField::Cut { bytes, prefix: String::new(), truncated: true });
    let cut = || {
        Some(ValueField::Cut { bytes: 5_002, prefix: format!("\"{}", "r".repeat(4_095)), truncated: true })
    };
    let small_value = json!({"k": 1});
    let long_value = json!("r".repeat(5_000));
    let published = Published::of(&small);
    assert_eq!(published.results(false), [Some(ValueField::Whole { value: &small_value }), marker(7)]);
    assert_eq!(published.results(true), [Some(ValueField::Whole { value: &small_value }), marker(7)]);
    let published = Published::of(&long);
    assert_eq!(published.results(false), [cut(), marker(5_002)]);
    assert_eq!(
        published.results(true),
        [Some(ValueField::Whole { value: &long_value }), cut(), marker(5_002)]
    );
    assert_eq!(Published::of(&class).results(true), [None]);
    for (publication, encoding) in [
        (&small, "{\"k\":1}".to_owned()),
        (&long, format!("\"{}\"", "r".repeat(5_000))),
        (&class, "\"fail\"".to_owned()),
    ] {
        assert_eq!(Published::of(publication).digest, digest_of(&encoding));
    }
}

/// traces.md §5.8: `listing`'s exact line, with a missing description and output schema `null` and an
/// output schema kept; the tools cut at the value ceiling without `replay` (the record is then cut, so
/// the run is `value_cut`) and whole with it.
#[test]
fn listing_lines() {
    use crate::apps::runtime::{ApiTool, ToolsListed};
    use crate::config::host::ToolEffect;
    use std::sync::Arc;

    let at = UNIX_EPOCH + AT;
    let tool = |alias: &str, description: Option<&str>, output: Option<Value>, effect| ApiTool {
        alias: alias.to_owned(),
        description: description.map(str::to_owned),
        input_schema: Arc::new(json!({"type": "object"})),
        output_schema: output.map(Arc::new),
        effect,
    };
    let listed = ToolsListed {
        mission: "default".to_owned(),
        tools: vec![
            tool("fs.read", Some("Reads."), Some(json!({"type": "string"})), ToolEffect::Read),
            tool("fs.write", None, None, ToolEffect::Write),
        ],
    };
    let tools = listed_tools(&listed.tools);
    for replay in [false, true] {
        let draft = Draft::new(&Listing::of(&listed, &tools, replay), at);
        assert!(!draft.cut());
        let want = format!(
            "{{\"at\":\"{TS}\",\"kind\":\"listing\",\"mission\":\"default\",\"seq\":2,\"tools\":{{\"value\":[\
             {{\"alias\":\"fs.read\",\"description\":\"Reads.\",\"effect\":\"read\",\"input_schema\":{{\"type\":\"object\"}},\"output_schema\":{{\"type\":\"string\"}}}},\
             {{\"alias\":\"fs.write\",\"description\":null,\"effect\":\"write\",\"input_schema\":{{\"type\":\"object\"}},\"output_schema\":null}}]}}}}\n"
        );
        assert_eq!(line(draft, 2), want);
    }
    let long = "d".repeat(VALUE_CEILING);
    let big = ToolsListed {
        mission: "default".to_owned(),
        tools: vec![tool("fs.read", Some(&long), None, ToolEffect::Read)],
    };
    let tools = listed_tools(&big.tools);
    let cut = Draft::new(&Listing::of(&big, &tools, false), at);
    assert!(cut.cut());
    let record: Value = serde_json::from_slice(&cut.line(2).unwrap()).unwrap();
    assert_eq!(record["tools"]["truncated"], json!(true));
    assert_eq!(record["tools"]["bytes"], json!(to_deterministic(&tools).len()));
    let whole = Draft::new(&Listing::of(&big, &tools, true), at);
    assert!(!whole.cut());
    let record: Value = serde_json::from_slice(&whole.line(2).unwrap()).unwrap();
    assert_eq!(record["tools"], json!({"value": tools}));
}
