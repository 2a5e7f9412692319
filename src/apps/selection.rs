//! Stage 5f (config.md §6.5): the provider selection rules S1–S12 over both provider lists of a manifest,
//! in their order, each rule over every declaration before the next; and the grants they leave: for each
//! mission, the aliases it may call and where each one goes.
//!
//! Owns the rules and the grant sets they define (rule S7). Also offers the lenient grant lookup that the
//! forward-form check of stage 5e needs before the rules have run (config.md §6.6). Does not own acquisition
//! (which installations are started, with which credentials): that is providers' concern, working from
//! [`Selections`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::error::{fail, AppError, AppErrorKind};
use crate::config::host::{HostConfig, InstallationKind, McpInstallation, McpTransport, Source, ToolEffect};
use crate::config::manifest::{Effect, Manifest, Selection, Workflow};

/// Selection rule S3 (config.md §6.5): the two lists together hold at most 128 declarations.
pub const MAX_DECLARATIONS: usize = 128;

/// Where one granted alias goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The `providers.mission` declaration (an `install` alias) that reaches it.
    pub declaration: String,
    /// The upstream tool name the installation maps to this alias (config.md §5.4.3); for a snapshot,
    /// the `hist` tool's name (`runs`, `open`, `read`, `counters`, traces.md §9.1).
    pub upstream_tool: String,
    /// The operator's declared effect of the upstream tool; `read` for a snapshot.
    pub effect: ToolEffect,
}

/// What the rules leave for the runtime and for provider acquisition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selections {
    /// Per mission (every mission of the manifest, possibly with no grants): alias → grant (its grant set,
    /// config.md §6.5 rule S7).
    pub missions: BTreeMap<String, BTreeMap<String, Grant>>,
    /// The `providers.mission` declaration names of `mcp` installations, in ascending byte order: the
    /// sites acquired at stage 9 (`mission/<alias>`).
    pub declarations: Vec<String>,
    /// The `ptc_trace_snapshot` declarations of a cold tool and their anchored directories
    /// (traces.md §9.1): read anew by every call, never acquired.
    pub snapshots: BTreeMap<String, PathBuf>,
    /// The `providers.workflow` declarations (`llm` installations), in ascending byte order: the model
    /// sites `workflow/<alias>` that `model(name)` reaches (models.md §2).
    pub models: Vec<String>,
}

impl Selections {
    /// Every declaration of either list, acquired, snapshot or model, in ascending byte order, each once:
    /// what the installation pins cover (pins.md §7.2).
    pub fn all_declarations(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .declarations
            .iter()
            .chain(self.snapshots.keys())
            .chain(&self.models)
            .map(String::as_str)
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// The four aliases a snapshot declaration reaches, with their `hist` tool names (traces.md §9.1).
pub const HIST_ALIASES: [(&str, &str); 4] =
    [("hist.counters", "counters"), ("hist.open", "open"), ("hist.read", "read"), ("hist.runs", "runs")];

/// What a mission declaration names, once its source fits its list and it names an installation
/// (config.md §6.5 rules S1, S2).
#[derive(Clone, Copy)]
enum Reached<'h> {
    Mcp(&'h McpInstallation),
    Snapshot(&'h Path),
}

/// The installation a mission declaration names, when it is of a source missions accept.
fn reached<'h>(host: &'h HostConfig, name: &str) -> Option<Reached<'h>> {
    match host.install.get(name).map(|i| &i.kind) {
        Some(InstallationKind::Mcp(mcp)) => Some(Reached::Mcp(mcp)),
        Some(InstallationKind::TraceSnapshot { directory }) => Some(Reached::Snapshot(directory)),
        _ => None,
    }
}

/// The `mcp` installation a declaration names, when it names one.
fn mcp<'h>(host: &'h HostConfig, name: &str) -> Option<&'h McpInstallation> {
    match host.install.get(name).map(|i| &i.kind) {
        Some(InstallationKind::Mcp(mcp)) => Some(mcp),
        _ => None,
    }
}

/// The reachable aliases (config.md §6.5 rule S7) of a mission declaration, with where each goes.
fn reachable(decl: &Selection, mcp: &McpInstallation) -> Vec<(String, Grant)> {
    mcp.tools
        .iter()
        .filter(|(_, t)| decl.config.allow.as_ref().is_none_or(|allow| allow.contains(&t.alias)))
        .map(|(upstream, t)| {
            let grant =
                Grant { declaration: decl.name.clone(), upstream_tool: upstream.clone(), effect: t.effect };
            (t.alias.clone(), grant)
        })
        .collect()
}

/// The reachable aliases of a snapshot declaration (config.md §6.5 rule S7, traces.md §9.1): the four `hist`
/// aliases, or those `config.allow` keeps.
fn reachable_hist(decl: &Selection) -> Vec<(String, Grant)> {
    HIST_ALIASES
        .iter()
        .filter(|(alias, _)| decl.config.allow.as_ref().is_none_or(|allow| allow.iter().any(|a| a == alias)))
        .map(|(alias, tool)| {
            let grant = Grant {
                declaration: decl.name.clone(),
                upstream_tool: (*tool).to_owned(),
                effect: ToolEffect::Read,
            };
            ((*alias).to_owned(), grant)
        })
        .collect()
}

fn reachable_of(decl: &Selection, reached: Reached<'_>) -> Vec<(String, Grant)> {
    match reached {
        Reached::Mcp(mcp) => reachable(decl, mcp),
        Reached::Snapshot(_) => reachable_hist(decl),
    }
}

/// config.md §6.6, checked in stage 5e before the selection rules (config.md §6.5) have run: whether `tool`
/// is in the grant set of `mission`, computed over whatever already resolves (declarations naming an `mcp`
/// installation); a declaration that does not resolve contributes nothing, and the rules of stage 5f refuse
/// it later.
pub fn forward_target_granted(manifest: &Manifest, host: &HostConfig, mission: &str, tool: &str) -> bool {
    let Some(m) = manifest.missions.get(mission) else { return false };
    m.providers.iter().any(|p| {
        let Some(decl) = manifest.providers.mission.iter().find(|d| d.name == *p) else { return false };
        reached(host, &decl.name)
            .is_some_and(|r| reachable_of(decl, r).iter().any(|(alias, _)| alias == tool))
    })
}

/// Runs the selection rules S1–S12 in order (config.md §6.5).
pub fn check(manifest: &Manifest, host: &HostConfig) -> Result<Selections, AppError> {
    check_lists(manifest, host)?;
    // Once sources fit and names resolve (rules S1, S2), every mission declaration names an `mcp` or
    // `ptc_trace_snapshot` installation.
    let installations: Vec<(&Selection, Reached<'_>)> = manifest
        .providers
        .mission
        .iter()
        .map(|d| {
            reached(host, &d.name).map(|r| (d, r)).ok_or(AppError::new(AppErrorKind::SelectionSourceRefused))
        })
        .collect::<Result<_, _>>()?;
    check_allow(&installations)?;
    let granted = grant_sets(manifest, &installations)?;
    // Selection rule S9 (config.md §6.5): a read application grants no write alias.
    if manifest.effect == Effect::Read
        && granted.values().flat_map(|g| g.values()).any(|g| g.effect == ToolEffect::Write)
    {
        return fail(AppErrorKind::ReadGrantsWrite);
    }
    // Selection rule S10 (config.md §6.5): no selected installation has `oauth`, and no workflow selection
    // asks for the seed's catalog form (served later).
    let oauth = |d: &Selection| {
        mcp(host, &d.name).is_some_and(|m| matches!(&m.transport, McpTransport::StreamableHttp(h) if h.oauth))
    };
    if manifest.providers.mission.iter().chain(&manifest.providers.workflow).any(oauth) {
        return fail(AppErrorKind::OauthSelected);
    }
    if manifest.providers.workflow.iter().any(|d| d.config.catalog) {
        return fail(AppErrorKind::CatalogSelected);
    }
    // Selection rule S11 (config.md §6.5, traces.md §9.1): snapshots never mix with live providers,
    // mission or model.
    let snapshots: BTreeMap<String, PathBuf> = installations
        .iter()
        .filter_map(|(d, r)| match r {
            Reached::Snapshot(dir) => Some((d.name.clone(), dir.to_path_buf())),
            Reached::Mcp(_) => None,
        })
        .collect();
    let live = installations.len() - snapshots.len() + manifest.providers.workflow.len();
    if !snapshots.is_empty() && live > 0 {
        return fail(AppErrorKind::SnapshotMixed);
    }
    // Selection rule S12 (config.md §6.5, models.md §2): a model call's effect is unknown, so an application
    // that declares a model is a write application, whose every call is audited.
    if !manifest.providers.workflow.is_empty() && manifest.effect == Effect::Read {
        return fail(AppErrorKind::ModelInReadApplication);
    }
    // Selection rule S12, forward form: a forward application has no workflow code, so a model it declared
    // could never be called (like a mission declaration no mission grants, rule S4).
    if !manifest.providers.workflow.is_empty() && matches!(manifest.workflow, Workflow::Forward { .. }) {
        return fail(AppErrorKind::ModelInForward);
    }
    let mut models: Vec<String> = manifest.providers.workflow.iter().map(|d| d.name.clone()).collect();
    models.sort();
    let mut declarations: Vec<String> = installations
        .iter()
        .filter(|(_, r)| matches!(r, Reached::Mcp(_)))
        .map(|(d, _)| d.name.clone())
        .collect();
    declarations.sort();
    Ok(Selections { missions: granted, declarations, snapshots, models })
}

/// Selection rules S1–S4 (config.md §6.5): sources fit their lists, names resolve and are unique, grants and
/// declarations match.
fn check_lists(manifest: &Manifest, host: &HostConfig) -> Result<(), AppError> {
    let missions = &manifest.providers.mission;
    let workflow = &manifest.providers.workflow;
    // Rule S1: a named installation's source fits its list (`mcp` or `ptc_trace_snapshot` for missions, `llm`
    // for the workflow).
    let source = |d: &Selection| host.install.get(&d.name).map(|i| i.source);
    let mission_source = |s: Source| matches!(s, Source::Mcp | Source::PtcTraceSnapshot);
    if missions.iter().any(|d| source(d).is_some_and(|s| !mission_source(s)))
        || workflow.iter().any(|d| source(d).is_some_and(|s| s != Source::Llm))
    {
        return fail(AppErrorKind::SelectionSourceRefused);
    }
    // Rule S2: every declaration names an installation.
    if missions.iter().chain(workflow).any(|d| !host.install.contains_key(&d.name)) {
        return fail(AppErrorKind::SelectionInstallationUnknown);
    }
    // Rule S3: names unique within their list; at most 128 declarations together.
    if has_duplicate(missions) || has_duplicate(workflow) {
        return fail(AppErrorKind::SelectionDuplicate);
    }
    if missions.len().saturating_add(workflow.len()) > MAX_DECLARATIONS {
        return fail(AppErrorKind::SelectionTooMany);
    }
    // Rule S4: mission grants name declarations; every declaration is granted to some mission.
    let declared: BTreeSet<&str> = missions.iter().map(|d| d.name.as_str()).collect();
    if manifest.missions.values().flat_map(|m| &m.providers).any(|p| !declared.contains(p.as_str())) {
        return fail(AppErrorKind::MissionProviderUnknown);
    }
    if missions.iter().any(|d| !manifest.missions.values().any(|m| m.providers.contains(&d.name))) {
        return fail(AppErrorKind::DeclarationNotGranted);
    }
    Ok(())
}

/// Selection rules S5 (config.md §6.5: `config` holds at most `allow`: structural, stage 5a; every `allow`
/// entry is a mapped alias) and S6 (an installation mapping a `write` tool needs `config.allow`).
fn check_allow(installations: &[(&Selection, Reached<'_>)]) -> Result<(), AppError> {
    for (d, r) in installations {
        let mapped = |a: &String| match r {
            Reached::Mcp(mcp) => mcp.tools.values().any(|t| t.alias == *a),
            Reached::Snapshot(_) => HIST_ALIASES.iter().any(|(alias, _)| alias == a),
        };
        if d.config.allow.as_ref().is_some_and(|allow| !allow.iter().all(mapped)) {
            return fail(AppErrorKind::AllowNotMapped);
        }
    }
    let writes = |r: &Reached<'_>| match r {
        Reached::Mcp(mcp) => mcp.tools.values().any(|t| t.effect == ToolEffect::Write),
        Reached::Snapshot(_) => false,
    };
    if installations.iter().any(|(d, r)| d.config.allow.is_none() && writes(r)) {
        return fail(AppErrorKind::AllowRequired);
    }
    Ok(())
}

/// Selection rules S7 (definitions) and S8 (config.md §6.5): the grant set of every mission, whose
/// declarations' reachable aliases must be pairwise distinct.
fn grant_sets(
    manifest: &Manifest,
    installations: &[(&Selection, Reached<'_>)],
) -> Result<BTreeMap<String, BTreeMap<String, Grant>>, AppError> {
    let by_name: BTreeMap<&str, Vec<(String, Grant)>> =
        installations.iter().map(|(d, r)| (d.name.as_str(), reachable_of(d, *r))).collect();
    let mut granted = BTreeMap::new();
    for (name, mission) in &manifest.missions {
        let mut grants = BTreeMap::new();
        for p in &mission.providers {
            for (alias, grant) in by_name.get(p.as_str()).into_iter().flatten() {
                if grants.insert(alias.clone(), grant.clone()).is_some() {
                    return fail(AppErrorKind::AliasCollision);
                }
            }
        }
        granted.insert(name.clone(), grants);
    }
    Ok(granted)
}

fn has_duplicate(list: &[Selection]) -> bool {
    let mut seen = BTreeSet::new();
    list.iter().any(|d| !seen.insert(d.name.as_str()))
}
