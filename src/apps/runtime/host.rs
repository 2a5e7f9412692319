//! The host globals of a run (execution.md §12.4, §12.5): `mission` in the workflow (its handles'
//! `:call`, `:eval`, `:api` and `:agent`, models.md §8), `model` in the workflow (its handles' `:chat`,
//! models.md §7), `tool` in missions,
//! `fail` and `json` in both, and the `pcall`/`xpcall` guard that makes the end of a run (or of a mission
//! invocation) uncatchable.
//!
//! Owns the guards every host function applies first: no acting while a module chunk loads
//! (execution.md §12.2), and the run's deadline and cancellation at the boundary (execution.md §12.8).
//! `mission` handles are built by a small Luau shim (compiled once per process) because a mission failure
//! must be raised as a Luau *table* (`{ kind = … }`), which a Rust callback cannot raise. The functions
//! are made once per Luau state ([`globals`]) and shared by its calls: each looks up the call in progress
//! ([`current_run`]) and the running sandbox, and keeps nothing of a call. Does not own mission invocations
//! (`missions`).

use std::sync::{Arc, OnceLock};
use std::time::{Instant, SystemTime};

use mlua::chunk::{ChunkMode, Compiler};
use mlua::{Function, Lua, Value as LuaValue};

use super::agent;
use super::api;
use super::missions::{self, Invocation};
use super::observe::ToolReturned;
use super::outcome::fail_detail;
use super::run::{current_run, ended, Run};
use super::tools::{ToolAnswer, ToolReply};
use crate::apps::luau::convert::to_json;
use crate::apps::luau::json_lib;
use crate::apps::luau::require::HOST_CHUNK_PREFIX;
use crate::apps::luau::sandbox::SandboxState;
use crate::apps::luau::vm::HostGlobals;
use crate::apps::luau::EnvironmentName;
use crate::codes::provider::{Dispatch, FailureClass};

/// The mission-handle shim. `raw_*` are the Rust host functions; a handle is a frozen table whose mission
/// name lives in a weak table the script cannot reach, so a handle cannot be forged or retargeted.
const HANDLE_SHIM: &str = r#"
local raw_mission, raw_call, raw_eval, raw_api, raw_agent = ...
local names = setmetatable({}, { __mode = "k" })
local function name_of(self)
  local name = names[self]
  if name == nil then error("not a mission handle", 3) end
  return name
end
local methods = {}
function methods.call(self, target, args)
  local ok, v = raw_call(name_of(self), target, args)
  if ok then return v end
  error(v, 0)
end
function methods.eval(self, source)
  local ok, v = raw_eval(name_of(self), source)
  if ok then return v end
  error(v, 0)
end
function methods.api(self)
  return raw_api(name_of(self))
end
function methods.agent(self, options)
  return raw_agent(name_of(self), options)
end
local meta = { __index = table.freeze(methods) }
table.freeze(meta)
return function(name)
  raw_mission(name)
  local handle = table.freeze(setmetatable({}, meta))
  names[handle] = name
  return handle
end
"#;

/// The model-handle shim (models.md §7.1): like a mission handle, a frozen table whose model name lives in
/// a weak table the script cannot reach.
const MODEL_SHIM: &str = r#"
local raw_model, raw_chat = ...
local names = setmetatable({}, { __mode = "k" })
local methods = {}
function methods.chat(self, request)
  local name = names[self]
  if name == nil then error("not a model handle", 2) end
  local reply, content, finish_reason, prompt, completion, total = raw_chat(name, request)
  if reply ~= nil then return reply end
  return {
    ok = true,
    message = { content = content, role = "assistant" },
    finish_reason = finish_reason,
    usage = { completion_tokens = completion, prompt_tokens = prompt, total_tokens = total },
  }
end
local meta = { __index = table.freeze(methods) }
table.freeze(meta)
return function(name)
  raw_model(name)
  local handle = table.freeze(setmetatable({}, meta))
  names[handle] = name
  return handle
end
"#;

/// The `pcall`/`xpcall` guard (execution.md §5.3, §12.5, §12.8). Interrupt points alone would let the
/// straight-line code after a caught error run until its next call or loop; the guard re-raises a caught
/// error once the sandbox may not go on (halted by `fail`, budget exhausted, deadline passed, cancelled) and
/// never calls an `xpcall` handler then, so no code of the script runs after the end, handlers included.
const GUARD_SHIM: &str = r#"
local raw_pcall, raw_xpcall, stopped = pcall, xpcall, ...
local function settle(ok, ...)
  if not ok and stopped() then error((...), 0) end
  return ok, ...
end
local function guarded_pcall(f, ...)
  return settle(raw_pcall(f, ...))
end
local function guarded_xpcall(f, handler, ...)
  if type(handler) ~= "function" then return raw_xpcall(f, handler, ...) end
  return settle(raw_xpcall(f, function(e)
    if stopped() then return e end
    return handler(e)
  end, ...))
end
return guarded_pcall, guarded_xpcall
"#;

/// A shim's bytecode, compiled once per process (execution.md §12.7: no per-call compilation of fixed code).
fn bytecode(cell: &'static OnceLock<Result<Vec<u8>, String>>, source: &str) -> mlua::Result<&'static [u8]> {
    match cell.get_or_init(|| Compiler::new().compile(source).map_err(|e| e.to_string())) {
        Ok(bytes) => Ok(bytes),
        Err(e) => Err(mlua::Error::runtime(format!("host shim: {e}"))),
    }
}

/// Runs a host shim chunk named `host/<name>` with `args`.
fn run_shim<R: mlua::FromLuaMulti>(
    lua: &Lua,
    cell: &'static OnceLock<Result<Vec<u8>, String>>,
    source: &str,
    name: &str,
    args: impl mlua::IntoLuaMulti,
) -> mlua::Result<R> {
    lua.load(bytecode(cell, source)?)
        .set_name(format!("={HOST_CHUNK_PREFIX}{name}"))
        .set_mode(ChunkMode::Binary)
        .call(args)
}

/// The host globals of both roles, made once per Luau state (execution.md §12.4): the workflow's `json`,
/// `fail` and `mission`; a mission's `json`, `fail`, `tool` and guarded `pcall`/`xpcall`.
pub(super) fn globals(lua: &Lua) -> mlua::Result<HostGlobals> {
    let json = LuaValue::Table(json_lib::library(lua)?);
    let (pcall, xpcall) = guard_functions(lua)?;
    Ok(HostGlobals {
        workflow: vec![
            ("json", json.clone()),
            ("fail", LuaValue::Function(workflow_fail(lua)?)),
            ("mission", LuaValue::Function(mission_handles(lua)?)),
            ("model", LuaValue::Function(model_handles(lua)?)),
        ],
        mission: vec![
            ("json", json),
            ("fail", LuaValue::Function(mission_fail(lua)?)),
            ("tool", LuaValue::Function(tool(lua)?)),
            ("pcall", LuaValue::Function(pcall)),
            ("xpcall", LuaValue::Function(xpcall)),
        ],
    })
}

/// The running sandbox and the run, for a host function called now.
fn context(lua: &Lua) -> mlua::Result<(SandboxState, Arc<Run>)> {
    let state = SandboxState::current(lua).ok_or_else(ended)?;
    Ok((state, current_run(lua)?))
}

/// The mission a mission sandbox belongs to.
fn mission_name(state: &SandboxState) -> mlua::Result<String> {
    match state.environment().name() {
        EnvironmentName::Mission(name) => Ok(name.clone()),
        EnvironmentName::Workflow => Err(ended()),
    }
}

/// The guarded `pcall` and `xpcall` of missions.
fn guard_functions(lua: &Lua) -> mlua::Result<(Function, Function)> {
    static GUARD: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let stopped = lua.create_function(|lua, ()| {
        let halted = SandboxState::current(lua).is_none_or(|s| s.is_halted());
        Ok(halted || current_run(lua).map_or(true, |run| run.budget.check().is_err()))
    })?;
    run_shim(lua, &GUARD, GUARD_SHIM, "guard", stopped)
}

/// execution.md §12.2: host functions that reach outside raise while any module chunk of their sandbox is
/// running; and none acts in a sandbox that `fail` halted.
fn guard(state: &SandboxState, name: &str) -> mlua::Result<()> {
    if state.is_loading() {
        return Err(mlua::Error::runtime(format!("{name} is not available while modules load")));
    }
    if state.is_halted() {
        return Err(ended());
    }
    Ok(())
}

/// The workflow's `fail`: ends the run.
fn workflow_fail(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(|lua, value: LuaValue| -> mlua::Result<()> {
        let (state, run) = context(lua)?;
        guard(&state, "fail")?;
        run.boundary()?;
        // execution.md §12.5: the run ends at once; the halt makes every later interrupt point raise, so
        // `pcall` cannot resume it, and `classify` reports the recorded detail whatever the code does next.
        run.record_fail(fail_detail(&value));
        state.halt();
        Err(mlua::Error::runtime("fail"))
    })
}

/// The workflow's `mission`: the handle shim over the four raw host functions.
fn mission_handles(lua: &Lua) -> mlua::Result<Function> {
    let raw_mission = lua.create_function(|lua, name: LuaValue| -> mlua::Result<()> {
        let (state, run) = context(lua)?;
        guard(&state, "mission")?;
        run.boundary()?;
        match &name {
            LuaValue::String(n) if n.to_str().is_ok_and(|n| run.missions.contains_key(&*n)) => Ok(()),
            _ => Err(mlua::Error::runtime("mission: not a declared mission")),
        }
    })?;
    let raw_call = lua.create_function(|lua, (name, target, args): (String, LuaValue, LuaValue)| {
        let (state, run) = context(lua)?;
        guard(&state, ":call")?;
        run.boundary()?;
        missions::invoke(lua, &run, &name, Invocation::Call { target, args })
    })?;
    let raw_eval = lua.create_function(|lua, (name, source): (String, LuaValue)| {
        let (state, run) = context(lua)?;
        guard(&state, ":eval")?;
        run.boundary()?;
        missions::invoke(lua, &run, &name, Invocation::Eval { source })
    })?;
    // execution.md §12.5: `:api()` ignores further arguments; it needs neither the mission sandbox nor
    // an upstream.
    let raw_api = lua.create_function(|lua, name: String| {
        let (state, run) = context(lua)?;
        guard(&state, ":api")?;
        run.boundary()?;
        api::value(lua, &run, &name)
    })?;
    // models.md §8: the agent loop runs its requests and evals as host calls of this run.
    let raw_agent = lua.create_function(|lua, (name, options): (String, LuaValue)| {
        let (state, run) = context(lua)?;
        guard(&state, ":agent")?;
        run.boundary()?;
        agent::run(lua, &run, &name, options)
    })?;
    static HANDLES: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    run_shim(lua, &HANDLES, HANDLE_SHIM, "mission", (raw_mission, raw_call, raw_eval, raw_api, raw_agent))
}

/// The workflow's `model`: the handle shim over `raw_model` (is the name declared?) and `raw_chat`
/// (models.md §7).
fn model_handles(lua: &Lua) -> mlua::Result<Function> {
    let raw_model = lua.create_function(|lua, name: LuaValue| -> mlua::Result<()> {
        let (state, run) = context(lua)?;
        guard(&state, "model")?;
        run.boundary()?;
        let declared = match (&name, &run.models) {
            (LuaValue::String(n), Some(port)) => n.to_str().is_ok_and(|n| port.declared(&n)),
            _ => false,
        };
        if declared {
            Ok(())
        } else {
            Err(mlua::Error::runtime("model: not a declared workflow model provider"))
        }
    })?;
    let raw_chat = lua.create_function(|lua, (name, request): (String, LuaValue)| {
        let (state, run) = context(lua)?;
        guard(&state, ":chat")?;
        run.boundary()?;
        let Some(port) = run.models.clone() else {
            return Err(mlua::Error::runtime("model: not a declared workflow model provider"));
        };
        let request = to_json(lua, &request).ok();
        // models.md §7.2: once the run is cancelled, nothing more is done with the answer.
        run.call_model(port.as_ref(), &name, request)?.into_shim(lua)
    })?;
    static MODELS: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    run_shim(lua, &MODELS, MODEL_SHIM, "model", (raw_model, raw_chat))
}

/// A mission's `fail`: ends the invocation.
fn mission_fail(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(|lua, value: LuaValue| -> mlua::Result<()> {
        let (state, run) = context(lua)?;
        guard(&state, "fail")?;
        run.boundary()?;
        // execution.md §12.5: copied by value; `nil` in the workflow when not convertible.
        run.record_mission_fail(&mission_name(&state)?, to_json(lua, &value).ok());
        state.halt();
        Err(mlua::Error::runtime("fail"))
    })
}

/// A mission's `tool` (execution.md §12.5).
fn tool(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(|lua, (alias, arguments): (LuaValue, LuaValue)| {
        let (state, run) = context(lua)?;
        guard(&state, "tool")?;
        run.boundary()?;
        let mission = mission_name(&state)?;
        let LuaValue::String(alias) = alias else {
            return Err(mlua::Error::runtime("tool: the alias must be a string"));
        };
        let alias = alias.to_str().map(|a| a.to_owned()).unwrap_or_default();
        // execution.md §12.5: `nil` means `{}`; anything that does not convert to a JSON object is
        // `mcp_request_invalid`, reported by the port after its grant check (providers.md §8.1 step 1).
        let arguments = match &arguments {
            LuaValue::Nil => Some(serde_json::Value::Object(Default::default())),
            other => to_json(lua, other).ok().filter(|v| matches!(v, serde_json::Value::Object(_))),
        };
        let started_at = SystemTime::now();
        let started = Instant::now();
        // Kept for the trace only (traces.md §5.4); an unobserved run copies nothing.
        let sent = run.observer.as_ref().and(arguments.clone());
        let answer = match &run.tools {
            Some(port) => port.call(&mission, &alias, arguments),
            // A run without a provider runtime (unit tests, provider-free tools) has no grants.
            None => ToolAnswer {
                reply: ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False),
                request_id: None,
            },
        };
        // execution.md §5.3: once the run is cancelled, nothing more is done with the answer.
        run.boundary()?;
        let reply = answer.reply;
        if let Some(observer) = &run.observer {
            observer.tool_returned(ToolReturned {
                mission,
                alias,
                request_id: answer.request_id,
                started_at,
                duration: started.elapsed(),
                arguments: sent,
                reply: reply.clone(),
            });
        }
        reply.table(lua)
    })
}
