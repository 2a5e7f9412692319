//! Thin, safe wrappers over the few `nix` calls the storage policy is built from.
//!
//! Owns: the single-component name rule, the durable sync (`fsync(2)`, `F_FULLFSYNC` on macOS,
//! audit-events.md §1.3), the open flags used for directories and files, and [`EntryStat`], a
//! platform-neutral view of `struct stat`. Does not own any policy decision: callers decide what a mode,
//! owner or link count means.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};
use nix::unistd::geteuid;

use super::error::{ErrorKind, Op, Result, StorageError};

/// Mode of every private directory (audit-events.md §1.2 step 2, audit-events.md §1.3, §1.4 step 1).
pub const DIR_MODE: u32 = 0o700;
/// Mode of every private file (audit-events.md §1.3).
pub const FILE_MODE: u32 = 0o600;

/// `Mode` for `DIR_MODE` / `FILE_MODE`.
pub(crate) fn mode(bits: u32) -> Mode {
    Mode::from_bits_truncate(bits as nix::libc::mode_t)
}

/// A name that is one plain path component: non-empty, no `/`, no NUL, not `.` or `..`. Every
/// descriptor-relative operation insists on it, so a name can never walk out of its directory
/// (audit-events.md §1.3: the path is never resolved again).
pub(crate) fn check_name(name: &OsStr) -> Result<()> {
    let bytes = name.as_bytes();
    let plain =
        !bytes.is_empty() && bytes != b"." && bytes != b".." && !bytes.iter().any(|&b| b == b'/' || b == 0);
    if plain {
        Ok(())
    } else {
        Err(StorageError::rule(ErrorKind::NameInvalid))
    }
}

/// Makes everything written through `fd` durable: `fsync(2)`, and on macOS `fcntl(F_FULLFSYNC)`, whose
/// success is required (audit-events.md §1.3). Works on files and on directory descriptors.
pub fn sync_fd<Fd: AsFd>(fd: Fd) -> Result<()> {
    full_sync(fd.as_fd()).map_err(|e| StorageError::io(Op::Sync, e))
}

#[cfg(target_vendor = "apple")]
fn full_sync(fd: BorrowedFd<'_>) -> nix::Result<()> {
    nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_FULLFSYNC).map(drop)
}

#[cfg(not(target_vendor = "apple"))]
fn full_sync(fd: BorrowedFd<'_>) -> nix::Result<()> {
    nix::unistd::fsync(fd)
}

/// Opens the directory `name` relative to `dir` without following a final symbolic link.
pub(crate) fn open_dir_at(dir: BorrowedFd<'_>, name: &OsStr) -> nix::Result<OwnedFd> {
    openat(
        dir,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// What kind of entry a `stat` saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A symbolic link (only ever seen without following).
    Symlink,
    /// A socket, FIFO, device or anything else.
    Other,
}

/// The device and inode of an entry: what R-DIR compares between `lstat` and the opened descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: nix::libc::dev_t,
    ino: nix::libc::ino_t,
}

/// A platform-neutral view of `struct stat`, holding exactly what the policy checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryStat {
    /// File type.
    pub kind: EntryKind,
    /// Owner uid.
    pub uid: u32,
    /// Permission bits including setuid, setgid and sticky (`mode & 0o7777`).
    pub perm: u32,
    /// Link count.
    pub nlink: u64,
    /// Size in bytes.
    pub size: u64,
    identity: Identity,
}

impl EntryStat {
    // `mode_t` and `nlink_t` are u16 on macOS and u32/u64 on Linux: the conversions are identities only
    // on some platforms.
    #[allow(clippy::useless_conversion)]
    fn from_stat(st: &FileStat) -> Self {
        let fmt = st.st_mode & SFlag::S_IFMT.bits();
        let kind = if fmt == SFlag::S_IFREG.bits() {
            EntryKind::Regular
        } else if fmt == SFlag::S_IFDIR.bits() {
            EntryKind::Directory
        } else if fmt == SFlag::S_IFLNK.bits() {
            EntryKind::Symlink
        } else {
            EntryKind::Other
        };
        EntryStat {
            kind,
            uid: st.st_uid,
            perm: u32::from(st.st_mode) & 0o7777,
            nlink: u64::from(st.st_nlink),
            // A negative size cannot occur; if it did, treat it as too large (the refusing side).
            size: u64::try_from(st.st_size).unwrap_or(u64::MAX),
            identity: Identity { dev: st.st_dev, ino: st.st_ino },
        }
    }

    /// Whether the entry is owned by the gateway's effective uid.
    pub fn owned_by_euid(&self) -> bool {
        self.uid == geteuid().as_raw()
    }

    pub(crate) fn identity(&self) -> Identity {
        self.identity
    }
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: the `lstat` of an entry relative to a descriptor.
pub(crate) fn lstat_at(dir: BorrowedFd<'_>, name: &OsStr) -> nix::Result<EntryStat> {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).map(|st| EntryStat::from_stat(&st))
}

/// `fstat(fd)`.
pub(crate) fn stat_fd<Fd: AsFd>(fd: Fd) -> nix::Result<EntryStat> {
    fstat(fd.as_fd()).map(|st| EntryStat::from_stat(&st))
}

/// Whether `e` means "no such entry" (the only errno a caller may treat as absence).
pub(crate) fn is_absent(e: Errno) -> bool {
    e == Errno::ENOENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names() {
        let table: [(&[u8], bool); 9] = [
            (b"owner", true),
            (b".gateway-lock", true),
            (b"00000000000000000001.jsonl", true),
            (b"...", true),
            (b"", false),
            (b".", false),
            (b"..", false),
            (b"a/b", false),
            (b"a\0b", false),
        ];
        for (name, ok) in table {
            assert_eq!(check_name(OsStr::from_bytes(name)).is_ok(), ok, "{name:?}");
        }
    }
}
