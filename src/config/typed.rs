//! The last step of reading a document: the validated, default-filled value becomes its typed form by the
//! types' own `serde::Deserialize` (each with `deny_unknown_fields`), so that every member is named once
//! in the schema (`schema::gateway`, `schema::host`, `schema::manifest`: bounds, defaults, the published
//! schema) and once in its Rust type, never again in a builder.
//!
//! The schema check comes first and decides every refusal with its pointer and rule (config.md §2.8);
//! the typed read can then only fail if the schema and the type disagree, which
//! `every_member_of_the_schema_has_a_field` in each document's tests rules out. Such a failure is still
//! a refusal with the document's structural code, never a panic, and its reason is a fixed text: serde's
//! message could quote a value, and a host document's values include literal credentials
//! (config.md §5.2).

use serde::de::DeserializeOwned;

use crate::json::Value;

/// The value did not have the shape of the type; reported as the document's structural code.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ShapeMismatch;

/// Reads the typed form `T` of a document that passed its schema check and default insertion.
pub(crate) fn read<T: DeserializeOwned>(document: &Value) -> Result<T, ShapeMismatch> {
    T::deserialize(to_serde(document)).map_err(|_| ShapeMismatch)
}

/// The document as `serde_json` holds it: the same values, integers within i64 ∪ u64 as the strict
/// decoder admits them (config.md §2.3).
fn to_serde(value: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Integer(i) => match (i64::try_from(*i), u64::try_from(*i)) {
            (Ok(i), _) => J::from(i),
            (_, Ok(u)) => J::from(u),
            _ => J::Null,
        },
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::String(s) => J::String(s.clone()),
        Value::Array(items) => J::Array(items.iter().map(to_serde).collect()),
        Value::Object(map) => J::Object(map.iter().map(|(k, v)| (k.clone(), to_serde(v))).collect()),
    }
}
