//! models.md §8: `handle:agent` through `run_workflow_with` and a scripted [`ModelPort`]: the options'
//! refusals (L1), the bound run message (L2), the run messages of a mission failure and of a value that
//! does not convert (L3, L4), a model failure mid-loop (L5), several calls in one reply (L6), and that
//! nothing of an invalid reply runs (L7). The black-box vectors AG1–AG5 are `tests/black_box/models.rs`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::luau::build_with;
use super::parse;
use crate::apps::luau::{CompiledLuau, ProbeLimits};
use crate::apps::runtime::{
    run_workflow_with, ApiTool, CallLimits, CancelToken, ModelPort, ModelReply, RunEnd, RunPorts, ToolAnswer,
    ToolPort, ToolReply,
};
use crate::codes::model::ModelFailure;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::json::to_deterministic_string;

/// Answers `chat` from a script and keeps every request.
#[derive(Default)]
struct Scripted {
    replies: Mutex<VecDeque<ModelReply>>,
    requests: Mutex<Vec<Value>>,
}

impl ModelPort for Scripted {
    fn declared(&self, name: &str) -> bool {
        name == "llm"
    }

    fn chat(&self, _: &str, request: Option<Value>) -> ModelReply {
        self.requests.lock().unwrap().push(request.unwrap_or(Value::Null));
        self.replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(ModelReply::Failed { class: ModelFailure::UpstreamError, dispatch: Dispatch::True })
    }
}

/// Counts `tool` calls; grants nothing.
#[derive(Default)]
struct Counting(AtomicUsize);

impl ToolPort for Counting {
    fn call(&self, _: &str, _: &str, _: Option<Value>) -> ToolAnswer {
        self.0.fetch_add(1, Ordering::SeqCst);
        ToolAnswer {
            reply: ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False),
            request_id: None,
        }
    }

    fn granted_tools(&self, _: &str) -> Vec<ApiTool> {
        Vec::new()
    }
}

fn reply(calls: &str) -> ModelReply {
    ModelReply::Ok {
        message: parse(&format!(r#"{{"role":"assistant","tool_calls":{calls}}}"#)),
        finish_reason: Some("tool_calls".into()),
        usage: parse(r#"{"completion_tokens":1,"prompt_tokens":2,"total_tokens":3}"#),
    }
}

fn run_luau(id: &str, source: &str) -> String {
    let arguments = to_deterministic_string(&parse(&format!(
        r#"{{"source":{}}}"#,
        to_deterministic_string(&Value::String(source.into()))
    )));
    format!(r#"{{"id":"{id}","name":"run_luau","arguments":{arguments}}}"#)
}

fn app(body: &str) -> CompiledLuau {
    let source = format!("local M = {{}}\nfunction M.run(input)\n{body}\nend\nreturn M\n");
    let mission = "local M = {}\nfunction M.f() return 1 end\nreturn M\n";
    build_with(
        &[("app", &source, &[])],
        "app.run",
        &[("m", mission, &[])],
        ProbeLimits::for_application(16_777_216),
    )
    .unwrap()
}

/// Runs `body` with the scripted `replies`; the run's JSON, the requests the port saw, the `tool` calls.
fn run(body: &str, replies: Vec<ModelReply>) -> (Result<String, RunEnd>, Vec<Value>, usize) {
    let models = Arc::new(Scripted { replies: Mutex::new(replies.into()), ..Scripted::default() });
    let tools = Arc::new(Counting::default());
    let ports = RunPorts { tools: Some(tools.clone()), models: Some(models.clone()), observer: None };
    let limits = CallLimits::for_application(16_777_216, Instant::now() + Duration::from_secs(60));
    let end = run_workflow_with(&app(body), &parse("{}"), limits, &CancelToken::new(), ports);
    let json = match end {
        RunEnd::Returned(value) => Ok(to_deterministic_string(&value)),
        other => Err(other),
    };
    let requests = models.requests.lock().unwrap().clone();
    (json, requests, tools.0.load(Ordering::SeqCst))
}

/// The content of the last tool message of `request`.
fn last_tool_message(request: &Value) -> String {
    let messages = request.get("messages").and_then(Value::as_array).unwrap();
    let last = messages.iter().rev().find(|m| m.get("role").and_then(Value::as_str) == Some("tool")).unwrap();
    last.get("content").and_then(Value::as_str).unwrap().to_owned()
}

// L1: each bad option raises a plain error (not a failure table) and nothing is sent.
#[test]
fn l1_bad_options_raise_before_anything_is_sent() {
    let long = "x".repeat(65_537);
    let table: &[(&str, String)] = &[
        ("not a table", "nil".into()),
        ("empty goal", r#"{goal = "", model = "llm", max_turns = 1}"#.into()),
        ("goal over 65,536 bytes", format!(r#"{{goal = "{long}", model = "llm", max_turns = 1}}"#)),
        ("undeclared model", r#"{goal = "g", model = "nope", max_turns = 1}"#.into()),
        ("max_turns 0", r#"{goal = "g", model = "llm", max_turns = 0}"#.into()),
        ("max_turns 33", r#"{goal = "g", model = "llm", max_turns = 33}"#.into()),
        ("max_turns 1.5", r#"{goal = "g", model = "llm", max_turns = 1.5}"#.into()),
        (
            "result_schema not a table",
            r#"{goal = "g", model = "llm", max_turns = 1, result_schema = 5}"#.into(),
        ),
        (
            "result_schema with an external reference",
            r#"{goal = "g", model = "llm", max_turns = 1, result_schema = {["$ref"] = "http://x/s.json"}}"#
                .into(),
        ),
    ];
    for (what, options) in table {
        let body = format!(
            "local ok, e = pcall(function() return mission('m'):agent({options}) end)\nreturn {{ok = ok, table = type(e) == 'table'}}"
        );
        let (json, requests, _) = run(&body, Vec::new());
        assert_eq!(json, Ok(r#"{"ok":false,"table":false}"#.to_owned()), "{what}");
        assert!(requests.is_empty(), "{what}: nothing sent");
    }
}

const AGENT: &str = "return mission('m'):agent({goal = 'g', model = 'llm', max_turns = 3})";

// L2–L4: the run messages of a long value, a mission failure and a value that does not convert.
#[test]
fn l2_l4_run_messages() {
    let long = run_luau("a", "return string.rep('é', 10000)");
    let fail = run_luau("b", "fail({ why = 'no' })");
    let function = run_luau("c", "return function() end");
    let finish = r#"[{"id":"d","name":"finish","arguments":{"value":true}}]"#;
    let replies =
        vec![reply(&format!("[{long}]")), reply(&format!("[{fail}]")), reply(&format!("[{function}]"))];
    let mut with_finish = replies;
    with_finish.push(reply(finish));
    let body = "return mission('m'):agent({goal = 'g', model = 'llm', max_turns = 4})";
    let (json, requests, _) = run(body, with_finish);
    let usage = r#""usage":{"completion_tokens":4,"prompt_tokens":8,"total_tokens":12}"#;
    assert_eq!(json, Ok(format!(r#"{{"ok":true,"turns":4,{usage},"value":true}}"#)));
    // L2: 10,000 × 'é' make a message of 20,022 bytes; its prefix is its first 4,096 bytes, which end on a
    // character boundary here (20 ASCII bytes, then 2,038 two-byte characters).
    let value = format!(r#"{{"ok":true,"value":"{}"}}"#, "é".repeat(10_000));
    let prefix = &value[..4_096];
    let want = format!(
        r#"{{"bytes":{},"ok":true,"prefix":{},"truncated":true}}"#,
        value.len(),
        to_deterministic_string(&Value::String(prefix.to_owned()))
    );
    assert_eq!(last_tool_message(&requests[1]), want, "L2");
    assert_eq!(
        last_tool_message(&requests[2]),
        r#"{"error":{"kind":"fail","value":{"why":"no"}},"ok":false}"#,
        "L3"
    );
    // L4: a value that does not cross by value is the mission failure of execution.md §14.3.
    let crossed =
        crate::json::decode(last_tool_message(&requests[3]).as_bytes(), crate::json::Limits::DOCUMENT);
    let crossed = crossed.unwrap();
    assert_eq!(crossed.get("ok"), Some(&Value::Bool(false)), "L4");
    assert_eq!(crossed.get("error").and_then(|e| e.get("kind")), Some(&Value::from("error")), "L4");
}

// L5: a model failure on the second turn ends the loop with its class, dispatch and the turns so far.
#[test]
fn l5_a_model_failure_ends_the_loop() {
    let replies = vec![
        reply(&format!("[{}]", run_luau("a", "return 1"))),
        ModelReply::Failed { class: ModelFailure::RateLimited, dispatch: Dispatch::True },
    ];
    let (json, requests, _) = run(AGENT, replies);
    let want = concat!(
        r#"{"error":{"code":"model_rate_limited","dispatch":"true","message":"Model rate limited","retryable":true},"#,
        r#""ok":false,"turns":1,"usage":{"completion_tokens":1,"prompt_tokens":2,"total_tokens":3}}"#
    );
    assert_eq!(json, Ok(want.to_owned()));
    assert_eq!(requests.len(), 2);
}

// L6: a run and the final value in one reply are one turn: the run, then the value.
#[test]
fn l6_several_calls_in_one_reply() {
    let calls = format!(
        r#"[{},{{"id":"f","name":"finish","arguments":{{"value":"done"}}}}]"#,
        run_luau("a", "return 1")
    );
    let (json, requests, _) = run(AGENT, vec![reply(&calls)]);
    assert_eq!(
        json,
        Ok(r#"{"ok":true,"turns":1,"usage":{"completion_tokens":1,"prompt_tokens":2,"total_tokens":3},"value":"done"}"#.to_owned())
    );
    assert_eq!(requests.len(), 1);
}

// L7: nothing of an invalid reply runs: a run followed by an unknown function, and a run without source.
#[test]
fn l7_nothing_of_an_invalid_reply_runs() {
    for calls in [
        format!(
            r#"[{},{{"id":"x","name":"bogus","arguments":{{}}}}]"#,
            run_luau("a", "return tool('x.y', {})")
        ),
        r#"[{"id":"a","name":"run_luau","arguments":{"code":"return 1"}}]"#.to_owned(),
    ] {
        let (json, _, tool_calls) = run(AGENT, vec![reply(&calls)]);
        let want = concat!(
            r#"{"error":{"code":"agent_invalid_reply","dispatch":"true","message":"Agent reply invalid","retryable":false},"#,
            r#""ok":false,"turns":1,"usage":{"completion_tokens":1,"prompt_tokens":2,"total_tokens":3}}"#
        );
        assert_eq!(json, Ok(want.to_owned()), "{calls}");
        assert_eq!(tool_calls, 0, "{calls}: nothing ran");
    }
}
