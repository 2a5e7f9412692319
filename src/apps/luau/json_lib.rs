//! The `json` library of execution.md §14.4: `json.null`, `json.array`, `json.encode`, `json.decode`.
//!
//! Owns the library table and its error texts. The value mapping is `convert`'s; `encode` writes
//! deterministic JSON (`crate::json::encode`) and `decode` uses the strict decoder with the request
//! limits of http-mcp.md §7.1 (at most 2,097,152 bytes). All four are pure, so they are usable while
//! modules load (execution.md §12.2).

use mlua::{Lua, LuaSerdeExt, Table, Value as LuaValue};

use super::convert::{to_json, to_lua};
use crate::json::{self, Limits};

/// Builds the `json` table of one sandbox.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let json = lua.create_table()?;
    json.raw_set("null", lua.null())?;
    let mark = lua.array_metatable();
    json.raw_set(
        "array",
        lua.create_function(move |lua, t: Option<Table>| {
            let t = match t {
                Some(t) => t,
                None => lua.create_table()?,
            };
            t.set_metatable(Some(mark.clone()))?;
            Ok(t)
        })?,
    )?;
    json.raw_set(
        "encode",
        lua.create_function(|lua, v: LuaValue| {
            let value = to_json(lua, &v).map_err(|e| mlua::Error::runtime(format!("json.encode: {e}")))?;
            lua.create_string(json::to_deterministic(&value))
        })?,
    )?;
    json.raw_set(
        "decode",
        lua.create_function(|lua, s: mlua::LuaString| {
            let value = json::decode(&s.as_bytes(), Limits::REQUEST)
                .map_err(|e| mlua::Error::runtime(format!("json.decode: {}", e.kind.as_str())))?;
            to_lua(lua, &value)
        })?,
    )?;
    Ok(json)
}
