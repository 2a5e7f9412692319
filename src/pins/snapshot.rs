//! The provider snapshot digest (pins.md §8): the acquisition identity of one site, built from the facts
//! document of providers.md §7.4, and its labelled digest; plus the granted tools of a declaration
//! (pins.md §8.4).
//!
//! Owns which facts enter the identity and how (pins.md §8.2–§8.4). Does not acquire, resolve or hash
//! the executable (`crate::providers` records its digest as a fact, pins.md §8.5), and does not compare pins
//! (`compare`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::PinError;
use crate::config::host::ToolMapping;
use crate::json::canonical::LABEL_PROVIDER_SNAPSHOT;
use crate::json::{field_hash, labelled_pin};

/// The key of a mission site in the snapshot map (pins.md §8.1): `mission/<declaration>`.
pub fn site_key(declaration: &str) -> String {
    format!("mission/{declaration}")
}

/// The granted tools of a site (pins.md §8.4): the mapped upstream names whose alias is in `allow`
/// (`config.allow` of the selection), or every mapped name when `allow` is absent.
pub fn granted_upstream_names(
    allow: Option<&[String]>,
    tools: &BTreeMap<String, ToolMapping>,
) -> BTreeSet<String> {
    tools
        .iter()
        .filter(|(_, mapping)| allow.is_none_or(|allow| allow.contains(&mapping.alias)))
        .map(|(upstream, _)| upstream.clone())
        .collect()
}

/// `snapshot_pin(site) = "sha256:" ‖ hex(H(label, TCJ(identity)))` (pins.md §8.6).
pub fn snapshot_pin(identity: &Value) -> String {
    labelled_pin(LABEL_PROVIDER_SNAPSHOT, identity)
}

/// The acquisition identity of pins.md §8.2 from the facts document of providers.md §7.4, keeping only
/// the tools in `granted` (upstream names, pins.md §8.4). Everything volatile or cosmetic (titles,
/// instructions, capabilities, the operator's `as` and `effect`) never enters it (pins.md §8.3).
pub fn identity(facts: &Value, granted: &BTreeSet<String>) -> Result<Value, PinError> {
    let malformed = PinError::FactsMalformed;
    let text = |key: &str| facts.get(key).and_then(Value::as_str).ok_or(malformed);
    let transport = text("transport")?;
    let executable = match transport {
        "stdio" => executable_digest(facts.get("executable_digest"))?,
        // pins.md §8.2: HTTP has no executable; a digest recorded for one is a facts defect.
        "streamable_http" => match facts.get("executable_digest") {
            None | Some(Value::Null) => Value::Null,
            Some(_) => return Err(malformed),
        },
        _ => return Err(malformed),
    };
    let era = text("era")?;
    if era != "modern" && era != "legacy" {
        return Err(malformed);
    }
    let mut identity = Map::new();
    identity.insert("source".into(), "mcp".into());
    identity.insert("era".into(), era.into());
    identity.insert("protocol_version".into(), text("protocol_version")?.into());
    identity.insert("transport".into(), transport.into());
    identity.insert("server_identity_sha256".into(), server_identity(facts.get("server_info"))?.into());
    identity.insert("executable_sha256".into(), executable);
    identity.insert("tools".into(), Value::Array(granted_tools(facts.get("tools"), granted)?));
    Ok(Value::Object(identity))
}

/// pins.md §8.5: the qualified digest of the launched file, exactly `^sha256:[0-9a-f]{64}$` (pins.md §4.3).
fn executable_digest(fact: Option<&Value>) -> Result<Value, PinError> {
    let digest = fact.and_then(Value::as_str).ok_or(PinError::ExecutableDigestMissing)?;
    let hex = digest.strip_prefix("sha256:").ok_or(PinError::ExecutableDigestMissing)?;
    if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(PinError::ExecutableDigestMissing);
    }
    Ok(Value::String(digest.to_owned()))
}

/// pins.md §8.2: the field hash of `{"name", "version"}` from the server information; a member that is absent
/// or not a string is `null`, and so are both when the server sent no information at all (the title, which
/// the facts keep, is cosmetic and excluded, pins.md §8.3).
fn server_identity(info: Option<&Value>) -> Result<String, PinError> {
    let empty = Map::new();
    let info = match info {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => return Err(PinError::FactsMalformed),
    };
    let member = |key: &str| match info.get(key) {
        Some(Value::String(s)) => Value::String(s.clone()),
        _ => Value::Null,
    };
    let mut identity = Map::new();
    identity.insert("name".into(), member("name"));
    identity.insert("version".into(), member("version"));
    Ok(field_hash(&Value::Object(identity)))
}

/// pins.md §8.2 and §8.4: one element per granted tool, sorted by upstream name bytes; every granted name
/// must be among the facts' tools exactly once.
fn granted_tools(tools: Option<&Value>, granted: &BTreeSet<String>) -> Result<Vec<Value>, PinError> {
    let tools = tools.and_then(Value::as_array).ok_or(PinError::FactsMalformed)?;
    let mut by_name: BTreeMap<&str, &Value> = BTreeMap::new();
    for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).ok_or(PinError::FactsMalformed)?;
        if by_name.insert(name, tool).is_some() {
            return Err(PinError::FactsMalformed);
        }
    }
    // `BTreeSet<String>` iterates in byte order, which is the order pins.md §8.2 requires.
    granted
        .iter()
        .map(|name| {
            by_name.get(name.as_str()).ok_or(PinError::GrantedToolMissing).and_then(|t| tool(name, t))
        })
        .collect()
}

/// One `tools` element of pins.md §8.2. Facts record an absent member as `null` (providers.md §7.4), which is
/// the field's `null` here; any other advertised value is hashed exactly as received, so that every change of
/// it changes the pin.
fn tool(name: &str, fact: &Value) -> Result<Value, PinError> {
    let hashed = |key: &str| match fact.get(key) {
        None | Some(Value::Null) => Value::Null,
        Some(value) => Value::String(field_hash(value)),
    };
    let input_schema = hashed("input_schema");
    if input_schema == Value::Null {
        // providers.md §7.3: a listed tool always has an `inputSchema` object.
        return Err(PinError::FactsMalformed);
    }
    let mut element = Map::new();
    element.insert("name".into(), name.into());
    element.insert("description_sha256".into(), hashed("description"));
    element.insert("input_schema_sha256".into(), input_schema);
    element.insert("output_schema_sha256".into(), hashed("output_schema"));
    element.insert("annotations_sha256".into(), hashed("annotations"));
    Ok(Value::Object(element))
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
