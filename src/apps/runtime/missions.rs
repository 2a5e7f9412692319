//! Mission sandboxes and their invocations (execution.md §12.5, §12.6, §14.3): `handle:call(target,
//! args)` and `handle:eval(source)` from the workflow.
//!
//! Owns the lazy creation of one sandbox per mission per call (reused by later invocations of that
//! call), the by-value crossing in both directions (JSON in between: fresh tables, array marks kept), the
//! switch of the running sandbox, and the failure tables
//! `{ kind = "fail", value = … }` / `{ kind = "error", message = … }`. Cancellation and budget exhaustion
//! are not mission failures: they surface as the run-ending error (execution.md §12.5). Does not own the host
//! globals inside a mission (`host`).

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use mlua::{Function, Lua, Table, Value as LuaValue};
use serde_json::Value;

use super::failure::LuauError;
use super::observe::{MissionEnded, MissionFailure, MissionOp};
use super::outcome::{is_memory_error, message};
use super::run::{FailSlot, MissionSandbox, Run};
use crate::apps::luau::convert::{to_json, to_lua};
use crate::apps::luau::sandbox::Sandbox;
use crate::apps::luau::vm::{collect_now, Role};
use crate::apps::luau::EnvironmentName;

/// execution.md §12.5: an `:eval` source is at most 262,144 bytes.
pub const MAX_EVAL_SOURCE_BYTES: usize = 262_144;

/// What the workflow asked of the mission.
pub(super) enum Invocation {
    Call { target: LuaValue, args: LuaValue },
    Eval { source: LuaValue },
}

/// The invocation, with its values already out of the workflow sandbox.
enum Prepared {
    Call { component: String, function: String, args: Option<Value> },
    Eval { source: Vec<u8> },
}

/// How an invocation did not complete normally (execution.md §12.5). An error carries the text the
/// workflow's failure table gets and, for the trace, the error's message and traceback (traces.md §5.3).
enum Failure {
    Fail(Option<Value>),
    Error(String, LuauError),
}

impl Failure {
    /// A failure the gateway raised itself, with no Luau frames.
    fn error(text: impl Into<String>) -> Failure {
        let text = text.into();
        let error = LuauError::text(&text);
        Failure::Error(text, error)
    }

    /// A Luau error of the mission's code (or of creating its sandbox).
    fn luau(error: &mlua::Error) -> Failure {
        Failure::Error(message(error), LuauError::of(error))
    }
}

/// Runs one invocation of mission `name` for the workflow sandbox `workflow`. Returns `(true, value)`
/// or `(false, failure table)`; the handle shim raises the table. Errs only when the run has ended (or
/// the workflow sandbox is out of memory for the answer).
pub(super) fn invoke(
    workflow: &Lua,
    run: &Arc<Run>,
    name: &str,
    invocation: Invocation,
) -> mlua::Result<(bool, LuaValue)> {
    let started = (SystemTime::now(), Instant::now());
    let op = match invocation {
        Invocation::Call { .. } => MissionOp::Call,
        Invocation::Eval { .. } => MissionOp::Eval,
    };
    let prepared = prepare(workflow, invocation);
    // What the trace says of the invocation (traces.md §5.3); an unobserved run copies nothing.
    let observed = run.observer.as_ref().map(|_| observed_input(&prepared));
    let outcome = prepared.and_then(|prepared| in_mission(workflow, run, name, prepared));
    // execution.md §12.5: cancellation and budget exhaustion end the whole run; they are not mission
    // failures.
    run.boundary()?;
    if let (Some(observer), Some((target, input))) = (&run.observer, observed) {
        let (failure, result, error) = match &outcome {
            Ok(value) => (None, Some(value.clone().unwrap_or(Value::Null)), None),
            Err(Failure::Fail(_)) => (Some(MissionFailure::Fail), None, None),
            Err(Failure::Error(_, error)) => (Some(MissionFailure::Error), None, Some(error.clone())),
        };
        observer.mission_ended(MissionEnded {
            mission: name.to_owned(),
            op,
            target,
            input,
            started_at: started.0,
            duration: started.1.elapsed(),
            failure,
            result,
            error,
        });
    }
    match outcome {
        Ok(None) => Ok((true, LuaValue::Nil)),
        Ok(Some(value)) => Ok((true, to_lua(workflow, &value)?)),
        Err(failure) => Ok((false, LuaValue::Table(failure_table(workflow, failure)?))),
    }
}

/// The trace's `target` and `input` of a prepared invocation (traces.md §5.3).
fn observed_input(prepared: &Result<Prepared, Failure>) -> (Option<String>, Option<Value>) {
    match prepared {
        Ok(Prepared::Call { component, function, args }) => {
            (Some(format!("{component}.{function}")), Some(args.clone().unwrap_or(Value::Null)))
        }
        Ok(Prepared::Eval { source }) => {
            (None, Some(Value::String(String::from_utf8_lossy(source).into_owned())))
        }
        Err(_) => (None, None),
    }
}

/// Takes the target, arguments or source out of the workflow sandbox (by value, execution.md §14.3).
fn prepare(workflow: &Lua, invocation: Invocation) -> Result<Prepared, Failure> {
    match invocation {
        Invocation::Call { target, args } => {
            let LuaValue::String(target) = target else {
                return Err(Failure::error(":call: the target must be a string"));
            };
            let target = target.to_str().map(|t| t.to_owned()).map_err(|_| unknown_target())?;
            // execution.md §12.5: "<component id>.<function name>", split at its only `.`.
            let mut parts = target.split('.');
            let (Some(component), Some(function), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(unknown_target());
            };
            let args = match args {
                LuaValue::Nil => None,
                other => Some(
                    to_json(workflow, &other).map_err(|e| Failure::error(format!(":call arguments: {e}")))?,
                ),
            };
            Ok(Prepared::Call { component: component.to_owned(), function: function.to_owned(), args })
        }
        Invocation::Eval { source } => {
            let LuaValue::String(source) = source else {
                return Err(Failure::error(":eval: the source must be a string"));
            };
            let source = source.as_bytes().to_vec();
            if source.len() > MAX_EVAL_SOURCE_BYTES {
                return Err(Failure::error(":eval: the source exceeds 262,144 bytes"));
            }
            Ok(Prepared::Eval { source })
        }
    }
}

fn unknown_target() -> Failure {
    Failure::error(":call: unknown target")
}

/// Runs the prepared invocation in the mission's sandbox and collects its fail record. The memory of
/// `limits.memory_bytes` is the state's, shared by every sandbox of the call (execution.md §12.8).
fn in_mission(
    workflow: &Lua,
    run: &Arc<Run>,
    name: &str,
    prepared: Prepared,
) -> Result<Option<Value>, Failure> {
    let mission = sandbox_of(workflow, run, name)?;
    let result = match mission.sandbox.enter() {
        Ok(_entered) => execute(&mission, name, prepared),
        Err(e) => Err(e),
    };
    // The invocation is over: a `fail` stops halting the sandbox, which later invocations reuse.
    let failed = mission.fail.take();
    mission.sandbox.state().resume();
    if result.as_ref().is_err_and(is_memory_error) {
        // What the mission dropped must not keep the workflow from building its failure table.
        collect_now(workflow);
    }
    match (failed, result) {
        (Some(value), _) => Err(Failure::Fail(value)),
        (None, Err(e)) => Err(Failure::luau(&e)),
        (None, Ok(value)) => Ok(value),
    }
}

fn execute(mission: &MissionSandbox, name: &str, prepared: Prepared) -> mlua::Result<Option<Value>> {
    let lua = mission.sandbox.lua();
    let result: LuaValue = match prepared {
        Prepared::Call { component, function, args } => {
            let module = mission.sandbox.require(&component)?;
            let LuaValue::Function(f) = module.get::<LuaValue>(function.as_str())? else {
                return Err(mlua::Error::runtime(format!(":call: {component}.{function} is not a function")));
            };
            let f: Function = f;
            let argument = match args {
                Some(args) => to_lua(lua, &args)?,
                None => LuaValue::Nil,
            };
            f.call(argument)?
        }
        Prepared::Eval { source } => {
            let chunk = EnvironmentName::Mission(name.to_owned()).eval_chunk_name().unwrap_or_default();
            mission.sandbox.load_text(&source, &chunk)?.call(())?
        }
    };
    match result {
        // execution.md §12.5: `nil` stays `nil`.
        LuaValue::Nil => Ok(None),
        other => {
            to_json(lua, &other).map(Some).map_err(|e| mlua::Error::runtime(format!("mission result: {e}")))
        }
    }
}

/// The mission's sandbox in this call: created at the first invocation, reused afterwards
/// (execution.md §12.6).
fn sandbox_of(workflow: &Lua, run: &Arc<Run>, name: &str) -> Result<Arc<MissionSandbox>, Failure> {
    let mut sandboxes = run
        .sandboxes
        .lock()
        .map_err(|poisoned| Failure::error(format!("mission sandboxes unavailable: {poisoned}")))?;
    if let Some(existing) = sandboxes.get(name) {
        return Ok(existing.clone());
    }
    let env = run.missions.get(name).ok_or_else(|| Failure::error("not a declared mission"))?;
    let sandbox = Sandbox::in_call(workflow, env.clone(), Role::Mission).map_err(|e| Failure::luau(&e))?;
    let mission = Arc::new(MissionSandbox { sandbox, fail: FailSlot::default() });
    sandboxes.insert(name.to_owned(), mission.clone());
    Ok(mission)
}

/// `{ kind = "fail", value = v }` or `{ kind = "error", message = text }` in the workflow sandbox.
fn failure_table(workflow: &Lua, failure: Failure) -> mlua::Result<Table> {
    let t = workflow.create_table()?;
    match failure {
        Failure::Fail(value) => {
            t.raw_set("kind", "fail")?;
            if let Some(value) = value {
                t.raw_set("value", to_lua(workflow, &value)?)?;
            }
        }
        Failure::Error(text, _) => {
            t.raw_set("kind", "error")?;
            t.raw_set("message", text)?;
        }
    }
    Ok(t)
}
