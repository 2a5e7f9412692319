//! The installation configuration digest (pins.md §7.2) and a tool's expected installation map.
//!
//! Owns the digest of one projection and which aliases a manifest's map holds. Does not own the projection
//! itself (`crate::config::host::installation_projection`, whose defaults come from the schema that
//! validated the host document, pins.md §7.1) nor the comparison with the configured map (`compare`).

use std::collections::BTreeSet;

use super::{PinError, PinMap};
use crate::config::host::{installation_projection, HostConfig};
use crate::config::manifest::Manifest;
use crate::json::canonical::LABEL_INSTALLATION_CONFIG;
use crate::json::labelled_pin;

/// `installation_pin(a) = "sha256:" ‖ hex(H(label, TCJ(P(a))))` (pins.md §7.2). The alias is not hashed:
/// moving an installation to another alias keeps its pin (pins.md §7.3).
pub fn installation_pin(host: &HostConfig, alias: &str) -> Result<String, PinError> {
    let installation = host.install.get(alias).ok_or(PinError::UnknownInstallation)?;
    Ok(labelled_pin(LABEL_INSTALLATION_CONFIG, &installation_projection(installation)))
}

/// The distinct installation aliases a manifest selects, from both `providers.mission[]` and
/// `providers.workflow[]` (pins.md §7.2), in ascending byte order.
pub fn selected_aliases(manifest: &Manifest) -> BTreeSet<&str> {
    manifest.providers.mission.iter().chain(&manifest.providers.workflow).map(|s| s.name.as_str()).collect()
}

/// A tool's expected map (pins.md §7.2): one member per distinct alias in `aliases`, valued by its pin.
/// Computable from the two documents alone; `{}` for a tool that selects nothing. Pass
/// [`selected_aliases`] of the manifest (or a built template's declarations, which are the same aliases
/// once stage 5 has refused every workflow-list source of this version).
pub fn expected_installation_map<'a>(
    aliases: impl IntoIterator<Item = &'a str>,
    host: &HostConfig,
) -> Result<PinMap, PinError> {
    aliases.into_iter().map(|alias| Ok((alias.to_owned(), installation_pin(host, alias)?))).collect()
}

#[cfg(test)]
#[path = "installation_tests.rs"]
mod tests;
