//! The facts a person needs about a refused store or listener (lifecycle.md §1.5), noted for `ptc check`
//! and for serve mode's `startup refused` log line: which path or address, and why, with the operating
//! system's own reason and, for a held lock, the process that holds it.
//!
//! Owns the wording of those facts. Does not own the rules that refused (`crate::storage`, the listener
//! binding of `listeners`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::explain::{self, Fact};
use crate::storage::lock::{holder_pid, LOCK_DIR};
use crate::storage::{ErrorKind, StorageError};

/// Notes a refusal of the store directory `dir`: its path (the lock's, for a held lock) and the rule with
/// the system error and the holder's pid when they are known.
pub(crate) fn note_store(dir: &Path, cause: &StorageError) {
    // These are the whole refusal: nothing an earlier, passed stage noted belongs to it.
    explain::clear_except(&[Fact::Stage]);
    let held = cause.kind == ErrorKind::LockHeld;
    let path = if held { dir.join(LOCK_DIR) } else { dir.to_path_buf() };
    explain::note_with(Fact::Path, || path.display().to_string());
    let mut reason = cause.kind.describe().to_owned();
    if let Some(errno) = cause.errno {
        reason.push_str(&format!(" ({})", errno.desc()));
    }
    if held {
        if let Some(pid) = holder_pid(&path) {
            reason.push_str(&format!(" (pid {pid})"));
        }
    }
    explain::note(Fact::Reason, reason);
}

/// Notes a listener that could not be bound: its address and the failed step with the operating system's
/// reason.
pub(crate) fn note_bind(address: SocketAddr, error: &crate::http::BindError) {
    explain::clear_except(&[Fact::Stage]);
    explain::note(Fact::Address, address.to_string());
    explain::note_with(Fact::Reason, || error.to_string());
}

/// The store directory of an artifact step, below the artifact root.
pub(crate) fn artifact_store(root: &Path, step: crate::storage::artifact_root::ArtifactStep) -> PathBuf {
    use crate::storage::artifact_root::{
        ArtifactStep as S, EVENTS_DIR, INSPECTION_DIR, METRICS_DIR, TRACES_DIR,
    };
    match step {
        S::Root => root.to_path_buf(),
        S::EventsDirectory | S::EventsLock | S::EventsInventory => root.join(EVENTS_DIR),
        S::Traces => root.join(TRACES_DIR),
        S::Inspection => root.join(INSPECTION_DIR),
        S::Metrics => root.join(METRICS_DIR),
    }
}
