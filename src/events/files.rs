//! The event files (audit-events.md §3.3): naming, lazy open, rotation, retention across restarts,
//! the interval sync, and the "suspended until the next tick" rule after a write or open failure
//! (audit-events.md §3.7).
//!
//! Owns: `<start reference>-<20-digit sequence>.jsonl` files in the locked events directory, each line
//! written with one `write`, never spanning files; removing the oldest files (any start reference) when a
//! new file is opened. Does not own: record encoding, counting drops (the caller counts every `Err`),
//! the directory policy or the lock (`storage`). Never reads event content (audit-events.md §3.2, §3.11).
//!
//! Crash consistency (audit-events.md §3.11) follows from the shape: records are appended whole with one
//! `write` each, closed files are never touched again except by retention, and nothing is ever truncated, so
//! after `kill -9` only the file open at the time can end in a torn line.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;

use nix::errno::Errno;

use crate::storage::{sync_fd, EventFile, PrivateDir, StorageError};

/// Why a line was not written (each is one dropped record, audit-events.md §3.7). An open or a write
/// failure keeps the operating system's reason for the debug log (the event log cannot record its own
/// failure; the sink logs it, issue 25's rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WriteFail {
    /// Longer than `max_file_bytes` (audit-events.md §3.3).
    #[error("the record is longer than max_file_bytes")]
    Oversized,
    /// A failure earlier in this interval: nothing is written until the next tick.
    #[error("writing is suspended until the next interval")]
    Suspended,
    /// Creating the file (its sequence number) or the retention after it failed, and the storage error.
    #[error("event file {sequence} not opened: {error}")]
    Open { sequence: u64, error: StorageError },
    /// The write failed (its errno) or was short (`None`).
    #[error("event file write failed: {}", .0.map_or("short write", |errno| errno.desc()))]
    Write(Option<Errno>),
}

struct OpenFile {
    file: File,
    size: u64,
    /// Written to since the last sync.
    dirty: bool,
}

/// The event files of one process.
pub struct EventFiles {
    dir: PrivateDir,
    start_ref: String,
    max_file_bytes: u64,
    max_retained_files: usize,
    /// Every event file in the directory, in name byte order (oldest first); the open one is last.
    retained: Vec<String>,
    /// The sequence number of the next file.
    next_sequence: u64,
    open: Option<OpenFile>,
    suspended: bool,
}

impl EventFiles {
    /// Over the locked directory `dir`, with the startup inventory (oldest first).
    pub fn new(
        dir: PrivateDir,
        start_ref: &str,
        max_file_bytes: u64,
        max_retained_files: u32,
        inventory: &[EventFile],
    ) -> EventFiles {
        let mut retained: Vec<String> = inventory.iter().map(|f| f.name.clone()).collect();
        retained.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        EventFiles {
            dir,
            start_ref: start_ref.to_owned(),
            max_file_bytes,
            max_retained_files: usize::try_from(max_retained_files).unwrap_or(usize::MAX).max(1),
            retained,
            next_sequence: 1,
            open: None,
            suspended: false,
        }
    }

    fn name(&self, sequence: u64) -> String {
        format!("{}-{sequence:020}.jsonl", self.start_ref)
    }

    /// Writes one line (LF included) with one `write`, rotating first if it would not fit
    /// (audit-events.md §3.3).
    pub fn write_line(&mut self, line: &[u8]) -> Result<(), WriteFail> {
        let n = line.len() as u64;
        if n > self.max_file_bytes {
            return Err(WriteFail::Oversized);
        }
        if self.suspended {
            return Err(WriteFail::Suspended);
        }
        if self.open.as_ref().is_some_and(|f| f.size + n > self.max_file_bytes) {
            self.close_open();
        }
        if self.open.is_none() {
            if let Err(fail) = self.open_next() {
                self.suspended = true;
                return Err(fail);
            }
        }
        let Some(open) = self.open.as_mut() else { return Err(WriteFail::Suspended) };
        let failed = match open.file.write(line) {
            Ok(written) if written == line.len() => {
                open.size += n;
                open.dirty = true;
                return Ok(());
            }
            Ok(_) => None,
            Err(e) => Some(e.raw_os_error().map_or(Errno::UnknownErrno, Errno::from_raw)),
        };
        // audit-events.md §3.7: the file is closed; drops until the next tick, which opens a new file.
        self.close_open();
        self.suspended = true;
        Err(WriteFail::Write(failed))
    }

    /// Creates the next file, then applies retention (audit-events.md §3.3). On a retention failure the new
    /// file is closed and removed again.
    fn open_next(&mut self) -> Result<(), WriteFail> {
        let sequence = self.next_sequence;
        let name = self.name(sequence);
        // The number is used even if the open fails: a name is never retried (an entry of that name
        // would refuse it forever, `O_EXCL`), and the next attempt opens the next number
        // (audit-events.md §3.3).
        self.next_sequence = sequence.saturating_add(1);
        let file =
            self.dir.create_file(OsStr::new(&name)).map_err(|error| WriteFail::Open { sequence, error })?;
        let keep = self.max_retained_files - 1;
        while self.retained.len() > keep {
            let oldest = self.retained.remove(0);
            if let Err(error) = self.dir.remove_file(OsStr::new(&oldest)) {
                self.retained.insert(0, oldest);
                drop(file);
                let _ = self.dir.remove_file(OsStr::new(&name));
                let _ = self.dir.sync();
                return Err(WriteFail::Open { sequence, error });
            }
        }
        // Best effort: the log is not a durability barrier (audit-events.md §3.3); a failed sync is not a
        // drop.
        let _ = self.dir.sync();
        self.open = Some(OpenFile { file, size: 0, dirty: false });
        self.retained.push(name);
        Ok(())
    }

    /// fsync and close the open file; it becomes a retained file.
    fn close_open(&mut self) {
        if let Some(open) = self.open.take() {
            let _ = sync_fd(&open.file);
        }
    }

    /// The end of an interval: sync a file written to in it, and end a suspension (the next write
    /// attempts to open a new file once, audit-events.md §3.7).
    pub fn tick(&mut self) {
        if let Some(open) = self.open.as_mut() {
            if open.dirty && sync_fd(&open.file).is_ok() {
                open.dirty = false;
            }
        }
        self.suspended = false;
    }

    /// audit-events.md §3.10: fsync and close.
    pub fn close(&mut self) {
        self.close_open();
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
