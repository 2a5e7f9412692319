//! One run-artifact directory, `traces/` or `inspection/` (traces.md §3, §4.2, §4.3): creating a run's
//! file and keeping the directory within `max_retained_files`, oldest first.
//!
//! Owns the retained names (from the startup inventory on, in byte order) and the retention after each
//! creation. Does not own the directory's validation and lock (`storage`, stage 4) or what is written into
//! a file (`run.rs`).

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::AsFd;
use std::sync::Mutex;

use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;

use crate::config::gateway::RunArtifactsConfig;
use crate::storage::{Op, PrivateDir, RunArtifactsStore, StorageError};
use crate::support::fault::{self, FaultPoint};

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

/// Why the oldest file could not be reused.
enum Reuse {
    Descriptors,
    /// Anything else, with the storage error: the file is created instead, and the oldest removed by
    /// retention.
    Failed(StorageError),
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

    /// The file `<run_ref><suffix>` (traces.md §4.3): when the directory is full, its oldest file reused
    /// (emptied, then renamed); otherwise a new file (R-DIR file rules). Then the oldest files beyond
    /// `max_retained_files` are removed.
    pub fn create(&self, run_ref: &str) -> Result<Created, CreateFailure> {
        if fault::injected(FaultPoint::TraceDescriptors) {
            return Err(CreateFailure::Descriptors);
        }
        let name = format!("{run_ref}{}", self.suffix);
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        let mut retention_failed = self.trim(&mut names, self.max_retained_files);
        // Reuse costs a rename where creating costs an inode and removing frees one (together several
        // times the time on common file systems); on disk the outcome is the same: the newest files,
        // each holding its own run.
        let reused = match names.front().cloned() {
            Some(oldest) if names.len() >= self.max_retained_files => match self.reuse(&oldest, &name) {
                Ok(file) => {
                    names.pop_front();
                    Some(file)
                }
                Err(Reuse::Descriptors) => return Err(CreateFailure::Descriptors),
                Err(Reuse::Failed(error)) => {
                    // Not a write failure (the file is created instead, traces.md §4.3), so the debug
                    // log is the only place that says why the directory grew by a file.
                    tracing::debug!(file = %oldest, %error, "the oldest run file not reused");
                    None
                }
            },
            _ => None,
        };
        let file = match reused {
            Some(file) => file,
            None => self.dir.create_file(OsStr::new(&name)).map_err(|error| match error.errno {
                Some(Errno::EMFILE | Errno::ENFILE) => CreateFailure::Descriptors,
                _ => {
                    // traces.md §7: a write failure is counted, never answered; why is for the log.
                    tracing::debug!(file = %name, %error, "run file not created");
                    CreateFailure::Other
                }
            })?,
        };
        let at = names.partition_point(|n| n.as_str() < name.as_str());
        names.insert(at, name);
        retention_failed |= self.trim(&mut names, self.max_retained_files);
        Ok(Created { file, retention_failed })
    }

    /// Removes the oldest files until at most `keep` remain (the newest is never removed: it is the
    /// run's own or the directory holds one file). True iff a removal failed; that name is kept for the
    /// next attempt.
    fn trim(&self, names: &mut VecDeque<String>, keep: usize) -> bool {
        let mut failed = false;
        let mut at = 0;
        while names.len() > keep.max(1) && at + 1 < names.len() {
            let Some(oldest) = names.get(at) else { break };
            match self.dir.remove_file(OsStr::new(oldest)) {
                Ok(()) => {
                    names.remove(at);
                }
                Err(e) if e.errno == Some(Errno::ENOENT) => {
                    names.remove(at);
                }
                Err(error) => {
                    tracing::debug!(file = %oldest, %error, "run file not removed by retention");
                    failed = true;
                    at += 1;
                }
            }
        }
        failed
    }

    /// The file `from`, cut to its first byte and renamed `to`, positioned at its start: the run's
    /// records overwrite that byte and follow it, so the file is never complete with anything but its
    /// own run, also after a crash in between (traces.md §4.3). Cutting to one byte rather than zero
    /// keeps the file's first block, which freeing and allocating again would cost several times the
    /// rename.
    ///
    /// The cut also proves the file regular (a FIFO, a socket or a device cannot be cut), so no `fstat`
    /// precedes it; `O_NONBLOCK` keeps a FIFO put in its place from blocking the open.
    fn reuse(&self, from: &str, to: &str) -> Result<File, Reuse> {
        let flags = OFlag::O_RDWR | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let fd = openat(self.dir.as_fd(), OsStr::new(from), flags, Mode::empty()).map_err(|e| match e {
            Errno::EMFILE | Errno::ENFILE => Reuse::Descriptors,
            _ => Reuse::Failed(StorageError::io(Op::Open, e)),
        })?;
        let file = File::from(fd);
        file.set_len(1).map_err(|e| {
            let errno = e.raw_os_error().map_or(Errno::UnknownErrno, Errno::from_raw);
            Reuse::Failed(StorageError::io(Op::Truncate, errno))
        })?;
        self.dir.rename(OsStr::new(from), OsStr::new(to)).map_err(Reuse::Failed)?;
        Ok(file)
    }

    /// Removes the file of a refused run (traces.md §4.2) and forgets its name.
    pub fn discard(&self, run_ref: &str) {
        let name = format!("{run_ref}{}", self.suffix);
        let _ = self.dir.remove_file(OsStr::new(&name));
        self.names.lock().unwrap_or_else(|p| p.into_inner()).retain(|n| *n != name);
    }
}

#[cfg(test)]
#[path = "dir_tests.rs"]
mod tests;
