//! One Luau sandbox (execution.md §12.4, §12.6, §12.8): a fresh Luau state for one environment, with the
//! execution.md §12.4 globals and nothing else, read-only built-ins, the call's interrupt budget and a memory
//! limit, and the `require` of execution.md §12.2 over bytecode compiled once at startup.
//!
//! Owns the global allow-list, the module loader (declared dependencies only, one instance per sandbox,
//! cycles refused), the shared [`Budget`] (interrupts, deadline, cancellation), the per-sandbox halt that
//! `fail` sets, and garbage collection ahead of the memory limit. Does not own host functions (`mission`,
//! `tool`, `fail`, `json`): whoever creates a sandbox installs them through the `install` hook, before the
//! built-ins are frozen. A fresh state per sandbox is what makes calls unable to see each other
//! (execution.md §12.6); it costs one state creation and a bytecode load per module actually required, never
//! a compilation.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaOptions, RegistryKey, StdLib, Table, Value, VmState};

use super::Environment;

/// execution.md §12.8: a call may pass at most 100,000,000 interrupt points across its sandboxes.
pub const INTERRUPT_BUDGET: u64 = 100_000_000;

/// The libraries of execution.md §12.4 (the base library is always present and is pruned below).
fn libraries() -> StdLib {
    StdLib::TABLE | StdLib::STRING | StdLib::UTF8 | StdLib::BIT | StdLib::MATH | StdLib::BUFFER
}

/// execution.md §12.4: the built-in globals every sandbox keeps. Everything else the Luau state starts
/// with (`print`, `collectgarbage`, `gcinfo`, `getfenv`, `setfenv`, `newproxy`, `loadstring`, `vector`,
/// `os`, `debug`, `coroutine`, …) is removed.
const KEPT_GLOBALS: &[&str] = &[
    "_G",
    "_VERSION",
    "assert",
    "bit32",
    "buffer",
    "error",
    "getmetatable",
    "ipairs",
    "math",
    "next",
    "pairs",
    "pcall",
    "rawequal",
    "rawget",
    "rawlen",
    "rawset",
    "select",
    "setmetatable",
    "string",
    "table",
    "tonumber",
    "tostring",
    "type",
    "typeof",
    "unpack",
    "utf8",
    "xpcall",
];

/// execution.md §12.4: `math` without `random` and `randomseed`.
const REMOVED_MATH: &[&str] = &["random", "randomseed"];

/// How far up the stack `require` looks for the Lua function that called it (past `pcall` and other C
/// frames).
const MAX_CALLER_LEVELS: usize = 32;

/// Why a budget refused to continue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhaustion {
    /// More interrupt points than the budget allows (execution.md §12.8).
    Interrupts,
    /// The deadline passed (the run's deadline, or the 5,000 ms startup bound of execution.md §12.7).
    Deadline,
    /// The run was cancelled from outside (execution.md §5.3: client gone, drain cutoff, front request).
    Cancelled,
}

/// The interrupt budget, deadline and cancellation flag shared by every sandbox of one call (or of one
/// startup probe). Once exhausted it stays exhausted: every later interrupt point raises again, so no loop
/// can iterate and no function can be entered, whatever `pcall` catches (execution.md §12.8).
#[derive(Debug)]
pub struct Budget {
    remaining: AtomicU64,
    deadline: Option<Instant>,
    /// Set from another thread to cancel the run; read at every interrupt point (execution.md §12.8).
    cancel: Option<Arc<AtomicBool>>,
    /// 0: running; 1: interrupts exhausted; 2: deadline passed; 3: cancelled.
    exhausted: AtomicU8,
    ticks: AtomicU64,
}

/// The clock is read once per this many interrupt points.
const CLOCK_EVERY: u64 = 1024;

impl Budget {
    /// A budget of `interrupts` interrupt points, ending at `deadline` when given.
    pub fn new(interrupts: u64, deadline: Option<Instant>) -> Arc<Budget> {
        Budget::build(interrupts, deadline, None)
    }

    /// A run's budget: like [`Budget::new`], and also exhausted once `cancel` is set.
    pub fn with_cancel(interrupts: u64, deadline: Instant, cancel: Arc<AtomicBool>) -> Arc<Budget> {
        Budget::build(interrupts, Some(deadline), Some(cancel))
    }

    fn build(interrupts: u64, deadline: Option<Instant>, cancel: Option<Arc<AtomicBool>>) -> Arc<Budget> {
        Arc::new(Budget {
            remaining: AtomicU64::new(interrupts),
            deadline,
            cancel,
            exhausted: AtomicU8::new(0),
            ticks: AtomicU64::new(0),
        })
    }

    /// Counts one interrupt point.
    pub fn charge(&self) -> Result<(), Exhaustion> {
        self.tick(true)
    }

    /// Checks like [`Budget::charge`] without spending a point: for the interrupts Luau raises inside its
    /// library functions, which are not interrupt points of execution.md §12.8.
    pub fn pass(&self) -> Result<(), Exhaustion> {
        self.tick(false)
    }

    fn tick(&self, spend: bool) -> Result<(), Exhaustion> {
        if let Some(e) = self.exhausted() {
            return Err(e);
        }
        self.check_cancel()?;
        if spend
            && self
                .remaining
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1))
                .is_err()
        {
            self.exhausted.store(1, Ordering::Relaxed);
            return Err(Exhaustion::Interrupts);
        }
        let tick = self.ticks.fetch_add(1, Ordering::Relaxed);
        if tick % CLOCK_EVERY == 0 {
            self.check_deadline()?;
        }
        Ok(())
    }

    /// Checks the deadline now (also used between compilation steps).
    pub fn check_deadline(&self) -> Result<(), Exhaustion> {
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => {
                let _ = self.exhausted.compare_exchange(0, 2, Ordering::Relaxed, Ordering::Relaxed);
                self.exhausted().map_or(Ok(()), Err)
            }
            _ => Ok(()),
        }
    }

    /// Checks the cancellation flag now (an atomic load, cheap enough for every interrupt point).
    pub fn check_cancel(&self) -> Result<(), Exhaustion> {
        if self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Acquire)) {
            let _ = self.exhausted.compare_exchange(0, 3, Ordering::Relaxed, Ordering::Relaxed);
            return self.exhausted().map_or(Ok(()), Err);
        }
        Ok(())
    }

    /// Everything at once, for host-function boundaries (execution.md §12.8): sticky state, cancellation, the
    /// clock.
    pub fn check(&self) -> Result<(), Exhaustion> {
        if let Some(e) = self.exhausted() {
            return Err(e);
        }
        self.check_cancel()?;
        self.check_deadline()
    }

    /// Whether, and why, the budget is exhausted.
    pub fn exhausted(&self) -> Option<Exhaustion> {
        match self.exhausted.load(Ordering::Relaxed) {
            0 => None,
            1 => Some(Exhaustion::Interrupts),
            2 => Some(Exhaustion::Deadline),
            _ => Some(Exhaustion::Cancelled),
        }
    }
}

/// The module slots of one sandbox.
#[derive(Default)]
struct Modules {
    slots: Mutex<BTreeMap<String, Slot>>,
    /// How many module chunks are running right now (nested `require`s count each).
    loading: AtomicUsize,
    /// Set by `fail`: every interrupt point of this sandbox raises until the host resumes it
    /// (execution.md §12.5).
    halted: AtomicBool,
    /// The sandbox's current memory limit (the runtime moves it as sandboxes of a call take turns).
    memory_limit: AtomicUsize,
    /// Heap size at which the next interrupt point runs a full collection (see [`reclaim`]).
    gc_trigger: AtomicUsize,
}

enum Slot {
    Loading,
    Loaded(RegistryKey),
}

/// The sandbox state host functions see: whether a module chunk is running, so that they can refuse to
/// act (execution.md §12.2: module loading is pure), the halt that makes `fail` uncatchable
/// (execution.md §12.5), and the memory limit (execution.md §12.8).
#[derive(Clone)]
pub struct SandboxState(Arc<Modules>);

impl SandboxState {
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
        self.0.halted.load(Ordering::Relaxed)
    }

    /// Sets the Luau heap limit of this sandbox's state `lua` (never 0, which mlua reads as "none").
    pub fn set_memory_limit(&self, lua: &Lua, bytes: usize) -> mlua::Result<()> {
        let bytes = bytes.max(1);
        self.0.memory_limit.store(bytes, Ordering::Relaxed);
        self.0.gc_trigger.store(midway(lua.used_memory(), bytes), Ordering::Relaxed);
        lua.set_memory_limit(bytes).map(|_| ())
    }
}

/// Halfway from `used` to `limit`.
fn midway(used: usize, limit: usize) -> usize {
    used + limit.saturating_sub(used) / 2
}

/// Luau has no emergency collection: an allocation over the limit fails even when most of the heap is
/// garbage the incremental collector has not reached yet, so a script churning through short-lived
/// strings would fail far below its live limit. At an interrupt point where the heap has passed halfway
/// from the live size to the limit, a full collection runs and the next trigger is set halfway again.
/// Runs no Luau code (Luau tables have no `__gc`).
fn reclaim(lua: &Lua, modules: &Modules) {
    if lua.used_memory() < modules.gc_trigger.load(Ordering::Relaxed) {
        return;
    }
    let _ = lua.gc_collect();
    let limit = modules.memory_limit.load(Ordering::Relaxed);
    modules.gc_trigger.store(midway(lua.used_memory(), limit), Ordering::Relaxed);
}

/// Decrements the loading count however the chunk ends.
struct LoadingGuard<'a>(&'a Modules);

impl<'a> LoadingGuard<'a> {
    fn enter(modules: &'a Modules) -> Self {
        modules.loading.fetch_add(1, Ordering::Relaxed);
        LoadingGuard(modules)
    }
}

impl Drop for LoadingGuard<'_> {
    fn drop(&mut self) {
        self.0.loading.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One fresh sandbox for one environment.
pub struct Sandbox {
    lua: Lua,
    env: Arc<Environment>,
    modules: Arc<Modules>,
}

fn runtime(message: impl Into<String>) -> mlua::Error {
    mlua::Error::runtime(message.into())
}

impl Sandbox {
    /// Creates the sandbox: execution.md §12.4 globals, `require`, whatever `install` adds (host functions,
    /// before the built-ins become read-only), then sandbox mode, the interrupt budget and the memory limit.
    pub fn new(
        env: Arc<Environment>,
        memory_limit: usize,
        budget: Arc<Budget>,
        install: impl FnOnce(&Lua, &Table, SandboxState) -> mlua::Result<()>,
    ) -> mlua::Result<Sandbox> {
        let lua = Lua::new_with(libraries(), LuaOptions::new())?;
        let globals = lua.globals();
        prune_globals(&globals)?;
        let modules = Arc::new(Modules::default());
        globals.raw_set("require", require_function(&lua, env.clone(), modules.clone())?)?;
        install(&lua, &globals, SandboxState(modules.clone()))?;
        // Built-in globals and libraries read-only; new globals land in a table local to this state.
        lua.sandbox(true)?;
        let state = SandboxState(modules.clone());
        lua.set_interrupt(move |lua| {
            if state.is_halted() {
                return Err(runtime("the invocation has ended"));
            }
            // Luau also calls the interrupt from inside its pattern matcher (`string.gsub`, `find`,
            // `match`, `gmatch`: once per position tried), where the running function is the C library
            // function. Those are not the interrupt points of execution.md §12.8 (function calls and loop
            // back-edges): they check the halt, the clock and cancellation, so a long match still ends at
            // the deadline, but spend no budget; charging them made a string loop exhaust 100,000,000
            // points in seconds (issue 14).
            let charged = if in_library_function(lua) { budget.pass() } else { budget.charge() };
            match charged {
                Ok(()) => {
                    reclaim(lua, &state.0);
                    Ok(VmState::Continue)
                }
                Err(Exhaustion::Interrupts) => Err(runtime("interrupt budget exhausted")),
                Err(Exhaustion::Deadline) => Err(runtime("deadline passed")),
                Err(Exhaustion::Cancelled) => Err(runtime("cancelled")),
            }
        });
        SandboxState(modules.clone()).set_memory_limit(&lua, memory_limit)?;
        Ok(Sandbox { lua, env, modules })
    }

    /// The Luau state, for the runtime that calls into it.
    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// The environment whose components this sandbox loads.
    pub fn environment(&self) -> &Arc<Environment> {
        &self.env
    }

    /// The state host functions see: loading, halt, memory limit.
    pub fn state(&self) -> SandboxState {
        SandboxState(self.modules.clone())
    }

    /// Loads component `id` on behalf of the host (no dependency restriction applies): runs its chunk the
    /// first time, returns the same module table afterwards.
    pub fn require(&self, id: &str) -> mlua::Result<Table> {
        load_module(&self.lua, &self.env, &self.modules, id)
    }
}

/// Whether the innermost running function is a C function: true only for the interrupts Luau raises from
/// inside its library code, never for the VM's own (those run in the frame of a Luau function).
fn in_library_function(lua: &Lua) -> bool {
    lua.inspect_stack(0, |frame| frame.source().what == "C").unwrap_or(false)
}

/// Removes every global outside the allow-list, and `math.random`/`math.randomseed`.
fn prune_globals(globals: &Table) -> mlua::Result<()> {
    let mut doomed = Vec::new();
    for pair in globals.pairs::<Value, Value>() {
        let (key, _) = pair?;
        let kept = match &key {
            Value::String(s) => s.to_str().is_ok_and(|s| KEPT_GLOBALS.contains(&&*s)),
            _ => false,
        };
        if !kept {
            doomed.push(key);
        }
    }
    for key in doomed {
        globals.raw_set(key, Value::Nil)?;
    }
    let math: Table = globals.raw_get("math")?;
    for name in REMOVED_MATH {
        math.raw_set(*name, Value::Nil)?;
    }
    Ok(())
}

/// `require(id)` of execution.md §12.2: `id` must be a declared dependency of the component whose code calls
/// it, or any component of the mission when called from an `:eval` chunk.
fn require_function(lua: &Lua, env: Arc<Environment>, modules: Arc<Modules>) -> mlua::Result<Function> {
    lua.create_function(move |lua, id: Value| {
        let Value::String(id) = id else { return Err(runtime("require expects a component id string")) };
        let id = id.to_str()?.to_owned();
        let caller =
            calling_chunk(lua).ok_or_else(|| runtime("require is available to component code only"))?;
        if !env.may_require(&caller, &id) {
            return Err(runtime(format!("{caller} may not require {id:?}: not a declared dependency")));
        }
        load_module(lua, &env, &modules, &id)
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
fn load_module(lua: &Lua, env: &Environment, modules: &Modules, id: &str) -> mlua::Result<Table> {
    let component = env.component(id).ok_or_else(|| runtime(format!("unknown component {id:?}")))?;
    {
        let mut slots = modules.slots.lock().map_err(|_| runtime("module table unavailable"))?;
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
        let _guard = LoadingGuard::enter(modules);
        lua.load(&component.bytecode[..])
            .set_name(format!("={}", component.chunk_name))
            .set_mode(ChunkMode::Binary)
            .call::<Value>(())
    };
    let mut slots = modules.slots.lock().map_err(|_| runtime("module table unavailable"))?;
    match result {
        Ok(Value::Table(module)) => {
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
