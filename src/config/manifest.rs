//! The application manifest `ptc.json` version 1 (config.md §6.2): decoding, structure and typed form
//! (stage 5a of lifecycle.md §3.2).
//!
//! This module decodes and validates the document alone; the structure is defined once in `schema::manifest`.
//! Reading the file, the closure, the content pin, `events.policy` refusal (5b) and the checks that need
//! other files or the host document (components, missions, the selection rules of config.md §6.5) live in
//! `apps`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::document_error::{Problem, Text};
use super::schema::{self, fill_defaults, APPLICATION};
use super::{typed, Mode};
use crate::json::{self, Limits};

/// `effect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Read,
    Write,
}

/// A Luau component of the workflow or of a mission.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Component {
    pub id: String,
    /// The closure path as written (relative to the manifest's directory).
    pub path: String,
    /// As written, `[]` when absent.
    pub dependencies: Vec<String>,
}

/// `workflow.entry` (`component.function`) split at its dot.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Entry {
    pub component: String,
    pub function: String,
}

impl TryFrom<String> for Entry {
    type Error = &'static str;

    fn try_from(entry: String) -> Result<Entry, Self::Error> {
        let (component, function) = entry.split_once('.').ok_or("an entry is `component.function`")?;
        Ok(Entry { component: component.to_owned(), function: function.to_owned() })
    }
}

/// `workflow`: the Luau form or the forward form (config.md §6.2).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum Workflow {
    Luau { components: Vec<Component>, entry: Entry },
    Forward { forward: ForwardTarget },
}

/// `workflow.forward`: the one mission tool a forward application serves (config.md §6.2).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForwardTarget {
    pub mission: String,
    pub tool: String,
}

/// `contracts`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contracts {
    pub input_schema: ContractFile,
    pub result_schema: ContractFile,
}

/// `contracts.input_schema` or `contracts.result_schema`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractFile {
    /// The closure path of the JSON Schema, as written.
    pub path: String,
}

/// `missions.<m>`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mission {
    pub components: Vec<Component>,
    /// Names of `providers.mission[]` declarations granted to this mission.
    pub providers: Vec<String>,
}

/// `providers`: the declarations of the missions and of the workflow.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Providers {
    pub mission: Vec<Selection>,
    pub workflow: Vec<Selection>,
}

/// One entry of `providers.mission` or `providers.workflow`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    /// An `install` alias of the host document.
    pub name: String,
    pub config: SelectionConfig,
}

/// `config` of a selection.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectionConfig {
    /// `allow` of a mission selection; absent: every mapped alias.
    pub allow: Option<Vec<String>>,
    /// `catalog` of a workflow selection (config.md §6.5 rule S10: `true` is served later).
    #[serde(default)]
    pub catalog: bool,
}

/// `limits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppLimits {
    /// `run_duration_ms` when present (the host value applies otherwise).
    pub run_duration_ms: Option<u64>,
    /// `memory_bytes`, default 16,777,216.
    pub memory_bytes: u64,
}

/// `events`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Events {
    pub policy: EventsPolicy,
}

/// `events.policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventsPolicy {
    Normal,
    Private,
}

/// A structurally valid manifest, defaults filled: the document's own shape, read by its derived
/// `Deserialize` (`config::typed`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The decoded document exactly as written (the `0x01` record of the content pin, pins.md §6.1); not a
    /// member, set by the loader.
    #[serde(skip, default = "Manifest::not_read")]
    pub document: Value,
    /// `$schema`: the editor's hint (config.md §9.7); checked by the schema, not interpreted.
    #[serde(rename = "$schema")]
    pub schema_reference: Option<String>,
    /// Always 1 (config.md §6.2).
    pub version: u8,
    pub effect: Effect,
    pub contracts: Contracts,
    pub workflow: Workflow,
    pub missions: BTreeMap<String, Mission>,
    pub providers: Providers,
    pub limits: AppLimits,
    pub events: Events,
}

impl Manifest {
    /// The placeholder `document` until the loader sets it.
    fn not_read() -> Value {
        Value::Null
    }
}

/// Stage 5a: decode and validate one manifest's bytes. Every refusal (decoding, duplicate key, structure,
/// byte bounds) is `template_invalid` (config.md §2.8); the caller, which knows the path, names the file.
pub fn parse(bytes: &[u8]) -> Result<Manifest, Problem> {
    let document =
        json::decode(bytes, Limits::DOCUMENT).map_err(|e| Problem::not_json(bytes, e, Text::Shown))?;
    // The manifest has no mode-dependent members.
    let definition = APPLICATION.get();
    schema::validate(&definition, &document, Mode::Serve).map_err(Problem::Schema)?;
    let mut filled = document.clone();
    fill_defaults(&definition, &mut filled);
    let mut manifest: Manifest = typed::read(&filled).map_err(|typed::ShapeMismatch| Problem::Shape)?;
    manifest.document = document;
    Ok(manifest)
}

#[cfg(test)]
mod tests;
