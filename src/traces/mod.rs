//! Run artifacts (traces.md): the trace of every call in `<root>/traces/` and the raw upstream bodies of
//! every call in `<root>/inspection/`.
//!
//! * `dir` owns one artifact directory: creating a run's file and retention, oldest first;
//! * `file` owns one run's file: order, ceiling, and silence after a failed write;
//! * `record` owns the exact trace records and value fields;
//! * `run` owns a run's trace, `inspection` its inspection file;
//! * `hist` owns the cold tools that read another gateway's traces back (traces.md §9).
//!
//! [`RunArtifacts`] is what the call path holds: the run references and the reservation before the commit
//! (traces.md §4). Nothing here has a task of its own: each run writes its own files, on the thread that
//! makes the record, so there is no writer whose loss would need noticing (docs/decisions.md). Does not own
//! the directories' validation and locks (`storage`, startup stage 4), when a call is reserved or answered
//! (`exec`), or counting failures in the event log (`exec`, through `events`).

mod dir;
mod file;
pub mod hist;
mod inspection;
pub mod record;
mod run;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::config::gateway::Artifacts;
use crate::storage::artifact_root::ArtifactRoot;
use crate::storage::{StartRef, StorageError};
use dir::{ArtifactDir, CreateFailure};
pub use inspection::RunInspection;
pub use record::{Publication, RunEnd, RunStart};
pub use run::{Held, RunTrace};

/// The run artifacts of the gateway: present iff `artifacts.trace` or `artifacts.inspection` is configured.
pub struct RunArtifacts {
    start_ref: String,
    /// The last sequence number taken (traces.md §4.1).
    sequence: AtomicU64,
    traces: Option<ArtifactDir>,
    /// `artifacts.trace.replay` (traces.md §6.3).
    replay: bool,
    inspection: Option<ArtifactDir>,
}

/// A run's files, each present when configured.
#[derive(Default)]
pub struct RunFiles {
    pub trace: Option<Arc<RunTrace>>,
    pub inspection: Option<Arc<RunInspection>>,
    /// A file could not be created, or retention could not remove one: a write failure to count once
    /// (traces.md §7).
    pub failed_now: bool,
}

/// The reservation failed for lack of descriptors (traces.md §4.2): refuse the call before it runs.
pub struct OutOfDescriptors;

impl RunArtifacts {
    /// The run artifacts over the stores stage 4 validated, or `None` when neither is configured.
    pub fn new(
        artifacts: &Artifacts,
        root: &ArtifactRoot,
        start_ref: &StartRef,
    ) -> Result<Option<RunArtifacts>, StorageError> {
        let traces = match (artifacts.trace, root.traces()) {
            (Some(config), Some(store)) => Some(ArtifactDir::new(store, config, ".jsonl")?),
            _ => None,
        };
        let inspection = match (artifacts.inspection, root.inspection()) {
            (Some(config), Some(store)) => Some(ArtifactDir::new(store, config, ".ptcins")?),
            _ => None,
        };
        if traces.is_none() && inspection.is_none() {
            return Ok(None);
        }
        let start_ref = start_ref.as_str().to_owned();
        let replay = artifacts.trace.is_some_and(|config| config.replay);
        Ok(Some(RunArtifacts { start_ref, sequence: AtomicU64::new(0), traces, replay, inspection }))
    }

    /// traces.md §4.1: the next run reference.
    fn next_run_ref(&self) -> String {
        let sequence = self.sequence.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}-{sequence:020}", self.start_ref)
    }

    /// traces.md §4.2: opens the run's trace (writing `run_start`), then its inspection file. `start` is
    /// completed with the run reference this reservation takes.
    pub fn reserve(&self, start: RunStart<'_>) -> Result<RunFiles, OutOfDescriptors> {
        let run_ref = self.next_run_ref();
        let start = RunStart { run_ref: &run_ref, ..start };
        let mut files = RunFiles::default();
        if let Some(dir) = &self.traces {
            files.trace = Some(Arc::new(match dir.create(&run_ref) {
                Ok(created) => {
                    files.failed_now |= created.retention_failed;
                    RunTrace::begin(created.file, dir.max_file_bytes, self.replay, &start)
                }
                Err(CreateFailure::Descriptors) => return Err(OutOfDescriptors),
                Err(CreateFailure::Other) => {
                    files.failed_now = true;
                    RunTrace::failed()
                }
            }));
        }
        if let Some(dir) = &self.inspection {
            files.inspection = Some(Arc::new(match dir.create(&run_ref) {
                Ok(created) => {
                    files.failed_now |= created.retention_failed;
                    RunInspection::begin(
                        created.file,
                        dir.max_file_bytes,
                        &run_ref,
                        start.tool,
                        start.trace_id,
                    )
                }
                Err(CreateFailure::Descriptors) => {
                    // traces.md §4.2: the refused run leaves no file behind.
                    if let (Some(traces), Some(_)) = (&self.traces, files.trace.take()) {
                        traces.discard(&run_ref);
                    }
                    return Err(OutOfDescriptors);
                }
                Err(CreateFailure::Other) => {
                    files.failed_now = true;
                    RunInspection::failed()
                }
            }));
        }
        Ok(files)
    }
}
