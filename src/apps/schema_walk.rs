//! The schema positions of JSON Schema draft 2020-12: which keywords hold a subschema, a map of
//! subschemas or an array of subschemas.
//!
//! Owns this one table, shared by contract normalisation and reference checks (config.md §6.7) and by the
//! `x-mcp-header` projection (http-mcp.md §9.1), so that the two cannot disagree on where a schema is.
//! Values of every other keyword (`const`, `enum`, `default`, `examples`, unknown keywords) are data and
//! are never visited. Does not own what is done at a position.

use serde_json::{Map, Value};

/// How a keyword holds subschemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The value is one schema.
    Single,
    /// The value is an object whose member values are schemas.
    Map,
    /// The value is an array of schemas.
    Array,
}

/// Every schema-valued keyword of draft 2020-12 (core, applicator, unevaluated and content vocabularies),
/// plus `definitions`, which 2020-12 keeps as a conventional location for reusable schemas (and which
/// `$ref` pointers commonly target).
pub const KEYWORDS: &[(&str, Slot)] = &[
    ("$defs", Slot::Map),
    ("additionalProperties", Slot::Single),
    ("allOf", Slot::Array),
    ("anyOf", Slot::Array),
    ("contains", Slot::Single),
    ("contentSchema", Slot::Single),
    ("definitions", Slot::Map),
    ("dependentSchemas", Slot::Map),
    ("else", Slot::Single),
    ("if", Slot::Single),
    ("items", Slot::Single),
    ("not", Slot::Single),
    ("oneOf", Slot::Array),
    ("patternProperties", Slot::Map),
    ("prefixItems", Slot::Array),
    ("properties", Slot::Map),
    ("propertyNames", Slot::Single),
    ("then", Slot::Single),
    ("unevaluatedItems", Slot::Single),
    ("unevaluatedProperties", Slot::Single),
];

/// One subschema position below a schema object.
#[derive(Clone, Copy, Debug)]
pub struct Child<'a> {
    /// The keyword that holds it.
    pub keyword: &'static str,
    /// The member name for `Slot::Map` keywords (`properties.<name>`), else `None`.
    pub name: Option<&'a str>,
    pub schema: &'a Value,
}

/// Calls `f` for every direct subschema of `schema`, in keyword order. Only object and boolean values are
/// schemas; a keyword whose value has the wrong shape is skipped here (compilation refuses it).
pub fn for_each_child<'a, E>(
    schema: &'a Map<String, Value>,
    f: &mut dyn FnMut(Child<'a>) -> Result<(), E>,
) -> Result<(), E> {
    for (keyword, slot) in KEYWORDS {
        let Some(value) = schema.get(*keyword) else { continue };
        match (slot, value) {
            (Slot::Single, _) => f(Child { keyword, name: None, schema: value })?,
            (Slot::Map, Value::Object(members)) => {
                for (name, sub) in members {
                    f(Child { keyword, name: Some(name), schema: sub })?;
                }
            }
            (Slot::Array, Value::Array(items)) => {
                for sub in items {
                    f(Child { keyword, name: None, schema: sub })?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Calls `f` for every direct subschema of `schema`, mutably.
pub fn for_each_child_mut(schema: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Value)) {
    for (keyword, slot) in KEYWORDS {
        let Some(value) = schema.get_mut(*keyword) else { continue };
        match (slot, value) {
            (Slot::Single, value) => f(value),
            (Slot::Map, Value::Object(members)) => members.values_mut().for_each(&mut *f),
            (Slot::Array, Value::Array(items)) => items.iter_mut().for_each(&mut *f),
            _ => {}
        }
    }
}
