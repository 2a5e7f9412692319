//! The Luau state calls run in (execution.md §12.4, §12.6, §12.8): one state per run thread, built once,
//! whose base is frozen, and in which every call gets sandboxes no other call has touched.
//!
//! Owns the base (the execution.md §12.4 libraries, pruned, made read-only by Luau's own `luaL_sandbox`),
//! the two frozen host tables (a workflow's and a mission's globals: the kept built-ins, `require`, whatever
//! the host installs, and `_G` naming the table itself), the interrupt callback (budget, deadline,
//! cancellation, halt, collection ahead of the memory limit) and the memory limit of the call in progress.
//! A [`CallScope`] is one call: it sets the call's budget and limit, and gives out sandboxes
//! ([`super::sandbox::Sandbox`]), each a fresh, empty globals table that reads through to one host table.
//!
//! Why one state and not one per call: creating a Luau state with its libraries costs tens of
//! microseconds (mlua also compiles its own `require` chunk for every state), more than the whole HTTP path
//! of a call. What isolation needs is that nothing one call can write is visible to another
//! (execution.md §12.6): every table a call can reach and write is created for that call (its globals, its
//! module tables, its values), and everything shared is read-only (the built-in libraries, the string
//! metatable, the host tables, the array mark, the host functions, whose per-call state is looked up in
//! the call's scope, never kept). Does not own the host functions themselves nor the runtime's per-call
//! state (`apps::runtime`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mlua::{Lua, LuaOptions, LuaSerdeExt, StdLib, Table, Value, VmState};

use super::active::Active;
use super::budget::{Budget, Exhaustion};
use super::chunks::Chunks;
use super::require::require_function;

/// The libraries of execution.md §12.4 (the base library is always present and is pruned below).
fn libraries() -> StdLib {
    StdLib::TABLE | StdLib::STRING | StdLib::UTF8 | StdLib::BIT | StdLib::MATH | StdLib::BUFFER
}

/// execution.md §12.4: the built-in globals every sandbox keeps. Everything else the Luau state starts
/// with (`print`, `collectgarbage`, `gcinfo`, `getfenv`, `setfenv`, `newproxy`, `loadstring`, `vector`,
/// `os`, `debug`, `coroutine`, mlua's own `require`, …) is removed.
const KEPT_GLOBALS: &[&str] = &[
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

/// Garbage a finished call may leave before the next call's scope collects it first. It bounds how much
/// of a later call's `limits.memory_bytes` stale garbage can take until the collection ahead of the limit
/// (see [`reclaim`]) runs; it never lets a call hold more than its limit.
const GARBAGE_SLACK: usize = 64 * 1024;

/// Whose globals a sandbox has (execution.md §12.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `mission` (and no `tool`).
    Workflow,
    /// `tool` (and no `mission`).
    Mission,
}

/// The host globals of each role, made by the host once per state.
pub struct HostGlobals {
    pub workflow: Vec<(&'static str, Value)>,
    pub mission: Vec<(&'static str, Value)>,
}

/// What every sandbox of a state reads through to, by role: a frozen metatable whose `__index` is the
/// role's frozen host table.
pub(super) struct Bases {
    workflow: Table,
    mission: Table,
}

impl Bases {
    pub(super) fn of(&self, role: Role) -> &Table {
        match role {
            Role::Workflow => &self.workflow,
            Role::Mission => &self.mission,
        }
    }
}

/// One Luau state and its frozen base.
pub struct Vm {
    lua: Lua,
    /// Heap of the base alone, measured after a full collection with no call in progress.
    live_base: usize,
    /// Set while a call is in progress, and left set if one never ended (a panic): such a state is
    /// not used again.
    busy: bool,
}

fn runtime(message: impl Into<String>) -> mlua::Error {
    mlua::Error::runtime(message.into())
}

impl Vm {
    /// Builds the state: libraries, pruned globals, Luau's sandbox mode (built-ins read-only), the host
    /// globals `install` makes, the two frozen host tables and the interrupt callback.
    pub fn new(install: impl FnOnce(&Lua) -> mlua::Result<HostGlobals>) -> mlua::Result<Vm> {
        let lua = Lua::new_with(libraries(), LuaOptions::new())?;
        let globals = lua.globals();
        let math: Table = globals.raw_get("math")?;
        for name in REMOVED_MATH {
            math.raw_set(*name, Value::Nil)?;
        }
        // Freezes every library table, the string metatable and the globals (Luau's `luaL_sandbox`).
        lua.sandbox(true)?;
        // `json.array`'s mark is shared by every call of the state: nobody may change it.
        lua.array_metatable().set_readonly(true);
        let hosts = install(&lua)?;
        let require = require_function(&lua)?;
        let bases = Bases {
            workflow: base_table(&lua, &globals, &require, hosts.workflow)?,
            mission: base_table(&lua, &globals, &require, hosts.mission)?,
        };
        lua.set_app_data(bases);
        lua.set_app_data(Chunks::new(&lua)?);
        lua.set_interrupt(interrupt);
        let _ = lua.gc_collect();
        let live_base = lua.used_memory();
        Ok(Vm { lua, live_base, busy: false })
    }

    /// Whether a call began here and never ended: the state may hold that call's values and is dropped.
    pub fn is_poisoned(&self) -> bool {
        self.busy
    }

    /// Starts one call with `budget` and `memory_bytes` of Luau heap for all its sandboxes together
    /// (execution.md §12.8).
    pub fn begin(&mut self, budget: Arc<Budget>, memory_bytes: usize) -> mlua::Result<CallScope<'_>> {
        if self.busy {
            return Err(runtime("the Luau state is still in use"));
        }
        let memory_limit = self.live_base.saturating_add(memory_bytes).max(1);
        let used = self.lua.used_memory();
        let active = Active {
            budget,
            current: Mutex::new(None),
            memory_limit,
            gc_trigger: AtomicUsize::new(midway(used, memory_limit)),
        };
        self.lua.set_memory_limit(memory_limit)?;
        self.lua.set_app_data(active);
        self.busy = true;
        Ok(CallScope { vm: self })
    }

    /// Collects the garbage of finished calls once it passes [`GARBAGE_SLACK`], and re-measures the base.
    /// Runs between calls: after a run thread's answer, and before a run starts (outside its slice).
    pub fn tidy(&mut self) {
        if self.busy || self.lua.used_memory().saturating_sub(self.live_base) <= GARBAGE_SLACK {
            return;
        }
        let _ = self.lua.gc_collect();
        self.live_base = self.lua.used_memory();
    }
}

/// One call in a [`Vm`]; ends the call when dropped.
pub struct CallScope<'a> {
    vm: &'a mut Vm,
}

impl CallScope<'_> {
    /// The state.
    pub fn lua(&self) -> &Lua {
        &self.vm.lua
    }
}

impl Drop for CallScope<'_> {
    fn drop(&mut self) {
        let lua = &self.vm.lua;
        let _ = lua.remove_app_data::<Active>();
        let _ = lua.set_memory_limit(0);
        // A call that ends in a panic leaves the state busy, so it is never used again.
        if !std::thread::panicking() {
            self.vm.busy = false;
        }
    }
}

/// A role's frozen host table and the frozen metatable that reads through to it.
fn base_table(
    lua: &Lua,
    globals: &Table,
    require: &mlua::Function,
    host: Vec<(&'static str, Value)>,
) -> mlua::Result<Table> {
    let table = lua.create_table_with_capacity(0, KEPT_GLOBALS.len() + host.len() + 2)?;
    for name in KEPT_GLOBALS {
        table.raw_set(*name, globals.get::<Value>(*name)?)?;
    }
    table.raw_set("require", require.clone())?;
    for (name, value) in host {
        if let Value::Table(t) = &value {
            t.set_readonly(true);
        }
        table.raw_set(name, value)?;
    }
    // execution.md §12.4: `_G` is the sandbox's global table as the script sees it; writing through it is
    // refused, as it is for every built-in.
    table.raw_set("_G", table.clone())?;
    table.set_readonly(true);
    let meta = lua.create_table_with_capacity(0, 1)?;
    meta.raw_set("__index", table)?;
    meta.set_readonly(true);
    Ok(meta)
}

/// Halfway from `used` to `limit`.
fn midway(used: usize, limit: usize) -> usize {
    used + limit.saturating_sub(used) / 2
}

/// The interrupt callback of the state (execution.md §12.8).
fn interrupt(lua: &Lua) -> mlua::Result<VmState> {
    let Some(active) = lua.app_data_ref::<Active>() else { return Ok(VmState::Continue) };
    if active.current().is_some_and(|core| core.is_halted()) {
        return Err(runtime("the invocation has ended"));
    }
    // Luau also calls the interrupt from inside its pattern matcher (`string.gsub`, `find`, `match`,
    // `gmatch`: once per position tried), where the running function is the C library function. Those
    // are not the interrupt points of execution.md §12.8 (function calls and loop back-edges): they check
    // the halt, the clock and cancellation, so a long match still ends at the deadline, but spend no
    // budget; charging them made a string loop exhaust 100,000,000 points in seconds (issue 14).
    let charged = if in_library_function(lua) { active.budget.pass() } else { active.budget.charge() };
    match charged {
        Ok(()) => {
            reclaim(lua, &active);
            Ok(VmState::Continue)
        }
        Err(Exhaustion::Interrupts) => Err(runtime("interrupt budget exhausted")),
        Err(Exhaustion::Deadline) => Err(runtime("deadline passed")),
        Err(Exhaustion::Cancelled) => Err(runtime("cancelled")),
        Err(Exhaustion::SliceEnded) => Err(runtime("slice ended")),
    }
}

/// Whether the innermost running function is a C function: true only for the interrupts Luau raises from
/// inside its library code, never for the VM's own (those run in the frame of a Luau function).
///
/// Asked through the frame's current line, not its source: Luau's `lua_getinfo` gives a C frame the line
/// -1 (`None` here) and a Luau frame its line or 0 (`ldebug.cpp`, option `l`), which is the same test as
/// `what == "C"`, while the source copies and checks two strings on every interrupt (about 2,500 of a
/// quick run's 100,000 instructions; docs/decisions.md "The Luau echo, sixth round").
fn in_library_function(lua: &Lua) -> bool {
    lua.inspect_stack(0, |frame| frame.current_line().is_none()).unwrap_or(false)
}

/// Luau has no emergency collection: an allocation over the limit fails even when most of the heap is
/// garbage the incremental collector has not reached yet, so a script churning through short-lived
/// strings would fail far below its live limit. At an interrupt point where the heap has passed halfway
/// from the live size to the limit, a full collection runs and the next trigger is set halfway again.
/// Runs no Luau code (Luau tables have no `__gc`).
fn reclaim(lua: &Lua, active: &Active) {
    if lua.used_memory() < active.gc_trigger.load(Ordering::Relaxed) {
        return;
    }
    let _ = lua.gc_collect();
    active.gc_trigger.store(midway(lua.used_memory(), active.memory_limit), Ordering::Relaxed);
}

/// A full collection now, when a host function is about to allocate after a sandbox ran out of memory
/// (a mission's memory error is a failure the workflow may catch, execution.md §12.8).
pub fn collect_now(lua: &Lua) {
    let _ = lua.gc_collect();
    if let Some(active) = lua.app_data_ref::<Active>() {
        active.gc_trigger.store(midway(lua.used_memory(), active.memory_limit), Ordering::Relaxed);
    }
}
