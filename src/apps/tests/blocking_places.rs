//! execution.md §12.5, models.md §7–§8: `tool`, `model(name):chat`, `handle:agent` and the mission
//! `:call`/`:eval` work from every place a script can call them, including places where a Luau coroutine
//! cannot yield (inside a metamethod, a `table.sort` comparator, a `string.gsub` callback, a `tostring`
//! of a `__tostring`, a module chunk run by `require`) and inside `pcall`/`xpcall`. A run that reaches a
//! provider must answer each the same however it waits for its upstream calls (issue 27): [`check_rows`]
//! takes the way a run is driven (today the run thread's), so any other way runs the same rows, with the
//! exact values each returns.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::luau::build_with;
use super::parse;
use crate::apps::luau::{CompiledLuau, ProbeLimits};
use crate::apps::runtime::{
    run_workflow_with, ApiTool, CallLimits, CancelToken, ModelPort, ModelReply, RunEnd, RunPorts, ToolAnswer,
    ToolPort, ToolReply,
};
use crate::codes::provider::{Dispatch, FailureClass};
use crate::json::to_deterministic_string;

/// Answers every `tool` with its arguments as the value; counts the calls.
#[derive(Default)]
pub(super) struct Echo(pub AtomicUsize);

impl ToolPort for Echo {
    fn call(&self, _: &str, _: &str, arguments: Option<Value>) -> ToolAnswer {
        self.0.fetch_add(1, Ordering::SeqCst);
        let reply = match arguments {
            Some(value) => ToolReply::Ok { value: Some(value), content: Value::Array(Vec::new()) },
            None => ToolReply::failed(FailureClass::McpRequestInvalid, Dispatch::False),
        };
        ToolAnswer { reply, request_id: Some(7) }
    }

    fn granted_tools(&self, _: &str) -> Vec<ApiTool> {
        Vec::new()
    }
}

/// Answers every `chat` with one assistant message that repeats the request's last message's content,
/// or, for a request with `tools`, a `finish` call (the agent loop's end, models.md §8).
#[derive(Default)]
pub(super) struct Parrot(pub AtomicUsize);

impl ModelPort for Parrot {
    fn declared(&self, name: &str) -> bool {
        name == "llm"
    }

    fn chat(&self, _: &str, request: Option<Value>) -> ModelReply {
        self.0.fetch_add(1, Ordering::SeqCst);
        let request = request.unwrap_or(Value::Null);
        let usage = parse(r#"{"completion_tokens":1,"prompt_tokens":2,"total_tokens":3}"#);
        if request.get("tools").is_some() {
            let call = r#"{"role":"assistant","tool_calls":[{"id":"f","name":"finish","arguments":{"value":"done"}}]}"#;
            return ModelReply::Ok { message: parse(call), finish_reason: Some("tool_calls".into()), usage };
        }
        let last = request
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("content"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut message = serde_json::Map::new();
        message.insert("content".into(), last);
        message.insert("role".into(), Value::from("assistant"));
        ModelReply::Ok { message: Value::Object(message), finish_reason: Some("stop".into()), usage }
    }
}

/// The mission `m`: `tool` from each place.
const MISSION: &str = r#"local M = {}
function M.top(args) return tool('t', args).value end
function M.pcalled() local ok, r = pcall(tool, 't', {p = 1}) return {ok = ok, v = r.value} end
function M.xpcalled()
  local ok, r = xpcall(function() return tool('t', {x = 1}) end, function(e) return e end)
  return {ok = ok, v = r.value}
end
function M.meta()
  local t = setmetatable({}, {__index = function(_, k) return tool('t', {k = k}).value.k end})
  return t.key
end
function M.arith()
  local v = setmetatable({}, {__add = function(_, n) return tool('t', {n = n}).value.n end})
  return v + 5
end
function M.sorted()
  local a, asked = {3, 1, 2}, 0
  table.sort(a, function(x, y) asked += tool('t', {x = x}).value.x * 0 + 1 return x < y end)
  return {a = a, asked = asked > 0}
end
function M.gsub()
  return (string.gsub('ab', '%w', function(c) return tool('t', {c = c .. c}).value.c end))
end
function M.str()
  return tostring(setmetatable({}, {__tostring = function() return tool('t', {s = 'S'}).value.s end}))
end
function M.loaded() return require('lib').v end
return M
"#;

/// The mission's `lib`: its chunk calls `tool` while it loads (execution.md §12.2 refuses it).
const MISSION_LIB: &str = r#"local ok, e = pcall(tool, 't', {})
return {v = {ok = ok, e = string.find(tostring(e), 'not available while modules load', 1, true) ~= nil}}
"#;

/// The workflow's `lib`: its chunk asks `model` while it loads (refused as well).
const WORKFLOW_LIB: &str = r#"local ok, e = pcall(function() return model('llm'):chat({messages = {}}) end)
return {v = {ok = ok, e = string.find(tostring(e), 'not available while modules load', 1, true) ~= nil}}
"#;

fn app(body: &str) -> CompiledLuau {
    let source = format!("local M = {{}}\nfunction M.run(input)\n{body}\nend\nreturn M\n");
    build_with(
        &[("app", &source, &["lib"]), ("lib", WORKFLOW_LIB, &[])],
        "app.run",
        &[("c", MISSION, &["lib"]), ("lib", MISSION_LIB, &[])],
        ProbeLimits::for_application(16_777_216),
    )
    .unwrap()
}

/// How a test drives a run with ports: today's run thread, or any other way a run that reaches a provider
/// may be driven; every way must give the same answers.
pub(super) type Drive<'a> = &'a dyn Fn(&CompiledLuau, RunPorts) -> RunEnd;

fn on_this_thread(luau: &CompiledLuau, ports: RunPorts) -> RunEnd {
    let limits = CallLimits::for_application(16_777_216, Instant::now() + Duration::from_secs(60));
    run_workflow_with(luau, &parse("{}"), limits, &CancelToken::new(), ports)
}

const CHAT: &str = "model('llm'):chat({messages = {{role = 'user', content = 'hi'}}})";

/// (what, workflow body, exact JSON returned, `tool` calls, `chat` calls).
fn rows() -> Vec<(&'static str, String, &'static str, usize, usize)> {
    let call = |target: &str| format!("return mission('m'):call('{target}', {{a = 1}})");
    vec![
        ("tool at the top of a mission function", call("c.top"), r#"{"a":1}"#, 1, 0),
        ("tool through pcall", call("c.pcalled"), r#"{"ok":true,"v":{"p":1}}"#, 1, 0),
        ("tool inside xpcall", call("c.xpcalled"), r#"{"ok":true,"v":{"x":1}}"#, 1, 0),
        ("tool in an __index metamethod", call("c.meta"), r#""key""#, 1, 0),
        ("tool in an __add metamethod", call("c.arith"), "5", 1, 0),
        ("tool in a table.sort comparator", call("c.sorted"), r#"{"a":[1,2,3],"asked":true}"#, 2, 0),
        ("tool in a string.gsub callback", call("c.gsub"), r#""aabb""#, 2, 0),
        ("tool in a __tostring", call("c.str"), r#""S""#, 1, 0),
        (
            "tool in a module chunk",
            call("c.loaded"),
            r#"{"e":true,"ok":false}"#,
            0,
            0,
        ),
        (
            "tool in :eval",
            "return mission('m'):eval(\"return tool('t', {e = 2}).value\")".into(),
            r#"{"e":2}"#,
            1,
            0,
        ),
        (
            ":call in a workflow __index metamethod",
            "local t = setmetatable({}, {__index = function(_, k) return mission('m'):call('c.top', {k = k}) end})\nreturn t.z".into(),
            r#"{"k":"z"}"#,
            1,
            0,
        ),
        (
            ":call in a workflow table.sort comparator",
            "local a = {2, 1}\ntable.sort(a, function(x, y) return mission('m'):call('c.top', {v = x}).v < mission('m'):call('c.top', {v = y}).v end)\nreturn a".into(),
            "[1,2]",
            2,
            0,
        ),
        (
            ":eval in a workflow string.gsub callback",
            "return (string.gsub('x', 'x', function() return mission('m'):eval(\"return tool('t', {g = 'G'}).value.g\") end))".into(),
            r#""G""#,
            1,
            0,
        ),
        ("chat at the top", format!("return {CHAT}.message.content"), r#""hi""#, 0, 1),
        (
            "chat through pcall",
            format!("local ok, r = pcall(function() return {CHAT} end)\nreturn {{ok, r.message.content}}"),
            r#"[true,"hi"]"#,
            0,
            1,
        ),
        (
            "chat in an __index metamethod",
            format!("local t = setmetatable({{}}, {{__index = function() return {CHAT}.message.content end}})\nreturn t.x"),
            r#""hi""#,
            0,
            1,
        ),
        (
            "chat in a table.sort comparator",
            format!("local a = {{2, 1}}\ntable.sort(a, function(x, y) local _ = {CHAT} return x < y end)\nreturn a"),
            "[1,2]",
            0,
            1,
        ),
        (
            "chat in a string.gsub callback",
            format!("return (string.gsub('x', 'x', function() return {CHAT}.message.content end))"),
            r#""hi""#,
            0,
            1,
        ),
        (
            "chat in a __tostring",
            format!("return tostring(setmetatable({{}}, {{__tostring = function() return {CHAT}.message.content end}}))"),
            r#""hi""#,
            0,
            1,
        ),
        (
            "chat in a module chunk",
            "return require('lib').v".into(),
            r#"{"e":true,"ok":false}"#,
            0,
            0,
        ),
        (
            "agent at the top",
            "return mission('m'):agent({goal = 'g', model = 'llm', max_turns = 2}).value".into(),
            r#""done""#,
            0,
            1,
        ),
        (
            "agent in an __index metamethod",
            "local t = setmetatable({}, {__index = function() return mission('m'):agent({goal = 'g', model = 'llm', max_turns = 2}).value end})\nreturn t.x".into(),
            r#""done""#,
            0,
            1,
        ),
    ]
}

/// Runs every row through `drive` and checks its exact answer and the upstream calls it made.
pub(super) fn check_rows(drive: Drive<'_>) {
    for (what, body, want, tools, chats) in rows() {
        let (echo, parrot) = (Arc::new(Echo::default()), Arc::new(Parrot::default()));
        let ports = RunPorts { tools: Some(echo.clone()), models: Some(parrot.clone()), observer: None };
        let got = match drive(&app(&body), ports) {
            RunEnd::Returned(value) => Ok(to_deterministic_string(&value)),
            other => Err(other),
        };
        assert_eq!(got, Ok(want.to_owned()), "{what}");
        assert_eq!(echo.0.load(Ordering::SeqCst), tools, "{what}: tool calls");
        assert_eq!(parrot.0.load(Ordering::SeqCst), chats, "{what}: chat calls");
    }
}

#[test]
fn every_place_answers_on_a_run_thread() {
    check_rows(&on_this_thread);
}
