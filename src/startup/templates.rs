//! Stage 5 (lifecycle.md §3.2): every tool's template, in name order, then the catalog checks.
//!
//! The rules are `crate::apps`'s (selection rules S1–S12 included: OAuth and reserved sources stay refused
//! there). Tools with `providers.mission` or `providers.workflow` declarations are served: their sites
//! are acquired, and their model sites made, at stage 9 (`startup::providers`).

use crate::apps::{self, AppDetail, AppError, AppErrorKind, Built};
use crate::config::Mode;
use crate::explain::{self, Fact};
use crate::startup::documents::Documents;
use crate::startup::StartupCode;

pub use crate::apps::Template;

/// Runs stage 5 (without 5d in discovery mode).
pub fn build(docs: &Documents, mode: Mode) -> Result<Built, StartupCode> {
    let report = |e: AppError| {
        tracing::debug!(reason = e.describe(), "template refused");
        note_detail(&e);
        // A deeper site may have noted a sharper reason (a manifest's schema rule) for `ptc check`.
        explain::note_if_absent(Fact::Reason, e.describe());
        e.code()
    };
    let mut ordered: Vec<_> = docs.gateway.tools.iter().collect();
    ordered.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    let mut templates = Vec::with_capacity(ordered.len());
    for tool in ordered {
        // lifecycle.md §1.5: a refusal of 5a–5g names its tool and manifest.
        explain::note(Fact::Tool, tool.name.as_str());
        explain::note_with(Fact::Document, || tool.manifest.display().to_string());
        let manifest = apps::load_manifest(&tool.manifest).map_err(report)?;
        let template = apps::build(tool, &manifest, &docs.host, mode).map_err(report)?;
        templates.push(template);
    }
    explain::clear_except(&[Fact::Stage]);
    apps::finish(templates).map_err(report)
}

/// The file of the application a refusal is about, and what is wrong in it (lifecycle.md §1.5): Luau's
/// message for a component that does not compile, the position and line of a contract that is not JSON.
/// A changed application whose component does not compile gets a hint that pinning would not help, in
/// place of the one that suggests `ptc pin`.
fn note_detail(e: &AppError) {
    let Some(detail) = e.detail.as_deref() else { return };
    if let Some(place) = detail.place() {
        explain::note(Fact::Component, place);
    }
    match detail {
        AppDetail::Compile { message, .. } | AppDetail::Load { message } => {
            explain::note(Fact::Message, message.as_str())
        }
        AppDetail::NotJson { reason, excerpt, .. } => {
            explain::note(Fact::Reason, reason.as_str());
            explain::note(Fact::Excerpt, excerpt.as_str());
        }
    }
    if e.kind == AppErrorKind::ContentDigestMismatch {
        let (reason, hint) = match detail {
            AppDetail::Compile { .. } => (
                "the application changed, and a component does not compile",
                "fix the component first: pinning an application that does not compile would not help",
            ),
            AppDetail::NotJson { .. } => (
                "the application changed, and a contract file is not strict JSON",
                "fix the contract first: pinning an application with a broken contract would not help",
            ),
            // The check of a changed application compiles and decodes; it does not load (probe).
            AppDetail::Load { .. } => return,
        };
        explain::note(Fact::Reason, reason);
        explain::note(Fact::Hint, hint);
    }
}

/// `D` of lifecycle.md §10.1: provider declarations over all served tools, counted per tool.
pub fn declaration_count(built: &Built) -> u64 {
    built.templates.iter().map(|t| t.selections.all_declarations().len() as u64).sum()
}

/// Every installation alias some served tool acquires, sorted, without repetition: the installations
/// whose credentials are captured (config.md §8.1). Serving acquires mission transports and workflow
/// models; discovery only the transports, since it makes no model site (models.md §3.1), so a model
/// credential need not be available to `--print-pins`.
pub fn selected_aliases(built: &Built, with_models: bool) -> Vec<&str> {
    let mut aliases: Vec<&str> = built
        .templates
        .iter()
        .flat_map(|t| {
            let models = if with_models { t.selections.models.as_slice() } else { &[] };
            t.selections.declarations.iter().chain(models).map(String::as_str)
        })
        .collect();
    aliases.sort_unstable();
    aliases.dedup();
    aliases
}
