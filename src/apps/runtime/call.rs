//! One run (execution.md §12.3, §12.6, §12.8): the fresh workflow sandbox, the state every sandbox of
//! the call shares, the entry call and the conversion of its first return value.
//!
//! Owns [`Run`], the per-call state reachable from host functions: the interrupt budget (with the
//! deadline and the cancellation flag), the memory limit shared by all sandboxes, the mission sandboxes
//! created so far and the workflow's `fail` detail. Does not own the host functions (`host`), mission
//! invocations (`missions`) or classification (`outcome`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mlua::{Function, Lua, Value as LuaValue};

use super::missions::MissionSandbox;
use super::outcome::{self, Finished};
use super::tools::ToolPort;
use super::{host, CallLimits, CancelToken, FailCause, RunEnd};
use crate::apps::luau::convert::{to_json, to_lua};
use crate::apps::luau::sandbox::{Budget, Sandbox};
use crate::apps::luau::{CompiledLuau, Environment};
use crate::json::Value;

/// The state of one run, shared by its host functions.
pub(super) struct Run {
    pub budget: Arc<Budget>,
    /// `limits.memory_bytes`: all sandboxes of the call together (execution.md §12.8).
    pub memory_bytes: usize,
    /// The declared missions and their compiled environments.
    pub missions: BTreeMap<String, Arc<Environment>>,
    /// Mission sandboxes, created at the first `:call`/`:eval` of each mission (execution.md §12.6).
    pub sandboxes: Mutex<BTreeMap<String, Arc<MissionSandbox>>>,
    /// `Some(detail)` once the workflow called `fail` (the first call wins; it ends the run).
    pub failed: Mutex<Option<Option<String>>>,
    /// The provider runtime's port for `tool` (execution.md §12.5); `None` without providers.
    pub tools: Option<Arc<dyn ToolPort>>,
}

/// The error every host function raises once the run has ended (cancelled, deadline, budget, or the
/// workflow's `fail`). Its text never reaches a client.
pub(super) fn ended() -> mlua::Error {
    mlua::Error::runtime("the run has ended")
}

impl Run {
    /// execution.md §12.8: deadline and cancellation are checked at every host-function boundary; a halted
    /// workflow (after `fail`) may not act either.
    pub fn boundary(&self) -> mlua::Result<()> {
        self.budget.check().map_err(|_| ended())?;
        if self.failed.lock().map_err(|_| ended())?.is_some() {
            return Err(ended());
        }
        Ok(())
    }

    /// Records the workflow's `fail` detail (the first one wins).
    pub fn record_fail(&self, detail: Option<String>) {
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert(detail);
        }
    }

    /// The memory one sandbox may hold while the others hold `others` bytes: the call's limit is shared
    /// (execution.md §12.8). Only one sandbox of a call runs at a time (the workflow waits inside
    /// `:call`/`:eval`), so setting the running sandbox's limit to what the others leave is exact. Never 0,
    /// which mlua reads as "no limit".
    pub fn limit_beside(&self, others: usize) -> usize {
        self.memory_bytes.saturating_sub(others).max(1)
    }

    /// Bytes held beside the sandbox about to run: with `Some((workflow, m))`, the workflow's and every
    /// mission's but `m`'s (mission `m` is entered); with `None`, every mission's (the workflow resumes).
    /// When that leaves the running sandbox less than half the call's memory, the idle sandboxes are
    /// collected first, so that their garbage does not count against it (Luau has no emergency
    /// collection; see `sandbox::reclaim`).
    pub fn held_beside(&self, entering: Option<(&Lua, &str)>) -> usize {
        let held = |collect: bool| {
            let workflow = entering.map_or(0, |(workflow, _)| {
                if collect {
                    let _ = workflow.gc_collect();
                }
                workflow.used_memory()
            });
            let except = entering.map(|(_, m)| m);
            let Ok(sandboxes) = self.sandboxes.lock() else { return workflow };
            let missions: usize = sandboxes
                .iter()
                .filter(|(name, _)| Some(name.as_str()) != except)
                .map(|(_, m)| m.held(collect))
                .sum();
            workflow + missions
        };
        let first = held(false);
        if self.limit_beside(first) >= self.memory_bytes / 2 {
            return first;
        }
        held(true)
    }
}

/// The run behind [`super::run_workflow`].
pub(super) fn run(
    luau: &CompiledLuau,
    input: &Value,
    limits: CallLimits,
    cancel: &CancelToken,
    on_entry: &dyn Fn(),
    tools: Option<Arc<dyn ToolPort>>,
) -> RunEnd {
    let budget = Budget::with_cancel(limits.interrupts, limits.deadline, cancel.flag());
    if budget.check().is_err() {
        return RunEnd::Cancelled;
    }
    let (Some(env), Some(entry)) = (&luau.workflow, &luau.entry) else {
        return RunEnd::Failed { detail: None, cause: FailCause::UncaughtError };
    };
    let run = Arc::new(Run {
        budget,
        memory_bytes: limits.memory_bytes,
        missions: luau.missions.clone(),
        sandboxes: Mutex::new(BTreeMap::new()),
        failed: Mutex::new(None),
        tools,
    });
    let finished = execute(&run, env, &entry.component, &entry.function, input, on_entry);
    let failed = run.failed.lock().map(|f| f.clone()).unwrap_or(Some(None));
    let end = outcome::classify(&run.budget, limits.deadline, failed, finished);
    // execution.md §12.6: all sandboxes of the call are destroyed when the run settles (the workflow's went
    // with `execute`).
    if let Ok(mut sandboxes) = run.sandboxes.lock() {
        sandboxes.clear();
    }
    end
}

/// Creates the workflow sandbox, loads the entry component, calls the entry with the input table and
/// converts its first return value.
fn execute(
    run: &Arc<Run>,
    env: &Arc<Environment>,
    component: &str,
    function: &str,
    input: &Value,
    on_entry: &dyn Fn(),
) -> Finished {
    let sandbox = Sandbox::new(env.clone(), run.memory_bytes, run.budget.clone(), |lua, globals, state| {
        host::install_workflow(lua, globals, state, run.clone())
    })?;
    let lua: &Lua = sandbox.lua();
    // Metamethods included, as the startup probe looked it up (execution.md §12.7).
    let entry: LuaValue = sandbox.require(component)?.get(function)?;
    let LuaValue::Function(entry) = entry else {
        return Err(mlua::Error::runtime("the entry is not a function"));
    };
    let entry: Function = entry;
    let argument = to_lua(lua, input)?;
    run.boundary()?;
    on_entry();
    let result: LuaValue = entry.call(argument)?;
    // execution.md §5.3: once the run is cancelled, nothing more is done with its values.
    run.boundary()?;
    Ok(to_json(lua, &result))
}
