//! The bench's one door into the process (issue 14, goal G7): how long a fresh Luau sandbox takes to be
//! ready, from the activation of a run to the first instruction of the entry `run(input)`. That span
//! cannot be seen from outside (a `tools/call` also pays HTTP, admission, contracts and publication), so
//! `cargo bench --bench gateway` calls [`sandbox_ready_samples`] in its own process.
//!
//! Exists only so that the bench can time the sandbox without widening the library's public API: the
//! module is `#[doc(hidden)]`, speaks only std types, and nothing in the gateway calls it
//! (docs/decisions.md, "A doc-hidden hook for the sandbox-ready bench row"). Owns the trivial application
//! it builds and the timing; does not own the run, which is the runtime's own entry point unchanged
//! (a fresh workflow sandbox per run, execution.md §12.6), observed at the instant the runtime calls the
//! entry function.

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::apps::closure;
use crate::apps::luau::{self, CompiledLuau, ProbeLimits};
use crate::apps::runtime::{run_workflow_observed, CallLimits, CancelToken, RunEnd};
use crate::config::manifest;
use crate::json::{self, Limits};

/// The manifest default of `limits.memory_bytes` (config.md §6.2).
const MEMORY_BYTES: u64 = 16_777_216;

/// The trivial application: the `echo` of pins.md §11.1, whose entry returns its input.
const MANIFEST: &str = r#"{"version":1,"effect":"read","contracts":{"input_schema":{"path":"schema.json"},"result_schema":{"path":"schema.json"}},"workflow":{"components":[{"id":"app","path":"app.luau"}],"entry":"app.run"}}"#;
const APP: &str = "local M = {}\n\nfunction M.run(input)\n  return input\nend\n\nreturn M\n";
const SCHEMA: &str = "{\"type\":\"object\"}\n";

/// For each of `n` runs of a trivial application, each in a fresh sandbox: the time from the call of the
/// runtime's run function (activation) to the instant it calls the entry function. `Err` names what
/// failed (the build, or a run that did not return).
pub fn sandbox_ready_samples(n: usize) -> Result<Vec<Duration>, String> {
    let compiled = build()?;
    let input = json::decode(br#"{"text":"hi"}"#, Limits::DOCUMENT).map_err(|e| format!("input: {e:?}"))?;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let entered: Cell<Option<Instant>> = Cell::new(None);
        let on_entry = || entered.set(Some(Instant::now()));
        let limits = CallLimits::for_application(MEMORY_BYTES, Instant::now() + Duration::from_secs(10));
        let cancel = CancelToken::new();
        let activated = Instant::now();
        let end = run_workflow_observed(&compiled, &input, limits, &cancel, &on_entry);
        match (end, entered.get()) {
            (RunEnd::Returned(_), Some(at)) => samples.push(at.saturating_duration_since(activated)),
            (end, _) => return Err(format!("the trivial run did not return its input: {end:?}")),
        }
    }
    Ok(samples)
}

/// Builds the application through the startup path (manifest, closure, compilation and probe), from a
/// private temporary directory that is removed again whatever the outcome.
fn build() -> Result<CompiledLuau, String> {
    let dir = TempDir::new()?;
    for (name, text) in [("ptc.json", MANIFEST), ("app.luau", APP), ("schema.json", SCHEMA)] {
        std::fs::write(dir.0.join(name), text).map_err(|e| format!("write {name}: {e}"))?;
    }
    let manifest = manifest::parse(MANIFEST.as_bytes()).map_err(|e| format!("manifest: {e}"))?;
    let closure = closure::read(&dir.0, &manifest).map_err(|e| format!("closure: {e}"))?;
    luau::build(&manifest, &closure, ProbeLimits::for_application(MEMORY_BYTES))
        .map_err(|e| format!("build: {e}"))
}

/// A directory below the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("ptc-bench-hook-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| format!("mkdir {}: {e}", path.display()))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
