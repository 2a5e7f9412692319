//! The per-call state host functions find in the Luau state while a run is in progress
//! (execution.md §12.5, §12.6, §12.8): [`Run`], with the interrupt budget (with the deadline and the
//! cancellation flag), the mission sandboxes created so far ([`MissionSandbox`]) and the workflow's `fail`
//! detail, the ports, the observer, and one model call of the run (shared by `m:chat` and the agent loop).
//!
//! Its own file so that everything that acts within a run (`host`, `missions`, `agent`, `api`) names it
//! without importing the run's driver (`call`), and the ports (`tools`, `models`) stay below it. Does not
//! own the thread's state or the entry call (`call`), nor mission invocations (`missions`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use mlua::Lua;

use super::models::{ModelPort, ModelReply};
use super::observe::{ModelReturned, RunObserver, ToolsListed};
use super::tools::{ApiTool, ToolPort};
use crate::apps::luau::budget::Budget;
use crate::apps::luau::sandbox::Sandbox;
use crate::apps::luau::Environment;
use crate::json::value_digest;
use serde_json::Value;

/// The state of one run, shared by its host functions.
pub(super) struct Run {
    pub budget: Arc<Budget>,
    /// The declared missions and their compiled environments.
    pub missions: BTreeMap<String, Arc<Environment>>,
    /// Mission sandboxes, created at the first `:call`/`:eval` of each mission (execution.md §12.6).
    pub sandboxes: Mutex<BTreeMap<String, Arc<MissionSandbox>>>,
    /// `Some(detail)` once the workflow called `fail` (the first call wins; it ends the run).
    pub failed: Mutex<Option<Option<String>>>,
    /// The provider runtime's port for `tool` (execution.md §12.5); `None` without providers.
    pub tools: Option<Arc<dyn ToolPort>>,
    /// The model sites' port for `model` (models.md §7); `None` without workflow model providers.
    pub models: Option<Arc<dyn ModelPort>>,
    /// The trace's observer (traces.md §5); `None` when the call is not traced.
    pub observer: Option<Arc<dyn RunObserver>>,
    /// The missions whose granted tools' listed facts the observer has heard (traces.md §5.8: once per
    /// mission per run). Stays empty, and allocates nothing, without an observer.
    pub listed: Mutex<BTreeSet<String>>,
}

/// The error every host function raises once the run has ended (cancelled, deadline, budget, or the
/// workflow's `fail`). Its text never reaches a client.
pub(super) fn ended() -> mlua::Error {
    mlua::Error::runtime("the run has ended")
}

/// The run in progress in `lua`, for a host function.
pub(super) fn current_run(lua: &Lua) -> mlua::Result<Arc<Run>> {
    lua.app_data_ref::<Arc<Run>>().map(|run| run.clone()).ok_or_else(ended)
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

    /// Records mission `name`'s `fail(value)` for the invocation in progress.
    pub fn record_mission_fail(&self, name: &str, value: Option<Value>) {
        let mission = self.sandboxes.lock().ok().and_then(|s| s.get(name).cloned());
        if let Some(mission) = mission {
            mission.fail.record(value);
        }
    }

    /// The granted tools of `mission` with their listed facts, sorted by alias in byte order as
    /// `handle:api()` and the agent's signatures show them (execution.md §12.5, models.md §8.2). The first
    /// time a traced run is shown a mission's, the trace records them (traces.md §5.8), so a replay can
    /// show them again without acquisition.
    pub fn granted_tools(&self, mission: &str) -> Vec<ApiTool> {
        let mut granted = self.tools.as_ref().map(|port| port.granted_tools(mission)).unwrap_or_default();
        granted.sort_by(|a, b| a.alias.cmp(&b.alias));
        if let Some(observer) = &self.observer {
            let first =
                self.listed.lock().map(|mut listed| listed.insert(mission.to_owned())).unwrap_or(false);
            if first && !granted.is_empty() {
                observer.tools_listed(ToolsListed { mission: mission.to_owned(), tools: granted.clone() });
            }
        }
        granted
    }

    /// One model call of the run through `port`: the request, then the run's boundary (once the run is
    /// cancelled nothing more is done with the answer, execution.md §5.3), then the trace's record
    /// (traces.md §5.6). Shared by `m:chat` and the agent loop.
    pub fn call_model(
        &self,
        port: &dyn ModelPort,
        name: &str,
        request: Option<Value>,
    ) -> mlua::Result<ModelReply> {
        let started_at = SystemTime::now();
        let started = Instant::now();
        // traces.md §5.6: a traced run pays one digest of the request per model call; an untraced one nothing.
        let request_digest = self.observer.as_ref().and(request.as_ref()).map(value_digest);
        let reply = port.chat(name, request);
        self.boundary()?;
        if let Some(observer) = &self.observer {
            let duration = started.elapsed();
            observer.model_returned(ModelReturned {
                provider: name.to_owned(),
                started_at,
                duration,
                request_digest,
                reply: reply.clone(),
            });
        }
        Ok(reply)
    }
}

/// What the mission's `fail` recorded during the current invocation: `Some(value)` after `fail(value)`,
/// the value `None` when it was not convertible.
#[derive(Clone, Default)]
pub(super) struct FailSlot(Arc<Mutex<Option<Option<Value>>>>);

impl FailSlot {
    /// Records `fail(value)` (the first one of the invocation wins).
    pub fn record(&self, value: Option<Value>) {
        if let Ok(mut slot) = self.0.lock() {
            slot.get_or_insert(value);
        }
    }

    pub(super) fn take(&self) -> Option<Option<Value>> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// One mission's sandbox within one call.
pub(super) struct MissionSandbox {
    pub(super) sandbox: Sandbox,
    pub fail: FailSlot,
}
