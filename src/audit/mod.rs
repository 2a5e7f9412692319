//! The private audit (audit-events.md §2): the startup sequence beyond the directory checks, the record,
//! crash recovery, and the durable committer's wiring.
//!
//! Owns: steps 4–8 of audit-events.md §2.5 ([`startup`], [`recovery`]), the record of audit-events.md §2.3
//! ([`record`], [`time`]), the committer's store over the audit directory ([`store`]), and [`Audit`], the
//! stage-7 resource that serves the call driver ([`AuditLog`]) and is released at the audit flush stage (S7)
//! or by a failed start. The durable group committer itself is [`committer`] (audit-events.md §2.6–§2.9).
//! Does not own the directory policy and lock (`crate::storage::audit_dir`), when a record is written
//! (`exec::driver`) or the event log.

pub mod committer;
pub mod owner;
pub mod record;
pub mod recovery;
pub mod startup;
pub mod store;
pub mod time;

use std::time::SystemTime;

use committer::{Bounds, CommitLoss, Committer, Layout};

use crate::config::gateway::PrivateAudit;
use crate::storage::{AuditDir, AuditDirError, ErrorKind, Op, StartRef, StorageError};
pub use record::{AuditRecord, CallId};
pub use startup::Recovered;

/// The call driver's handle: submits one record and waits until it is durable.
#[derive(Clone, Debug)]
pub struct AuditLog {
    committer: Committer,
}

/// A record could not be made durable; the domain is already stopping (audit-events.md §2.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditUnavailable;

impl AuditLog {
    /// Encodes `record` (`ended_at` = now) and waits for its acknowledgement.
    pub async fn record(&self, record: &AuditRecord) -> Result<(), AuditUnavailable> {
        let line = record.encode(SystemTime::now());
        self.committer.submit(line).await.map_err(|_| AuditUnavailable)
    }

    /// The committer's counters (batches, syncs, records).
    pub fn stats(&self) -> &committer::CommitStats {
        self.committer.stats()
    }
}

/// The audit stage's resource: the locked directory, the new active file's number, the committer.
#[derive(Debug)]
pub struct Audit {
    dir: AuditDir,
    active: u64,
    log: AuditLog,
    recovered: Recovered,
}

impl Audit {
    /// Stage 7 (audit-events.md §2.5 steps 1–7), then the committer. `on_loss` is called once if a write,
    /// sync, rotation or retention fails or the committer is lost (the caller stops the domain, exit 70).
    pub fn start(
        cfg: &PrivateAudit,
        start_ref: &StartRef,
        on_loss: Box<dyn FnOnce(CommitLoss) + Send>,
    ) -> Result<Audit, AuditDirError> {
        let bounds = Bounds {
            max_file_bytes: cfg.max_file_bytes,
            max_retained_files: usize::try_from(cfg.max_retained_files).unwrap_or(usize::MAX),
        };
        let dir = AuditDir::open(cfg, start_ref)?;
        let prepared = match startup::prepare(&dir, cfg.max_retained_files, bounds.batch_bytes()) {
            Ok(p) => p,
            Err(e) => {
                let _ = dir.release();
                return Err(e);
            }
        };
        let active = prepared.active;
        let fail = |dir: AuditDir, cause: StorageError| {
            startup::remove_new_file(&dir, active);
            let _ = dir.release();
            AuditDirError::from_cause(cause)
        };
        let store_dir = match dir.dir().try_clone() {
            Ok(d) => d,
            Err(cause) => return Err(fail(dir, cause)),
        };
        let layout = Layout { active, active_size: 0, closed: prepared.closed };
        let store = Box::new(store::DirStore::new(store_dir, prepared.file));
        let validate = Box::new(|line: &[u8]| record::is_valid_line(line));
        let committer = match Committer::start(store, layout, bounds, validate, on_loss) {
            Ok(c) => c,
            Err(_) => return Err(fail(dir, StorageError::rule(ErrorKind::Io(Op::Open)))),
        };
        let recovered = prepared.recovered;
        if recovered.removed_anything() {
            // Step 8: the event log's `audit_recovered` (audit-events.md §3.5) is emitted from this report.
            tracing::info!(
                removed_bytes = recovered.removed_bytes,
                removed_empty_files = recovered.removed_empty_files,
                retention_removed = recovered.retention_removed,
                "audit_recovered"
            );
        }
        Ok(Audit { dir, active, log: AuditLog { committer }, recovered })
    }

    /// The handle the call driver records through.
    pub fn log(&self) -> AuditLog {
        self.log.clone()
    }

    /// What step 4 and step 7 removed (for `audit_recovered`).
    pub fn recovered(&self) -> Recovered {
        self.recovered
    }

    /// Shutdown stage S7, audit flush (audit-events.md §2.9): flush the pending batch through the barrier,
    /// sync, close the active file, release the lock. True iff all of it succeeded. The active file is not
    /// truncated and no empty file is removed.
    pub async fn close(self) -> bool {
        let flushed = self.log.committer.close().await.is_ok();
        let stats = self.log.stats();
        tracing::info!(
            batches = stats.batches(),
            syncs = stats.syncs(),
            records = stats.records(),
            "audit closed"
        );
        let released = self.dir.release().is_ok();
        flushed && released
    }

    /// After an audit failure (the audit flush, S7, skipped, lifecycle.md §7.5) the lock is still removed on
    /// the way out (audit-events.md §1.4); the failed committer is stopped first. True iff the lock was
    /// released.
    pub async fn release_after_failure(self) -> bool {
        let _ = self.log.committer.close().await;
        self.dir.release().is_ok()
    }

    /// A start that failed after this stage (audit-events.md §2.5): the committer stops, the new file is
    /// removed, the directory synced, the lock released. True iff all of it succeeded.
    pub async fn abandon(self) -> bool {
        let _ = self.log.committer.close().await;
        let removed = startup::remove_new_file(&self.dir, self.active);
        let released = self.dir.release().is_ok();
        removed && released
    }
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
