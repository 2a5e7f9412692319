//! The startup probe of execution.md §12.7: each environment is loaded once in a throwaway sandbox with
//! the application's memory limit and one shared interrupt budget and deadline. The workflow's entry
//! component is loaded (with whatever it requires while loading) and must expose a function under the
//! entry name; every mission component is loaded. Every chunk must return a table.
//!
//! Owns the probe's stand-in host functions: `mission`, `model`, `tool` and `fail` raise, because host functions
//! never act while a module loads (execution.md §12.2), so the probe contacts nothing. The `json` library is
//! the real one (it is pure). Mission sandboxes record each module's exported function names as its chunk
//! returned it, which the probe joins with the scanned doc comments into the mission's `functions` of
//! `handle:api()` (execution.md §12.5; the scan itself is `exports`). Does not call the entry function.

use std::sync::Arc;

use mlua::{Lua, Value};

use super::budget::{Budget, Exhaustion};
use super::exports;
use super::json_lib;
use super::sandbox::Sandbox;
use super::vm::{CallScope, HostGlobals, Role, Vm};
use super::{CompiledLuau, Environment};
use crate::apps::error::{fail, AppDetail, AppError, AppErrorKind};

/// Runs the probe over every environment of `app`, in a state of its own.
pub fn run(app: &CompiledLuau, memory_bytes: usize, budget: &Arc<Budget>) -> Result<(), AppError> {
    let mut vm = Vm::new(install).map_err(|e| failed(AppErrorKind::LuauSandbox, &e))?;
    let outcome = match vm.begin(budget.clone(), memory_bytes) {
        Ok(scope) => probe_all(&scope, app),
        Err(e) => Err(failed(AppErrorKind::LuauSandbox, &e)),
    };
    // However the chunks ended (a `pcall` may have swallowed the budget error), an exhausted budget
    // refuses the application.
    match budget.exhausted() {
        Some(Exhaustion::Interrupts) => fail(AppErrorKind::LuauBudgetExhausted),
        // The probe's budget has no cancellation flag; a deadline is the only other end.
        Some(Exhaustion::Deadline | Exhaustion::Cancelled | Exhaustion::SliceEnded) => {
            fail(AppErrorKind::LuauTimeExceeded)
        }
        None => outcome,
    }
}

fn probe_all(scope: &CallScope<'_>, app: &CompiledLuau) -> Result<(), AppError> {
    if let (Some(env), Some(entry)) = (&app.workflow, &app.entry) {
        let sandbox = probe_sandbox(scope, env, Role::Workflow)?;
        let module = sandbox.require(&entry.component).map_err(|e| load_failed(&e))?;
        // The same lookup a call makes (metamethods included), run under the same budget.
        let function: Value = module.get(entry.function.as_str()).map_err(|e| load_failed(&e))?;
        if !matches!(function, Value::Function(_)) {
            return fail(AppErrorKind::LuauEntryMissing);
        }
    }
    for env in app.missions.values().filter(|env| env.components().next().is_some()) {
        // The recording sandbox keeps each module's exported function names as its chunk returned it,
        // for `handle:api()` (execution.md §12.5): computed here, once, never at run time.
        let sandbox = Sandbox::recording(scope, env.clone(), Role::Mission)
            .map_err(|e| failed(AppErrorKind::LuauSandbox, &e))?;
        for component in env.components() {
            sandbox.require(&component.id).map_err(|e| load_failed(&e))?;
        }
        let exports = sandbox.recorded_exports().map_err(|e| load_failed(&e))?;
        let docs = env.components().map(|c| (c.id.as_str(), &c.docs));
        env.set_functions(exports::functions(docs, &exports));
    }
    Ok(())
}

/// A component that raised while it loaded: Luau's message, whose `<chunk>:<line>:` names the component's
/// file (execution.md §12.2), for `ptc check` and `ptc pin` (lifecycle.md §1.5). Bounded, and only the
/// first line: the probe runs no host function, so the text holds only what the module's own code had.
fn load_failed(error: &mlua::Error) -> AppError {
    failed(AppErrorKind::LuauProbeFailed, error)
}

/// A refusal `kind` of the probe with Luau's message (the first line, bounded).
fn failed(kind: AppErrorKind, error: &mlua::Error) -> AppError {
    let text = match error {
        mlua::Error::RuntimeError(text) => text.clone(),
        mlua::Error::CallbackError { cause, .. } => return failed(kind, cause),
        mlua::Error::MemoryError(_) => "not enough memory".to_owned(),
        other => other.to_string(),
    };
    let first = text.lines().next().unwrap_or_default();
    let mut end = first.len().min(LOAD_MESSAGE_BYTES);
    while !first.is_char_boundary(end) {
        end -= 1;
    }
    let detail = AppDetail::Load { message: first[..end].to_owned() };
    AppError::with_detail(kind, detail)
}

/// The most bytes of a load failure's message that are kept.
const LOAD_MESSAGE_BYTES: usize = 512;

fn probe_sandbox(scope: &CallScope<'_>, env: &Arc<Environment>, role: Role) -> Result<Sandbox, AppError> {
    Sandbox::new(scope, env.clone(), role).map_err(|e| failed(AppErrorKind::LuauSandbox, &e))
}

/// The probe's host globals.
fn install(lua: &Lua) -> mlua::Result<HostGlobals> {
    let refuse = |name: &'static str| -> mlua::Result<Value> {
        lua.create_function(move |_, ()| -> mlua::Result<()> {
            Err(mlua::Error::runtime(format!("{name} is not available while modules load")))
        })
        .map(Value::Function)
    };
    let json = Value::Table(json_lib::library(lua)?);
    Ok(HostGlobals {
        workflow: vec![
            ("mission", refuse("mission")?),
            ("model", refuse("model")?),
            ("fail", refuse("fail")?),
            ("json", json.clone()),
        ],
        mission: vec![("tool", refuse("tool")?), ("fail", refuse("fail")?), ("json", json)],
    })
}
