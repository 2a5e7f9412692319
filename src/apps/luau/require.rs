//! `require` of execution.md §12.2 over bytecode compiled once at startup: one function for every sandbox
//! of a state, loading into the sandbox that runs now (declared dependencies only, one instance per
//! sandbox, cycles refused), and the startup probe's record of what each loaded module exports
//! (execution.md §12.5). Does not own the sandboxes (`sandbox`) or the state (`vm`).

use std::sync::atomic::Ordering;

use mlua::{Function, Lua, Table, Value};

use super::active::{Active, Core, Slot};
use super::chunks::instantiate;

/// How far up the stack `require` looks for the Lua function that called it (past `pcall` and other C
/// frames).
const MAX_CALLER_LEVELS: usize = 32;

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

fn runtime(message: impl Into<String>) -> mlua::Error {
    mlua::Error::runtime(message.into())
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
pub(super) fn load_module(lua: &Lua, core: &Core, id: &str) -> mlua::Result<Table> {
    let component = core.env.component(id).ok_or_else(|| runtime(format!("unknown component {id:?}")))?;
    {
        let mut slots = core.slots.lock().map_err(|_| runtime("module table unavailable"))?;
        match slots.get(id) {
            Some(Slot::Loaded(module)) => return Ok(module.clone()),
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
        instantiate(lua, component, &core.globals).and_then(|chunk| chunk.call::<Value>(()))
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
            slots.insert(id.to_owned(), Slot::Loaded(module.clone()));
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
