//! Each component's startup bytecode loaded once per Luau state, and instantiated per sandbox
//! (execution.md §12.6, §12.7: every sandbox starts from the startup bytecode, loaded, not recompiled).
//!
//! Deserialising bytecode (`luau_load`) was the largest single cost of a trivial call's run. A state now
//! loads a component once into a template function and gives each sandbox a clone of it
//! (`lua_clonefunction`: a new closure over the same prototype) whose environment is the sandbox's globals.
//! The clone runs exactly as a fresh load would, because:
//!
//! - a prototype is immutable: its code, constants and debug information are never written while it runs;
//! - the closures Luau keeps among a prototype's constants (`DUPCLOSURE`) are handed out only to code whose
//!   environment is the one the prototype was loaded with. Templates are loaded with an environment of
//!   their own that no sandbox has and no code runs in, so sandbox code always gets a new closure, never
//!   one another call saw (a fresh load reused the constant itself within its one sandbox; function
//!   identity is the only difference, and nothing in the spec depends on it);
//! - Luau's `safeenv` fast paths (imports resolved at load, built-in fast calls) depend on a flag of the
//!   environment table, not of the function: a sandbox's globals table is created fresh and never has it,
//!   after a load or a clone alike. It must not have it: imports are resolved at load against the
//!   thread's full globals, which hold what execution.md §12.4 removes.
//!
//! Memory: a template is state-level data, like the base. The call that first needs it loads it under its
//! own limit (as every call's load was before); the next collection between calls counts it in the base.
//! Owns the templates and their lifetime: a template is keyed by its bytecode's allocation, which the entry
//! keeps from being reused while it exists, and dropped once the application that compiled it is gone.
//! Does not own when modules load (`require`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaString, Table};

use super::room::with_room;
use super::CompiledComponent;

/// Templates a state keeps at most; past it the ones of applications still served are loaded again.
const MAX_TEMPLATES: usize = 1_024;

/// The templates of one state (its mlua application data).
pub(super) struct Chunks {
    /// The environment templates are loaded with: no sandbox's, and read-only.
    env: Table,
    loaded: RefCell<HashMap<usize, Template>>,
    /// Names the host looks up in every call (the entry's function name), made once.
    names: RefCell<HashMap<Box<str>, LuaString>>,
}

struct Template {
    /// Keeps the bytecode's allocation, hence the key, from being reused; dead once its application is.
    bytecode: Weak<[u8]>,
    function: Function,
}

impl Chunks {
    pub(super) fn new(lua: &Lua) -> mlua::Result<Chunks> {
        let env = lua.create_table()?;
        env.set_readonly(true);
        Ok(Chunks { env, loaded: RefCell::new(HashMap::new()), names: RefCell::new(HashMap::new()) })
    }

    fn get(&self, key: usize) -> Option<Function> {
        self.loaded.try_borrow().ok()?.get(&key).map(|t| t.function.clone())
    }

    fn insert(&self, key: usize, bytecode: &Arc<[u8]>, function: Function) {
        let Ok(mut loaded) = self.loaded.try_borrow_mut() else { return };
        loaded.retain(|_, t| t.bytecode.strong_count() > 0);
        if loaded.len() >= MAX_TEMPLATES {
            loaded.clear();
        }
        loaded.insert(key, Template { bytecode: Arc::downgrade(bytecode), function });
    }
}

/// The Luau string `name`, made once per state: a string is immutable, so sharing it between calls
/// shares nothing a call can change, and a call's lookup under it needs no allocation.
pub(crate) fn interned(lua: &Lua, name: &str) -> mlua::Result<LuaString> {
    if let Some(chunks) = lua.app_data_ref::<Chunks>() {
        if let Some(string) = chunks.names.try_borrow().ok().and_then(|names| names.get(name).cloned()) {
            return Ok(string);
        }
    }
    let string = lua.create_string(name)?;
    if let Some(chunks) = lua.app_data_ref::<Chunks>() {
        if let Ok(mut names) = chunks.names.try_borrow_mut() {
            if names.len() >= MAX_TEMPLATES {
                names.clear();
            }
            names.insert(name.into(), string.clone());
        }
    }
    Ok(string)
}

/// Component `component`'s chunk as a new function whose environment is `globals`.
pub(super) fn instantiate(
    lua: &Lua,
    component: &CompiledComponent,
    globals: &Table,
) -> mlua::Result<Function> {
    let key = Arc::as_ptr(&component.bytecode).cast::<u8>() as usize;
    let env = {
        let Some(chunks) = lua.app_data_ref::<Chunks>() else { return load(lua, component, globals) };
        match chunks.get(key) {
            Some(template) => return clone_into(lua, &template, globals),
            None => chunks.env.clone(),
        }
    };
    let template = load(lua, component, &env)?;
    if let Some(chunks) = lua.app_data_ref::<Chunks>() {
        chunks.insert(key, &component.bytecode, template.clone());
    }
    clone_into(lua, &template, globals)
}

/// An upper bound of the heap a clone of a chunk's function takes: a closure header (a chunk's main
/// function has no upvalues in Luau, its globals are its environment).
const CLONE_BOUND: usize = 1024;

/// A clone of `template` with `globals` as its environment. It runs no Luau code, so where the call has
/// room for it, it needs no protected call (`room::with_room`).
fn clone_into(lua: &Lua, template: &Function, globals: &Table) -> mlua::Result<Function> {
    with_room(lua, CLONE_BOUND, || {
        let function = template.deep_clone()?;
        function.set_environment(globals.clone())?;
        Ok(function)
    })
}

fn load(lua: &Lua, component: &CompiledComponent, env: &Table) -> mlua::Result<Function> {
    lua.load(&component.bytecode[..])
        .set_name(format!("={}", component.chunk_name))
        .set_mode(ChunkMode::Binary)
        .set_environment(env.clone())
        .into_function()
}
