//! PROVISIONAL seam to the pin digests of pins.md §7 and §8, until the `pins` module (branch `wip-pins`)
//! is merged; then these two functions forward to it and this note goes.
//!
//! The bodies below are placeholders, **not** the spec's digests (no typed canonical JSON, no domain
//! labels, no field hashes): they only give serving and `--print-pins` one consistent function each, so
//! that discovery output makes serving start and a changed input changes the pin.

use std::collections::BTreeSet;

use crate::config::host::{installation_projection, Installation};
use crate::json::{sha256, to_deterministic, Map, Value};
use crate::providers::acquire::Facts;

fn qualified(label: &str, value: &Value) -> String {
    let mut bytes = label.as_bytes().to_vec();
    bytes.push(0);
    bytes.extend(to_deterministic(value));
    format!("sha256:{}", sha256(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// `installation_pin(a)` of pins.md §7.2 (placeholder body).
pub fn installation_pin(installation: &Installation) -> String {
    qualified("ptc-gateway.installation-config.v1", &installation_projection(installation))
}

/// `snapshot_pin(site)` of pins.md §8.6 over the facts of providers.md §7.4 and the site's granted
/// upstream names (§8.4); `None` when no identity can be built (placeholder body).
pub fn snapshot_pin(facts: &Facts, granted: &BTreeSet<String>) -> Option<String> {
    let Value::Object(mut facts) = facts.to_value() else { return None };
    let tools = match facts.remove("tools") {
        Some(Value::Array(tools)) => tools,
        _ => return None,
    };
    let granted: Vec<Value> = tools
        .into_iter()
        .filter(|t| match t {
            Value::Object(t) => t.get("name").and_then(Value::as_str).is_some_and(|n| granted.contains(n)),
            _ => false,
        })
        .map(|t| match t {
            // The operator's `as` and `effect` are the installation pin's (pins.md §8.3).
            Value::Object(mut t) => {
                t.remove("as");
                t.remove("effect");
                t.remove("title");
                Value::Object(t)
            }
            other => other,
        })
        .collect();
    let mut identity = Map::new();
    identity.insert("facts".into(), Value::Object(facts));
    identity.insert("tools".into(), Value::Array(granted));
    Some(qualified("ptc-gateway.provider-snapshot.v1", &Value::Object(identity)))
}
