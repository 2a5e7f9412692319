//! The exact-match rules of stage 9d (pins.md §9.2–§9.3) as pure functions over pin maps, each failure one
//! closed startup code.
//!
//! Owns what "matches" means: byte equality of qualified strings, equal key sets, the provider-free rule.
//! Does not own the order of the passes or of the sites (the startup stage walks tools in ascending name
//! order and sites in ascending (tool, declaration) order, pins.md §9.3) nor computing any pin.
//!
//! A configured map is `None` only in discovery mode, where these checks never run (pins.md §10.1); here it
//! is read as `{}`, which for a provider-bearing tool is a mismatch like any other missing key.

use super::PinMap;
use crate::codes::StartupCode;

fn or_empty(map: Option<&PinMap>) -> impl Iterator<Item = (&String, &String)> {
    map.into_iter().flatten()
}

/// pins.md §9.2: a tool whose manifest has no provider declaration has both maps `{}`. Any member of either
/// map is `provider_pin_mismatch`, even a member of `installation_config_pins`.
pub fn check_provider_free(
    installation: Option<&PinMap>,
    snapshot: Option<&PinMap>,
) -> Result<(), StartupCode> {
    if or_empty(installation).next().is_some() || or_empty(snapshot).next().is_some() {
        return Err(StartupCode::ProviderPinMismatch);
    }
    Ok(())
}

/// pins.md §9.3 step 1 for a provider-bearing tool: the configured `installation_config_pins` has exactly the
/// expected key set and, for every key, the same qualified string (pins.md §4.3). A missing key, an extra key
/// or a different value is `installation_pin_mismatch`; so is `{}` where something is expected.
pub fn check_installation_pins(configured: Option<&PinMap>, expected: &PinMap) -> Result<(), StartupCode> {
    let matches = match configured {
        Some(configured) => configured == expected,
        None => expected.is_empty(),
    };
    if matches {
        Ok(())
    } else {
        Err(StartupCode::InstallationPinMismatch)
    }
}

/// The first pass of pins.md §9.3 for one tool, whichever kind it is: an empty expected map means the tool
/// selects nothing (pins.md §7.2), so pins.md §9.2 applies; otherwise pins.md §9.3 step 1. Callers run it for
/// every tool, in ascending name order, before acquiring any site.
pub fn check_tool_first_pass(
    installation: Option<&PinMap>,
    snapshot: Option<&PinMap>,
    expected: &PinMap,
) -> Result<(), StartupCode> {
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
) -> Result<(), StartupCode> {
    match configured.and_then(|map| map.get(site_key)) {
        Some(pin) if pin.as_bytes() == actual_pin.as_bytes() => Ok(()),
        _ => Err(StartupCode::ProviderPinMismatch),
    }
}

/// pins.md §9.3, after a tool's last site passed: the configured snapshot map holds no key besides the actual
/// sites' keys (the key sets are equal, pins.md §8.6); otherwise `provider_pin_mismatch`.
pub fn check_no_extra_sites<'a>(
    configured: Option<&PinMap>,
    actual_keys: impl IntoIterator<Item = &'a str>,
) -> Result<(), StartupCode> {
    let actual: std::collections::BTreeSet<&str> = actual_keys.into_iter().collect();
    if or_empty(configured).any(|(key, _)| !actual.contains(key.as_str())) {
        return Err(StartupCode::ProviderPinMismatch);
    }
    Ok(())
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
