//! Mutations of the provider-free baseline (`Deployment::baseline`, config.md §10) shared by the row
//! tables of `tests/black_box/config_vectors.rs` and `tests/black_box/check_command.rs`: one place says how "a write tool",
//! "an OAuth installation" or "a listing of a given size" is made.

use serde_json::{json, Value};

use super::Deployment;

pub fn tool(d: &mut Deployment) -> &mut Value {
    &mut d.gateway["tools"][0]
}

/// Rewrites the echo manifest and updates its content pin with the independent implementation.
pub fn set_echo_manifest(d: &mut Deployment, manifest: Value) {
    d.write_file("echo/ptc.json", &serde_json::to_string_pretty(&manifest).expect("json"));
    repin_echo(d);
}

pub fn repin_echo(d: &mut Deployment) {
    let pin = super::content_pin::of(&d.path("echo/ptc.json"));
    tool(d)["expected_application_content_digest"] = json!(pin);
}

pub fn echo_with(f: impl FnOnce(&mut Value)) -> Value {
    let mut m = super::echo_manifest();
    f(&mut m);
    m
}

pub fn add_audit(d: &mut Deployment) {
    d.gateway["private_audit"] =
        json!({"directory": "audit", "max_file_bytes": 1048576, "max_retained_files": 4});
}

pub fn add_remote(d: &mut Deployment, endpoint: &str) {
    d.host["install"]["remote"] = json!({
        "source": "mcp", "installation_revision": "r1",
        "transport": {"type": "streamable_http", "endpoint": endpoint},
        "tools": {"echo": {"as": "remote.echo", "effect": "read"}}
    });
}

/// A mission granting `names` to the echo manifest, with the selections given.
pub fn echo_with_mission(selections: Value, granted: &[&str]) -> Value {
    echo_with(|m| {
        m["missions"] = json!({"default": {"providers": granted}});
        m["providers"] = json!({ "mission": selections });
    })
}

/// Creates `rel` as an owner-only directory.
pub fn private_dir(d: &Deployment, rel: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(d.path(rel)).expect("mkdir");
    std::fs::set_permissions(d.path(rel), std::fs::Permissions::from_mode(0o700)).expect("chmod");
}

/// An input contract whose normalised deterministic JSON is exactly `size` bytes:
/// `{"additionalProperties":false,"description":"xxx…","type":"object"}`.
pub fn schema_of_normalised_size(size: usize) -> String {
    let frame = "{\"additionalProperties\":false,\"description\":\"\",\"type\":\"object\"}".len();
    format!("{{\"type\":\"object\",\"description\":\"{}\"}}\n", "x".repeat(size - frame))
}

/// Seventy copies of `echo` whose input contract normalises to 65,000 bytes: a listing above the
/// 4,194,304 bytes of http-mcp.md §10.3.
pub fn seventy_large_tools(d: &mut Deployment) {
    d.write_file("echo/input.json", &schema_of_normalised_size(65_000));
    set_echo_manifest(d, echo_with(|m| m["contracts"]["input_schema"]["path"] = json!("input.json")));
    let t = tool(d).clone();
    d.gateway["tools"] = Value::Array(
        (0..70)
            .map(|i| {
                let mut t = t.clone();
                t["name"] = json!(format!("echo{i:02}"));
                t
            })
            .collect(),
    );
    d.gateway["pcc"]["servers"]["briefs"]["tools"] = json!(["echo00"]);
}
