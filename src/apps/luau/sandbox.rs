//! One sandbox (execution.md §12.2, §12.4, §12.6): a fresh globals table for one environment within one
//! call, reading through to its role's frozen host table in the call's [`super::vm::Vm`].
//!
//! Owns the per-sandbox halt that `fail` sets, which sandbox of a call is running ([`Sandbox::enter`]),
//! and the startup probe's sandboxes that record what each loaded module exports
//! ([`Sandbox::recording`], execution.md §12.5). Every chunk a sandbox loads gets the sandbox's globals
//! table as its environment, so a global one call writes lands in a table only that call has
//! (execution.md §12.6). Does not own the module loader (`require`), the state, the budget or memory
//! (`vm`), nor host functions (`apps::runtime`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, Table};

use super::active::{Active, Core};
use super::require::load_module;
use super::room::with_room;
use super::vm::{Bases, CallScope, Role};
use super::Environment;

/// The sandbox state host functions see: which environment, whether a module chunk is running
/// (execution.md §12.2: module loading is pure), and the halt that makes `fail` uncatchable
/// (execution.md §12.5).
#[derive(Clone)]
pub struct SandboxState(Arc<Core>);

impl SandboxState {
    /// The sandbox whose code is running in `lua` now, during a call.
    pub fn current(lua: &Lua) -> Option<SandboxState> {
        lua.app_data_ref::<Active>()?.current().map(SandboxState)
    }

    /// `true` while any module chunk of this sandbox is running.
    pub fn is_loading(&self) -> bool {
        self.0.loading.load(Ordering::Relaxed) > 0
    }

    /// Halts the sandbox: from now on every interrupt point raises, so `pcall` cannot resume the code.
    pub fn halt(&self) {
        self.0.halted.store(true, Ordering::Relaxed);
    }

    /// Lets the sandbox run again (a mission after its failed invocation ended).
    pub fn resume(&self) {
        self.0.halted.store(false, Ordering::Relaxed);
    }

    /// Whether the sandbox is halted.
    pub fn is_halted(&self) -> bool {
        self.0.is_halted()
    }

    /// The environment the sandbox loads components from.
    pub fn environment(&self) -> &Arc<Environment> {
        &self.0.env
    }
}

/// An upper bound of the heap an empty table takes (Luau's table header is well under it).
const NEW_TABLE_BOUND: usize = 256;

/// One fresh sandbox for one environment, within one call.
pub struct Sandbox {
    lua: Lua,
    core: Arc<Core>,
}

fn runtime(message: impl Into<String>) -> mlua::Error {
    mlua::Error::runtime(message.into())
}

impl Sandbox {
    /// A fresh sandbox of `role` for `env` in the call of `scope`.
    pub fn new(scope: &CallScope<'_>, env: Arc<Environment>, role: Role) -> mlua::Result<Sandbox> {
        Sandbox::in_call(scope.lua(), env, role)
    }

    /// [`Sandbox::new`] for the startup probe: it also records the exported function names of each module
    /// it loads, as the module's chunk returned it ([`Sandbox::recorded_exports`]).
    pub fn recording(scope: &CallScope<'_>, env: Arc<Environment>, role: Role) -> mlua::Result<Sandbox> {
        Sandbox::create(scope.lua(), env, role, Some(Mutex::new(BTreeMap::new())))
    }

    /// What [`Sandbox::recording`] recorded so far, by component id (empty for any other sandbox).
    pub fn recorded_exports(&self) -> mlua::Result<BTreeMap<String, Vec<String>>> {
        match &self.core.exports {
            Some(exports) => Ok(exports.lock().map_err(|_| runtime("export record unavailable"))?.clone()),
            None => Ok(BTreeMap::new()),
        }
    }

    /// [`Sandbox::new`] from inside a host function of the call (a mission's sandbox is created at its
    /// first invocation).
    pub fn in_call(lua: &Lua, env: Arc<Environment>, role: Role) -> mlua::Result<Sandbox> {
        Sandbox::create(lua, env, role, None)
    }

    fn create(
        lua: &Lua,
        env: Arc<Environment>,
        role: Role,
        exports: Option<Mutex<BTreeMap<String, Vec<String>>>>,
    ) -> mlua::Result<Sandbox> {
        if lua.app_data_ref::<Active>().is_none() {
            return Err(runtime("no call is in progress"));
        }
        let meta =
            lua.app_data_ref::<Bases>().ok_or_else(|| runtime("not a gateway state"))?.of(role).clone();
        // An empty table takes a few dozen bytes and runs no Luau code (`room::with_room`).
        let globals = with_room(lua, NEW_TABLE_BOUND, || {
            let globals = lua.create_table()?;
            globals.set_metatable(Some(meta))?;
            Ok::<_, mlua::Error>(globals)
        })?;
        let core = Core {
            env,
            globals,
            slots: Mutex::new(BTreeMap::new()),
            loading: AtomicUsize::new(0),
            halted: AtomicBool::new(false),
            exports,
        };
        Ok(Sandbox { lua: lua.clone(), core: Arc::new(core) })
    }

    /// The Luau state, for the runtime that calls into it.
    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// The state host functions see: loading, halt.
    pub fn state(&self) -> SandboxState {
        SandboxState(self.core.clone())
    }

    /// Makes this the running sandbox of the call until the guard is dropped, which restores the one
    /// before: the interrupt callback halts the running sandbox, and `require` loads into it.
    pub fn enter(&self) -> mlua::Result<Entered> {
        let active = self.lua.app_data_ref::<Active>().ok_or_else(|| runtime("no call is in progress"))?;
        let mut current = active.current.lock().map_err(|_| runtime("sandbox switch unavailable"))?;
        let previous = current.replace(self.core.clone());
        Ok(Entered { lua: self.lua.clone(), previous })
    }

    /// Loads component `id` on behalf of the host (no dependency restriction applies): runs its chunk the
    /// first time, returns the same module table afterwards. Enters the sandbox for the load.
    pub fn require(&self, id: &str) -> mlua::Result<Table> {
        let _entered = self.enter()?;
        load_module(&self.lua, &self.core, id)
    }

    /// Compiles `source` text as a chunk named `name` with this sandbox's globals (a mission's `:eval`,
    /// execution.md §12.5; bytecode is refused).
    pub fn load_text(&self, source: &[u8], name: &str) -> mlua::Result<Function> {
        self.lua
            .load(source)
            .set_name(format!("={name}"))
            .set_mode(ChunkMode::Text)
            .set_environment(self.core.globals.clone())
            .into_function()
    }
}

/// The running sandbox before [`Sandbox::enter`], restored on drop.
pub struct Entered {
    lua: Lua,
    previous: Option<Arc<Core>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        if let Some(active) = self.lua.app_data_ref::<Active>() {
            if let Ok(mut current) = active.current.lock() {
                *current = self.previous.take();
            }
        }
    }
}
