//! models.md §7.2: the table `m:chat` answers, built by the `:chat` shim from the parts of a usual answer
//! (issue 27) or whole by [`ModelReply::table`], is the same table: each reply shape through a real run,
//! against the table `ModelReply::table` builds for it, both as JSON.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use mlua::{Lua, Value as LuaValue};
use serde_json::Value;

use super::luau::build_with;
use super::parse;
use crate::apps::luau::convert::to_json;
use crate::apps::luau::ProbeLimits;
use crate::apps::runtime::{
    run_workflow_with, CallLimits, CancelToken, ModelPort, ModelReply, RunEnd, RunPorts,
};
use crate::codes::model::ModelFailure;
use crate::codes::provider::Dispatch;
use crate::json::to_deterministic_string;

/// Answers every `chat` with one fixed reply.
struct Fixed(Mutex<ModelReply>);

impl ModelPort for Fixed {
    fn declared(&self, name: &str) -> bool {
        name == "llm"
    }

    fn chat(&self, _: &str, _: Option<Value>) -> ModelReply {
        self.0.lock().unwrap().clone()
    }
}

/// The run's result for `body` against `reply`.
fn run(body: &str, reply: &ModelReply) -> String {
    let source = format!("local M = {{}}\nfunction M.run(input)\n{body}\nend\nreturn M\n");
    let app = build_with(&[("app", &source, &[])], "app.run", &[], ProbeLimits::for_application(16_777_216))
        .unwrap();
    let models = std::sync::Arc::new(Fixed(Mutex::new(reply.clone())));
    let ports = RunPorts { tools: None, models: Some(models), observer: None };
    let limits = CallLimits::for_application(16_777_216, Instant::now() + Duration::from_secs(60));
    match run_workflow_with(&app, &parse("{}"), limits, &CancelToken::new(), ports) {
        RunEnd::Returned(value) => to_deterministic_string(&value),
        other => panic!("the run ended {other:?}"),
    }
}

fn ok(message: &str, finish_reason: Option<&str>, usage: &str) -> ModelReply {
    ModelReply::Ok {
        message: parse(message),
        finish_reason: finish_reason.map(str::to_owned),
        usage: parse(usage),
    }
}

#[test]
fn the_shim_builds_the_table_model_reply_table_builds() {
    let usage = r#"{"completion_tokens":2,"prompt_tokens":9,"total_tokens":11}"#;
    let replies = [
        (
            "text and a finish reason",
            ok(r#"{"content":"hello there","role":"assistant"}"#, Some("stop"), usage),
        ),
        ("no finish reason", ok(r#"{"content":"x","role":"assistant"}"#, None, usage)),
        ("no content", ok(r#"{"role":"assistant"}"#, Some("length"), usage)),
        ("an empty content", ok(r#"{"content":"","role":"assistant"}"#, Some("stop"), usage)),
        (
            "counts of zero",
            ok(
                r#"{"content":"x","role":"assistant"}"#,
                None,
                r#"{"completion_tokens":0,"prompt_tokens":0,"total_tokens":0}"#,
            ),
        ),
        (
            "tool calls (whole)",
            ok(
                r#"{"role":"assistant","tool_calls":[{"arguments":{"a":[1,null]},"id":"c1","name":"add"}]}"#,
                Some("tool_calls"),
                usage,
            ),
        ),
        (
            "a usage of another shape (whole)",
            ok(r#"{"content":"x","role":"assistant"}"#, Some("stop"), r#"{"total_tokens":3}"#),
        ),
        (
            "a usage that is not an object (whole)",
            ok(r#"{"content":"x","role":"assistant"}"#, Some("stop"), "{}"),
        ),
        (
            "a failure (whole)",
            ModelReply::Failed { class: ModelFailure::RateLimited, dispatch: Dispatch::True },
        ),
    ];
    let lua = Lua::new();
    for (what, reply) in replies {
        let want = to_json(&lua, &LuaValue::Table(reply.table(&lua).unwrap())).unwrap();
        let chat = "model('llm'):chat({ messages = { { role = 'user', content = 'hi' } } })";
        assert_eq!(run(&format!("return {chat}"), &reply), to_deterministic_string(&want), "{what}");
        // The answer is a plain table: no metatable, and exactly the members its JSON shows.
        let shape = format!(
            "local r = {chat}\nlocal n = 0\nfor _ in pairs(r) do n += 1 end\n\
             return {{ meta = getmetatable(r) == nil, members = n, message = type(r.message) }}"
        );
        let members = want.as_object().unwrap().len();
        let message = if want.get("message").is_some() { "table" } else { "nil" };
        assert_eq!(
            run(&shape, &reply),
            format!(r#"{{"members":{members},"message":"{message}","meta":true}}"#),
            "{what}"
        );
    }
}
