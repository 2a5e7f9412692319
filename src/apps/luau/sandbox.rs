//! One sandbox (execution.md §12.2, §12.4, §12.6): a fresh globals table for one environment within one
//! call, reading through to its role's frozen host table in the call's [`super::vm::Vm`], and the
//! `require` of execution.md §12.2 over bytecode compiled once at startup.
//!
//! Owns the module loader (declared dependencies only, one instance per sandbox, cycles refused), the
//! per-sandbox halt that `fail` sets, which sandbox of a call is running ([`Sandbox::enter`]), and the
//! startup probe's record of what each loaded module exports ([`Sandbox::recording`],
//! execution.md §12.5). Every chunk a sandbox loads gets the sandbox's globals table as its environment, so
//! a global one call writes lands in a table only that call has (execution.md §12.6). Does not own the
//! state, the budget or memory (`vm`), nor host functions (`apps::runtime`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, RegistryKey, Table, Value};

use super::vm::{Active, Bases, CallScope, Role};
use super::Environment;

/// How far up the stack `require` looks for the Lua function that called it (past `pcall` and other C
/// frames).
const MAX_CALLER_LEVELS: usize = 32;

/// The module slots of one sandbox.
enum Slot {
    Loading,
    Loaded(RegistryKey),
}

/// What host functions and the interrupt callback know of one sandbox.
pub(super) struct Core {
    env: Arc<Environment>,
    /// The sandbox's globals: the environment of every chunk it loads.
    globals: Table,
    slots: Mutex<BTreeMap<String, Slot>>,
    /// How many module chunks are running right now (nested `require`s count each).
    loading: AtomicUsize,
    /// Set by `fail`: every interrupt point of this sandbox raises until the host resumes it
    /// (execution.md §12.5).
    halted: AtomicBool,
    /// The startup probe's record of each loaded component's exported function names, taken as its
    /// chunk returned the module (execution.md §12.5 `handle:api()`); `None` in every sandbox of a call.
    exports: Option<Mutex<BTreeMap<String, Vec<String>>>>,
}

impl Core {
    pub(super) fn is_halted(&self) -> bool {
        self.halted.load(Ordering::Relaxed)
    }
}

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

/// Decrements the loading count however the chunk ends.
struct LoadingGuard<'a>(&'a Core);

impl<'a> LoadingGuard<'a> {
    fn enter(core: &'a Core) -> Self {
        core.loading.fetch_add(1, Ordering::Relaxed);
        LoadingGuard(core)
    }
}

impl Drop for LoadingGuard<'_> {
    fn drop(&mut self) {
        self.0.loading.fetch_sub(1, Ordering::Relaxed);
    }
}

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
        let globals = lua.create_table()?;
        globals.set_metatable(Some(meta))?;
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

/// `require(id)` of execution.md §12.2, one function for every sandbox of a state: `id` must be a declared
/// dependency of the component whose code calls it, or any component of the mission when called from an
/// `:eval` chunk; it loads into the running sandbox.
pub(super) fn require_function(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(move |lua, id: Value| {
        let Value::String(id) = id else { return Err(runtime("require expects a component id string")) };
        let id = id.to_str()?.to_owned();
        let core = lua
            .app_data_ref::<Active>()
            .and_then(|active| active.current())
            .ok_or_else(|| runtime("require is available during a call only"))?;
        let caller =
            calling_chunk(lua).ok_or_else(|| runtime("require is available to component code only"))?;
        if !core.env.may_require(&caller, &id) {
            return Err(runtime(format!("{caller} may not require {id:?}: not a declared dependency")));
        }
        load_module(lua, &core, &id)
    })
}

/// Chunks named `host/<name>` are the gateway's own Luau shims (the runtime's `pcall` guard, mission
/// handles): `require` looks past them, as past C frames, for the component that called it.
pub const HOST_CHUNK_PREFIX: &str = "host/";

/// The chunk name (without the leading `=`) of the nearest component or `:eval` function on the stack
/// above `require`.
fn calling_chunk(lua: &Lua) -> Option<String> {
    for level in 1..=MAX_CALLER_LEVELS {
        let frame = lua.inspect_stack(level, |d| {
            let source = d.source();
            let name = source.source.map(|s| s.trim_start_matches('=').to_owned());
            if source.what == "C" || name.as_deref().is_some_and(|n| n.starts_with(HOST_CHUNK_PREFIX)) {
                None
            } else {
                Some(name)
            }
        })?;
        if let Some(source) = frame {
            return source;
        }
    }
    None
}

/// Runs component `id`'s chunk once per sandbox; its one return value must be a table (execution.md §12.2).
fn load_module(lua: &Lua, core: &Core, id: &str) -> mlua::Result<Table> {
    let component = core.env.component(id).ok_or_else(|| runtime(format!("unknown component {id:?}")))?;
    {
        let mut slots = core.slots.lock().map_err(|_| runtime("module table unavailable"))?;
        match slots.get(id) {
            Some(Slot::Loaded(key)) => return lua.registry_value(key),
            Some(Slot::Loading) => {
                return Err(runtime(format!("component {id:?} is still loading (a dependency cycle)")))
            }
            None => {
                slots.insert(id.to_owned(), Slot::Loading);
            }
        }
    }
    let result = {
        let _guard = LoadingGuard::enter(core);
        lua.load(&component.bytecode[..])
            .set_name(format!("={}", component.chunk_name))
            .set_mode(ChunkMode::Binary)
            .set_environment(core.globals.clone())
            .call::<Value>(())
    };
    let mut slots = core.slots.lock().map_err(|_| runtime("module table unavailable"))?;
    match result {
        Ok(Value::Table(module)) => {
            if let Some(exports) = &core.exports {
                let names = super::exports::exported_names(&module)?;
                exports
                    .lock()
                    .map_err(|_| runtime("export record unavailable"))?
                    .insert(id.to_owned(), names);
            }
            slots.insert(id.to_owned(), Slot::Loaded(lua.create_registry_value(module.clone())?));
            Ok(module)
        }
        Ok(_) => {
            slots.remove(id);
            Err(runtime(format!("{} did not return a table", component.chunk_name)))
        }
        Err(e) => {
            slots.remove(id);
            Err(e)
        }
    }
}
