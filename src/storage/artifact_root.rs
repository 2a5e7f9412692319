//! Startup stage 4, the artifact root (lifecycle.md §3.2; audit-events.md §3.1–§3.2).
//!
//! Owns: R-ANC and R-DIR on `artifacts.root` (created 0700 when missing); with `artifacts.events`, the
//! events directory `<root>/events` (created 0700 when missing, relative to the validated root), R-DIR on
//! it, R-LOCK under the events policy (taking over a stale lock and reporting it), and the events
//! inventory; then, with `artifacts.trace` and `artifacts.inspection`, the `traces` and `inspection`
//! directories under the same rules (traces.md §3). Every failure is `artifact_root_unavailable`. Returns
//! the handles that keep the descriptors and the locks for the process lifetime. Does not own: the event
//! logger (files, rotation, records) or the run artifacts' files (the `traces` module).

use std::ffi::OsStr;
use std::fmt;

use super::ancestry::open_store_dir;
use super::error::StorageError;
use super::inventory::{events_inventory, run_artifacts_inventory, EventFile};
use super::lock::{LockPolicy, StoreLock};
use super::private_dir::PrivateDir;
use super::start_ref::StartRef;
use crate::codes::StartupCode;
use crate::config::gateway::Artifacts;

/// The events directory below the artifact root (audit-events.md §3.1).
pub const EVENTS_DIR: &str = "events";

/// The trace directory below the artifact root (traces.md §3).
pub const TRACES_DIR: &str = "traces";

/// The inspection directory below the artifact root (traces.md §3).
pub const INSPECTION_DIR: &str = "inspection";

/// The metrics directory below the root (audit-events.md §3.12).
pub const METRICS_DIR: &str = "metrics";

/// Which step of stage 4 failed: the closed internal reason of an `artifact_root_unavailable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArtifactStep {
    /// R-ANC or R-DIR on `artifacts.root`, including its creation.
    Root,
    /// Creating the events directory or R-DIR on it.
    EventsDirectory,
    /// R-LOCK on the events directory (held, or not takeable).
    EventsLock,
    /// The events inventory.
    EventsInventory,
    /// Creating the traces directory, R-DIR, R-LOCK or its inventory (traces.md §3).
    Traces,
    /// The same for the inspection directory.
    Inspection,
    /// Creating the metrics directory or R-DIR on it (audit-events.md §3.12).
    Metrics,
}

impl ArtifactStep {
    /// A stable lowercase name, for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactStep::Root => "root",
            ArtifactStep::EventsDirectory => "events_directory",
            ArtifactStep::EventsLock => "events_lock",
            ArtifactStep::EventsInventory => "events_inventory",
            ArtifactStep::Traces => "traces",
            ArtifactStep::Inspection => "inspection",
            ArtifactStep::Metrics => "metrics",
        }
    }
}

/// A stage-4 failure: the step and the rule that failed. Carries no path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArtifactRootError {
    /// Where it failed.
    pub step: ArtifactStep,
    /// What failed.
    pub cause: StorageError,
}

impl ArtifactRootError {
    /// Always `artifact_root_unavailable` (lifecycle.md §4). Such a failure cannot be logged
    /// (lifecycle.md §3.2).
    pub fn code(&self) -> StartupCode {
        StartupCode::ArtifactRootUnavailable
    }
}

impl fmt::Display for ArtifactRootError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "artifact root ({}): {}", self.step.as_str(), self.cause)
    }
}

impl std::error::Error for ArtifactRootError {}

/// The validated, locked events directory, for the event logger to own for the process lifetime.
#[derive(Debug)]
pub struct EventsStore {
    dir: PrivateDir,
    lock: StoreLock,
    inventory: Vec<EventFile>,
}

impl EventsStore {
    /// The events directory; every file operation of the logger goes through it.
    pub fn dir(&self) -> &PrivateDir {
        &self.dir
    }

    /// Whether a stale lock was taken over: the log's first record is then `events_lock_recovered`.
    pub fn lock_recovered(&self) -> bool {
        self.lock.recovered()
    }

    /// The retained event files at startup, oldest first (for retention, audit-events.md §3.3).
    pub fn inventory(&self) -> &[EventFile] {
        &self.inventory
    }

    /// Orderly release of the events lock (audit-events.md §1.4; lifecycle.md §7.3 stage S8 (event log
    /// close): a failure makes the exit status 70 at shutdown).
    pub fn release(self) -> Result<(), StorageError> {
        self.lock.release()
    }
}

/// A validated, locked `traces` or `inspection` directory and its retained files (traces.md §3), for the
/// run artifacts' writer to own for the process lifetime.
#[derive(Debug)]
pub struct RunArtifactsStore {
    dir: PrivateDir,
    lock: StoreLock,
    inventory: Vec<EventFile>,
}

impl RunArtifactsStore {
    /// The directory; every file operation goes through it.
    pub fn dir(&self) -> &PrivateDir {
        &self.dir
    }

    /// The retained files at startup, oldest first (for retention, traces.md §4.3).
    pub fn inventory(&self) -> &[EventFile] {
        &self.inventory
    }

    /// Orderly release of the lock (audit-events.md §1.4).
    pub fn release(self) -> Result<(), StorageError> {
        self.lock.release()
    }
}

/// The validated artifact root and, with `artifacts.events`, its events store; with `artifacts.trace` and
/// `artifacts.inspection`, their stores.
#[derive(Debug)]
pub struct ArtifactRoot {
    root: PrivateDir,
    events: Option<EventsStore>,
    traces: Option<RunArtifactsStore>,
    inspection: Option<RunArtifactsStore>,
    /// The metrics directory, until the metrics writer takes it.
    metrics: Option<PrivateDir>,
}

fn at(step: ArtifactStep) -> impl Fn(StorageError) -> ArtifactRootError {
    move |cause| ArtifactRootError { step, cause }
}

/// The events part of stage 4, below the validated root.
fn open_events(
    root: &PrivateDir,
    max_file_bytes: u64,
    start_ref: &StartRef,
) -> Result<EventsStore, ArtifactRootError> {
    // R-ANC step 2 relative to the validated root, then R-DIR (audit-events.md §3.2).
    let (dir, _created) =
        root.ensure_subdir(OsStr::new(EVENTS_DIR)).map_err(at(ArtifactStep::EventsDirectory))?;
    let lock =
        StoreLock::acquire(&dir, LockPolicy::Events, start_ref).map_err(at(ArtifactStep::EventsLock))?;
    match events_inventory(&dir, max_file_bytes) {
        Ok(inventory) => Ok(EventsStore { dir, lock, inventory }),
        Err(cause) => {
            // Undo the lock (lifecycle.md §3.1 rule 4); the exit is 78 whatever the release reports.
            let _ = lock.release();
            Err(ArtifactRootError { step: ArtifactStep::EventsInventory, cause })
        }
    }
}

/// A `traces` or `inspection` directory (traces.md §3): created 0700 when missing, R-DIR, R-LOCK (a stale
/// lock taken over silently, as the event log's is), then the inventory.
fn open_run_artifacts(
    root: &PrivateDir,
    name: &str,
    suffix: &[u8],
    max_file_bytes: u64,
    start_ref: &StartRef,
) -> Result<RunArtifactsStore, StorageError> {
    let (dir, _created) = root.ensure_subdir(OsStr::new(name))?;
    let lock = StoreLock::acquire(&dir, LockPolicy::Events, start_ref)?;
    match run_artifacts_inventory(&dir, max_file_bytes, suffix) {
        Ok(inventory) => Ok(RunArtifactsStore { dir, lock, inventory }),
        Err(cause) => {
            let _ = lock.release();
            Err(cause)
        }
    }
}

impl ArtifactRoot {
    /// Stage 4 for `artifacts` (paths already anchored, config.md §3), in the order of lifecycle.md §3.2
    /// and traces.md §3: the root, the events, the traces, the inspection directory. A failure releases
    /// every lock already taken.
    pub fn open(artifacts: &Artifacts, start_ref: &StartRef) -> Result<ArtifactRoot, ArtifactRootError> {
        let (root, _created) = open_store_dir(&artifacts.root).map_err(at(ArtifactStep::Root))?;
        let mut opened = ArtifactRoot { root, events: None, traces: None, inspection: None, metrics: None };
        if let Some(cfg) = &artifacts.events {
            opened.events = Some(open_events(&opened.root, cfg.max_file_bytes, start_ref)?);
        }
        let stores = [
            (artifacts.trace, TRACES_DIR, &b".jsonl"[..], ArtifactStep::Traces),
            (artifacts.inspection, INSPECTION_DIR, &b".ptcins"[..], ArtifactStep::Inspection),
        ];
        for (cfg, name, suffix, step) in stores {
            let Some(cfg) = cfg else { continue };
            match open_run_artifacts(&opened.root, name, suffix, cfg.max_file_bytes, start_ref) {
                Ok(store) if step == ArtifactStep::Traces => opened.traces = Some(store),
                Ok(store) => opened.inspection = Some(store),
                Err(cause) => {
                    // lifecycle.md §3.1 rule 4: undo what was taken; the exit is 78 whatever it reports.
                    let _ = opened.release();
                    return Err(ArtifactRootError { step, cause });
                }
            }
        }
        if artifacts.metrics.is_some() {
            // No lock of its own: the events lock (required with metrics, config.md §4.4 rule 5) already
            // makes this process the root's only writer.
            match opened.root.ensure_subdir(std::ffi::OsStr::new(METRICS_DIR)) {
                Ok((dir, _created)) => opened.metrics = Some(dir),
                Err(cause) => {
                    let _ = opened.release();
                    return Err(ArtifactRootError { step: ArtifactStep::Metrics, cause });
                }
            }
        }
        Ok(opened)
    }

    /// Hands the metrics directory to the metrics writer (audit-events.md §3.12).
    pub fn take_metrics(&mut self) -> Option<PrivateDir> {
        self.metrics.take()
    }

    /// The traces store; the root keeps its lock until it is released at shutdown.
    pub fn traces(&self) -> Option<&RunArtifactsStore> {
        self.traces.as_ref()
    }

    /// The inspection store; the root keeps its lock until it is released at shutdown.
    pub fn inspection(&self) -> Option<&RunArtifactsStore> {
        self.inspection.as_ref()
    }

    /// The artifact root directory.
    pub fn root(&self) -> &PrivateDir {
        &self.root
    }

    /// The events store, unless absent from the configuration or already taken.
    pub fn events(&self) -> Option<&EventsStore> {
        self.events.as_ref()
    }

    /// Hands the events store to its owner (the event logger), which then releases it at the event log close
    /// stage (S8).
    pub fn take_events(&mut self) -> Option<EventsStore> {
        self.events.take()
    }

    /// Releases what is still held (the events lock, unless taken). Used after a failed startup
    /// (lifecycle.md §5.2) and at shutdown.
    pub fn release(self) -> Result<(), StorageError> {
        let mut result = Ok(());
        for released in [
            self.events.map(EventsStore::release),
            self.traces.map(RunArtifactsStore::release),
            self.inspection.map(RunArtifactsStore::release),
        ]
        .into_iter()
        .flatten()
        {
            result = result.and(released);
        }
        result
    }
}

#[cfg(test)]
#[path = "artifact_root_tests.rs"]
mod tests;
