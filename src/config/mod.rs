//! The three documents the gateway reads before it serves (config.md): the gateway document, the host
//! document and the application manifest; plus path anchoring, the environment file and credential
//! capture.
//!
//! Each document is decoded with the strict decoder (`crate::json`), validated against a schema defined
//! once in code (`schema`), which also generates the published JSON Schemas, then checked semantically and
//! turned into the typed form the rest of the startup uses. Nothing here touches the network, and only the
//! loaders read files.

pub mod credentials;
pub mod document_error;
pub mod envfile;
pub mod gateway;
pub mod host;
pub mod manifest;
pub mod origin;
pub mod paths;
pub mod schema;
pub mod secret;
pub(crate) mod typed;

/// Which form of `ptc gateway` is running (config.md §1): it changes which pin fields are required and
/// whether the bearer binding is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `ptc gateway CONFIG`.
    Serve,
    /// `ptc gateway CONFIG --print-pins`.
    Discovery,
}

#[cfg(test)]
mod config_props;
