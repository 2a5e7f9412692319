//! The application manifest `ptc.json` version 1 (config.md §6.2): schema and typed form.
//!
//! This module decodes and validates the document alone. The closure (reading the named files), the
//! content pin and the checks that need those files live in `crate::apps`.

use std::collections::BTreeMap;

use crate::json::Value;
use crate::startup::StartupCode;

/// `effect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Read,
    Write,
}

/// A Luau component of the workflow or of a mission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Component {
    pub id: String,
    /// The closure path as written (relative to the manifest's directory).
    pub path: String,
    /// As written, `[]` when absent.
    pub dependencies: Vec<String>,
}

/// `workflow.entry` split at its dot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub component: String,
    pub function: String,
}

/// `workflow`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Workflow {
    Luau { components: Vec<Component>, entry: Entry },
    Forward { mission: String, tool: String },
}

/// `missions.<m>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mission {
    pub components: Vec<Component>,
    /// Names of `providers.mission[]` declarations granted to this mission.
    pub providers: Vec<String>,
}

/// One entry of `providers.mission` or `providers.workflow`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// An `install` alias of the host document.
    pub name: String,
    /// `config.allow`, absent: every mapped alias.
    pub allow: Option<Vec<String>>,
}

/// `events.policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventsPolicy {
    Normal,
    Private,
}

/// A structurally valid manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The decoded document exactly as written (the `0x01` record of the content pin, pins.md §6.1).
    pub document: Value,
    pub effect: Effect,
    /// `contracts.input_schema.path`.
    pub input_contract: String,
    /// `contracts.result_schema.path`.
    pub result_contract: String,
    pub workflow: Workflow,
    pub missions: BTreeMap<String, Mission>,
    pub mission_providers: Vec<Selection>,
    pub workflow_providers: Vec<Selection>,
    /// `limits.run_duration_ms` when present (the host value applies otherwise).
    pub run_duration_ms: Option<u64>,
    /// `limits.memory_bytes`, default 16,777,216.
    pub memory_bytes: u64,
    pub events_policy: EventsPolicy,
}

/// Stage 5a: decode and validate one manifest's bytes (→ `template_invalid`).
pub fn parse(bytes: &[u8]) -> Result<Manifest, StartupCode> {
    let _ = bytes;
    Err(StartupCode::TemplateInvalid)
}
