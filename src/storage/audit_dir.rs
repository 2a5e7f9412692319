//! The audit directory's startup checks, steps 1–3 of audit-events.md §2.5 (directory policy only).
//!
//! Owns: R-ANC and R-DIR on `private_audit.directory`, R-LOCK under the audit policy, the inventory of
//! audit-events.md §2.4, and the mapping of every failure onto `audit_unavailable` with its `reason_class`
//! (audit-events.md §4.1). Does not own: crash recovery, the new numbered file, the probe, retention or the
//! committer (steps 4–8 and audit-events.md §2.6–§2.9 are `audit`), which build on the handle returned
//! here.

use std::fmt;

use super::ancestry::open_store_dir;
use super::error::{ErrorClass, StorageError};
use super::inventory::{audit_inventory, AuditFile};
use super::lock::{LockPolicy, StoreLock};
use super::private_dir::PrivateDir;
use super::start_ref::StartRef;
use crate::codes::StartupCode;
use crate::config::gateway::PrivateAudit;

/// The audit reason classes a directory-policy failure can have (audit-events.md §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditReason {
    /// `audit_ancestry_unsafe`: R-ANC failed.
    AncestryUnsafe,
    /// `audit_directory_invalid`: R-DIR failed.
    DirectoryInvalid,
    /// `audit_lock_held`: another live gateway owns the directory.
    LockHeld,
    /// `audit_lock_stale`: a lock directory without a live owner exists (operator action needed).
    LockStale,
    /// `audit_inventory_invalid`: an entry violates audit-events.md §2.4.
    InventoryInvalid,
    /// `audit_file_corrupt`: crash recovery found damage it may not repair (audit-events.md §2.10).
    FileCorrupt,
    /// `audit_io_error`: a create, write, fsync or remove failed.
    IoError,
}

impl AuditReason {
    /// The exact `startup_failed.reason_class` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditReason::AncestryUnsafe => "audit_ancestry_unsafe",
            AuditReason::DirectoryInvalid => "audit_directory_invalid",
            AuditReason::LockHeld => "audit_lock_held",
            AuditReason::LockStale => "audit_lock_stale",
            AuditReason::InventoryInvalid => "audit_inventory_invalid",
            AuditReason::FileCorrupt => "audit_file_corrupt",
            AuditReason::IoError => "audit_io_error",
        }
    }

    /// The reason class of a storage error met while opening the audit directory.
    pub fn of(e: &StorageError) -> AuditReason {
        match e.class() {
            ErrorClass::Ancestry => AuditReason::AncestryUnsafe,
            ErrorClass::Directory => AuditReason::DirectoryInvalid,
            ErrorClass::LockHeld => AuditReason::LockHeld,
            // The audit policy never produces LockNotTakeable; an unheld odd lock is stale
            // (audit-events.md §1.4).
            ErrorClass::LockStale | ErrorClass::LockNotTakeable => AuditReason::LockStale,
            ErrorClass::Inventory => AuditReason::InventoryInvalid,
            ErrorClass::Corrupt => AuditReason::FileCorrupt,
            ErrorClass::Io => AuditReason::IoError,
        }
    }
}

/// A failure of audit startup steps 1–3: always `audit_unavailable`, with its reason class. No path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditDirError {
    /// The `reason_class` for the event log's `startup_failed` record.
    pub reason: AuditReason,
    /// What failed.
    pub cause: StorageError,
}

impl AuditDirError {
    /// The error of `cause` with its reason class.
    pub fn from_cause(cause: StorageError) -> Self {
        AuditDirError { reason: AuditReason::of(&cause), cause }
    }

    /// Always `audit_unavailable` (lifecycle.md §4).
    pub fn code(&self) -> StartupCode {
        StartupCode::AuditUnavailable
    }
}

impl fmt::Display for AuditDirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "audit directory ({}): {}", self.reason.as_str(), self.cause)
    }
}

impl std::error::Error for AuditDirError {}

/// The validated, locked audit directory and its inventory, held for the process lifetime.
#[derive(Debug)]
pub struct AuditDir {
    dir: PrivateDir,
    lock: StoreLock,
    files: Vec<AuditFile>,
}

impl AuditDir {
    /// Steps 1–3 of audit-events.md §2.5 for `cfg` (its directory already anchored, config.md §3). On an
    /// inventory failure the lock just taken is released again, so the refusal leaves no lock behind.
    pub fn open(cfg: &PrivateAudit, start_ref: &StartRef) -> Result<AuditDir, AuditDirError> {
        let (dir, _created) = open_store_dir(&cfg.directory).map_err(AuditDirError::from_cause)?;
        let lock =
            StoreLock::acquire(&dir, LockPolicy::Audit, start_ref).map_err(AuditDirError::from_cause)?;
        match audit_inventory(&dir, cfg.max_file_bytes) {
            Ok(files) => Ok(AuditDir { dir, lock, files }),
            Err(cause) => {
                let _ = lock.release();
                Err(AuditDirError::from_cause(cause))
            }
        }
    }

    /// The audit directory; every file operation of the audit goes through it.
    pub fn dir(&self) -> &PrivateDir {
        &self.dir
    }

    /// `.gateway-lock`, where the startup probe file is created (audit-events.md §2.5 step 6).
    pub fn lock_dir(&self) -> &PrivateDir {
        self.lock.lock_dir()
    }

    /// The retained files at startup, ordered by number (the last is the newest).
    pub fn files(&self) -> &[AuditFile] {
        &self.files
    }

    /// Orderly release (audit-events.md §1.4): removes `owner`, any probe and `.gateway-lock`, fsyncs the
    /// directory.
    pub fn release(self) -> Result<(), StorageError> {
        self.lock.release()
    }
}

#[cfg(test)]
#[path = "audit_dir_tests.rs"]
mod tests;
