//! Stage 5e contracts (config.md §6.7, execution.md §11.2): decode a contract file, check its root and
//! references, normalise it, bound its encoded size, and compile it once with `jsonschema`.
//!
//! Owns the normalisation rule (`additionalProperties: false` wherever an object schema declares neither
//! `additionalProperties` nor `unevaluatedProperties`) and the compiled validator that execution uses.
//! Does not own schema positions (`schema_walk`), the `x-mcp-header` projection (`header`), or when
//! validation runs (execution).

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value};

use super::error::{fail, AppDetail, AppError, AppErrorKind};
use super::schema_walk::{for_each_child, for_each_child_mut};
use crate::json::{self, to_deterministic_string, Limits};

/// config.md §6.7: the normalised schema, as deterministic JSON, is at most 65,536 bytes.
pub const MAX_NORMALISED_BYTES: usize = 65_536;
/// config.md §6.7: the only accepted root `$schema`.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// One compiled contract: the normalised schema (what `tools/list` serves and validation uses), its
/// deterministic encoding, and the validator compiled from it.
pub struct Contract {
    schema: Value,
    encoded: String,
    validator: Validator,
}

impl Contract {
    /// The normalised schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// `DJ` of the normalised schema, at most 65,536 bytes.
    pub fn encoded(&self) -> &str {
        &self.encoded
    }

    /// The validator compiled once at startup (draft 2020-12, no retrieval, formats as annotations).
    pub fn validator(&self) -> &Validator {
        &self.validator
    }

    /// Whether `instance` satisfies the contract: the decoded value is validated as it is.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }
}

impl std::fmt::Debug for Contract {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contract").field("encoded_bytes", &self.encoded.len()).finish_non_exhaustive()
    }
}

/// Loads one contract from the bytes the closure read.
pub fn load(bytes: &[u8]) -> Result<Contract, AppError> {
    // config.md §2.8: decode failures and duplicate keys of a contract file are `template_invalid`; the
    // byte-bound rules do not apply to contract files.
    let mut schema = json::decode(bytes, Limits::DOCUMENT).map_err(|e| {
        let (reason, excerpt) = (format!("not {e}"), json::excerpt(bytes, &e));
        AppError::with_detail(
            AppErrorKind::ContractUndecodable,
            AppDetail::NotJson { file: String::new(), line: e.line, column: e.column, reason, excerpt },
        )
    })?;
    check_root(&schema)?;
    check_references(&schema)?;
    normalise(&mut schema);
    let encoded = to_deterministic_string(&schema);
    if encoded.len() > MAX_NORMALISED_BYTES {
        return fail(AppErrorKind::ContractTooLarge);
    }
    let validator = compile(&schema)?;
    Ok(Contract { schema, encoded, validator })
}

/// config.md §6.7 / execution.md §11.2: the root is an object whose `type` is exactly `"object"`, and a
/// root `$schema`, if present, is draft 2020-12.
fn check_root(schema: &Value) -> Result<(), AppError> {
    let Some(root) = schema.as_object() else { return fail(AppErrorKind::ContractRootNotObject) };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return fail(AppErrorKind::ContractRootNotObject);
    }
    match root.get("$schema") {
        None => Ok(()),
        Some(Value::String(s)) if s == DRAFT_2020_12 => Ok(()),
        Some(_) => fail(AppErrorKind::ContractDialect),
    }
}

/// config.md §6.7: every `$ref` (and `$dynamicRef`) at every schema position begins with `#`. Values of
/// data keywords are not schemas and are not inspected.
fn check_references(schema: &Value) -> Result<(), AppError> {
    let Some(map) = schema.as_object() else { return Ok(()) };
    for keyword in ["$ref", "$dynamicRef"] {
        if let Some(Value::String(reference)) = map.get(keyword) {
            if !reference.starts_with('#') {
                return fail(AppErrorKind::ContractExternalReference);
            }
        }
    }
    for_each_child(map, &mut |child| check_references(child.schema))
}

/// Whether a schema object receives `"additionalProperties": false` (config.md §6.7): it declares type
/// `object` (alone or in a `type` array) or has `properties`, and has neither `additionalProperties` nor
/// `unevaluatedProperties`.
fn closes(map: &Map<String, Value>) -> bool {
    let object_typed = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t.as_str() == Some("object")),
        _ => false,
    };
    (object_typed || map.contains_key("properties"))
        && !map.contains_key("additionalProperties")
        && !map.contains_key("unevaluatedProperties")
}

/// Normalises every schema object of the document in place (config.md §6.7). Recursion follows the
/// document's depth, which the strict decoder bounds at 64.
pub fn normalise(schema: &mut Value) {
    if let Value::Object(map) = schema {
        if closes(map) {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
        for_each_child_mut(map, &mut normalise);
    }
}

/// Compiles the normalised schema: draft 2020-12, meta-schema checked, no external resource retrieved,
/// `format` and the content keywords as annotations (execution.md §11.2).
/// A schema a run gives at run time (`handle:agent`'s `result_schema`, models.md §8.1): draft 2020-12,
/// local references only, compiled as given (no normalisation: it is the script's own schema). `None` when
/// it does not compile or refers outside itself.
pub fn runtime_validator(schema: &Value) -> Option<Validator> {
    check_references(schema).ok()?;
    compile(schema).ok()
}

fn compile(schema: &Value) -> Result<Validator, AppError> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .offline()
        .should_validate_formats(false)
        .build(schema)
        .map_err(|e| {
            // jsonschema's message names the keyword and the schema's own text (never a credential):
            // what a person needs to find the fault (lifecycle.md §1.5).
            let detail = AppDetail::Compile { file: String::new(), line: None, message: e.to_string() };
            AppError::with_detail(AppErrorKind::ContractUncompilable, detail)
        })
}
