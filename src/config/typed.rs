//! The last step of reading a document: the validated, default-filled value becomes its typed form by the
//! types' own `serde::Deserialize` (each with `deny_unknown_fields`), so that every member is named once
//! in the schema (`schema::gateway`, `schema::host`, `schema::manifest`: bounds, defaults, the published
//! schema) and once in its Rust type, never again in a builder.
//!
//! The schema check comes first and decides every refusal with its pointer and rule (config.md §2.8);
//! the typed read can then only fail if the schema and the type disagree, which
//! `every_member_of_the_schema_has_a_field` in each document's tests rules out. Such a failure is still
//! a refusal with the document's structural code, never a panic, and it keeps none of serde's message:
//! that message could quote a value, and a host document's values include literal credentials
//! (config.md §5.2).

use serde::de::DeserializeOwned;
use serde_json::Value;

/// The value did not have the shape of the type; reported as the document's structural code.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ShapeMismatch;

/// Reads the typed form `T` of a document that passed its schema check and default insertion.
pub(crate) fn read<T: DeserializeOwned>(document: &Value) -> Result<T, ShapeMismatch> {
    T::deserialize(document).map_err(|_| ShapeMismatch)
}
