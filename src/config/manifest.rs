//! The application manifest `ptc.json` version 1 (config.md §6.2): decoding, structure and typed form
//! (stage 5a of lifecycle.md §3.2).
//!
//! This module decodes and validates the document alone; the structure is defined once in
//! `schema::manifest`. Reading the file, the closure, the content pin, `events.policy` refusal (5b) and
//! the checks that need other files or the host document (components, missions, S1–S12) live in
//! `apps`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::schema::access::{array_at, at, int_at, object_at, str_at, string_at, strings_at};
use super::schema::{self, fill_defaults, APPLICATION};
use super::{explained, Mode};
use crate::codes::StartupCode;
use crate::json::{self, as_integer, Limits};

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
    /// `config.catalog` of a workflow selection (config.md §6.5 S10: `true` is served later).
    pub catalog: bool,
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

/// Stage 5a: decode and validate one manifest's bytes. Every refusal (decoding, duplicate key, structure,
/// byte bounds) is `template_invalid` (config.md §2.8).
pub fn parse(bytes: &[u8]) -> Result<Manifest, StartupCode> {
    let document =
        json::decode(bytes, Limits::DOCUMENT).map_err(explained::decode_as(StartupCode::TemplateInvalid))?;
    // The manifest has no mode-dependent members.
    schema::validate(&APPLICATION, &document, Mode::Serve)
        .map_err(explained::schema_as(StartupCode::TemplateInvalid))?;
    let mut filled = document.clone();
    fill_defaults(&APPLICATION, &mut filled);
    build(document, &filled).ok_or(StartupCode::TemplateInvalid)
}

fn build(document: Value, m: &Value) -> Option<Manifest> {
    let effect = match str_at(m, &["effect"])? {
        "read" => Effect::Read,
        "write" => Effect::Write,
        _ => return None,
    };
    let workflow = match at(m, &["workflow", "forward"]) {
        Some(forward) => Workflow::Forward {
            mission: string_at(forward, &["mission"])?,
            tool: string_at(forward, &["tool"])?,
        },
        None => {
            let (component, function) = str_at(m, &["workflow", "entry"])?.split_once('.')?;
            Workflow::Luau {
                components: components(m, &["workflow", "components"])?,
                entry: Entry { component: component.to_owned(), function: function.to_owned() },
            }
        }
    };
    let missions = object_at(m, &["missions"])?
        .iter()
        .map(|(name, mission)| {
            let mission = Mission {
                components: components(mission, &["components"])?,
                providers: strings_at(mission, &["providers"])?,
            };
            Some((name.clone(), mission))
        })
        .collect::<Option<_>>()?;
    let events_policy = match str_at(m, &["events", "policy"])? {
        "normal" => EventsPolicy::Normal,
        "private" => EventsPolicy::Private,
        _ => return None,
    };
    Some(Manifest {
        effect,
        input_contract: string_at(m, &["contracts", "input_schema", "path"])?,
        result_contract: string_at(m, &["contracts", "result_schema", "path"])?,
        workflow,
        missions,
        mission_providers: selections(m, "mission")?,
        workflow_providers: selections(m, "workflow")?,
        run_duration_ms: match at(m, &["limits", "run_duration_ms"]) {
            None => None,
            Some(v) => Some(u64::try_from(as_integer(v)?).ok()?),
        },
        memory_bytes: int_at(m, &["limits", "memory_bytes"])?,
        events_policy,
        document,
    })
}

fn components(value: &Value, path: &[&str]) -> Option<Vec<Component>> {
    array_at(value, path)?
        .iter()
        .map(|c| {
            Some(Component {
                id: string_at(c, &["id"])?,
                path: string_at(c, &["path"])?,
                dependencies: strings_at(c, &["dependencies"])?,
            })
        })
        .collect()
}

fn selections(m: &Value, list: &str) -> Option<Vec<Selection>> {
    array_at(m, &["providers", list])?
        .iter()
        .map(|s| {
            let allow = match at(s, &["config", "allow"]) {
                None => None,
                Some(_) => Some(strings_at(s, &["config", "allow"])?),
            };
            let catalog = matches!(at(s, &["config", "catalog"]), Some(Value::Bool(true)));
            Some(Selection { name: string_at(s, &["name"])?, allow, catalog })
        })
        .collect()
}

#[cfg(test)]
mod tests;
