//! Audit startup steps 4–7 (audit-events.md §2.5) after the directory steps 1–3 of
//! `storage::audit_dir`: crash recovery, the new active file, the durable probe, and retention.
//!
//! Owns the order (retention only after the new file is durable, so a failing disk never loses old files
//! before a replacement exists) and the cleanup of a failed start (the new file removed again). Does not
//! own the committer or the shutdown (`mod.rs`).

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;

use super::recovery::{recover, Repair};
use super::store::file_name;
use crate::storage::{sync_fd, AuditDir, AuditDirError, AuditFile, ErrorKind, Op, StorageError};

/// The probe file inside `.gateway-lock` (audit-events.md §2.5 step 6).
const PROBE: &str = "probe";

/// What steps 4–7 produced.
#[derive(Debug)]
pub struct Prepared {
    /// The new active file's number and its open descriptor.
    pub active: u64,
    pub file: File,
    /// Closed files kept after retention, ascending.
    pub closed: Vec<u64>,
    /// For the event log's `audit_recovered` (audit-events.md §3.5).
    pub recovered: Recovered,
}

/// What step 4 and step 7 removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Bytes truncated by the crash repair.
    pub removed_bytes: u64,
    /// Empty closed files removed.
    pub removed_empty_files: u64,
    /// Closed files removed by retention (oldest first).
    pub retention_removed: u64,
}

impl Recovered {
    /// Step 8: `audit_recovered` is emitted iff step 4 or 7 removed anything.
    pub fn removed_anything(&self) -> bool {
        self.removed_bytes > 0 || self.removed_empty_files > 0 || self.retention_removed > 0
    }
}

fn err(cause: StorageError) -> AuditDirError {
    AuditDirError::from_cause(cause)
}

/// Steps 4–7 on the opened, locked, inventoried directory. On a failure after step 5 the new file is
/// removed again and the directory synced; files removed by step 7 stay removed.
pub fn prepare(
    audit: &AuditDir,
    max_retained_files: u32,
    batch_bytes: u64,
) -> Result<Prepared, AuditDirError> {
    let mut files: Vec<AuditFile> = audit.files().to_vec();
    // Step 4.
    let Repair { removed_bytes } = recover(audit.dir(), &mut files, batch_bytes).map_err(err)?;
    // Step 5: largest + 1, or 1; a number past u64::MAX cannot be written.
    let active = match files.last() {
        Some(f) => f.number.checked_add(1).ok_or_else(|| err(StorageError::rule(ErrorKind::Io(Op::Open))))?,
        None => 1,
    };
    let name = file_name(active);
    let file = audit.dir().create_file(&name).map_err(err)?;
    let durable = sync_fd(&file).and_then(|()| audit.dir().sync());
    let after_step5 =
        durable.and_then(|()| probe(audit)).and_then(|()| retain(audit, &files, max_retained_files));
    match after_step5 {
        Ok((closed, removed_empty_files, retention_removed)) => Ok(Prepared {
            active,
            file,
            closed,
            recovered: Recovered { removed_bytes, removed_empty_files, retention_removed },
        }),
        Err(cause) => {
            drop(file);
            remove_new_file(audit, active);
            Err(err(cause))
        }
    }
}

/// Removes the new active file of a failed start and syncs the directory (audit-events.md §2.5,
/// lifecycle.md §5.2).
pub fn remove_new_file(audit: &AuditDir, number: u64) -> bool {
    let removed = audit.dir().remove_file(&file_name(number)).is_ok();
    removed && audit.dir().sync().is_ok()
}

/// Step 6: `.gateway-lock/probe` with `probe` and LF, synced, closed, removed, `.gateway-lock` synced.
fn probe(audit: &AuditDir) -> Result<(), StorageError> {
    let lock = audit.lock_dir();
    let name = OsStr::new(PROBE);
    let written = (|| {
        let mut file = lock.create_file(name)?;
        file.write_all(b"probe\n").map_err(|e| {
            StorageError::io(
                Op::Write,
                nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(nix::libc::EIO)),
            )
        })?;
        sync_fd(&file)
    })();
    let removed = lock.remove_file(name);
    written?;
    removed?;
    lock.sync()
}

/// Step 7: every empty closed file, then the oldest until at most `max_retained_files − 1` closed files
/// remain; then the directory sync. Returns the kept closed numbers and the two removal counts.
fn retain(
    audit: &AuditDir,
    files: &[AuditFile],
    max_retained_files: u32,
) -> Result<(Vec<u64>, u64, u64), StorageError> {
    let mut empty = 0;
    let mut kept = Vec::new();
    for f in files {
        if f.size == 0 {
            audit.dir().remove_file(&file_name(f.number))?;
            empty += 1;
        } else {
            kept.push(f.number);
        }
    }
    let keep = usize::try_from(max_retained_files.saturating_sub(1)).unwrap_or(usize::MAX);
    let surplus = kept.len().saturating_sub(keep);
    for number in kept.drain(..surplus) {
        audit.dir().remove_file(&file_name(number))?;
    }
    audit.dir().sync()?;
    Ok((kept, empty, surplus as u64))
}
