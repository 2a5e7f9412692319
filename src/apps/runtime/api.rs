//! The value of `handle:api()` (execution.md §12.5): what code running in a mission can use, as one Luau
//! table built in the workflow sandbox, `{ mission, functions, tools }`.
//!
//! Owns the exact shape of that table and its order: `functions` as the startup probe left them in the
//! mission's environment (already sorted and bounded, `apps::luau::exports`), `tools` from the run's
//! [`super::ToolPort`] (the pinned listing facts of each granted alias, kept since acquisition), sorted by
//! alias in byte order. Creates no mission sandbox, runs no mission code and sends no upstream request.
//! Does not own the startup scan (`apps::luau::exports`), where the listing facts are kept (the provider
//! runtime's sites) nor the handle shim (`host`).

use mlua::{Lua, LuaSerdeExt, Table};

use super::run::Run;
use crate::apps::luau::convert::to_lua;
use crate::config::host::ToolEffect;

/// `"read"` or `"write"`.
fn effect_name(effect: ToolEffect) -> &'static str {
    match effect {
        ToolEffect::Read => "read",
        ToolEffect::Write => "write",
    }
}

/// A fresh table with the array mark (execution.md §14.1), so that an empty list stays `[]`.
fn array(lua: &Lua, len: usize) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(len, 0)?;
    t.set_metatable(Some(lua.array_metatable()))?;
    Ok(t)
}

/// The value of `mission(name):api()` in the workflow sandbox `workflow` (execution.md §12.5).
pub(super) fn value(workflow: &Lua, run: &Run, name: &str) -> mlua::Result<Table> {
    let env = run.missions.get(name).ok_or_else(|| mlua::Error::runtime(":api: not a declared mission"))?;
    let result = workflow.create_table_with_capacity(0, 3)?;
    result.raw_set("mission", name)?;
    let functions = array(workflow, env.functions().len())?;
    for (i, function) in env.functions().iter().enumerate() {
        let entry = workflow.create_table_with_capacity(0, 2)?;
        entry.raw_set("name", function.name.as_str())?;
        if let Some(doc) = &function.doc {
            entry.raw_set("doc", doc.as_str())?;
        }
        functions.raw_set(i + 1, entry)?;
    }
    result.raw_set("functions", functions)?;
    // execution.md §12.5: sorted by alias in byte order, whatever order the port gave.
    let granted = run.granted_tools(name);
    let tools = array(workflow, granted.len())?;
    for (i, tool) in granted.iter().enumerate() {
        let entry = workflow.create_table_with_capacity(0, 4)?;
        entry.raw_set("alias", tool.alias.as_str())?;
        if let Some(description) = &tool.description {
            entry.raw_set("description", description.as_str())?;
        }
        entry.raw_set("input_schema", to_lua(workflow, &tool.input_schema)?)?;
        entry.raw_set("effect", effect_name(tool.effect))?;
        tools.raw_set(i + 1, entry)?;
    }
    result.raw_set("tools", tools)?;
    Ok(result)
}
