//! Stage 5 (lifecycle.md §3.2): every tool's template, in name order, then the catalog checks.
//!
//! The rules are `crate::apps`'s (selection rules S1–S12 included: OAuth and reserved sources stay refused
//! there). Tools with `providers.mission` or `providers.workflow` declarations are served: their sites
//! are acquired, and their model sites made, at stage 9 (`startup::providers`).

use crate::apps::{self, AppError, Built};
use crate::config::Mode;
use crate::explain::{Fact, Refusal};
use crate::startup::documents::Documents;

pub use crate::apps::Template;

/// Runs stage 5 (without 5d in discovery mode). A refusal of 5a–5g names its tool and manifest
/// (lifecycle.md §1.5).
pub fn build(docs: &Documents, mode: Mode) -> Result<Built, Refusal> {
    let mut ordered: Vec<_> = docs.gateway.tools.iter().collect();
    ordered.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    let mut templates = Vec::with_capacity(ordered.len());
    for tool in ordered {
        let refused = |e: AppError| {
            refusal(e)
                .context(Fact::Tool, tool.name.as_str())
                .context(Fact::Document, tool.manifest.display().to_string())
        };
        let manifest = apps::load_manifest(&tool.manifest).map_err(refused)?;
        let template = apps::build(tool, &manifest, &docs.host, mode).map_err(refused)?;
        templates.push(template);
    }
    apps::finish(templates).map_err(refusal)
}

/// A refused application, logged at debug with its rule (never a path or content) and explained for a
/// person.
fn refusal(e: AppError) -> Refusal {
    tracing::debug!(reason = e.describe(), "template refused");
    Refusal::from(e)
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
