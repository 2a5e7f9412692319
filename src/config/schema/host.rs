//! The definition of the host document (config.md §5.1–§5.6) in the schema DSL.
//!
//! The single source of the host document's structure: the loader validates against it, the installation
//! projection of pins.md §7.1 takes its defaults from it, and `schemas/ptc-host-config.schema.json` is
//! generated from it. The semantic checks of config.md §5.7 (references, aliases, endpoints, headers) live in
//! `config::host`.

use serde_json::Value;

use super::node::*;
use super::patterns::{BINDING, ENV_NAME, NO_NUL, TOOL_ALIAS};
use crate::json::integer_value;

/// `$id` of the published host schema (config.md §9.1); also the only accepted `$schema` value
/// (config.md §5.1).
pub const ID: &str = "https://ptc-gateway.dev/schemas/ptc-host-config.schema.json";

/// config.md §9.7: `$schema` is the published URL or a relative path whose last segment is this schema's
/// file name, so an editor finds `schemas/` from a document in the repository.
pub const SCHEMA_REFERENCE: &str = r"^(https://ptc-gateway\.dev/schemas/ptc-host-config\.schema\.json|([^/:\x00]+/)*ptc-host-config\.schema\.json)$";

/// The reserved sources of config.md §5.3: accepted with any members, refused when selected.
pub const RESERVED_SOURCES: &[&str] =
    &["llm_replay", "decision", "ptc_private_trace_snapshot", "ptc_inspection_snapshot"];

const PROTOCOLS: &[&str] = &["auto", "2026-07-28", "legacy"];

fn revision() -> StringSchema {
    string(1, 128).pattern("^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
}

fn binding() -> StringSchema {
    string(1, 128).pattern(BINDING)
}

fn path_string() -> StringSchema {
    string(1, 1024).pattern(NO_NUL)
}

fn int(v: i128) -> Value {
    integer_value(v)
}

/// `credentials.<binding>`: exactly one of `env`, `file`, `literal` (config.md §5.2, §5.7 rule 1).
fn credential() -> ObjectSchema {
    object(vec![
        optional("env", string(1, 128).pattern(ENV_NAME)),
        optional("file", path_string()),
        optional("literal", string(1, 4096)),
    ])
    .members(1, 1)
}

fn stdio() -> Variant {
    let env = map(string(1, 128).pattern(ENV_NAME), object(vec![required("binding", binding())]), 0, 128);
    Variant {
        tags: &["stdio"],
        object: object(vec![
            required("type", constant_string("stdio")),
            required("command", path_string()),
            defaulted("args", array(string(0, 4096), 0, 256), empty_array()),
            defaulted("cwd", path_string(), "."),
            defaulted("inherit_environment", boolean(), false),
            defaulted("env", env, empty_object()),
            defaulted("start_timeout_ms", integer(1, 600_000), int(5000)),
            defaulted("protocol", enumeration(PROTOCOLS), "auto"),
        ]),
    }
}

fn streamable_http() -> Variant {
    // RFC 9110 §5.6.2 `tchar`; `-` last so that it is literal in the class.
    let header_name = string(1, 128).pattern("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$");
    let header = object(vec![
        required("name", header_name),
        required("binding", binding()),
        defaulted("scheme", enumeration(&["raw", "bearer", "basic"]), "raw"),
    ]);
    Variant {
        tags: &["streamable_http"],
        object: object(vec![
            required("type", constant_string("streamable_http")),
            required("endpoint", string(1, 2048)),
            defaulted("allow_insecure_loopback", boolean(), false),
            defaulted("headers", array(header, 0, 32), empty_array()),
            defaulted("protocol", enumeration(PROTOCOLS), "auto"),
            // config.md §5.4.2: members exempt from the unknown-key rule, still byte-bounded.
            optional("oauth", object(Vec::new()).uninterpreted()).describe(
                "Marks the installation as OAuth-protected; members are not interpreted in this version. \
                 Selecting such an installation is refused (provider_source_unsupported).",
            ),
        ]),
    }
}

fn mcp() -> Variant {
    let mapping = object(vec![
        required("as", string(1, 128).pattern(TOOL_ALIAS)),
        required("effect", enumeration(&["read", "write"])),
        // config.md §2.4: the second string that may hold LF.
        optional("description", string(1, 4096).with_lf()).describe(LF_ALLOWED),
    ]);
    let ceilings = object(vec![
        defaulted("timeout_ms", integer(1, 3_600_000), int(5000)),
        defaulted("max_result_bytes", integer(1, 4_194_304), int(262_144)),
    ]);
    let transport = UnionSchema { tag: "type", variants: vec![stdio(), streamable_http()] };
    Variant {
        tags: &["mcp"],
        object: object(vec![
            required("source", constant_string("mcp")),
            required("installation_revision", revision()),
            required("transport", transport),
            required("tools", map(string(1, 128).pattern("^[A-Za-z0-9_./-]{1,128}$"), mapping, 1, 128)),
            defaulted("ceilings", ceilings, empty_object()),
        ]),
    }
}

fn llm() -> Variant {
    let params =
        object(vec![optional("temperature", number(0, 2)), optional("max_tokens", integer(1, 1_000_000))]);
    let ceilings = object(vec![defaulted("timeout_ms", integer(1, 3_600_000), int(60_000))]);
    Variant {
        tags: &["llm"],
        object: object(vec![
            required("source", constant_string("llm")),
            required("installation_revision", revision()),
            required("endpoint", string(1, 2048)),
            defaulted("allow_insecure_loopback", boolean(), false),
            required("model", string(1, 256)),
            required("credential", binding()),
            defaulted("params", params, empty_object()),
            defaulted("ceilings", ceilings, empty_object()),
        ]),
    }
}

fn trace_snapshot() -> Variant {
    Variant {
        tags: &["ptc_trace_snapshot"],
        object: object(vec![
            required("source", constant_string("ptc_trace_snapshot")),
            required("installation_revision", revision()),
            required("directory", path_string()),
        ]),
    }
}

fn reserved() -> Variant {
    Variant {
        tags: RESERVED_SOURCES,
        object: object(vec![required("source", enumeration(RESERVED_SOURCES))]).uninterpreted(),
    }
}

/// `install.<alias>`, discriminated by `source` (config.md §5.3).
pub fn installation() -> Schema {
    UnionSchema { tag: "source", variants: vec![mcp(), llm(), trace_snapshot(), reserved()] }.into()
}

/// The whole host document.
pub fn definition() -> Schema {
    let limits = object(vec![defaulted("run_duration_ms", integer(1, 3_600_000), int(30_000))]);
    object(vec![
        optional("$schema", string(1, 1024).pattern(SCHEMA_REFERENCE)).describe(super::SCHEMA_HINT),
        defaulted("credentials", map(binding(), credential(), 0, 256), empty_object()),
        required("install", map(binding(), installation(), 0, 128)),
        defaulted("limits", limits, empty_object()),
    ])
    .into()
}
