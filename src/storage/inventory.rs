//! Store inventories: what a locked store directory may contain (audit-events.md §2.4, §3.2).
//!
//! Owns: the two file-name rules (`^[0-9]{20}\.jsonl$` numbered 1..18446744073709551615 for the audit,
//! `^[0-9a-f]{32}-[0-9]{20}\.jsonl$` for the event log), the per-entry rule shared by both (a regular file
//! by `lstat`, owned by the effective uid, mode exactly 0600, link count 1, at most the current
//! `max_file_bytes`), and the scan that applies them to every entry except `.gateway-lock`. Does not own:
//! reading file content (the event log never does; the audit's crash recovery is a later stage).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use super::error::{ErrorKind, Result, StorageError};
use super::lock::LOCK_DIR;
use super::private_dir::PrivateDir;
use super::sys::{EntryKind, EntryStat, FILE_MODE};

const JSONL: &[u8] = b".jsonl";
const SEQUENCE_DIGITS: usize = 20;
const START_REF_HEX: usize = 32;

/// The audit file number of `name` (audit-events.md §2.4): exactly 20 ASCII digits then `.jsonl`, the
/// number between 1 and 18446744073709551615. `None` for any other name.
pub fn audit_file_number(name: &[u8]) -> Option<u64> {
    let digits = name.strip_suffix(JSONL)?;
    if digits.len() != SEQUENCE_DIGITS || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let number: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    (number >= 1).then_some(number)
}

/// Whether `name` is an event file name (audit-events.md §3.2): 32 lowercase hex digits, `-`, 20 digits,
/// `.jsonl`. Trace files are named the same way (traces.md §3).
pub fn is_event_file_name(name: &[u8]) -> bool {
    is_run_ref_file_name(name, JSONL)
}

/// Whether `name` is `<32 lowercase hex>-<20 digits><suffix>`: event and trace files (`.jsonl`),
/// inspection files (`.ptcins`, traces.md §3).
pub fn is_run_ref_file_name(name: &[u8], suffix: &[u8]) -> bool {
    let Some(stem) = name.strip_suffix(suffix) else { return false };
    if stem.len() != START_REF_HEX + 1 + SEQUENCE_DIGITS {
        return false;
    }
    let (start_ref, rest) = stem.split_at(START_REF_HEX);
    let Some((b'-', sequence)) = rest.split_first() else { return false };
    start_ref.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        && sequence.iter().all(u8::is_ascii_digit)
}

/// The per-entry rule, checked with `lstat` in the order the spec lists it.
fn check_entry(st: &EntryStat, max_file_bytes: u64) -> Result<()> {
    let refuse = |kind| Err(StorageError::rule(kind));
    if st.kind != EntryKind::Regular {
        return refuse(ErrorKind::InventoryNotRegular);
    }
    if !st.owned_by_euid() {
        return refuse(ErrorKind::InventoryForeignOwner);
    }
    if st.perm != FILE_MODE {
        return refuse(ErrorKind::InventoryWrongMode);
    }
    if st.nlink != 1 {
        return refuse(ErrorKind::InventoryLinked);
    }
    if st.size > max_file_bytes {
        return refuse(ErrorKind::InventoryOversized);
    }
    Ok(())
}

/// Applies `parse` (the name rule) and the entry rule to every entry but `.gateway-lock`, in name byte
/// order; the first failing entry decides the error.
fn scan<T>(
    dir: &PrivateDir,
    max_file_bytes: u64,
    parse: impl Fn(&[u8]) -> Option<T>,
) -> Result<Vec<(T, u64)>> {
    let mut out = Vec::new();
    for name in dir.list()? {
        if name == OsStr::new(LOCK_DIR) {
            continue;
        }
        let Some(parsed) = parse(name.as_bytes()) else {
            return Err(StorageError::rule(ErrorKind::InventoryUnexpectedName));
        };
        let st = dir.stat(&name)?;
        check_entry(&st, max_file_bytes)?;
        out.push((parsed, st.size));
    }
    Ok(out)
}

/// One retained audit file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuditFile {
    /// The file number; the largest is the newest.
    pub number: u64,
    /// Size in bytes at startup.
    pub size: u64,
}

impl AuditFile {
    /// The file name: the number with 20 digits, then `.jsonl`.
    pub fn name(&self) -> String {
        format!("{:020}.jsonl", self.number)
    }
}

/// The audit inventory (audit-events.md §2.4), ordered by number.
pub fn audit_inventory(dir: &PrivateDir, max_file_bytes: u64) -> Result<Vec<AuditFile>> {
    let mut files: Vec<AuditFile> = scan(dir, max_file_bytes, audit_file_number)?
        .into_iter()
        .map(|(number, size)| AuditFile { number, size })
        .collect();
    files.sort_by_key(|f| f.number);
    Ok(files)
}

/// One retained event file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventFile {
    /// `<start reference>-<sequence>.jsonl`; byte order of names is age order (audit-events.md §3.3).
    pub name: String,
    /// Size in bytes at startup.
    pub size: u64,
}

/// The events inventory (audit-events.md §3.2), ordered by name bytes (oldest first). Content is never read.
pub fn events_inventory(dir: &PrivateDir, max_file_bytes: u64) -> Result<Vec<EventFile>> {
    named_inventory(dir, max_file_bytes, JSONL)
}

/// The inventory of a trace (`.jsonl`) or inspection (`.ptcins`) directory (traces.md §3): the same rules
/// as the event log's, ordered by name bytes (oldest first). Content is never read.
pub fn run_artifacts_inventory(
    dir: &PrivateDir,
    max_file_bytes: u64,
    suffix: &[u8],
) -> Result<Vec<EventFile>> {
    named_inventory(dir, max_file_bytes, suffix)
}

fn named_inventory(dir: &PrivateDir, max_file_bytes: u64, suffix: &[u8]) -> Result<Vec<EventFile>> {
    let parse = |name: &[u8]| {
        if is_run_ref_file_name(name, suffix) {
            std::str::from_utf8(name).ok().map(str::to_owned)
        } else {
            None
        }
    };
    Ok(scan(dir, max_file_bytes, parse)?.into_iter().map(|(name, size)| EventFile { name, size }).collect())
}

#[cfg(test)]
#[path = "inventory_tests.rs"]
mod tests;
