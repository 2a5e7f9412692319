//! The closed error type of the storage policy (audit-events.md §1.2–§1.4, §2.4, §3.2).
//!
//! Owns: [`ErrorKind`] (what rule failed), [`Op`] (which system call failed), [`ErrorClass`] (the coarse
//! grouping the audit reason classes and the artifact-root code are derived from) and [`StorageError`].
//! Does not own: the mapping onto startup codes and `startup_failed.reason_class` values, which lives with
//! each store (`artifact_root.rs`, `audit_dir.rs`).
//!
//! No error value carries a path, a file name or file content: only the rule that failed and, for a failed
//! system call, its errno. That keeps every rendering of an error safe for stderr (lifecycle.md §5.1) and
//! for the event log (audit-events.md §3.9).

use std::fmt;

use nix::errno::Errno;

/// A system call (or library step) whose failure is reported as [`ErrorKind::Io`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Physical resolution of an existing prefix (`realpath`).
    Resolve,
    /// `openat` of a directory or a file.
    Open,
    /// `fstat` / `fstatat`.
    Stat,
    /// `mkdirat`.
    Mkdir,
    /// `fchmod`.
    Chmod,
    /// `fsync` (or `F_FULLFSYNC` on macOS).
    Sync,
    /// `write`.
    Write,
    /// `ftruncate` (a reused trace or inspection file cut to its first byte, traces.md §4.3).
    Truncate,
    /// `unlinkat` of a file.
    Unlink,
    /// `unlinkat(AT_REMOVEDIR)`.
    Rmdir,
    /// `renameat`.
    Rename,
    /// Reading a directory (`fdopendir` / `readdir`).
    List,
    /// `flock`.
    Flock,
    /// `dup` of a descriptor.
    Dup,
    /// The real-time clock or the secure random source (start reference, audit-events.md §1.1).
    Entropy,
}

impl Op {
    /// A stable lowercase name, for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Resolve => "resolve",
            Op::Open => "open",
            Op::Stat => "stat",
            Op::Mkdir => "mkdir",
            Op::Chmod => "chmod",
            Op::Sync => "fsync",
            Op::Write => "write",
            Op::Truncate => "ftruncate",
            Op::Unlink => "unlink",
            Op::Rmdir => "rmdir",
            Op::Rename => "rename",
            Op::List => "list",
            Op::Flock => "flock",
            Op::Dup => "dup",
            Op::Entropy => "entropy",
        }
    }
}

/// What rule failed. Closed: every refusal of the storage policy is exactly one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The configured path is not absolute, has no final component, or has a `.`/`..`/empty component
    /// where a directory must be created (anchoring, config.md §3.2, never leaves one).
    PathInvalid,
    /// A file name handed to a [`super::PrivateDir`] operation is not one plain component.
    NameInvalid,
    /// R-ANC (audit-events.md §1.2): an ancestor on the resolved path is not a directory.
    AncestorNotDirectory,
    /// R-ANC: an ancestor is owned by neither the effective uid nor uid 0.
    AncestorForeignOwner,
    /// R-ANC: an ancestor is group- or world-writable without its sticky bit.
    AncestorWritable,
    /// R-ANC: the existing prefix could not be resolved or walked (a component changed, permission denied).
    AncestorUnresolvable,
    /// R-DIR (audit-events.md §1.3): the final component is a symbolic link.
    DirectoryIsSymlink,
    /// R-DIR: the final component is not a directory.
    DirectoryNotDirectory,
    /// R-DIR: the directory is not owned by the effective uid (uid 0 is not enough).
    DirectoryForeignOwner,
    /// R-DIR: the mode, setuid/setgid/sticky included, is not exactly 0700.
    DirectoryWrongMode,
    /// R-DIR: the opened descriptor is not the directory `lstat` saw.
    DirectoryIdentityChanged,
    /// R-DIR: the directory does not exist or could not be opened.
    DirectoryUnavailable,
    /// R-LOCK (audit-events.md §1.4): another live gateway holds the store's lock.
    LockHeld,
    /// R-LOCK, audit policy: a lock directory exists whose `owner` flock is free or missing.
    LockStale,
    /// R-LOCK, events policy: the existing `.gateway-lock` is not a directory, holds something other than a
    /// regular file `owner`, or its `owner` cannot be opened; nothing inside it was touched.
    LockNotTakeable,
    /// Inventory (audit-events.md §2.4, §3.2): an entry's name does not match the store's pattern.
    InventoryUnexpectedName,
    /// Inventory: an entry is not a regular file (symbolic link, directory, socket, …), by `lstat`.
    InventoryNotRegular,
    /// Inventory: an entry is not owned by the effective uid.
    InventoryForeignOwner,
    /// Inventory: an entry's mode is not exactly 0600.
    InventoryWrongMode,
    /// Inventory: an entry's link count is not 1.
    InventoryLinked,
    /// Inventory: an entry is larger than the current `max_file_bytes`.
    InventoryOversized,
    /// Audit crash recovery (audit-events.md §2.10): a closed file does not end with LF, or the newest
    /// non-empty file's tail is longer than one batch's bound.
    FileCorrupt,
    /// A system call failed; the errno is in [`StorageError::errno`].
    Io(Op),
}

/// The coarse class of an [`ErrorKind`]: the audit maps each class to one `reason_class`
/// (audit-events.md §4.1); the artifact root maps all of them to `artifact_root_unavailable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// R-ANC failed.
    Ancestry,
    /// R-DIR failed (or the path has no usable final component).
    Directory,
    /// The lock is held by a live gateway.
    LockHeld,
    /// The lock is stale (audit policy only).
    LockStale,
    /// The lock directory cannot be taken over (events policy only).
    LockNotTakeable,
    /// An inventory entry failed its rule.
    Inventory,
    /// A store file's content is damaged beyond the one permitted torn tail.
    Corrupt,
    /// A create, write, fsync, remove or listing failed.
    Io,
}

impl ErrorKind {
    /// The class this kind belongs to.
    pub fn class(self) -> ErrorClass {
        use ErrorKind::*;
        match self {
            AncestorNotDirectory | AncestorForeignOwner | AncestorWritable | AncestorUnresolvable => {
                ErrorClass::Ancestry
            }
            PathInvalid
            | DirectoryIsSymlink
            | DirectoryNotDirectory
            | DirectoryForeignOwner
            | DirectoryWrongMode
            | DirectoryIdentityChanged
            | DirectoryUnavailable => ErrorClass::Directory,
            LockHeld => ErrorClass::LockHeld,
            LockStale => ErrorClass::LockStale,
            LockNotTakeable => ErrorClass::LockNotTakeable,
            InventoryUnexpectedName
            | InventoryNotRegular
            | InventoryForeignOwner
            | InventoryWrongMode
            | InventoryLinked
            | InventoryOversized => ErrorClass::Inventory,
            FileCorrupt => ErrorClass::Corrupt,
            NameInvalid | Io(_) => ErrorClass::Io,
        }
    }

    /// A fixed human description, free of paths.
    pub fn describe(self) -> &'static str {
        use ErrorKind::*;
        match self {
            PathInvalid => "the configured path has no usable final component",
            NameInvalid => "a file name is not a single plain component",
            AncestorNotDirectory => "an ancestor is not a directory",
            AncestorForeignOwner => "an ancestor is owned by another user",
            AncestorWritable => "an ancestor is group- or world-writable without the sticky bit",
            AncestorUnresolvable => "the existing ancestry could not be resolved",
            DirectoryIsSymlink => "the directory is a symbolic link",
            DirectoryNotDirectory => "the path is not a directory",
            DirectoryForeignOwner => "the directory is not owned by the effective uid",
            DirectoryWrongMode => "the directory mode is not exactly 0700",
            DirectoryIdentityChanged => "the directory changed while it was opened",
            DirectoryUnavailable => "the directory could not be opened",
            LockHeld => "the lock is held by another live gateway",
            LockStale => "a stale lock exists and must be removed by an operator",
            LockNotTakeable => "the existing lock directory cannot be taken over",
            InventoryUnexpectedName => "an entry has an unexpected name",
            InventoryNotRegular => "an entry is not a regular file",
            InventoryForeignOwner => "an entry is not owned by the effective uid",
            InventoryWrongMode => "an entry's mode is not exactly 0600",
            InventoryLinked => "an entry's link count is not 1",
            InventoryOversized => "an entry is larger than max_file_bytes",
            FileCorrupt => "a store file is damaged beyond a torn final batch",
            Io(_) => "a filesystem operation failed",
        }
    }
}

/// A refusal of the storage policy: the rule that failed and, for a system call, its errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StorageError {
    /// What failed.
    pub kind: ErrorKind,
    /// The errno of the failed system call, when there was one.
    pub errno: Option<Errno>,
}

impl StorageError {
    /// A rule violation without a system-call error.
    pub fn rule(kind: ErrorKind) -> Self {
        StorageError { kind, errno: None }
    }

    /// A failed system call `op`.
    pub fn io(op: Op, errno: Errno) -> Self {
        StorageError { kind: ErrorKind::Io(op), errno: Some(errno) }
    }

    /// `kind` caused by a failed system call.
    pub fn with_errno(kind: ErrorKind, errno: Errno) -> Self {
        StorageError { kind, errno: Some(errno) }
    }

    /// The class of [`Self::kind`].
    pub fn class(&self) -> ErrorClass {
        self.kind.class()
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.describe())?;
        if let ErrorKind::Io(op) = self.kind {
            write!(f, " ({})", op.as_str())?;
        }
        if let Some(errno) = self.errno {
            write!(f, ": {}", errno.desc())?;
        }
        Ok(())
    }
}

impl std::error::Error for StorageError {}

/// Shorthand used by every storage module.
pub type Result<T> = std::result::Result<T, StorageError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_never_names_a_path() {
        let e = StorageError::io(Op::Mkdir, Errno::EACCES);
        assert_eq!(e.to_string(), "a filesystem operation failed (mkdir): Permission denied");
        let e = StorageError::rule(ErrorKind::DirectoryWrongMode);
        assert_eq!(e.to_string(), "the directory mode is not exactly 0700");
    }

    #[test]
    fn classes() {
        let table = [
            (ErrorKind::AncestorWritable, ErrorClass::Ancestry),
            (ErrorKind::DirectoryIsSymlink, ErrorClass::Directory),
            (ErrorKind::PathInvalid, ErrorClass::Directory),
            (ErrorKind::LockHeld, ErrorClass::LockHeld),
            (ErrorKind::LockStale, ErrorClass::LockStale),
            (ErrorKind::LockNotTakeable, ErrorClass::LockNotTakeable),
            (ErrorKind::InventoryLinked, ErrorClass::Inventory),
            (ErrorKind::Io(Op::Sync), ErrorClass::Io),
            (ErrorKind::NameInvalid, ErrorClass::Io),
        ];
        for (kind, class) in table {
            assert_eq!(kind.class(), class, "{kind:?}");
        }
    }
}
