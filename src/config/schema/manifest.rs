//! The definition of the application manifest `ptc.json` v1 (config.md §6.2) in the schema DSL.
//!
//! The single source of the manifest's structure: `config::manifest::parse` validates against it and
//! takes its defaults from it, and `schemas/ptc-application.schema.json` is generated from it. Closure,
//! content pin and the selection rules S1–S12 belong to `apps`.

use serde_json::Value;

use super::node::*;
use super::patterns::{BINDING, IDENTIFIER, TOOL_ALIAS};

/// `$id` of the published application schema (config.md §9.1); also the only accepted `$schema` value
/// (config.md §6.2).
pub const ID: &str = "https://ptc-gateway.dev/schemas/ptc-application.schema.json";

/// config.md §9.7: `$schema` is the published URL or a relative path whose last segment is this schema's
/// file name, so an editor finds `schemas/` from a document in the repository.
pub const SCHEMA_REFERENCE: &str = r"^(https://ptc-gateway\.dev/schemas/ptc-application\.schema\.json|([^/:\x00]+/)*ptc-application\.schema\.json)$";

fn identifier() -> StringSchema {
    string(1, 64).pattern(IDENTIFIER)
}

fn alias() -> StringSchema {
    string(1, 128).pattern(TOOL_ALIAS)
}

fn component() -> ObjectSchema {
    object(vec![
        required("id", identifier()),
        required("path", string(1, 1024)),
        defaulted("dependencies", array(identifier(), 0, 64).unique(), empty_array()),
    ])
}

fn contract() -> ObjectSchema {
    object(vec![required("path", string(1, 1024))])
}

/// `workflow`: exactly one of the Luau form and the forward form.
fn workflow() -> Schema {
    let luau = object(vec![
        required("components", array(component(), 1, 64)),
        required("entry", string(3, 129).pattern("^[a-z][a-z0-9_]{0,63}\\.[A-Za-z_][A-Za-z0-9_]{0,63}$")),
    ]);
    let forward = object(vec![required(
        "forward",
        object(vec![required("mission", identifier()), required("tool", alias())]),
    )]);
    Schema::OneOf(vec![luau.into(), forward.into()])
}

fn mission() -> ObjectSchema {
    object(vec![
        defaulted("components", array(component(), 0, 64), empty_array()),
        defaulted("providers", array(string(1, 128).pattern(BINDING), 0, 128).unique(), empty_array()),
    ])
}

/// A selection: mission selections may carry `config.allow`, workflow selections `config.catalog` (the
/// seed's catalog form, refused when `true`: config.md §6.5 rule S10).
fn selection(mission: bool) -> ObjectSchema {
    let config = if mission {
        object(vec![optional("allow", array(alias(), 1, 128).unique())])
    } else {
        object(vec![optional("catalog", boolean())])
    };
    object(vec![
        required("name", string(1, 128).pattern(BINDING)),
        defaulted("config", config, empty_object()),
    ])
}

/// The whole manifest.
pub fn definition() -> Schema {
    let providers = object(vec![
        defaulted("mission", array(selection(true), 0, 128), empty_array()),
        defaulted("workflow", array(selection(false), 0, 16), empty_array()),
    ]);
    let limits = object(vec![
        optional("run_duration_ms", integer(1, 3_600_000)),
        defaulted("memory_bytes", integer(1_048_576, 1_073_741_824), Value::from(16_777_216)),
    ]);
    let events = object(vec![defaulted("policy", enumeration(&["normal", "private"]), "normal")]);
    object(vec![
        optional("$schema", string(1, 1024).pattern(SCHEMA_REFERENCE)).describe(super::SCHEMA_HINT),
        required("version", constant_integer(1)),
        required("effect", enumeration(&["read", "write"])),
        required(
            "contracts",
            object(vec![required("input_schema", contract()), required("result_schema", contract())]),
        ),
        required("workflow", workflow()),
        defaulted("missions", map(identifier(), mission(), 0, 16), empty_object()),
        defaulted("providers", providers, empty_object()),
        defaulted("limits", limits, empty_object()),
        defaulted("events", events, empty_object()),
    ])
    .into()
}
