//! The closed codes that several layers share: each is a wire spelling fixed by the specification, and
//! adding a variant is a contract change.
//!
//! Owns the code types, their spellings and the properties the specification tables fix for them:
//! [`startup`] the startup catalog (lifecycle.md §4), [`model`] the model failure classes (models.md §6),
//! [`provider`] the provider failure classes and
//! dispatch states (providers.md §14, §1), [`transport`] the `transport` record's fault
//! (providers.md §12.2), [`outcome`] a call's outcome and dispatch codes (execution.md §6), [`readiness`]
//! the `not_ready` causes (audit-events.md §4.2), [`abnormal`] the abnormal-stop causes
//! (lifecycle.md §7.5), [`stage`] the shutdown stages and their deadlines (lifecycle.md §7.2, §7.3), and
//! [`domain`] the binding of these three to the generic runtime of `ptc_actors` with the aliases the crate
//! names it through. It does not decide when a code applies: the layers that report them do.
//!
//! A leaf module: it imports nothing of this crate (only `ptc_actors`, below the whole crate), so every
//! layer can name these codes without depending on the layer that reports them.

/// Implements `serde::Serialize` for closed codes as their wire spelling (`as_str`), so the records that
/// carry a code derive their encoding and each spelling stays written once, in its `as_str`.
macro_rules! serialize_as_str {
    ($($code:ty),+ $(,)?) => {$(
        impl serde::Serialize for $code {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    )+};
}
pub(crate) use serialize_as_str;

pub mod abnormal;
pub mod domain;
pub mod model;
pub mod outcome;
pub mod provider;
pub mod readiness;
pub mod stage;
pub mod startup;
pub mod transport;

pub use abnormal::AbnormalCause;
pub use domain::GatewayDomain;
pub use readiness::NotReadyCause;
pub use stage::StageId;

pub use startup::StartupCode;
