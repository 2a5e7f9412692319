//! The startup probe of execution.md §12.7: each environment is loaded once in a throwaway sandbox with
//! the application's memory limit and one shared interrupt budget and deadline. The workflow's entry
//! component is loaded (with whatever it requires while loading) and must expose a function under the
//! entry name; every mission component is loaded. Every chunk must return a table.
//!
//! Owns the probe's stand-in host functions: `mission`, `tool` and `fail` raise, because host functions
//! never act while a module loads (execution.md §12.2), so the probe contacts nothing. The `json` library is
//! the real one (it is pure). Does not call the entry function.

use std::sync::Arc;

use mlua::{Lua, Table, Value};

use super::json_lib;
use super::sandbox::{Budget, Exhaustion, Sandbox};
use super::{CompiledLuau, Environment};
use crate::apps::error::{fail, AppError, AppErrorKind};

/// Which host globals an environment has (execution.md §12.4).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Workflow,
    Mission,
}

/// Runs the probe over every environment of `app`.
pub fn run(app: &CompiledLuau, memory_bytes: usize, budget: &Arc<Budget>) -> Result<(), AppError> {
    let outcome = probe_all(app, memory_bytes, budget);
    // However the chunks ended (a `pcall` may have swallowed the budget error), an exhausted budget
    // refuses the application.
    match budget.exhausted() {
        Some(Exhaustion::Interrupts) => fail(AppErrorKind::LuauBudgetExhausted),
        // The probe's budget has no cancellation flag; a deadline is the only other end.
        Some(Exhaustion::Deadline | Exhaustion::Cancelled) => fail(AppErrorKind::LuauTimeExceeded),
        None => outcome,
    }
}

fn probe_all(app: &CompiledLuau, memory_bytes: usize, budget: &Arc<Budget>) -> Result<(), AppError> {
    if let (Some(env), Some(entry)) = (&app.workflow, &app.entry) {
        let sandbox = probe_sandbox(env, memory_bytes, budget, Role::Workflow)?;
        let module =
            sandbox.require(&entry.component).map_err(|_| AppError::new(AppErrorKind::LuauProbeFailed))?;
        // The same lookup a call makes (metamethods included), run under the same budget.
        let function: Value =
            module.get(entry.function.as_str()).map_err(|_| AppError::new(AppErrorKind::LuauProbeFailed))?;
        if !matches!(function, Value::Function(_)) {
            return fail(AppErrorKind::LuauEntryMissing);
        }
    }
    for env in app.missions.values().filter(|env| env.components().next().is_some()) {
        let sandbox = probe_sandbox(env, memory_bytes, budget, Role::Mission)?;
        for component in env.components() {
            sandbox.require(&component.id).map_err(|_| AppError::new(AppErrorKind::LuauProbeFailed))?;
        }
    }
    Ok(())
}

fn probe_sandbox(
    env: &Arc<Environment>,
    memory_bytes: usize,
    budget: &Arc<Budget>,
    role: Role,
) -> Result<Sandbox, AppError> {
    Sandbox::new(env.clone(), memory_bytes, budget.clone(), |lua, globals, _| install(lua, globals, role))
        .map_err(|_| AppError::new(AppErrorKind::LuauSandbox))
}

/// The probe's host globals.
fn install(lua: &Lua, globals: &Table, role: Role) -> mlua::Result<()> {
    let refuse = |name: &'static str| {
        lua.create_function(move |_, ()| -> mlua::Result<()> {
            Err(mlua::Error::runtime(format!("{name} is not available while modules load")))
        })
    };
    match role {
        Role::Workflow => globals.raw_set("mission", refuse("mission")?)?,
        Role::Mission => globals.raw_set("tool", refuse("tool")?)?,
    }
    globals.raw_set("fail", refuse("fail")?)?;
    globals.raw_set("json", json_lib::library(lua)?)
}
