//! A model-driven mission, `handle:agent{ goal, model, max_turns, result_schema }` (models.md §8): the
//! model is shown the goal and the mission's API as Luau text, answers through two function tools (run a
//! Luau chunk in the mission sandbox with `:eval` semantics, or return the final value), and sees each run's
//! value or failure as a bounded deterministic JSON tool message.
//!
//! Owns the loop, its exact messages and tools, the reply check (`agent_invalid_reply`) and the turn bound
//! (`agent_max_turns`). The conversation lives in a table of the workflow sandbox, so it counts against
//! `limits.memory_bytes`; every request and eval is a host call of the run, so the deadline, the interrupt
//! budget and cancellation apply as to any other (models.md §8.3). Does not own the request's wire form (the
//! model client), `:eval` (`missions`) or the API facts (`api`, `signature`).

use std::sync::Arc;

use mlua::{Lua, Table, Value as LuaValue};
use serde_json::{Map, Value};

use super::missions::{self, Invocation, MAX_EVAL_SOURCE_BYTES};
use super::models::{error_table, ModelPort, ModelReply};
use super::run::Run;
use super::signature;
use crate::apps::contracts::runtime_validator;
use crate::apps::luau::convert::{to_json, to_lua};
use crate::codes::model::ModelFailure;
use crate::codes::provider::Dispatch;
use crate::json::{as_integer, to_deterministic_string};

/// `max_turns` is 1..=32 (models.md §8.1).
pub const MAX_TURNS: i64 = 32;
/// `goal` is 1..=65,536 bytes.
pub const MAX_GOAL_BYTES: usize = 65_536;
/// A tool message's content is at most this many bytes; a longer one is replaced (models.md §8.4).
pub const MAX_TOOL_MESSAGE_BYTES: usize = 16_384;
/// The prefix a replaced tool message keeps.
pub const TOOL_MESSAGE_PREFIX_BYTES: usize = 4_096;

/// The two function tools' names.
pub const RUN_LUAU: &str = "run_luau";
pub const FINISH: &str = "finish";

/// The first lines of the system message (models.md §8.2); the mission's API follows.
pub const SYSTEM_INTRO: &str = "\
You solve the user's task by writing Luau programs that run in a sandbox.
Call run_luau with {\"source\": \"<a Luau chunk>\"} to run a program; the chunk's first return value comes back to you as JSON: {\"ok\":true,\"value\":…} or {\"ok\":false,\"error\":…}.
Call finish with {\"value\": <the answer>} once you have the answer.
A program reaches the tools below only through tool(alias, arguments); json.encode and json.decode are available; there is no io, os or print.
The API of the sandbox:
";

/// The options of one `handle:agent` call, checked.
struct Options {
    goal: String,
    model: String,
    max_turns: i64,
    result_schema: Option<Value>,
}

fn invalid(what: &str) -> mlua::Error {
    mlua::Error::runtime(format!("agent: {what}"))
}

fn options(lua: &Lua, port: &dyn ModelPort, value: &LuaValue) -> mlua::Result<Options> {
    let LuaValue::Table(t) = value else { return Err(invalid("the argument must be a table")) };
    let goal = match t.raw_get::<LuaValue>("goal")? {
        LuaValue::String(s) if (1..=MAX_GOAL_BYTES).contains(&s.as_bytes().len()) => {
            s.to_str().map(|s| s.to_owned()).map_err(|_| invalid("goal must be UTF-8"))?
        }
        _ => return Err(invalid("goal must be a string of 1..65536 bytes")),
    };
    let model = match t.raw_get::<LuaValue>("model")? {
        LuaValue::String(s) => s.to_str().map(|s| s.to_owned()).unwrap_or_default(),
        _ => String::new(),
    };
    if !port.declared(&model) {
        return Err(invalid("model must name a declared workflow model provider"));
    }
    let max_turns = match t.raw_get::<LuaValue>("max_turns")? {
        LuaValue::Integer(n) => n,
        LuaValue::Number(n) if n.fract() == 0.0 && n.abs() < 1e9 => n as i64,
        _ => 0,
    };
    if !(1..=MAX_TURNS).contains(&max_turns) {
        return Err(invalid("max_turns must be an integer 1..32"));
    }
    let result_schema = match t.raw_get::<LuaValue>("result_schema")? {
        LuaValue::Nil => None,
        schema => match to_json(lua, &schema) {
            Ok(schema @ Value::Object(_)) if runtime_validator(&schema).is_some() => Some(schema),
            _ => return Err(invalid("result_schema must be a JSON Schema object")),
        },
    };
    Ok(Options { goal, model, max_turns, result_schema })
}

/// The function tools offered on every turn (models.md §8.2).
fn tools(result_schema: Option<&Value>) -> Value {
    let object = |members: Vec<(&str, Value)>| {
        Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<String, Value>>())
    };
    let parameters = |name: &str, schema: Value| {
        object(vec![
            ("additionalProperties", Value::Bool(false)),
            ("properties", object(vec![(name, schema)])),
            ("required", Value::Array(vec![Value::from(name)])),
            ("type", Value::from("object")),
        ])
    };
    let source = object(vec![("type", Value::from("string"))]);
    let value = result_schema.cloned().unwrap_or_else(|| object(Vec::new()));
    Value::Array(vec![
        object(vec![
            (
                "description",
                Value::from("Runs a Luau chunk in the sandbox and returns its first return value."),
            ),
            ("name", Value::from(RUN_LUAU)),
            ("parameters", parameters("source", source)),
        ]),
        object(vec![
            ("description", Value::from("Ends the task with its final value.")),
            ("name", Value::from(FINISH)),
            ("parameters", parameters("value", value)),
        ]),
    ])
}

/// The system message's text for `mission`.
fn system_text(run: &Run, mission: &str) -> String {
    let functions = run.missions.get(mission).map(|env| env.functions().to_vec()).unwrap_or_default();
    let granted = run.granted_tools(mission);
    format!("{SYSTEM_INTRO}```luau\n{}```\n", signature::render(&functions, &granted))
}

/// One checked call of a reply.
enum Step {
    Run { id: String, source: String },
    Finish { id: String, value: Value },
}

/// models.md §8.4: every call of the reply names one of the two tools with its argument; otherwise the
/// reply is invalid and nothing of it runs.
fn steps(message: &Value) -> Option<Vec<Step>> {
    let calls = message.get("tool_calls")?.as_array()?;
    if calls.is_empty() {
        return None;
    }
    calls
        .iter()
        .map(|call| {
            let id = call.get("id")?.as_str()?.to_owned();
            let arguments = call.get("arguments")?;
            match call.get("name")?.as_str()? {
                RUN_LUAU => {
                    let source = arguments.get("source")?.as_str()?;
                    (source.len() <= MAX_EVAL_SOURCE_BYTES)
                        .then(|| Step::Run { id, source: source.to_owned() })
                }
                FINISH => Some(Step::Finish { id, value: arguments.get("value")?.clone() }),
                _ => None,
            }
        })
        .collect()
}

/// models.md §8.4: the tool message of one run, deterministic and bounded.
fn run_message(lua: &Lua, completed: bool, value: &LuaValue) -> String {
    let mut out = Map::new();
    out.insert("ok".into(), Value::Bool(completed));
    match (completed, to_json(lua, value)) {
        (true, Ok(v)) => {
            out.insert("value".into(), v);
        }
        // A value `:eval` returned has already crossed by value, so it converts; this is defence in depth.
        (true, Err(_)) => {
            out.insert("ok".into(), Value::Bool(false));
            let mut error = Map::new();
            error.insert("kind".into(), Value::from("error"));
            error.insert("message".into(), Value::from("the value cannot be converted to JSON"));
            out.insert("error".into(), Value::Object(error));
        }
        (false, v) => {
            out.insert("error".into(), v.unwrap_or(Value::Null));
        }
    }
    bounded(to_deterministic_string(&Value::Object(out)), completed)
}

/// A message over [`MAX_TOOL_MESSAGE_BYTES`] becomes `{"bytes","ok","prefix","truncated":true}`.
pub(super) fn bounded(text: String, ok: bool) -> String {
    if text.len() <= MAX_TOOL_MESSAGE_BYTES {
        return text;
    }
    let mut cut = TOOL_MESSAGE_PREFIX_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut out = Map::new();
    out.insert("bytes".into(), Value::from(text.len()));
    out.insert("ok".into(), Value::Bool(ok));
    out.insert("prefix".into(), Value::String(text[..cut].to_owned()));
    out.insert("truncated".into(), Value::Bool(true));
    to_deterministic_string(&Value::Object(out))
}

/// The tool message a final value that fails `result_schema` gets.
pub const RESULT_SCHEMA_MESSAGE: &str = r#"{"error":{"kind":"result_schema"},"ok":false}"#;

fn push(lua: &Lua, history: &Table, message: Value) -> mlua::Result<()> {
    history.raw_set(history.raw_len() + 1, to_lua(lua, &message)?)
}

fn text_message(role: &str, content: String, call: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), Value::from(role));
    m.insert("content".into(), Value::String(content));
    if let Some(id) = call {
        m.insert("tool_call_id".into(), Value::from(id));
    }
    Value::Object(m)
}

/// Running totals of the loop.
#[derive(Default)]
struct Totals {
    turns: i64,
    usage: [u64; 3],
}

impl Totals {
    fn add(&mut self, usage: &Value) {
        for (i, key) in ["prompt_tokens", "completion_tokens", "total_tokens"].iter().enumerate() {
            let n = usage.get(key).and_then(as_integer).and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
            self.usage[i] = self.usage[i].saturating_add(n);
        }
    }

    fn table(&self, lua: &Lua, result: &Table) -> mlua::Result<()> {
        result.raw_set("turns", self.turns)?;
        let usage = lua.create_table()?;
        usage.raw_set("prompt_tokens", self.usage[0])?;
        usage.raw_set("completion_tokens", self.usage[1])?;
        usage.raw_set("total_tokens", self.usage[2])?;
        result.raw_set("usage", usage)
    }
}

fn failed(lua: &Lua, totals: &Totals, class: ModelFailure, dispatch: Dispatch) -> mlua::Result<Table> {
    let result = lua.create_table()?;
    result.raw_set("ok", false)?;
    result.raw_set("error", error_table(lua, class, dispatch)?)?;
    totals.table(lua, &result)?;
    Ok(result)
}

/// `mission(name):agent(options)` in the workflow sandbox `lua` (models.md §8).
pub(super) fn run(lua: &Lua, run: &Arc<Run>, mission: &str, options_value: LuaValue) -> mlua::Result<Table> {
    let Some(port) = run.models.clone() else {
        return Err(invalid("model must name a declared workflow model provider"));
    };
    if !run.missions.contains_key(mission) {
        return Err(invalid("not a declared mission"));
    }
    let options = options(lua, port.as_ref(), &options_value)?;
    let validator = options.result_schema.as_ref().and_then(runtime_validator);
    let history = lua.create_table()?;
    push(lua, &history, text_message("system", system_text(run, mission), None))?;
    push(lua, &history, text_message("user", options.goal.clone(), None))?;
    let tools = to_lua(lua, &tools(options.result_schema.as_ref()))?;
    let mut totals = Totals::default();
    while totals.turns < options.max_turns {
        let request = lua.create_table()?;
        request.raw_set("messages", history.clone())?;
        request.raw_set("tools", tools.clone())?;
        request.raw_set("tool_choice", "required")?;
        let json = to_json(lua, &LuaValue::Table(request)).ok();
        let reply = run.call_model(port.as_ref(), &options.model, json)?;
        let (message, usage) = match reply {
            ModelReply::Ok { message, usage, .. } => (message, usage),
            ModelReply::Failed { class, dispatch } => return failed(lua, &totals, class, dispatch),
        };
        totals.turns += 1;
        totals.add(&usage);
        let Some(steps) = steps(&message) else {
            return failed(lua, &totals, ModelFailure::AgentInvalidReply, Dispatch::True);
        };
        push(lua, &history, message)?;
        for step in steps {
            match step {
                Step::Run { id, source } => {
                    let source = LuaValue::String(lua.create_string(&source)?);
                    let (completed, value) =
                        missions::invoke(lua, run, mission, Invocation::Eval { source })?;
                    let content = run_message(lua, completed, &value);
                    push(lua, &history, text_message("tool", content, Some(&id)))?;
                }
                Step::Finish { id, value } => {
                    if validator.as_ref().is_some_and(|v| !v.is_valid(&value)) {
                        push(
                            lua,
                            &history,
                            text_message("tool", RESULT_SCHEMA_MESSAGE.to_owned(), Some(&id)),
                        )?;
                        continue;
                    }
                    let result = lua.create_table()?;
                    result.raw_set("ok", true)?;
                    result.raw_set("value", to_lua(lua, &value)?)?;
                    totals.table(lua, &result)?;
                    return Ok(result);
                }
            }
        }
    }
    failed(lua, &totals, ModelFailure::AgentMaxTurns, Dispatch::True)
}
