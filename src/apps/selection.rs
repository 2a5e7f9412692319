//! Stage 5f (config.md §6.5): the provider selection rules S1–S11 over both provider lists of a manifest,
//! in their order, each rule over every declaration before the next; and the grants they leave: for each
//! mission, the aliases it may call and where each one goes.
//!
//! Owns the rules and the grant sets of S7. Also offers the lenient grant lookup that the forward-form
//! check of stage 5e needs before the rules have run (config.md §6.6). Does not own acquisition (which
//! installations are started, with which credentials): that is providers' concern, working from
//! [`Selections`].

use std::collections::{BTreeMap, BTreeSet};

use super::error::{fail, AppError, AppErrorKind};
use crate::config::host::{HostConfig, InstallationKind, McpInstallation, McpTransport, Source, ToolEffect};
use crate::config::manifest::{Effect, Manifest, Selection};

/// config.md §6.5 S3: the two lists together hold at most 128 declarations.
pub const MAX_DECLARATIONS: usize = 128;

/// Where one granted alias goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The `providers.mission` declaration (an `install` alias) that reaches it.
    pub declaration: String,
    /// The upstream tool name the installation maps to this alias (config.md §5.4.3).
    pub upstream_tool: String,
    /// The operator's declared effect of the upstream tool.
    pub effect: ToolEffect,
}

/// What the rules leave for the runtime and for provider acquisition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selections {
    /// Per mission (every mission of the manifest, possibly with no grants): alias → grant (S7).
    pub missions: BTreeMap<String, BTreeMap<String, Grant>>,
    /// The `providers.mission` declaration names, in ascending byte order: the sites acquired at stage 9
    /// (`mission/<alias>`).
    pub declarations: Vec<String>,
}

/// The `mcp` installation a declaration names, when it names one.
fn mcp<'h>(host: &'h HostConfig, name: &str) -> Option<&'h McpInstallation> {
    match host.install.get(name).map(|i| &i.kind) {
        Some(InstallationKind::Mcp(mcp)) => Some(mcp),
        _ => None,
    }
}

/// S7: the reachable aliases of a mission declaration, with where each goes.
fn reachable(decl: &Selection, mcp: &McpInstallation) -> Vec<(String, Grant)> {
    mcp.tools
        .iter()
        .filter(|(_, t)| decl.allow.as_ref().is_none_or(|allow| allow.contains(&t.alias)))
        .map(|(upstream, t)| {
            let grant =
                Grant { declaration: decl.name.clone(), upstream_tool: upstream.clone(), effect: t.effect };
            (t.alias.clone(), grant)
        })
        .collect()
}

/// config.md §6.6, checked in stage 5e before S1–S11 have run: whether `tool` is in the grant set of
/// `mission`, computed over whatever already resolves (declarations naming an `mcp` installation); a
/// declaration that does not resolve contributes nothing, and the rules of stage 5f refuse it later.
pub fn forward_target_granted(manifest: &Manifest, host: &HostConfig, mission: &str, tool: &str) -> bool {
    let Some(m) = manifest.missions.get(mission) else { return false };
    m.providers.iter().any(|p| {
        let Some(decl) = manifest.mission_providers.iter().find(|d| d.name == *p) else { return false };
        mcp(host, &decl.name).is_some_and(|mcp| reachable(decl, mcp).iter().any(|(alias, _)| alias == tool))
    })
}

/// Runs S1–S11 in order (config.md §6.5).
pub fn check(manifest: &Manifest, host: &HostConfig) -> Result<Selections, AppError> {
    check_lists(manifest, host)?;
    // After S1 and S2 every mission declaration names an `mcp` installation.
    let installations: Vec<(&Selection, &McpInstallation)> = manifest
        .mission_providers
        .iter()
        .map(|d| {
            mcp(host, &d.name).map(|m| (d, m)).ok_or(AppError::new(AppErrorKind::SelectionSourceRefused))
        })
        .collect::<Result<_, _>>()?;
    check_allow(&installations)?;
    let granted = grant_sets(manifest, &installations)?;
    // S9: a read application grants no write alias.
    if manifest.effect == Effect::Read
        && granted.values().flat_map(|g| g.values()).any(|g| g.effect == ToolEffect::Write)
    {
        return fail(AppErrorKind::ReadGrantsWrite);
    }
    // S10: no selected installation has `oauth`.
    let oauth = |d: &Selection| {
        mcp(host, &d.name).is_some_and(|m| matches!(&m.transport, McpTransport::StreamableHttp(h) if h.oauth))
    };
    if manifest.mission_providers.iter().chain(&manifest.workflow_providers).any(oauth) {
        return fail(AppErrorKind::OauthSelected);
    }
    // S11: snapshots never mix with live providers (S1 already refuses every snapshot selection in this
    // version), and every workflow declaration names a source served later (`llm`).
    if !manifest.workflow_providers.is_empty() {
        return fail(AppErrorKind::SourceServedLater);
    }
    let mut declarations: Vec<String> = manifest.mission_providers.iter().map(|d| d.name.clone()).collect();
    declarations.sort();
    Ok(Selections { missions: granted, declarations })
}

/// S1–S4: sources fit their lists, names resolve and are unique, grants and declarations match.
fn check_lists(manifest: &Manifest, host: &HostConfig) -> Result<(), AppError> {
    let missions = &manifest.mission_providers;
    let workflow = &manifest.workflow_providers;
    // S1: a named installation's source fits its list (`mcp` for missions, `llm` for the workflow).
    let source = |d: &Selection| host.install.get(&d.name).map(|i| i.source);
    if missions.iter().any(|d| source(d).is_some_and(|s| s != Source::Mcp))
        || workflow.iter().any(|d| source(d).is_some_and(|s| s != Source::Llm))
    {
        return fail(AppErrorKind::SelectionSourceRefused);
    }
    // S2: every declaration names an installation.
    if missions.iter().chain(workflow).any(|d| !host.install.contains_key(&d.name)) {
        return fail(AppErrorKind::SelectionInstallationUnknown);
    }
    // S3: names unique within their list; at most 128 declarations together.
    if has_duplicate(missions) || has_duplicate(workflow) {
        return fail(AppErrorKind::SelectionDuplicate);
    }
    if missions.len().saturating_add(workflow.len()) > MAX_DECLARATIONS {
        return fail(AppErrorKind::SelectionTooMany);
    }
    // S4: mission grants name declarations; every declaration is granted to some mission.
    let declared: BTreeSet<&str> = missions.iter().map(|d| d.name.as_str()).collect();
    if manifest.missions.values().flat_map(|m| &m.providers).any(|p| !declared.contains(p.as_str())) {
        return fail(AppErrorKind::MissionProviderUnknown);
    }
    if missions.iter().any(|d| !manifest.missions.values().any(|m| m.providers.contains(&d.name))) {
        return fail(AppErrorKind::DeclarationNotGranted);
    }
    Ok(())
}

/// S5 (`config` holds at most `allow`: structural, stage 5a; every `allow` entry is a mapped alias) and
/// S6 (an installation mapping a `write` tool needs `config.allow`).
fn check_allow(installations: &[(&Selection, &McpInstallation)]) -> Result<(), AppError> {
    for (d, mcp) in installations {
        let mapped = |a: &String| mcp.tools.values().any(|t| t.alias == *a);
        if d.allow.as_ref().is_some_and(|allow| !allow.iter().all(mapped)) {
            return fail(AppErrorKind::AllowNotMapped);
        }
    }
    let writes = |mcp: &McpInstallation| mcp.tools.values().any(|t| t.effect == ToolEffect::Write);
    if installations.iter().any(|(d, mcp)| d.allow.is_none() && writes(mcp)) {
        return fail(AppErrorKind::AllowRequired);
    }
    Ok(())
}

/// S7 (definitions) and S8: the grant set of every mission, whose declarations' reachable aliases must
/// be pairwise distinct.
fn grant_sets(
    manifest: &Manifest,
    installations: &[(&Selection, &McpInstallation)],
) -> Result<BTreeMap<String, BTreeMap<String, Grant>>, AppError> {
    let by_name: BTreeMap<&str, Vec<(String, Grant)>> =
        installations.iter().map(|(d, mcp)| (d.name.as_str(), reachable(d, mcp))).collect();
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
