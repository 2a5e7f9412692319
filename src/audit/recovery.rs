//! Crash recovery of the existing audit files, startup step 4 (audit-events.md §2.10).
//!
//! Owns the rule: every closed file other than the newest non-empty one is empty or ends with LF (its
//! content is not re-parsed); the newest non-empty file is read completely, its longest prefix `P` of
//! valid record lines is kept, and a tail `T` with `0 < |T| ≤ L` is truncated away and synced, while a
//! longer tail refuses startup. Does not own removing empty files (step 7, `startup.rs`).

use std::io::{Read, Seek, SeekFrom};

use super::record::is_valid_line;
use super::store::file_name;
use crate::storage::{sync_fd, Access, AuditFile, ErrorKind, Op, PrivateDir, StorageError};

/// What recovery changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Repair {
    /// Bytes truncated from the newest non-empty file (`audit_recovered.removed_bytes`).
    pub removed_bytes: u64,
}

fn io_err(op: Op, e: &std::io::Error) -> StorageError {
    StorageError::io(op, nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(nix::libc::EIO)))
}

fn corrupt() -> StorageError {
    StorageError::rule(ErrorKind::FileCorrupt)
}

/// The length of the longest prefix of `content` made of complete, valid record lines.
pub fn valid_prefix(content: &[u8]) -> usize {
    let mut end = 0;
    while let Some(lf) = content[end..].iter().position(|&b| b == b'\n') {
        let line = &content[end..end + lf + 1];
        if !is_valid_line(line) {
            break;
        }
        end += lf + 1;
    }
    end
}

/// Step 4 over the inventory `files` (ordered by number). `batch_bytes` is `L`. Updates the sizes of
/// `files` to what they are after the repair.
pub fn recover(dir: &PrivateDir, files: &mut [AuditFile], batch_bytes: u64) -> Result<Repair, StorageError> {
    let Some(newest) = files.iter().rposition(|f| f.size > 0) else { return Ok(Repair::default()) };
    for f in files[..newest].iter().filter(|f| f.size > 0) {
        let mut file = dir.open_file(&file_name(f.number), Access::Read)?;
        file.seek(SeekFrom::Start(f.size - 1)).map_err(|e| io_err(Op::Stat, &e))?;
        let mut last = [0u8; 1];
        file.read_exact(&mut last).map_err(|e| io_err(Op::Stat, &e))?;
        if last[0] != b'\n' {
            return Err(corrupt());
        }
    }
    let target = &mut files[newest];
    let mut file = dir.open_file(&file_name(target.number), Access::ReadWrite)?;
    let mut content = Vec::new();
    file.read_to_end(&mut content).map_err(|e| io_err(Op::Stat, &e))?;
    let keep = valid_prefix(&content);
    let tail = (content.len() - keep) as u64;
    if tail == 0 {
        return Ok(Repair::default());
    }
    if tail > batch_bytes {
        // Not explainable by a crash: the gateway never discards more than one batch on its own.
        return Err(corrupt());
    }
    file.set_len(keep as u64).map_err(|e| io_err(Op::Write, &e))?;
    sync_fd(&file)?;
    target.size = keep as u64;
    Ok(Repair { removed_bytes: tail })
}
