//! One run-artifact directory, `traces/` or `inspection/` (traces.md §3, §4.2, §4.3): creating a run's
//! file and keeping the directory within `max_retained_files`, oldest first.
//!
//! Owns the retained names (from the startup inventory on, in byte order) and the retention after each
//! creation. Does not own the directory's validation and lock (`storage`, stage 4) or what is written into
//! a file (`run.rs`).

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fs::File;
use std::sync::Mutex;

use nix::errno::Errno;

use crate::config::gateway::RunArtifactsConfig;
use crate::fault::{self, FaultPoint};
use crate::storage::{PrivateDir, RunArtifactsStore, StorageError};

/// Why a file could not be created (traces.md §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateFailure {
    /// Out of descriptors (`EMFILE`, `ENFILE`): the reservation fails and the call is refused.
    Descriptors,
    /// Anything else: a write failure; the call runs without this artifact.
    Other,
}

/// A created file, and whether retention failed to remove a file after it (a write failure,
/// traces.md §4.3).
pub struct Created {
    pub file: File,
    pub retention_failed: bool,
}

/// A validated run-artifact directory.
pub struct ArtifactDir {
    dir: PrivateDir,
    suffix: &'static str,
    pub max_file_bytes: u64,
    max_retained_files: usize,
    /// Every retained name, oldest (smallest) first.
    names: Mutex<VecDeque<String>>,
}

impl ArtifactDir {
    /// The directory of `store` (a duplicate of its descriptor: the store keeps the lock), with its
    /// startup inventory.
    pub fn new(
        store: &RunArtifactsStore,
        config: RunArtifactsConfig,
        suffix: &'static str,
    ) -> Result<ArtifactDir, StorageError> {
        let names = store.inventory().iter().map(|f| f.name.clone()).collect();
        Ok(ArtifactDir {
            dir: store.dir().try_clone()?,
            suffix,
            max_file_bytes: config.max_file_bytes,
            max_retained_files: usize::try_from(config.max_retained_files).unwrap_or(usize::MAX),
            names: Mutex::new(names),
        })
    }

    /// Creates `<run_ref><suffix>` (R-DIR file rules), then removes the oldest files until at most
    /// `max_retained_files` remain, the new one included (traces.md §4.3).
    pub fn create(&self, run_ref: &str) -> Result<Created, CreateFailure> {
        if fault::injected(FaultPoint::TraceDescriptors) {
            return Err(CreateFailure::Descriptors);
        }
        let name = format!("{run_ref}{}", self.suffix);
        let file = self.dir.create_file(OsStr::new(&name)).map_err(|e| match e.errno {
            Some(Errno::EMFILE | Errno::ENFILE) => CreateFailure::Descriptors,
            _ => CreateFailure::Other,
        })?;
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        // Kept in byte order; the new name is normally the largest, so this is a push at the back.
        let at = names.partition_point(|n| n.as_str() < name.as_str());
        names.insert(at, name.clone());
        let mut retention_failed = false;
        let mut skipped = 0;
        while names.len() > self.max_retained_files && skipped < names.len() {
            // The new file is excluded; a name whose removal failed is kept for the next attempt.
            let Some(oldest) = names.get(skipped).cloned() else { break };
            if oldest == name {
                skipped += 1;
                continue;
            }
            match self.dir.remove_file(OsStr::new(&oldest)) {
                Ok(()) => {
                    names.remove(skipped);
                }
                Err(e) if e.errno == Some(Errno::ENOENT) => {
                    names.remove(skipped);
                }
                Err(_) => {
                    retention_failed = true;
                    skipped += 1;
                }
            }
        }
        Ok(Created { file, retention_failed })
    }

    /// Removes the file of a refused run (traces.md §4.2) and forgets its name.
    pub fn discard(&self, run_ref: &str) {
        let name = format!("{run_ref}{}", self.suffix);
        let _ = self.dir.remove_file(OsStr::new(&name));
        self.names.lock().unwrap_or_else(|p| p.into_inner()).retain(|n| *n != name);
    }
}
