//! The trace file names of a capture (traces.md §9.3): the newest [`MAX_FILES`] names of the directory,
//! in descending byte order, and the listing an earlier capture of the same unchanged directory made.
//!
//! Listing a directory of 10,000 entries costs the kernel several milliseconds, far more than everything
//! else a `hist.runs` does, while an analysed directory often stays as it is between two calls (a
//! snapshot, a quiet gateway). traces.md §9.3 therefore lets a capture reuse the names an earlier one
//! listed when the directory provably did not change since: the same directory (device and inode), with
//! the same modification and change times, and those times settled (older by [`SETTLED`], or
//! [`SETTLED_COARSE`] on a file system that stamps whole seconds) when that listing began. Every later
//! change of an entry stamps the directory with a later time, so a reused listing is the one a fresh
//! listing would give. Only names are kept: each file is still opened and read anew, so a run that
//! completes between two calls is seen. Owns the kept listings (a few directories, the most recent last);
//! does not own reading the files or the bounds on their content (`capture.rs`).

use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstat, Mode};

use crate::storage::error::{Op, StorageError};
use crate::storage::inventory::is_event_file_name;

/// traces.md §9.3, §11: a capture reads at most the newest 100,000 files.
pub const MAX_FILES: usize = 100_000;
/// The length of a trace file name: a run reference (traces.md §4.1) and `.jsonl`.
pub const NAME_LEN: usize = 32 + 1 + 20 + 6;
/// A directory's times are settled when they are older than this at the start of a listing: longer than
/// the coarsest clock tick a local file system stamps with.
pub const SETTLED: Duration = Duration::from_millis(100);
/// The same for a file system that stamps whole seconds (or two, FAT): recognised by nanoseconds of 0.
pub const SETTLED_COARSE: Duration = Duration::from_secs(3);
/// The directories whose listing is kept: one per cold tool's directory in any usual deployment.
const KEPT_DIRECTORIES: usize = 4;

/// One trace file name (it matches `^[0-9a-f]{32}-[0-9]{20}\.jsonl$`, so it is ASCII).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TraceName([u8; NAME_LEN]);

impl TraceName {
    fn of(name: &[u8]) -> Option<TraceName> {
        if !is_event_file_name(name) {
            return None;
        }
        name.try_into().ok().map(TraceName)
    }

    pub fn as_str(&self) -> &str {
        // Always ASCII (`of`); the fallback is never taken.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// The names of one listing, newest first.
pub type Names = Arc<Vec<TraceName>>;

/// What identifies the state of a directory: its device and inode, and its modification and change
/// times (seconds, nanoseconds).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(fd: &OwnedFd) -> Result<Stamp, StorageError> {
        let st = fstat(fd.as_fd()).map_err(|e| StorageError::io(Op::Stat, e))?;
        Ok(Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
        })
    }

    /// Whether both times are settled at `began`: any change after `began` then stamps a later time.
    fn settled(&self, began: SystemTime) -> bool {
        let coarse = self.mtime.1 == 0 || self.ctime.1 == 0;
        let margin = if coarse { SETTLED_COARSE } else { SETTLED };
        let Ok(began) = began.duration_since(UNIX_EPOCH) else { return false };
        [self.mtime, self.ctime].into_iter().all(|(secs, nanos)| {
            let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else { return false };
            nanos < 1_000_000_000 && Duration::new(secs, nanos) + margin < began
        })
    }
}

/// The listings kept, the most recently used last.
static KEPT: Mutex<Vec<(Stamp, Names)>> = Mutex::new(Vec::new());

/// The newest [`MAX_FILES`] trace file names of the open directory `fd`, in descending byte order: the
/// kept listing when the directory did not change since it was made, otherwise a fresh one (kept when
/// the directory's times are settled).
pub fn newest_names(fd: &OwnedFd) -> Result<Names, StorageError> {
    let began = SystemTime::now();
    let stamp = Stamp::of(fd)?;
    if let Some(names) = kept(&stamp) {
        return Ok(names);
    }
    let names = Arc::new(list(fd)?);
    if stamp.settled(began) {
        keep(stamp, names.clone());
    }
    Ok(names)
}

fn kept(stamp: &Stamp) -> Option<Names> {
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    let at = kept.iter().position(|(s, _)| s == stamp)?;
    let entry = kept.remove(at);
    let names = entry.1.clone();
    kept.push(entry);
    Some(names)
}

fn keep(stamp: Stamp, names: Names) {
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    // An older listing of the same directory can never be used again.
    kept.retain(|(s, _)| (s.dev, s.ino) != (stamp.dev, stamp.ino));
    if kept.len() >= KEPT_DIRECTORIES {
        kept.remove(0);
    }
    kept.push((stamp, names));
}

/// Calls `each` with every entry name of the open directory `fd`. Reads a fresh descriptor of the
/// directory, so listing never moves a shared offset.
pub fn for_each_name(fd: &OwnedFd, mut each: impl FnMut(&[u8])) -> Result<(), StorageError> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let fresh = openat(fd.as_fd(), ".", flags, Mode::empty()).map_err(|e| StorageError::io(Op::List, e))?;
    let dir = nix::dir::Dir::from_fd(fresh).map_err(|e| StorageError::io(Op::List, e))?;
    for entry in dir {
        let entry = entry.map_err(|e| StorageError::io(Op::List, e))?;
        each(entry.file_name().to_bytes());
    }
    Ok(())
}

/// A fresh listing: the newest [`MAX_FILES`] names, newest first. Never holds more than twice the bound
/// while listing, whatever the directory holds.
fn list(fd: &OwnedFd) -> Result<Vec<TraceName>, StorageError> {
    let mut names: Vec<TraceName> = Vec::new();
    let newest_first = |names: &mut Vec<TraceName>| {
        names.sort_unstable_by(|a, b| b.cmp(a));
        names.truncate(MAX_FILES);
    };
    for_each_name(fd, |name| {
        if let Some(name) = TraceName::of(name) {
            names.push(name);
            if names.len() >= 2 * MAX_FILES {
                newest_first(&mut names);
            }
        }
    })?;
    newest_first(&mut names);
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(mtime: (i64, i64), ctime: (i64, i64)) -> Stamp {
        Stamp { dev: 1, ino: 2, mtime, ctime }
    }

    fn at(secs: u64, nanos: u32) -> SystemTime {
        UNIX_EPOCH + Duration::new(secs, nanos)
    }

    /// traces.md §9.3: times are settled when older than 100 ms (3 s with whole-second stamps).
    #[test]
    fn settled_needs_the_margin() {
        let fine = stamp((100, 5), (100, 5));
        assert!(!fine.settled(at(100, 100_000_005)));
        assert!(fine.settled(at(100, 100_000_006)));
        let coarse = stamp((100, 0), (100, 0));
        assert!(!coarse.settled(at(103, 0)));
        assert!(coarse.settled(at(103, 1)));
        // Either time without a fractional second makes both need 3 s.
        assert!(!stamp((100, 0), (100, 7)).settled(at(103, 1)));
        assert!(stamp((100, 0), (100, 7)).settled(at(103, 8)));
        // A change time newer than the modification time decides too.
        assert!(!stamp((90, 1), (100, 1)).settled(at(100, 50_000_000)));
        // Times before the epoch or out of range are never settled.
        assert!(!stamp((-1, 1), (100, 1)).settled(at(200, 0)));
        assert!(!stamp((100, 1_000_000_000), (100, 1)).settled(at(200, 0)));
    }

    #[test]
    fn trace_names_are_exact() {
        let name = b"0006400a1b2c3d4e9f8e7d6c5b4a3921-00000000000000000001.jsonl";
        assert_eq!(
            TraceName::of(name).map(|n| n.as_str().to_owned()).as_deref(),
            Some("0006400a1b2c3d4e9f8e7d6c5b4a3921-00000000000000000001.jsonl")
        );
        assert!(TraceName::of(b"0006400A1b2c3d4e9f8e7d6c5b4a3921-00000000000000000001.jsonl").is_none());
        assert!(TraceName::of(b"notes.txt").is_none());
        assert!(TraceName::of(b"0006400a1b2c3d4e9f8e7d6c5b4a3921-00000000000000000001.ptcins").is_none());
    }
}
