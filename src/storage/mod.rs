//! The filesystem policy both stores and the artifact root stand on (audit-events.md §1.1–§1.4, §2.4,
//! audit-events.md §3.2; lifecycle.md §3.2 stage 4).
//!
//! Owns: the ancestry rule R-ANC ([`ancestry`]), the private directory rule R-DIR and its
//! descriptor-relative handle ([`private_dir`]), the lock rule R-LOCK with its audit and events policies
//! ([`lock`]), the gateway start reference ([`start_ref`]), the store inventories ([`inventory`]), startup
//! stage 4 ([`artifact_root`]) and audit startup steps 1–3 ([`audit_dir`]). Does not own: record formats,
//! the event logger, the audit committer, crash recovery, numbered audit files, the probe or retention.
//!
//! Everything here is synchronous and runs during startup (or at shutdown for the release); no error
//! carries a path, so any of them may be logged.

pub mod ancestry;
pub mod artifact_root;
pub mod audit_dir;
pub mod error;
pub mod inventory;
pub mod lock;
pub mod private_dir;
pub mod start_ref;
pub mod sys;

#[cfg(test)]
pub(crate) mod testutil;

pub use artifact_root::{ArtifactRoot, ArtifactRootError, ArtifactStep, EventsStore, RunArtifactsStore};
pub use audit_dir::{AuditDir, AuditDirError, AuditReason};
pub use error::{ErrorClass, ErrorKind, Op, StorageError};
pub use inventory::{AuditFile, EventFile};
pub use lock::{LockPolicy, StoreLock};
pub use private_dir::{Access, PrivateDir};
pub use start_ref::{start_ref, StartRef};
pub use sys::{sync_fd, EntryKind, EntryStat};
