//! The definition of the gateway document v1 (config.md §4.1, §4.2, §4.6, §4.8) in the schema DSL.
//!
//! This is the single source of the gateway document's structure: the loader validates against it, the
//! normaliser takes its defaults from it, and `schemas/ptc-gateway-config.schema.json` is generated from
//! it. The semantic checks of config.md §4.4 live in `config::gateway`.

use super::node::*;
use super::patterns::{BINDING, DIGEST, NO_NUL, TOOL_NAME};

/// `$id` of the published gateway schema (config.md §9.1); also the only accepted `$schema` value
/// (config.md §4.2).
pub const ID: &str = "https://ptc-gateway.dev/schemas/ptc-gateway-config.schema.json";

/// config.md §9.7: `$schema` is the published URL or a relative path whose last segment is this schema's
/// file name, so an editor finds `schemas/` from a document in the repository.
pub const SCHEMA_REFERENCE: &str = r"^(https://ptc-gateway\.dev/schemas/ptc-gateway-config\.schema\.json|([^/:\x00]+/)*ptc-gateway-config\.schema\.json)$";

/// The two literal loopback addresses (config.md §4.2 `listen.address`, `pcc.address`).
const ADDRESSES: &[&str] = &["127.0.0.1", "::1"];

const PIN: &str = "Required to serve; optional with --print-pins, which prints the values to copy here.";

const TRACE: &str = "Per-call trace files under <root>/traces/ (traces.md): true for the defaults, or an \
object with the bounds and replay, which keeps whole what a replay of the run answers from (traces.md §6.3).";

const INSPECTION: &str = "Per-call upstream request and response bodies under <root>/inspection/ \
(traces.md §8): true for the defaults, or an object with the bounds.";

fn path_string() -> StringSchema {
    string(1, 1024).pattern(NO_NUL)
}

fn port() -> Schema {
    integer(1, 65535)
}

fn digest() -> StringSchema {
    string(1, 71).pattern(DIGEST)
}

fn listen() -> ObjectSchema {
    object(vec![
        required("address", enumeration(ADDRESSES)),
        required("port", port()),
        required("path", constant_string("/mcp")),
        defaulted("allowed_origins", array(string(1, 2048), 0, 128).unique(), empty_array()),
    ])
}

fn authentication() -> ObjectSchema {
    object(vec![required("bearer", object(vec![required("binding", string(1, 128).pattern(BINDING))]))])
}

fn admission() -> ObjectSchema {
    object(vec![
        required("max_inflight_requests", integer(1, 65535)),
        required("max_concurrent_runs", integer(1, 65535)),
        required("max_active_provider_calls", integer(1, 65535)),
        required("max_waiting_provider_calls", integer(0, 65535)),
    ])
}

fn tool() -> ObjectSchema {
    object(vec![
        required("name", string(1, 128).pattern(TOOL_NAME)),
        required("title", string(1, 256)),
        // config.md §2.4: one of the two strings that may hold LF.
        required("description", string(1, 4096).with_lf()).describe(LF_ALLOWED),
        required("application", object(vec![required("manifest", path_string())])),
        defaulted("allow_write", boolean(), false),
        required_to_serve("expected_application_content_digest", digest()).describe(PIN),
        required_to_serve("installation_config_pins", map(string(1, 128).pattern(BINDING), digest(), 0, 128))
            .describe(PIN),
        required_to_serve(
            "provider_snapshot_pins",
            map(string(1, 137).pattern("^(workflow|mission)/[a-z][a-z0-9._-]{0,127}$"), digest(), 0, 128),
        )
        .describe(PIN),
    ])
}

fn private_audit() -> ObjectSchema {
    object(vec![
        required("directory", path_string()),
        required("max_file_bytes", integer(1024, 67_108_864)),
        required("max_retained_files", integer(2, 128)),
    ])
}

/// `artifacts.trace` and `artifacts.inspection` (traces.md §2): `false`, `true`, or the object form; only
/// the trace's object has `replay`.
fn run_artifacts(replay: bool) -> Schema {
    let mut members = vec![
        defaulted("max_file_bytes", integer(16_384, 67_108_864), 1_048_576_u64),
        defaulted("max_retained_files", integer(2, 100_000), 1_000_u64),
    ];
    if replay {
        members.push(defaulted("replay", boolean(), false));
    }
    Schema::OneOf(vec![boolean(), object(members).into()])
}

const METRICS: &str = "A Prometheus text-format file, <root>/metrics/ptc-gateway.prom, replaced every \
interval_ms with the event log's counters, readiness and admission occupancy (audit-events.md §3.12); needs \
events.";

fn artifacts() -> ObjectSchema {
    object(vec![
        required("root", path_string()),
        // traces.md §2: a boolean, or an object of bounds with the documented defaults.
        defaulted("trace", run_artifacts(true), false).describe(TRACE),
        defaulted("inspection", run_artifacts(false), false).describe(INSPECTION),
        optional(
            "events",
            object(vec![
                required("max_file_bytes", integer(1024, 67_108_864)),
                required("max_retained_files", integer(2, 128)),
                defaulted("stderr", boolean(), false),
            ]),
        ),
        optional("metrics", object(vec![defaulted("interval_ms", integer(1_000, 3_600_000), 15_000_u64)]))
            .describe(METRICS),
    ])
}

fn pcc() -> ObjectSchema {
    let server = object(vec![required("tools", array(string(1, 128).pattern(TOOL_NAME), 1, 128).unique())]);
    object(vec![
        required("address", enumeration(ADDRESSES)),
        required("port", port()),
        required("servers", map(string(1, 128).pattern("^[a-zA-Z0-9_.-]{1,128}$"), server, 1, 64)),
    ])
}

/// The whole gateway document.
pub fn definition() -> Schema {
    object(vec![
        optional("$schema", string(1, 1024).pattern(SCHEMA_REFERENCE)).describe(super::SCHEMA_HINT),
        required("version", constant_integer(1)),
        required("listen", listen()),
        required("authentication", authentication()),
        required("host", object(vec![required("path", path_string())])),
        required("admission", admission()),
        required("tools", array(tool(), 1, 128)),
        optional("private_audit", private_audit())
            .describe("Durable write audit: present if and only if some tool has allow_write: true."),
        optional("artifacts", artifacts()),
        optional("pcc", pcc()),
    ])
    .into()
}
