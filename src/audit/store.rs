//! The audit directory as the committer's [`SegmentStore`] (audit-events.md §2.6–§2.7): numbered files
//! `<20 digits>.jsonl`, created by R-DIR's file rules, every step relative to the locked directory's
//! descriptor.
//!
//! Owns the mapping of the committer's durable steps onto system calls, and the test build's sync hooks.
//! Does not own batching, ordering or retention decisions (the committer) nor startup (`startup.rs`).

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};

use super::committer::SegmentStore;

use crate::storage::{sync_fd, PrivateDir, StorageError};
use crate::support::fault::{self, FaultPoint};

/// The file name of audit file `number` (audit-events.md §2.4): 20 digits, `.jsonl`.
pub fn file_name(number: u64) -> OsString {
    OsString::from(format!("{number:020}.jsonl"))
}

/// A storage error as an `io::Error` for the committer; the text names the rule, never a path.
fn io(e: StorageError) -> io::Error {
    io::Error::other(e.to_string())
}

/// The audit directory and its active file.
pub struct DirStore {
    dir: PrivateDir,
    active: File,
    syncs: u64,
    /// Test build: the batch sync index that fails (read once, when the store is made).
    fail_sync: Option<u64>,
    /// Test build: while this file exists, every batch sync waits (read once, when the store is made).
    hold_while: Option<std::path::PathBuf>,
}

impl DirStore {
    /// Over the locked directory (a duplicate descriptor) and the active file created by startup step 5.
    pub fn new(dir: PrivateDir, active: File) -> DirStore {
        DirStore { dir, active, syncs: 0, fail_sync: hooks::failing_sync(), hold_while: hooks::hold_file() }
    }
}

impl SegmentStore for DirStore {
    fn write_active(&mut self, bytes: &[u8]) -> io::Result<()> {
        // Test build: the record stays not durable past the grouping hold (execution.md §4.5).
        if fault::injected(FaultPoint::SlowAuditWrite) {
            std::thread::sleep(fault::SLOW_AUDIT_WRITE);
        }
        // `write_all` continues after a short write and retries EINTR; nothing else writes this file.
        self.active.write_all(bytes)
    }

    fn sync_active(&mut self) -> io::Result<()> {
        let index = self.syncs;
        self.syncs += 1;
        hooks::before_sync(index, self.fail_sync, self.hold_while.as_deref())?;
        sync_fd(&self.active).map_err(io)
    }

    fn open_segment(&mut self, number: u64) -> io::Result<()> {
        let file = self.dir.create_file(&file_name(number)).map_err(io)?;
        sync_fd(&file).map_err(io)?;
        self.dir.sync().map_err(io)?;
        // audit-events.md §2.7 step 2: the old active file is closed; its last batch is already synced.
        self.active = file;
        Ok(())
    }

    fn remove_segment(&mut self, number: u64) -> io::Result<()> {
        self.dir.remove_file(&file_name(number)).map_err(io)
    }

    fn sync_dir(&mut self) -> io::Result<()> {
        self.dir.sync().map_err(io)
    }
}

/// Test-build hooks on the batch sync (audit-events.md §6.1 AU12 "a test build hook that makes the next
/// fsync fail"). Without the `fault-injection` feature they do nothing.
pub mod hooks {
    use std::io;

    /// With `fault-injection`: `PTC_AUDIT_FAIL_SYNC=<n>` at audit startup makes the batch sync with
    /// 0-based index `n` fail.
    #[cfg(feature = "fault-injection")]
    pub fn failing_sync() -> Option<u64> {
        std::env::var("PTC_AUDIT_FAIL_SYNC").ok().and_then(|v| v.parse::<u64>().ok())
    }

    #[cfg(not(feature = "fault-injection"))]
    pub fn failing_sync() -> Option<u64> {
        None
    }

    /// With `fault-injection`: `PTC_AUDIT_HOLD_SYNCS=<path>` at audit startup makes every batch sync wait
    /// while the file `<path>` exists (for tests of another process: a record stays not durable, and its
    /// call keeps its run admission, until the test removes the file).
    #[cfg(feature = "fault-injection")]
    pub fn hold_file() -> Option<std::path::PathBuf> {
        std::env::var_os("PTC_AUDIT_HOLD_SYNCS").map(std::path::PathBuf::from)
    }

    #[cfg(not(feature = "fault-injection"))]
    pub fn hold_file() -> Option<std::path::PathBuf> {
        None
    }

    /// With `fault-injection`: a held gate ([`hold_syncs`]) or an existing hold file ([`hold_file`])
    /// blocks every batch sync until it is released; sync `index` fails when it is `fail`.
    #[cfg(feature = "fault-injection")]
    pub fn before_sync(
        index: u64,
        fail: Option<u64>,
        hold_while: Option<&std::path::Path>,
    ) -> io::Result<()> {
        if let Some(path) = hold_while {
            // Polled: the test that holds the file is another process. A test build only.
            while path.exists() {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
        let (lock, cv) = &GATE;
        let mut held = lock.lock().map_err(|_| io::Error::other("sync gate poisoned"))?;
        while *held {
            held = cv.wait(held).map_err(|_| io::Error::other("sync gate poisoned"))?;
        }
        drop(held);
        if fail == Some(index) {
            return Err(io::Error::other("injected sync failure"));
        }
        Ok(())
    }

    #[cfg(not(feature = "fault-injection"))]
    pub fn before_sync(
        _index: u64,
        _fail: Option<u64>,
        _hold_while: Option<&std::path::Path>,
    ) -> io::Result<()> {
        Ok(())
    }

    #[cfg(feature = "fault-injection")]
    static GATE: (std::sync::Mutex<bool>, std::sync::Condvar) =
        (std::sync::Mutex::new(false), std::sync::Condvar::new());

    /// With `fault-injection` (in-process tests): while `held`, every audit batch sync of this process
    /// waits.
    #[cfg(feature = "fault-injection")]
    pub fn hold_syncs(held: bool) {
        let (lock, cv) = &GATE;
        if let Ok(mut h) = lock.lock() {
            *h = held;
        }
        cv.notify_all();
    }
}
