//! Stage 5 (lifecycle.md §3.2, config.md §6.10): one served tool's template, built by 5a–5g in the
//! spec's order, and all templates in ascending name order followed by 5h (header projections) and 5i
//! (the catalog bounds).
//!
//! Owns the order of the checks and the built [`Template`], everything a call of the tool needs that is
//! fixed at startup. Does not own any single rule: each lives in its module (`closure`, `content_pin`,
//! `contracts`, `luau`, `selection`, `header`, `catalog`).

use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use super::catalog::{self, Catalog, ListingTool};
use super::contracts::{self, Contract};
use super::error::{fail, AppDetail, AppError, AppErrorKind};
use super::header;
use super::luau::{self, CompiledLuau, ProbeLimits};
use super::selection::{self, Selections};
use super::{closure, content_pin};
use crate::config::document_error::Problem;
use crate::config::gateway::ToolConfig;
use crate::config::host::HostConfig;
use crate::config::manifest::{self, Effect, EventsPolicy, ForwardTarget, Manifest, Workflow};
use crate::config::{paths, Mode};
use crate::json::Limits;
use crate::mcp_param::HeaderParam;

/// How a tool runs.
#[derive(Debug)]
pub enum Run {
    /// Luau: the workflow environment and entry are in [`Template::luau`].
    Luau,
    /// Pass-through to one granted alias of one mission (execution.md §13).
    Forward { mission: String, tool: String },
}

/// One served tool, built at startup.
#[derive(Debug)]
pub struct Template {
    /// `tools[].name`.
    pub name: String,
    /// `tools[].title`, served by `tools/list`.
    pub title: String,
    /// `tools[].description`, served by `tools/list`.
    pub description: String,
    /// The application's declared effect: `readOnlyHint`, write text and auditing.
    pub effect: Effect,
    /// The computed content pin (pins.md §6); discovery prints it.
    pub content_pin: String,
    /// The normalised, compiled input contract.
    pub input: Contract,
    /// The normalised, compiled result contract.
    pub result: Contract,
    pub run: Run,
    /// Compiled environments: the workflow (Luau form) and every mission.
    pub luau: CompiledLuau,
    /// Grants per mission and the declarations to acquire.
    pub selections: Selections,
    /// The effective run duration (config.md §6.9).
    pub run_duration_ms: u64,
    /// `limits.memory_bytes`.
    pub memory_bytes: u64,
    /// The `x-mcp-header` parameters of the input schema (set by 5h).
    pub header_params: Vec<HeaderParam>,
}

impl Template {
    /// The tool's name (the key of discovery output and of `tools/call` lookup).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The computed content pin, which discovery prints (pins.md §10.3).
    pub fn content_pin(&self) -> &str {
        &self.content_pin
    }
}

/// Every template and the encoded listing.
#[derive(Debug)]
pub struct Built {
    /// In ascending byte order of tool names, each shared with the calls of its tool ([`ServedTool`]).
    pub templates: Vec<Arc<Template>>,
    pub catalog: Catalog,
}

impl Built {
    /// The served tool at `index` of [`Built::templates`].
    pub fn served(&self, index: usize) -> Option<ServedTool> {
        self.templates.get(index).map(|template| ServedTool { index, template: template.clone() })
    }

    /// The served tool called `name` (http-mcp.md §8.2 C2, pcc.md §7.5 step 4): a binary search, since the
    /// templates are in ascending byte order of their names.
    pub fn find(&self, name: &str) -> Option<ServedTool> {
        let index = self.templates.binary_search_by(|t| t.name.as_bytes().cmp(name.as_bytes())).ok()?;
        self.served(index)
    }
}

/// A served tool as its call carries it: resolved once, at the front's check (the `/mcp` front's tool lookup,
/// the PCC stream's `tools/call` step 4), and handed through admission, execution, the audit, the trace and
/// the event counters, so that no later step looks the tool up again or needs a fallback for a tool that is
/// not there. Derefs to its [`Template`]; [`ServedTool::index`] is its position in the built templates, the
/// key of its per-tool counters and of its provider and model sites.
#[derive(Clone, Debug)]
pub struct ServedTool {
    index: usize,
    template: Arc<Template>,
}

impl ServedTool {
    /// Its position in [`Built::templates`] (ascending name order).
    pub fn index(&self) -> usize {
        self.index
    }
}

impl Deref for ServedTool {
    type Target = Template;

    fn deref(&self) -> &Template {
        &self.template
    }
}

/// Stage 5a: read the manifest (at most 1,000,000 bytes) and decode and validate it → `template_invalid`.
pub fn load_manifest(path: &Path) -> Result<Manifest, AppError> {
    let refused = |kind, problem| AppError::with_detail(kind, AppDetail::Manifest(problem));
    let bytes = paths::read_document(path, Limits::DOCUMENT.max_bytes)
        .map_err(|e| refused(AppErrorKind::ManifestUnreadable, Problem::Unreadable(e)))?;
    manifest::parse(&bytes).map_err(|problem| refused(AppErrorKind::ManifestInvalid, problem))
}

/// Stages 5b–5g for one tool whose manifest (at `tool.manifest`) was decoded by 5a.
pub fn build(
    tool: &ToolConfig,
    manifest: &Manifest,
    host: &HostConfig,
    mode: Mode,
) -> Result<Template, AppError> {
    // 5b (config.md §6.2): refused before the closure is read.
    if manifest.events.policy == EventsPolicy::Private {
        return fail(AppErrorKind::EventsPolicyPrivate);
    }
    // 5c.
    let closure = closure::read(&paths::document_dir(&tool.manifest), manifest)?;
    // 5d (pins.md §9.1), serve mode only.
    let content_pin = content_pin::digest(manifest, &closure)?;
    let expected = match mode {
        Mode::Serve => tool.expected_application_content_digest.as_deref(),
        Mode::Discovery => None,
    };
    content_pin::compare(&content_pin, expected).map_err(|mut mismatch| {
        // A person who edited a component sees the mismatch first (5d precedes 5e); if the component does
        // not compile, pinning would not help, and the refusal says so (lifecycle.md §1.5).
        let broken = unbuildable_file(manifest, &closure).and_then(|e| e.detail);
        if let (Some(AppDetail::Digest { broken: slot, .. }), Some(broken)) =
            (mismatch.detail.as_deref_mut(), broken)
        {
            *slot = Some(broken);
        }
        mismatch
    })?;
    // 5e: components and dependencies, the forward target, limits, contracts, Luau.
    luau::check_components(manifest)?;
    let run = match &manifest.workflow {
        Workflow::Luau { .. } => Run::Luau,
        Workflow::Forward { forward: ForwardTarget { mission, tool } } => {
            if !manifest.missions.contains_key(mission) {
                return fail(AppErrorKind::ForwardMissionUnknown);
            }
            if !selection::forward_target_granted(manifest, host, mission, tool) {
                return fail(AppErrorKind::ForwardToolNotGranted);
            }
            Run::Forward { mission: mission.clone(), tool: tool.clone() }
        }
    };
    let run_duration_ms = match manifest.limits.run_duration_ms {
        Some(ms) if ms > host.run_duration_ms => return fail(AppErrorKind::RunDurationAboveHost),
        Some(ms) => ms,
        None => host.run_duration_ms,
    };
    let contract =
        |path: &str| contracts::load(closure.bytes(path).unwrap_or_default()).map_err(|e| e.in_file(path));
    let input = contract(&manifest.contracts.input_schema.path)?;
    let result = contract(&manifest.contracts.result_schema.path)?;
    let luau = luau::build(manifest, &closure, ProbeLimits::for_application(manifest.limits.memory_bytes))?;
    // 5f.
    let selections = selection::check(manifest, host)?;
    // 5g (config.md §6.8 rule 3).
    if manifest.effect == Effect::Write && !tool.allow_write {
        return fail(AppErrorKind::WriteNotAllowed);
    }
    Ok(Template {
        name: tool.name.clone(),
        title: tool.title.clone(),
        description: tool.description.clone(),
        effect: manifest.effect,
        content_pin,
        input,
        result,
        run,
        luau,
        selections,
        run_duration_ms,
        memory_bytes: manifest.limits.memory_bytes,
        header_params: Vec::new(),
    })
}

/// The first file of a changed application that stage 5e would refuse with a detail: a contract that is
/// not strict JSON, then a component that does not compile. Only on the refusal path of 5d, so a person
/// is not sent to `ptc pin` for an application it would refuse too (lifecycle.md §1.5).
fn unbuildable_file(manifest: &Manifest, closure: &closure::Closure) -> Option<AppError> {
    let contracts = [&manifest.contracts.input_schema.path, &manifest.contracts.result_schema.path];
    let contract_error = contracts.into_iter().find_map(|path| {
        let bytes = closure.bytes(path)?;
        let not_json = |e: &AppError| matches!(e.detail.as_deref(), Some(AppDetail::NotJson { .. }));
        contracts::load(bytes).err().filter(not_json).map(|e| e.in_file(path))
    });
    contract_error.or_else(|| luau::first_compile_error(manifest, closure))
}

/// Stage 5 whole: 5a–5g per tool in ascending byte order of names, the first failure deciding; then 5h
/// over every input schema in the same order; then 5i.
pub fn build_all(tools: &[ToolConfig], host: &HostConfig, mode: Mode) -> Result<Built, AppError> {
    let mut ordered: Vec<&ToolConfig> = tools.iter().collect();
    ordered.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    let mut templates = Vec::with_capacity(ordered.len());
    for tool in ordered {
        let manifest = load_manifest(&tool.manifest)?;
        templates.push(build(tool, &manifest, host, mode)?);
    }
    finish(templates)
}

/// Stages 5h and 5i over templates that passed 5a–5g, in ascending name order.
pub fn finish(mut templates: Vec<Template>) -> Result<Built, AppError> {
    // 5h.
    for t in &mut templates {
        t.header_params = header::project(t.input.schema()).map_err(|e| e.for_tool(&t.name))?;
    }
    // 5i.
    let listing: Vec<ListingTool<'_>> = templates
        .iter()
        .map(|t| ListingTool {
            name: &t.name,
            title: &t.title,
            description: &t.description,
            input_schema: t.input.schema(),
            output_schema: t.result.schema(),
            effect: t.effect,
        })
        .collect();
    let catalog = catalog::build(&listing)?;
    Ok(Built { templates: templates.into_iter().map(Arc::new).collect(), catalog })
}
