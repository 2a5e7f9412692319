//! The installation and provider snapshot pins (pins.md §7–§8) and the exact-match rules that compare them
//! at startup (pins.md §9.2–§9.3), as pure functions.
//!
//! Owns what each pin covers: the installation projection's digest and the expected map (`installation`),
//! the acquisition identity built from the facts of providers.md §7.4 and its digest (`snapshot`), and the
//! comparisons with their closed startup codes (`compare`). Does not own the hash primitives or `TCJ`
//! (`crate::json::canonical`), the projection's default insertion (`crate::config::host`, from the schema
//! that validated the document), the content pin (`crate::apps::content_pin`), acquiring anything
//! (`crate::providers`) or the order of the startup stages (`startup`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::codes::StartupCode;
use crate::explain::{Explain, Fact, Facts};

pub mod compare;
pub mod installation;
pub mod rewrite;
pub mod snapshot;

pub use compare::{
    check_installation_pins, check_no_extra_sites, check_provider_free, check_site_snapshot,
    check_tool_first_pass, PinMismatch,
};
pub use installation::{expected_installation_map, installation_pin, selected_aliases};
pub use snapshot::{granted_upstream_names, identity, site_key, snapshot_pin};

/// A pin map as the gateway document holds it (config.md §4.2): installation alias or site key → qualified
/// digest. The same type is the expected and the actual map, so comparisons are map equality.
pub type PinMap = BTreeMap<String, String>;

/// Why a pin could not be computed. Closed; each maps onto one startup code (lifecycle.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// A selected alias names no installation of the host document. Stage 5 (config.md §6.5 rule S1) refuses
    /// such a manifest first, so reaching this is a defect of the caller.
    #[error("a selected alias names no installation")]
    UnknownInstallation,
    /// The facts document is not the shape providers.md §7.4 records (a missing or mistyped member, a
    /// tool without `name` or `input_schema`, a name listed twice): no identity (pins.md §9.3 step 3).
    #[error("the upstream's listing does not have the recorded shape")]
    FactsMalformed,
    /// A stdio site without a qualified executable digest (pins.md §8.5).
    #[error("the stdio command's executable has no digest")]
    ExecutableDigestMissing,
    /// A granted upstream tool is not among the facts' tools (pins.md §8.4). Acquisition refuses this
    /// first (`provider_runtime_unavailable`); here it can only mean the facts and grants disagree.
    #[error("a granted upstream tool is not in the upstream's listing")]
    GrantedToolMissing,
}

impl Explain for PinError {
    /// A site that cannot produce an identity is `provider_pin_unavailable` (pins.md §9.3 step 3); an
    /// unknown alias is an internal defect.
    fn code(&self) -> StartupCode {
        match self {
            PinError::UnknownInstallation => StartupCode::InternalError,
            PinError::FactsMalformed | PinError::ExecutableDigestMissing | PinError::GrantedToolMissing => {
                StartupCode::ProviderPinUnavailable
            }
        }
    }

    /// The rule, as a sentence (lifecycle.md §1.5).
    fn explain(&self, facts: &mut Facts) {
        facts.insert(Fact::Reason, self.to_string());
    }
}

/// A pin map as a JSON object, for the `--print-pins` output (pins.md §10.3).
pub fn to_value(map: &PinMap) -> Value {
    Value::Object(
        map.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<Map<String, Value>>(),
    )
}
