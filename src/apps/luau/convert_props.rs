//! Generated inputs for the JSON ↔ Luau mapping (execution.md §14.1–§14.2; issue 18, docs/reliability.md):
//! JSON values from the strict decoder's generator, nested up to past the depth bound, and flat Luau
//! tables with keys of every kind the spec's table names (positive, zero, negative and fractional
//! numbers, strings valid and not UTF-8, booleans), marked or not, holding finite and non-finite numbers.
//!
//! Properties: no panic; JSON → Luau → JSON gives the value with numbers mapped as execution.md §14.2 says
//! (integral within ±(2^53 − 1) → integer, other → float; integers beyond round to the nearest double) and
//! is idempotent after that; depth beyond 64 is `TooLarge` exactly; and a Luau table converts, or is
//! refused, as the execution.md §14.2 table says.

use mlua::{Lua, Value as LuaValue};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use super::*;
use crate::apps::luau::room::FRESH_PAGES;
use crate::json::{decode, number_f64, Limits};
use crate::support::prop_support::check;

/// The value execution.md §14.1 and §14.2 give for `value`, one after the other.
fn expected(value: &Value) -> Value {
    match value {
        Value::Number(n) => normal(number_f64(n)),
        Value::Array(items) => Value::Array(items.iter().map(expected).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), expected(v))).collect()),
        other => other.clone(),
    }
}

fn normal(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(f as i64)
    } else {
        Value::from(f)
    }
}

#[test]
fn prop_luau_json_round_trip() {
    let lua = Lua::new();
    let text = crate::json::decode::props::json_text();
    check("luau_round_trip", 1024, (text, 0usize..70), |(text, nest)| {
        let Ok(value) = decode(text.as_bytes(), Limits::REQUEST) else { return Ok(()) };
        let depth = measure_depth(&value);
        let mut wrapped = value.clone();
        for _ in 0..nest {
            wrapped = Value::Array(vec![wrapped]);
        }
        let luau = to_lua(&lua, &wrapped).map_err(|e| TestCaseError::fail(e.to_string()))?;
        match to_json(&lua, &luau) {
            Ok(back) => {
                prop_assert!(depth + nest <= MAX_DEPTH);
                let mut want = expected(&value);
                for _ in 0..nest {
                    want = Value::Array(vec![want]);
                }
                prop_assert_eq!(&back, &want);
                let again = to_lua(&lua, &back).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(to_json(&lua, &again), Ok(back), "idempotent");
            }
            Err(e) => prop_assert_eq!((e, depth + nest > MAX_DEPTH), (NotConvertible::TooLarge, true)),
        }
        Ok(())
    });
}

fn measure_depth(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(measure_depth).max().unwrap_or(0),
        Value::Object(map) => map.values().map(measure_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// A Luau table key.
#[derive(Clone, Debug, PartialEq)]
enum Key {
    Number(f64),
    Text(Vec<u8>),
    Bool(bool),
}

/// A Luau scalar value.
#[derive(Clone, Debug)]
enum Scalar {
    Number(f64),
    Text(Vec<u8>),
    Null,
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        4 => (1u8..6).prop_map(|i| Key::Number(f64::from(i))),
        1 => select(vec![0.0, -1.0, 1.5, 9_007_199_254_740_992.0]).prop_map(Key::Number),
        3 => select(vec![&b"a"[..], b"b", b"1", "é".as_bytes(), b"\xff"]).prop_map(|k| Key::Text(k.to_vec())),
        1 => any::<bool>().prop_map(Key::Bool),
    ]
}

fn scalar() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        4 => any::<f64>().prop_map(Scalar::Number),
        1 => select(vec![f64::NAN, f64::INFINITY, -0.0, 2.5]).prop_map(Scalar::Number),
        2 => select(vec![&b"x"[..], "😀".as_bytes(), b"\xc3"]).prop_map(|s| Scalar::Text(s.to_vec())),
        1 => Just(Scalar::Null),
    ]
}

/// What execution.md §14.2 gives for one scalar.
fn scalar_json(s: &Scalar) -> Result<Value, NotConvertible> {
    match s {
        Scalar::Number(n) if !n.is_finite() => Err(NotConvertible::NonFinite),
        Scalar::Number(n) => Ok(normal(*n)),
        Scalar::Text(t) => {
            String::from_utf8(t.clone()).map(Value::String).map_err(|_| NotConvertible::InvalidUtf8)
        }
        Scalar::Null => Ok(Value::Null),
    }
}

/// The execution.md §14.2 table for a flat table: the value, or every refusal some member order may give
/// first (members are read in the table's own order).
fn table_model(entries: &[(Key, Scalar)], marked: bool) -> Result<Value, Vec<NotConvertible>> {
    let index = |k: &Key| match k {
        Key::Number(n) if *n >= 1.0 && n.fract() == 0.0 && *n <= MAX_SAFE_INTEGER => Some(*n),
        _ => None,
    };
    let values: Vec<Result<Value, NotConvertible>> = entries.iter().map(|(_, v)| scalar_json(v)).collect();
    let value_errors: Vec<NotConvertible> = values.iter().filter_map(|v| v.clone().err()).collect();
    let n = entries.len();
    if marked || (n > 0 && entries.iter().all(|(k, _)| index(k).is_some())) {
        // Keys must be exactly 1..n, checked before any value.
        #[allow(clippy::cast_precision_loss)]
        let exact = entries.iter().all(|(k, _)| index(k).is_some_and(|i| i <= n as f64));
        if !exact {
            return Err(vec![NotConvertible::MixedTable]);
        }
        if !value_errors.is_empty() {
            return Err(value_errors);
        }
        let mut items: Vec<(f64, Value)> =
            entries.iter().zip(values).filter_map(|((k, _), v)| Some((index(k)?, v.ok()?))).collect();
        items.sort_by(|a, b| a.0.total_cmp(&b.0));
        return Ok(Value::Array(items.into_iter().map(|(_, v)| v).collect()));
    }
    let mut errors = value_errors;
    let mut map = Map::new();
    for ((k, _), v) in entries.iter().zip(values) {
        match k {
            Key::Text(t) => match String::from_utf8(t.clone()) {
                Ok(key) => {
                    if let Ok(v) = v {
                        map.insert(key, v);
                    }
                }
                Err(_) => errors.push(NotConvertible::InvalidUtf8),
            },
            _ => errors.push(NotConvertible::MixedTable),
        }
    }
    if errors.is_empty() {
        Ok(Value::Object(map))
    } else {
        Err(errors)
    }
}

#[test]
fn prop_luau_tables_to_json() {
    let lua = Lua::new();
    check("luau_tables", 4096, (vec((key(), scalar()), 0..6), any::<bool>()), |(raw, marked)| {
        // Table keys are unique: keep the first entry of each key.
        let mut entries: Vec<(Key, Scalar)> = Vec::new();
        for (k, v) in raw {
            if !entries.iter().any(|(e, _)| *e == k) {
                entries.push((k, v));
            }
        }
        let table = lua.create_table().map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (k, v) in &entries {
            let k = match k {
                Key::Number(n) => LuaValue::Number(*n),
                Key::Text(t) => {
                    LuaValue::String(lua.create_string(t).map_err(|e| TestCaseError::fail(e.to_string()))?)
                }
                Key::Bool(b) => LuaValue::Boolean(*b),
            };
            let v = match v {
                Scalar::Number(n) => LuaValue::Number(*n),
                Scalar::Text(t) => {
                    LuaValue::String(lua.create_string(t).map_err(|e| TestCaseError::fail(e.to_string()))?)
                }
                Scalar::Null => lua.null(),
            };
            table.raw_set(k, v).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        if marked {
            table
                .set_metatable(Some(lua.array_metatable()))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        let got = to_json(&lua, &LuaValue::Table(table));
        match (table_model(&entries, marked), got) {
            (Ok(want), Ok(got)) => prop_assert_eq!(got, want),
            (Err(allowed), Err(got)) => prop_assert!(allowed.contains(&got), "{got:?} not in {allowed:?}"),
            (want, got) => prop_assert!(false, "{want:?} vs {got:?}"),
        }
        Ok(())
    });
}

/// `lua_bound` (for `room::with_room`): the heap a conversion adds, with collection stopped, stays within the
/// bound plus fresh pages plus what Luau's own arrays may grow by (at most what the heap held before). Values nested up to
/// the depth bound, wide objects and arrays, long strings.
#[test]
fn prop_lua_bound_holds() {
    let text = crate::json::decode::props::json_text();
    check("lua_bound", 512, (text, 0usize..70, 0usize..3000), |(text, nest, width)| {
        let Ok(value) = decode(text.as_bytes(), Limits::REQUEST) else { return Ok(()) };
        let mut wrapped = value;
        for _ in 0..nest {
            wrapped = Value::Array(vec![wrapped]);
        }
        let wide: Map<String, Value> =
            (0..width).map(|i| (format!("k{i}"), Value::String("v".repeat(i % 97)))).collect();
        for value in [wrapped, Value::Object(wide), Value::Array(vec![Value::from(1.5); width])] {
            let lua = Lua::new();
            lua.gc_stop();
            let before = lua.used_memory();
            let converted = to_lua(&lua, &value).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let added = lua.used_memory() - before;
            let allowed = lua_bound(&value) + FRESH_PAGES + before;
            prop_assert!(added <= allowed, "{added} > {allowed}");
            drop(converted);
        }
        Ok(())
    });
}

/// `lua_bound`'s sizes: with Luau's string table already large enough for the new strings, the heap a
/// conversion adds stays within the bound and the fresh pages Luau's allocator may start.
#[test]
fn lua_bound_covers_each_value() {
    let lua = Lua::new();
    let keep = lua.create_table().unwrap();
    for i in 0..100_000 {
        keep.raw_set(i + 1, lua.create_string(format!("warm {i}")).unwrap()).unwrap();
    }
    lua.gc_stop();
    let values = [
        Value::Null,
        Value::from("Ada"),
        Value::from("x".repeat(10_000)),
        serde_json::json!({"name": "Ada"}),
        serde_json::json!([1, 2.5, true, null, "s", [], {}]),
        Value::Object((0..3000).map(|i| (format!("key {i}"), Value::from(i))).collect()),
        Value::Array((0..3000).map(|i| Value::from(format!("item {i}"))).collect()),
        serde_json::json!({"a": {"b": {"c": [[[{"d": "e"}]]]}}}),
    ];
    for value in values {
        let before = lua.used_memory();
        let converted = to_lua(&lua, &value).unwrap();
        let added = lua.used_memory() - before;
        let allowed = lua_bound(&value) + FRESH_PAGES;
        assert!(added <= allowed, "{added} > {allowed} for {value}");
        drop(converted);
    }
}
