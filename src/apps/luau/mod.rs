//! Luau applications at startup (config.md §6.4, execution.md §12.7): the component graph of each
//! environment, compilation of every component to bytecode once, and the probe that loads the modules
//! in a throwaway sandbox under the application's limits.
//!
//! Owns the compiled form a per-call runtime starts from: [`CompiledLuau`] holds, per environment, the
//! bytecode and dependency list of every component behind an `Arc`, so that a call creates fresh
//! [`sandbox::Sandbox`]es from it in any [`vm::Vm`] without compiling again (execution.md §12.6), and, per
//! mission, the exported functions with their docs that `handle:api()` shows (scanned by `exports`,
//! execution.md §12.5). Does not own the run-time host functions, the JSON ↔ Luau mapping
//! (execution.md §14) or call execution.

pub mod active;
pub mod budget;
pub mod chunks;
pub mod convert;
pub mod exports;
pub mod graph;
pub mod json_lib;
pub mod probe;
pub mod require;
pub mod room;
pub mod sandbox;
pub mod vm;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mlua::chunk::Compiler;

use super::closure::Closure;
use super::error::{fail, AppDetail, AppError, AppErrorKind};
use crate::config::manifest::{Component, Entry, Manifest, Workflow};
use exports::ExportedFunction;

/// execution.md §12.7: compilation and probe-loading of one application complete within 5,000 ms.
pub const STARTUP_TIME_LIMIT: Duration = Duration::from_millis(5_000);

/// Which environment a component belongs to (execution.md §12.2).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EnvironmentName {
    Workflow,
    Mission(String),
}

impl EnvironmentName {
    /// The chunk name of component `id`: `workflow/<id>` or `mission/<m>/<id>` (execution.md §12.2; also the
    /// record name of pins.md §6.1).
    pub fn chunk_name(&self, id: &str) -> String {
        match self {
            EnvironmentName::Workflow => format!("workflow/{id}"),
            EnvironmentName::Mission(m) => format!("mission/{m}/{id}"),
        }
    }

    /// `mission/<m>/eval`, the chunk name of `:eval` sources (execution.md §12.5); the workflow has none.
    pub fn eval_chunk_name(&self) -> Option<String> {
        match self {
            EnvironmentName::Workflow => None,
            EnvironmentName::Mission(m) => Some(format!("mission/{m}/eval")),
        }
    }
}

/// One compiled component.
pub struct CompiledComponent {
    pub id: String,
    /// `workflow/<id> (<path>)` or `mission/<m>/<id> (<path>)`, `<path>` as the manifest writes it
    /// (execution.md §12.2).
    pub chunk_name: String,
    /// Luau bytecode, produced once at startup.
    pub bytecode: Arc<[u8]>,
    /// The declared dependencies, the only ids this component may `require`.
    pub dependencies: Vec<String>,
    /// A mission component's doc comments by exported key, scanned from its source at startup
    /// (execution.md §12.5 `handle:api()`); empty for workflow components.
    pub docs: BTreeMap<String, String>,
}

impl std::fmt::Debug for CompiledComponent {
    // Bytecode is summarised by its length, not dumped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledComponent")
            .field("chunk_name", &self.chunk_name)
            .field("bytecode_bytes", &self.bytecode.len())
            .field("dependencies", &self.dependencies)
            .finish()
    }
}

/// The compiled components of one environment.
#[derive(Debug)]
pub struct Environment {
    name: EnvironmentName,
    components: BTreeMap<String, CompiledComponent>,
    eval_chunk_name: Option<String>,
    /// A mission's `functions` of execution.md §12.5, set once by the startup probe.
    functions: OnceLock<Vec<ExportedFunction>>,
}

impl Environment {
    /// Which environment this is.
    pub fn name(&self) -> &EnvironmentName {
        &self.name
    }

    /// Component `id`, if the environment has it.
    pub fn component(&self, id: &str) -> Option<&CompiledComponent> {
        self.components.get(id)
    }

    /// Every component, by id.
    pub fn components(&self) -> impl Iterator<Item = &CompiledComponent> {
        self.components.values()
    }

    /// A mission's exported functions with their docs, sorted and bounded (execution.md §12.5); empty for
    /// the workflow and for a mission without components.
    pub fn functions(&self) -> &[ExportedFunction] {
        self.functions.get().map_or(&[], Vec::as_slice)
    }

    /// Records the exported functions the startup probe found (execution.md §12.7); the first record stays.
    pub(crate) fn set_functions(&self, functions: Vec<ExportedFunction>) {
        let _ = self.functions.set(functions);
    }

    /// execution.md §12.2: code of the chunk `caller` may require `id` when `id` is one of that component's
    /// declared dependencies, or when `caller` is this mission's `:eval` chunk and `id` is any of its
    /// components.
    pub fn may_require(&self, caller: &str, id: &str) -> bool {
        if self.eval_chunk_name.as_deref() == Some(caller) {
            return self.components.contains_key(id);
        }
        self.components
            .values()
            .find(|c| c.chunk_name == caller)
            .is_some_and(|c| c.dependencies.iter().any(|d| d == id))
    }
}

/// Every environment of a Luau application (or only the missions of a forward application).
#[derive(Debug)]
pub struct CompiledLuau {
    /// `None` for the forward form, which runs no Luau (execution.md §13).
    pub workflow: Option<Arc<Environment>>,
    /// The entry of the Luau form.
    pub entry: Option<Entry>,
    /// Mission environments by name; a mission without components has an empty environment.
    pub missions: BTreeMap<String, Arc<Environment>>,
}

/// The bounds of the startup probe: the spec's values in production, smaller ones in tests.
#[derive(Clone, Copy, Debug)]
pub struct ProbeLimits {
    /// Interrupt points for the whole probe of one application (execution.md §12.8).
    pub interrupts: u64,
    /// Compilation plus probing of one application (execution.md §12.7).
    pub time: Duration,
    /// Luau heap of each probe sandbox: the application's `limits.memory_bytes`.
    pub memory_bytes: usize,
}

impl ProbeLimits {
    /// The limits of execution.md §12.7–§12.8 for an application whose memory limit is `memory_bytes`.
    pub fn for_application(memory_bytes: u64) -> ProbeLimits {
        ProbeLimits {
            interrupts: budget::INTERRUPT_BUDGET,
            time: STARTUP_TIME_LIMIT,
            memory_bytes: usize::try_from(memory_bytes).unwrap_or(usize::MAX),
        }
    }
}

/// The static checks of config.md §6.4 over every environment: ids, dependencies, cycles, and that the
/// entry names a workflow component. Cheap; run before contracts and compilation.
pub fn check_components(manifest: &Manifest) -> Result<(), AppError> {
    if let Workflow::Luau { components, entry } = &manifest.workflow {
        graph::check(components)?;
        if !components.iter().any(|c| c.id == entry.component) {
            return fail(AppErrorKind::EntryComponentUnknown);
        }
    }
    manifest.missions.values().try_for_each(|m| graph::check(&m.components))
}

/// Stage 5e for the Luau parts: graph checks, compilation of every component of every environment, the
/// entry component's existence, and the probe of execution.md §12.7.
pub fn build(manifest: &Manifest, closure: &Closure, limits: ProbeLimits) -> Result<CompiledLuau, AppError> {
    let started = Instant::now();
    let budget = budget::Budget::new(limits.interrupts, started.checked_add(limits.time));
    check_components(manifest)?;
    let (workflow, entry) = match &manifest.workflow {
        Workflow::Luau { components, entry } => (Some(components.as_slice()), Some(entry.clone())),
        Workflow::Forward { .. } => (None, None),
    };
    let timed_out =
        |b: &budget::Budget| b.check_deadline().map_err(|_| AppError::new(AppErrorKind::LuauTimeExceeded));
    let workflow = match workflow {
        Some(components) => {
            Some(Arc::new(compile_environment(EnvironmentName::Workflow, components, closure)?))
        }
        None => None,
    };
    timed_out(&budget)?;
    let mut missions = BTreeMap::new();
    for (name, mission) in &manifest.missions {
        let env = compile_environment(EnvironmentName::Mission(name.clone()), &mission.components, closure)?;
        missions.insert(name.clone(), Arc::new(env));
        timed_out(&budget)?;
    }
    let compiled = CompiledLuau { workflow, entry, missions };
    probe::run(&compiled, limits.memory_bytes, &budget)?;
    Ok(compiled)
}

/// Compiles each component of one environment.
fn compile_environment(
    name: EnvironmentName,
    components: &[Component],
    closure: &Closure,
) -> Result<Environment, AppError> {
    let mut compiled = BTreeMap::new();
    for c in components {
        let source = closure.bytes(&c.path).ok_or(AppError::new(AppErrorKind::ClosureUnreadable))?;
        // execution.md §12.5: the doc comments `handle:api()` reports, scanned once, for missions only.
        let docs = match name {
            EnvironmentName::Mission(_) => exports::doc_comments(source),
            EnvironmentName::Workflow => BTreeMap::new(),
        };
        let component = CompiledComponent {
            id: c.id.clone(),
            // execution.md §12.2: the chunk names the component's file as the manifest writes it, so that
            // an error's `<chunk>:<line>:` and its traceback say which file (traces.md §5.5).
            chunk_name: format!("{} ({})", name.chunk_name(&c.id), c.path),
            bytecode: compile_source(source).map_err(|e| e.in_file(&c.path))?.into(),
            dependencies: c.dependencies.clone(),
            docs,
        };
        compiled.insert(c.id.clone(), component);
    }
    let eval_chunk_name = name.eval_chunk_name();
    Ok(Environment { name, components: compiled, eval_chunk_name, functions: OnceLock::new() })
}

/// Compiles one Luau source to bytecode (execution.md §12.7); a syntax error is `template_invalid`, with
/// Luau's message (its caller names the file).
pub fn compile_source(source: &[u8]) -> Result<Vec<u8>, AppError> {
    Compiler::new().compile(source).map_err(|error| {
        let message = match error {
            mlua::Error::SyntaxError { message, .. } => message,
            other => other.to_string(),
        };
        let (line, message) = luau_message(&message);
        let detail = AppDetail::Compile { file: String::new(), line, message };
        AppError::with_detail(AppErrorKind::LuauSyntax, detail)
    })
}

/// Luau's compile message split into its line and its text: the chunk prefix it puts before the line
/// (`[string "?"]:3: …` or `:3: …`) is dropped, since the file shown is the manifest's name.
fn luau_message(message: &str) -> (Option<u64>, String) {
    let rest =
        message.strip_prefix("[string \"").and_then(|r| r.split_once("\"]")).map_or(message, |(_, r)| r);
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    match rest.split_once(": ").map(|(line, text)| (line.parse::<u64>(), text)) {
        Some((Ok(line), text)) => (Some(line), text.trim_end().to_owned()),
        _ => (None, rest.trim_end().to_owned()),
    }
}

/// The first component of `manifest` that does not compile, with its detail; `None` when all compile or a
/// component cannot be read. Used only after another refusal, to tell a person that pinning would not help.
pub fn first_compile_error(manifest: &Manifest, closure: &Closure) -> Option<AppError> {
    let workflow = match &manifest.workflow {
        Workflow::Luau { components, .. } => components.as_slice(),
        Workflow::Forward { .. } => &[],
    };
    let missions = manifest.missions.values().flat_map(|m| m.components.iter());
    workflow.iter().chain(missions).find_map(|c| {
        let source = closure.bytes(&c.path)?;
        compile_source(source).err().map(|e| e.in_file(&c.path))
    })
}
