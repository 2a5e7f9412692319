//! The JSON ↔ Luau value mapping of execution.md §14.1–§14.2, directly between Luau values and
//! `serde_json::Value`.
//!
//! Owns both directions and their refusals: what is "not convertible" (non-finite numbers, invalid UTF-8,
//! mixed or gapped tables, cycles, functions, values beyond depth 64 or 100,000 nodes). The array mark is
//! mlua's array metatable, so `json.array` and this mapping agree. Does not own where a conversion is
//! used (entry input and result, `tool`, `:call`/`:eval`, the `json` library) nor what a refusal becomes
//! there.

use mlua::{Lua, LuaSerdeExt, Table, Value as LuaValue};
use serde_json::{Map, Number, Value};

use crate::json::number_f64;

/// execution.md §14.2: integral numbers up to this magnitude become JSON integers.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
/// http-mcp.md §7.1 bounds, which converted values obey (execution.md §14.2).
pub const MAX_DEPTH: usize = 64;
/// Values plus object keys.
pub const MAX_NODES: usize = 100_000;

/// Why a Luau value is not convertible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotConvertible {
    /// NaN or an infinity.
    NonFinite,
    /// A string or key that is not valid UTF-8.
    InvalidUtf8,
    /// A table that is neither an array `1..n` nor an object of string keys.
    MixedTable,
    /// A table met again while it is being converted.
    Cycle,
    /// A function, thread, buffer, userdata other than `json.null`, or `nil` where a value is needed.
    Unsupported,
    /// Deeper than 64 or more than 100,000 nodes.
    TooLarge,
}

impl std::fmt::Display for NotConvertible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NotConvertible::NonFinite => "a number is not finite",
            NotConvertible::InvalidUtf8 => "a string is not valid UTF-8",
            NotConvertible::MixedTable => "a table is neither an array nor an object",
            NotConvertible::Cycle => "a table contains itself",
            NotConvertible::Unsupported => "a value has no JSON form",
            NotConvertible::TooLarge => "the value exceeds depth 64 or 100,000 nodes",
        })
    }
}

impl std::error::Error for NotConvertible {}

/// State of one Luau → JSON conversion.
struct ToJson {
    array_mark: Table,
    /// Tables being converted (by identity), to refuse cycles.
    open: OpenTables,
    nodes: usize,
}

/// The tables on the conversion's path from the root, by identity. At most [`MAX_DEPTH`] of them, since
/// a value deeper than that is refused before its table is opened, so they fit a fixed array: the
/// conversion of a quick run's result then allocates nothing for its cycle check (issue 27).
struct OpenTables {
    ids: [usize; MAX_DEPTH],
    len: usize,
}

impl OpenTables {
    /// Opens `id`, refused when it is open already (a cycle) or the path is full (too deep).
    fn open(&mut self, id: usize) -> Result<(), NotConvertible> {
        let open = self.ids.get(..self.len).unwrap_or_default();
        if open.contains(&id) {
            return Err(NotConvertible::Cycle);
        }
        let slot = self.ids.get_mut(self.len).ok_or(NotConvertible::TooLarge)?;
        *slot = id;
        self.len += 1;
        Ok(())
    }

    /// Closes the most recently opened table.
    fn close(&mut self) {
        self.len = self.len.saturating_sub(1);
    }
}

/// execution.md §14.2: the JSON value of a Luau value.
pub fn to_json(lua: &Lua, value: &LuaValue) -> Result<Value, NotConvertible> {
    let open = OpenTables { ids: [0; MAX_DEPTH], len: 0 };
    let mut state = ToJson { array_mark: lua.array_metatable(), open, nodes: 0 };
    state.value(value, 1)
}

impl ToJson {
    fn count(&mut self, depth: usize) -> Result<(), NotConvertible> {
        self.nodes += 1;
        if depth > MAX_DEPTH || self.nodes > MAX_NODES {
            return Err(NotConvertible::TooLarge);
        }
        Ok(())
    }

    fn value(&mut self, value: &LuaValue, depth: usize) -> Result<Value, NotConvertible> {
        self.count(depth)?;
        match value {
            LuaValue::LightUserData(p) if p.0.is_null() => Ok(Value::Null),
            LuaValue::Boolean(b) => Ok(Value::Bool(*b)),
            #[allow(clippy::cast_precision_loss)]
            LuaValue::Integer(i) => number(*i as f64),
            LuaValue::Number(n) => number(*n),
            LuaValue::String(s) => std::str::from_utf8(&s.as_bytes())
                .map(|s| Value::String(s.to_owned()))
                .map_err(|_| NotConvertible::InvalidUtf8),
            LuaValue::Table(t) => self.table(t, depth),
            _ => Err(NotConvertible::Unsupported),
        }
    }

    fn table(&mut self, t: &Table, depth: usize) -> Result<Value, NotConvertible> {
        self.open.open(t.to_pointer() as usize)?;
        let marked = t.metatable().is_some_and(|m| m == self.array_mark);
        let mut entries: Vec<(LuaValue, LuaValue)> = Vec::new();
        for pair in t.pairs::<LuaValue, LuaValue>() {
            entries.push(pair.map_err(|_| NotConvertible::Unsupported)?);
            if entries.len() > MAX_NODES {
                return Err(NotConvertible::TooLarge);
            }
        }
        let converted = if marked || (!entries.is_empty() && entries.iter().all(|(k, _)| index(k).is_some()))
        {
            self.array(entries, depth)
        } else {
            self.object(entries, depth)
        };
        self.open.close();
        converted
    }

    /// Keys exactly `1..n` (table keys are unique, so `n` keys all in `1..=n` are exactly those).
    fn array(&mut self, entries: Vec<(LuaValue, LuaValue)>, depth: usize) -> Result<Value, NotConvertible> {
        let n = entries.len();
        let mut slots: Vec<Option<LuaValue>> = vec![None; n];
        for (k, v) in entries {
            match index(&k).and_then(|i| i.checked_sub(1)).and_then(|i| slots.get_mut(i)) {
                Some(slot) => *slot = Some(v),
                None => return Err(NotConvertible::MixedTable),
            }
        }
        let mut items = Vec::with_capacity(n);
        for v in slots.into_iter().flatten() {
            items.push(self.value(&v, depth + 1)?);
        }
        if items.len() != n {
            return Err(NotConvertible::MixedTable);
        }
        Ok(Value::Array(items))
    }

    fn object(&mut self, entries: Vec<(LuaValue, LuaValue)>, depth: usize) -> Result<Value, NotConvertible> {
        let mut map = Map::new();
        for (k, v) in entries {
            let LuaValue::String(k) = k else { return Err(NotConvertible::MixedTable) };
            let key = std::str::from_utf8(&k.as_bytes()).map_err(|_| NotConvertible::InvalidUtf8)?.to_owned();
            // The key counts as a node (http-mcp.md §7.1).
            self.count(depth + 1)?;
            let v = self.value(&v, depth + 1)?;
            map.insert(key, v);
        }
        Ok(Value::Object(map))
    }
}

/// A positive integral table key, as an index.
fn index(key: &LuaValue) -> Option<usize> {
    let n = match key {
        #[allow(clippy::cast_precision_loss)]
        LuaValue::Integer(i) => *i as f64,
        LuaValue::Number(n) => *n,
        _ => return None,
    };
    if n >= 1.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER {
        // Integral and in range: the cast is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Some(n as usize)
    } else {
        None
    }
}

/// execution.md §14.2 for numbers: integral within ±(2^53 − 1) → integer (`-0` → `0`); other finite →
/// float; NaN and infinities are not convertible.
fn number(n: f64) -> Result<Value, NotConvertible> {
    if !n.is_finite() {
        return Err(NotConvertible::NonFinite);
    }
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
        // Integral and within ±2^53: the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        return Ok(Value::from(n as i64));
    }
    // Finite, so `from_f64` always answers.
    Number::from_f64(n).map(Value::Number).ok_or(NotConvertible::NonFinite)
}

/// execution.md §14.1: the Luau value of a JSON value. Arrays carry the array mark; `null` is
/// `json.null`; numbers are doubles (integers beyond ±2^53 round to the nearest).
pub fn to_lua(lua: &Lua, value: &Value) -> mlua::Result<LuaValue> {
    Ok(match value {
        Value::Null => lua.null(),
        Value::Bool(b) => LuaValue::Boolean(*b),
        Value::Number(n) => LuaValue::Number(number_f64(n)),
        Value::String(s) => LuaValue::String(lua.create_string(s)?),
        Value::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, item)?)?;
            }
            t.set_metatable(Some(lua.array_metatable()))?;
            LuaValue::Table(t)
        }
        Value::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, v) in map {
                t.raw_set(lua.create_string(k)?, to_lua(lua, v)?)?;
            }
            LuaValue::Table(t)
        }
    })
}

/// An upper bound of the Luau heap [`to_lua`] allocates for `value`, for running it without the memory
/// limit where it cannot reach it (`room::with_room`). A table is made with its final capacity, so it never
/// grows while it is filled: its header, its array part (one value slot an item) or its hash part (at most
/// twice as many nodes as members, rounded up to a power of two); a string is its header and bytes (keys
/// included; strings Luau already holds take nothing, which the bound ignores). Each size is a generous
/// multiple of Luau's (a test holds the bound against the heap the conversion took).
pub fn lua_bound(value: &Value) -> usize {
    const TABLE: usize = 512;
    const SLOT: usize = 32;
    const NODE: usize = 96;
    const STRING: usize = 256;
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        Value::String(s) => STRING.saturating_add(s.len()),
        Value::Array(items) => {
            items.iter().fold(TABLE.saturating_add(SLOT.saturating_mul(items.len())), |n, v| {
                n.saturating_add(lua_bound(v))
            })
        }
        Value::Object(map) => {
            map.iter().fold(TABLE.saturating_add(NODE.saturating_mul(map.len())), |n, (k, v)| {
                n.saturating_add(STRING).saturating_add(k.len()).saturating_add(lua_bound(v))
            })
        }
    }
}

#[cfg(test)]
#[path = "convert_props.rs"]
mod props;
