//! One run (execution.md §12.3, §12.6, §12.8): the run thread's Luau state, the call scope in it, the
//! fresh workflow sandbox, the entry call and the conversion of its first return value.
//!
//! Owns the thread's state itself, built at the thread's first run, and the building of the call's
//! [`Run`]. Does not own the per-call state (`run`), the host functions (`host`), mission invocations
//! (`missions`) or classification (`outcome`).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mlua::{Function, Lua, Value as LuaValue};
use serde_json::Value;

use super::outcome::{self, Finished};
use super::run::Run;
use super::{host, CallLimits, CancelToken, FailCause, RunEnd, RunPorts};
use crate::apps::luau::budget::Budget;
use crate::apps::luau::chunks::interned;
use crate::apps::luau::convert::{lua_bound, to_json, to_lua};
use crate::apps::luau::room::with_room;
use crate::apps::luau::sandbox::Sandbox;
use crate::apps::luau::vm::{CallScope, Role, Vm};
use crate::apps::luau::{CompiledLuau, Environment};
use crate::config::manifest::Entry;

thread_local! {
    /// The Luau state of this run thread, built at its first run and reused by every later one
    /// (see `apps::luau::vm` for why that keeps calls apart).
    static STATE: RefCell<Option<Vm>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's Luau state, building it first if needed. A state a panicking run left
/// behind is dropped and built again.
fn with_state<R>(f: impl FnOnce(&mut Vm) -> R, unavailable: R) -> R {
    STATE.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else { return unavailable };
        if slot.as_ref().is_some_and(Vm::is_poisoned) {
            *slot = None;
        }
        if slot.is_none() {
            *slot = Vm::new(host::globals).ok();
        }
        match slot.as_mut() {
            Some(vm) => f(vm),
            None => unavailable,
        }
    })
}

/// Collects what finished runs left in this thread's state, when enough has gathered: for after the
/// answer is on its way.
pub(super) fn tidy() {
    STATE.with(|cell| {
        if let Ok(mut slot) = cell.try_borrow_mut() {
            if let Some(vm) = slot.as_mut() {
                vm.tidy();
            }
        }
    });
}

/// The run behind [`super::run_workflow`].
pub(super) fn run(
    luau: &CompiledLuau,
    input: &Value,
    limits: CallLimits,
    cancel: &CancelToken,
    on_entry: &dyn Fn(),
    ports: RunPorts,
    slice: Option<Duration>,
) -> RunEnd {
    if cancel.is_cancelled() || Instant::now() >= limits.deadline {
        return RunEnd::Cancelled;
    }
    let unavailable = RunEnd::Failed { detail: None, cause: FailCause::UncaughtError, error: None };
    let (Some(env), Some(entry)) = (&luau.workflow, &luau.entry) else { return unavailable };
    with_state(
        |vm| {
            // A slice counts from here: building the thread's state at its first run, or collecting what
            // earlier runs left in it, is not the run's.
            vm.tidy();
            let budget = match slice {
                Some(slice) => Budget::with_slice(limits.interrupts, limits.deadline, cancel.flag(), slice),
                None => Budget::with_cancel(limits.interrupts, limits.deadline, cancel.flag()),
            };
            let run = Arc::new(Run {
                budget,
                missions: luau.missions.clone(),
                sandboxes: Mutex::new(BTreeMap::new()),
                failed: Mutex::new(None),
                tools: ports.tools,
                models: ports.models,
                observer: ports.observer,
                listed: Mutex::new(BTreeSet::new()),
            });
            let finished = match vm.begin(run.budget.clone(), limits.memory_bytes) {
                Ok(scope) => in_scope(&scope, &run, env, entry, input, on_entry),
                Err(e) => Err(e),
            };
            let failed = run.failed.lock().map(|f| f.clone()).unwrap_or(Some(None));
            outcome::classify(&run.budget, limits.deadline, failed, finished)
        },
        unavailable,
    )
}

/// The run within its call scope: the run is where host functions find it, and every sandbox of the call
/// is gone when the scope ends (execution.md §12.6).
fn in_scope(
    scope: &CallScope<'_>,
    run: &Arc<Run>,
    env: &Arc<Environment>,
    entry: &Entry,
    input: &Value,
    on_entry: &dyn Fn(),
) -> Finished {
    let lua = scope.lua();
    lua.set_app_data(run.clone());
    let finished = execute(scope, run, env, entry, input, on_entry);
    if let Ok(mut sandboxes) = run.sandboxes.lock() {
        sandboxes.clear();
    }
    let _ = lua.remove_app_data::<Arc<Run>>();
    finished
}

/// Creates the workflow sandbox, loads the entry component, calls the entry with the input table and
/// converts its first return value.
fn execute(
    scope: &CallScope<'_>,
    run: &Arc<Run>,
    env: &Arc<Environment>,
    entry: &Entry,
    input: &Value,
    on_entry: &dyn Fn(),
) -> Finished {
    let sandbox = Sandbox::new(scope, env.clone(), Role::Workflow)?;
    let _entered = sandbox.enter()?;
    let lua: &Lua = sandbox.lua();
    // Metamethods included, as the startup probe looked it up (execution.md §12.7).
    let module = sandbox.require(&entry.component)?;
    let entry: LuaValue = module.get(interned(lua, &entry.function)?)?;
    let LuaValue::Function(entry) = entry else {
        return Err(mlua::Error::runtime("the entry is not a function"));
    };
    let entry: Function = entry;
    // No Luau code runs in the conversion: where the call has room for it, no protected call is needed.
    let argument = with_room(lua, lua_bound(input), || to_lua(lua, input))?;
    run.boundary()?;
    on_entry();
    let result: LuaValue = entry.call(argument)?;
    // execution.md §5.3: once the run is cancelled, nothing more is done with its values.
    run.boundary()?;
    Ok(to_json(lua, &result))
}
