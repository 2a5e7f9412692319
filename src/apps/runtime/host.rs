//! The host globals of a run (execution.md §12.4, §12.5): `mission` in the workflow, `tool` in missions,
//! `fail` and `json` in both, and the `pcall`/`xpcall` guard that makes the end of a run (or of a mission
//! invocation) uncatchable.
//!
//! Owns the guards every host function applies first: no acting while a module chunk loads
//! (execution.md §12.2), and the run's deadline and cancellation at the boundary (execution.md §12.8).
//! `mission` handles are built by a small Luau shim (compiled once per process) because a mission failure
//! must be raised as a Luau *table* (`{ kind = … }`), which a Rust callback cannot raise. Does not own
//! mission invocations (`missions`).

use std::sync::{Arc, OnceLock};

use mlua::chunk::{ChunkMode, Compiler};
use mlua::{Lua, Table, Value as LuaValue};

use super::call::{ended, Run};
use super::missions::{self, FailSlot, Invocation};
use super::outcome::fail_detail;
use super::tools::ToolReply;
use crate::apps::luau::convert::to_json;
use crate::apps::luau::json_lib;
use crate::apps::luau::sandbox::{SandboxState, HOST_CHUNK_PREFIX};
use crate::codes::provider::{Dispatch, FailureClass};

/// The mission-handle shim. `raw_*` are the Rust host functions; a handle is a frozen table whose mission
/// name lives in a weak table the script cannot reach, so a handle cannot be forged or retargeted.
const HANDLE_SHIM: &str = r#"
local raw_mission, raw_call, raw_eval = ...
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
local meta = { __index = table.freeze(methods) }
table.freeze(meta)
return function(name)
  raw_mission(name)
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

/// Replaces `pcall` and `xpcall` with the guard (before the built-ins are frozen).
fn install_guard(lua: &Lua, globals: &Table, state: SandboxState, run: Arc<Run>) -> mlua::Result<()> {
    static GUARD: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let stopped = lua.create_function(move |_, ()| Ok(state.is_halted() || run.budget.check().is_err()))?;
    let (pcall, xpcall): (mlua::Function, mlua::Function) =
        run_shim(lua, &GUARD, GUARD_SHIM, "guard", stopped)?;
    globals.raw_set("pcall", pcall)?;
    globals.raw_set("xpcall", xpcall)
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

/// The workflow's host globals: `json`, `fail` (ends the run) and `mission`.
pub(super) fn install_workflow(
    lua: &Lua,
    globals: &Table,
    state: SandboxState,
    run: Arc<Run>,
) -> mlua::Result<()> {
    globals.raw_set("json", json_lib::library(lua)?)?;
    let (s, r) = (state.clone(), run.clone());
    let fail = lua.create_function(move |_, value: LuaValue| -> mlua::Result<()> {
        guard(&s, "fail")?;
        r.boundary()?;
        // execution.md §12.5: the run ends at once; the halt makes every later interrupt point raise, so
        // `pcall` cannot resume it, and `classify` reports the recorded detail whatever the code does next.
        r.record_fail(fail_detail(&value));
        s.halt();
        Err(mlua::Error::runtime("fail"))
    })?;
    globals.raw_set("fail", fail)?;
    let (s, r) = (state.clone(), run.clone());
    let raw_mission = lua.create_function(move |_, name: LuaValue| -> mlua::Result<()> {
        guard(&s, "mission")?;
        r.boundary()?;
        match &name {
            LuaValue::String(n) if n.to_str().is_ok_and(|n| r.missions.contains_key(&*n)) => Ok(()),
            _ => Err(mlua::Error::runtime("mission: not a declared mission")),
        }
    })?;
    let (s, r) = (state.clone(), run.clone());
    let raw_call = lua.create_function(move |lua, (name, target, args): (String, LuaValue, LuaValue)| {
        guard(&s, ":call")?;
        r.boundary()?;
        missions::invoke(lua, &s, &r, &name, Invocation::Call { target, args })
    })?;
    let (s, r) = (state, run);
    let raw_eval = lua.create_function(move |lua, (name, source): (String, LuaValue)| {
        guard(&s, ":eval")?;
        r.boundary()?;
        missions::invoke(lua, &s, &r, &name, Invocation::Eval { source })
    })?;
    static HANDLES: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let make_handle: mlua::Function =
        run_shim(lua, &HANDLES, HANDLE_SHIM, "mission", (raw_mission, raw_call, raw_eval))?;
    globals.raw_set("mission", make_handle)
}

/// A mission's host globals: `json`, `fail` (ends the invocation) and `tool`.
pub(super) fn install_mission(
    lua: &Lua,
    globals: &Table,
    state: SandboxState,
    run: Arc<Run>,
    slot: FailSlot,
    mission: String,
) -> mlua::Result<()> {
    globals.raw_set("json", json_lib::library(lua)?)?;
    install_guard(lua, globals, state.clone(), run.clone())?;
    let (s, r) = (state.clone(), run.clone());
    let fail = lua.create_function(move |lua, value: LuaValue| -> mlua::Result<()> {
        guard(&s, "fail")?;
        r.boundary()?;
        // execution.md §12.5: copied by value; `nil` in the workflow when not convertible.
        slot.record(to_json(lua, &value).ok());
        s.halt();
        Err(mlua::Error::runtime("fail"))
    })?;
    globals.raw_set("fail", fail)?;
    let tool = lua.create_function(move |lua, (alias, arguments): (LuaValue, LuaValue)| {
        guard(&state, "tool")?;
        run.boundary()?;
        let LuaValue::String(alias) = alias else {
            return Err(mlua::Error::runtime("tool: the alias must be a string"));
        };
        let alias = alias.to_str().map(|a| a.to_owned()).unwrap_or_default();
        // execution.md §12.5: `nil` means `{}`; anything that does not convert to a JSON object is
        // `mcp_request_invalid`, reported by the port after its grant check (providers.md §8.1 step 1).
        let arguments = match &arguments {
            LuaValue::Nil => Some(crate::json::Value::Object(Default::default())),
            other => to_json(lua, other).ok().filter(|v| matches!(v, crate::json::Value::Object(_))),
        };
        let reply = match &run.tools {
            Some(port) => port.call(&mission, &alias, arguments),
            // A run without a provider runtime (unit tests, provider-free tools) has no grants.
            None => ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False),
        };
        // execution.md §5.3: once the run is cancelled, nothing more is done with the answer.
        run.boundary()?;
        reply.table(lua)
    })?;
    globals.raw_set("tool", tool)
}
