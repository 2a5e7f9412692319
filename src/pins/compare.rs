//! The exact-match rules of stage 9d (pins.md §9.2–§9.3) as pure functions over pin maps, each failure one
//! closed startup code.
//!
//! Owns what "matches" means: byte equality of qualified strings, equal key sets, the provider-free rule.
//! Does not own the order of the passes or of the sites (the startup stage walks tools in ascending name
//! order and sites in ascending (tool, declaration) order, pins.md §9.3) nor computing any pin.
//!
//! A configured map is `None` only in discovery mode, where these checks never run (pins.md §10.1); here it
//! is read as `{}`, which for a provider-bearing tool is a mismatch like any other missing key.

use serde_json::Value;

use super::PinMap;
use crate::codes::StartupCode;
use crate::explain::{Explain, Fact, Facts};
use crate::json::to_deterministic_string;

/// A configured pin member that differs from what startup computed (pins.md §9.2–§9.3): the member, the
/// rule, and both values as deterministic JSON (lifecycle.md §1.5). Pins are digests and names, never
/// secrets.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct PinMismatch {
    /// `installation_pin_mismatch` or `provider_pin_mismatch`.
    pub code: StartupCode,
    /// The pin member of the gateway document's tool entry.
    pub field: &'static str,
    pub reason: String,
    /// The configured value and the computed one, when the rule compares values (not for a configured key
    /// that names no site).
    pub values: Option<(String, String)>,
}

impl Explain for PinMismatch {
    fn code(&self) -> StartupCode {
        self.code
    }

    fn explain(&self, facts: &mut Facts) {
        facts.insert(Fact::Field, self.field.to_owned());
        facts.insert(Fact::Reason, self.reason.clone());
        if let Some((expected, computed)) = &self.values {
            facts.insert(Fact::Expected, expected.clone());
            facts.insert(Fact::Computed, computed.clone());
        }
    }
}

/// A mismatch of `field`: the configured map against the computed value.
fn mismatch(
    code: StartupCode,
    field: &'static str,
    why: &str,
    configured: Option<&PinMap>,
    computed: Value,
) -> PinMismatch {
    let values = (to_deterministic_string(&map_value(configured)), to_deterministic_string(&computed));
    PinMismatch { code, field, reason: why.to_owned(), values: Some(values) }
}

fn map_value(map: Option<&PinMap>) -> Value {
    Value::Object(or_empty(map).map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect())
}

fn or_empty(map: Option<&PinMap>) -> impl Iterator<Item = (&String, &String)> {
    map.into_iter().flatten()
}

/// pins.md §9.2: a tool whose manifest has no provider declaration has both maps `{}`. Any member of either
/// map is `provider_pin_mismatch`, even a member of `installation_config_pins`.
pub fn check_provider_free(
    installation: Option<&PinMap>,
    snapshot: Option<&PinMap>,
) -> Result<(), PinMismatch> {
    let why = "a tool without provider declarations has both pin maps {}";
    let code = StartupCode::ProviderPinMismatch;
    if or_empty(installation).next().is_some() {
        return Err(mismatch(code, "installation_config_pins", why, installation, map_value(None)));
    }
    if or_empty(snapshot).next().is_some() {
        return Err(mismatch(code, "provider_snapshot_pins", why, snapshot, map_value(None)));
    }
    Ok(())
}

/// pins.md §9.3 step 1 for a provider-bearing tool: the configured `installation_config_pins` has exactly the
/// expected key set and, for every key, the same qualified string (pins.md §4.3). A missing key, an extra key
/// or a different value is `installation_pin_mismatch`; so is `{}` where something is expected.
pub fn check_installation_pins(configured: Option<&PinMap>, expected: &PinMap) -> Result<(), PinMismatch> {
    let matches = match configured {
        Some(configured) => configured == expected,
        None => expected.is_empty(),
    };
    if matches {
        Ok(())
    } else {
        let why = "the configured installation pins differ from the installations' digests";
        let field = "installation_config_pins";
        Err(mismatch(StartupCode::InstallationPinMismatch, field, why, configured, map_value(Some(expected))))
    }
}

/// The first pass of pins.md §9.3 for one tool, whichever kind it is: an empty expected map means the tool
/// selects nothing (pins.md §7.2), so pins.md §9.2 applies; otherwise pins.md §9.3 step 1. Callers run it for
/// every tool, in ascending name order, before acquiring any site.
pub fn check_tool_first_pass(
    installation: Option<&PinMap>,
    snapshot: Option<&PinMap>,
    expected: &PinMap,
) -> Result<(), PinMismatch> {
    if expected.is_empty() {
        check_provider_free(installation, snapshot)
    } else {
        check_installation_pins(installation, expected)
    }
}

/// pins.md §9.3 step 2.4: the configured `provider_snapshot_pins` has a member `site_key` whose value equals
/// the site's actual pin byte for byte; otherwise `provider_pin_mismatch`.
pub fn check_site_snapshot(
    configured: Option<&PinMap>,
    site_key: &str,
    actual_pin: &str,
) -> Result<(), PinMismatch> {
    match configured.and_then(|map| map.get(site_key)) {
        Some(pin) if pin.as_bytes() == actual_pin.as_bytes() => Ok(()),
        _ => {
            let why = "the configured snapshot pin differs from the site's listing";
            let computed =
                Value::Object([(site_key.to_owned(), Value::from(actual_pin))].into_iter().collect());
            let configured_entry: PinMap = configured
                .and_then(|map| map.get_key_value(site_key))
                .map(|(k, v)| (k.clone(), v.clone()))
                .into_iter()
                .collect();
            let field = "provider_snapshot_pins";
            Err(mismatch(StartupCode::ProviderPinMismatch, field, why, Some(&configured_entry), computed))
        }
    }
}

/// pins.md §9.3, after a tool's last site passed: the configured snapshot map holds no key besides the actual
/// sites' keys (the key sets are equal, pins.md §8.6); otherwise `provider_pin_mismatch`.
pub fn check_no_extra_sites<'a>(
    configured: Option<&PinMap>,
    actual_keys: impl IntoIterator<Item = &'a str>,
) -> Result<(), PinMismatch> {
    let actual: std::collections::BTreeSet<&str> = actual_keys.into_iter().collect();
    if let Some((key, _)) = or_empty(configured).find(|(key, _)| !actual.contains(key.as_str())) {
        return Err(PinMismatch {
            code: StartupCode::ProviderPinMismatch,
            field: "provider_snapshot_pins",
            reason: format!("the configured key {key:?} names no provider site of the tool"),
            values: None,
        });
    }
    Ok(())
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
