//! The private directory rule R-DIR (audit-events.md §1.3) and the descriptor-relative handle built on it.
//!
//! Owns: validating one directory entry as a private directory (`lstat`: not a symbolic link, a directory
//! owned by the effective uid, mode exactly 0700; then one `O_DIRECTORY | O_NOFOLLOW` open whose dev/ino
//! must equal the `lstat`), creating one missing private directory (R-ANC step 2), and [`PrivateDir`],
//! whose every operation is relative to the validated descriptor. Does not own: the ancestry walk
//! (`ancestry.rs`), locking (`lock.rs`) or what a store puts in its directory.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{openat, renameat, OFlag};
use nix::sys::stat::{fchmod, fchmodat, mkdirat, FchmodatFlags, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};

use super::error::{ErrorKind, Op, Result, StorageError};
use super::sys::{
    check_name, is_absent, lstat_at, mode, open_dir_at, stat_fd, sync_fd, EntryKind, EntryStat, DIR_MODE,
    FILE_MODE,
};

/// How [`PrivateDir::open_file`] opens an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// `O_RDONLY`: reading (recovery scans, lock probes).
    Read,
    /// `O_WRONLY | O_APPEND`: appending to an existing file.
    Append,
    /// `O_RDWR`: the audit's crash repair (truncation).
    ReadWrite,
}

/// A directory that satisfied R-DIR, held by its descriptor for as long as the store lives. The path it
/// was found at is never resolved again: every operation below is relative to the descriptor, and every
/// name must be a single plain component.
#[derive(Debug)]
pub struct PrivateDir {
    fd: OwnedFd,
}

impl AsFd for PrivateDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Applies R-DIR to the stat of the final component or of the opened descriptor (audit-events.md §1.3).
fn check_private(st: &EntryStat) -> Result<()> {
    match st.kind {
        EntryKind::Symlink => return Err(StorageError::rule(ErrorKind::DirectoryIsSymlink)),
        EntryKind::Directory => {}
        EntryKind::Regular | EntryKind::Other => {
            return Err(StorageError::rule(ErrorKind::DirectoryNotDirectory))
        }
    }
    if !st.owned_by_euid() {
        return Err(StorageError::rule(ErrorKind::DirectoryForeignOwner));
    }
    // "exactly 0700", setuid/setgid/sticky included; refused, never repaired.
    if st.perm != DIR_MODE {
        return Err(StorageError::rule(ErrorKind::DirectoryWrongMode));
    }
    Ok(())
}

/// R-ANC step 2 for one component (audit-events.md §1.2): `mkdirat` with mode 0700, `fchmod` to exactly
/// 0700 so the umask can neither widen nor narrow it, then fsync of the parent. Returns the new
/// directory's descriptor; `EEXIST` is reported as `Io(Mkdir)` with that errno so callers can tell. A
/// failure after the `mkdirat` removes the new (still empty) directory again, so no half-made directory
/// of unknown mode is left to refuse the next start.
pub(crate) fn make_dir_at(parent: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd> {
    check_name(name)?;
    mkdirat(parent, name, mode(DIR_MODE)).map_err(|e| StorageError::io(Op::Mkdir, e))?;
    let finish = || -> Result<OwnedFd> {
        let fd = match open_dir_at(parent, name) {
            Ok(fd) => fd,
            // A umask without the owner's read bit made the new directory unopenable for a non-root
            // user: chmod it by name first (it is ours, in a parent nobody else can write), then open.
            Err(Errno::EACCES) => {
                fchmodat(parent, name, mode(DIR_MODE), FchmodatFlags::FollowSymlink)
                    .map_err(|e| StorageError::io(Op::Chmod, e))?;
                open_dir_at(parent, name).map_err(|e| StorageError::io(Op::Open, e))?
            }
            Err(e) => return Err(StorageError::io(Op::Open, e)),
        };
        fchmod(fd.as_fd(), mode(DIR_MODE)).map_err(|e| StorageError::io(Op::Chmod, e))?;
        sync_fd(parent)?;
        Ok(fd)
    };
    finish().inspect_err(|_| {
        let _ = unlinkat(parent, name, UnlinkatFlags::RemoveDir);
    })
}

impl PrivateDir {
    /// R-DIR on the entry `name` of `parent`: `lstat` it, open it once with `O_DIRECTORY | O_NOFOLLOW`,
    /// and require the descriptor to be the same directory (dev/ino) and still private.
    pub fn open_at(parent: BorrowedFd<'_>, name: &OsStr) -> Result<Self> {
        check_name(name).map_err(|_| StorageError::rule(ErrorKind::PathInvalid))?;
        let seen = lstat_at(parent, name)
            .map_err(|e| StorageError::with_errno(ErrorKind::DirectoryUnavailable, e))?;
        check_private(&seen)?;
        let fd = open_dir_at(parent, name).map_err(|e| match e {
            // The entry turned into a link or a non-directory between lstat and open.
            Errno::ELOOP | Errno::ENOTDIR => StorageError::rule(ErrorKind::DirectoryIdentityChanged),
            e => StorageError::with_errno(ErrorKind::DirectoryUnavailable, e),
        })?;
        let opened = stat_fd(&fd).map_err(|e| StorageError::io(Op::Stat, e))?;
        if opened.identity() != seen.identity() {
            return Err(StorageError::rule(ErrorKind::DirectoryIdentityChanged));
        }
        // Re-checked on the descriptor: a chmod between lstat and open must not slip through.
        check_private(&opened)?;
        Ok(PrivateDir { fd })
    }

    /// Creates `name` in `parent` as R-ANC step 2 does when it is missing, then applies R-DIR to it.
    /// An existing entry is not touched (a wrong mode is refused, never repaired). Returns whether the
    /// directory was created by this call.
    pub fn ensure_at(parent: BorrowedFd<'_>, name: &OsStr) -> Result<(Self, bool)> {
        check_name(name).map_err(|_| StorageError::rule(ErrorKind::PathInvalid))?;
        let created = match lstat_at(parent, name) {
            Ok(_) => false,
            Err(e) if is_absent(e) => match make_dir_at(parent, name) {
                Ok(_) => true,
                // Created concurrently: R-DIR decides whether it is acceptable.
                Err(StorageError { kind: ErrorKind::Io(Op::Mkdir), errno: Some(Errno::EEXIST) }) => false,
                Err(e) => return Err(e),
            },
            Err(e) => return Err(StorageError::with_errno(ErrorKind::DirectoryUnavailable, e)),
        };
        Ok((Self::open_at(parent, name)?, created))
    }

    /// [`Self::ensure_at`] relative to this directory: creates the subdirectory `name` 0700 when missing
    /// (R-ANC step 2), then applies R-DIR to it.
    pub fn ensure_subdir(&self, name: &OsStr) -> Result<(PrivateDir, bool)> {
        Self::ensure_at(self.as_fd(), name)
    }

    /// Applies R-DIR to the subdirectory `name`.
    pub fn open_subdir(&self, name: &OsStr) -> Result<PrivateDir> {
        Self::open_at(self.as_fd(), name)
    }

    /// Opens the subdirectory `name` with `O_DIRECTORY | O_NOFOLLOW` but without R-DIR's owner and mode
    /// checks. Only for an existing `.gateway-lock`, whose rules are R-LOCK's (audit-events.md §1.4), not
    /// R-DIR's.
    pub(crate) fn open_subdir_unchecked(&self, name: &OsStr) -> Result<PrivateDir> {
        check_name(name)?;
        let fd = open_dir_at(self.as_fd(), name).map_err(|e| StorageError::io(Op::Open, e))?;
        Ok(PrivateDir { fd })
    }

    /// Creates the subdirectory `name`, which must not exist (R-LOCK step 1 uses this for `.gateway-lock`):
    /// `mkdirat` 0700 + `fchmod` 0700 + fsync of this directory. `EEXIST` comes back as `Io(Mkdir)`.
    pub fn create_dir(&self, name: &OsStr) -> Result<PrivateDir> {
        let fd = make_dir_at(self.as_fd(), name)?;
        Ok(PrivateDir { fd })
    }

    /// A second descriptor for the same directory (`dup`), for a lock that must outlive a borrow.
    pub fn try_clone(&self) -> Result<PrivateDir> {
        let fd = self.fd.try_clone().map_err(|e| StorageError::io(Op::Dup, io_errno(&e)))?;
        Ok(PrivateDir { fd })
    }

    /// Creates a new private file (audit-events.md §1.3):
    /// `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_WRONLY | O_APPEND`, mode 0600, then `fchmod` to exactly
    /// 0600 before any content is written.
    pub fn create_file(&self, name: &OsStr) -> Result<File> {
        check_name(name)?;
        let flags = OFlag::O_CREAT
            | OFlag::O_EXCL
            | OFlag::O_NOFOLLOW
            | OFlag::O_CLOEXEC
            | OFlag::O_WRONLY
            | OFlag::O_APPEND;
        let fd =
            openat(self.as_fd(), name, flags, mode(FILE_MODE)).map_err(|e| StorageError::io(Op::Open, e))?;
        if let Err(e) = fchmod(fd.as_fd(), mode(FILE_MODE)) {
            // Do not leave a file of unknown mode behind.
            let _ = unlinkat(self.as_fd(), name, UnlinkatFlags::NoRemoveDir);
            return Err(StorageError::io(Op::Chmod, e));
        }
        Ok(File::from(fd))
    }

    /// Opens an existing regular file without following a symbolic link. `O_NONBLOCK` keeps a FIFO put in
    /// its place from blocking the open; the descriptor is then required to be a regular file.
    pub fn open_file(&self, name: &OsStr, access: Access) -> Result<File> {
        check_name(name)?;
        let access = match access {
            Access::Read => OFlag::O_RDONLY,
            Access::Append => OFlag::O_WRONLY | OFlag::O_APPEND,
            Access::ReadWrite => OFlag::O_RDWR,
        };
        let flags = access | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let fd =
            openat(self.as_fd(), name, flags, Mode::empty()).map_err(|e| StorageError::io(Op::Open, e))?;
        let st = stat_fd(&fd).map_err(|e| StorageError::io(Op::Stat, e))?;
        if st.kind != EntryKind::Regular {
            return Err(StorageError::rule(ErrorKind::InventoryNotRegular));
        }
        Ok(File::from(fd))
    }

    /// The `lstat` of the entry `name`.
    pub fn stat(&self, name: &OsStr) -> Result<EntryStat> {
        check_name(name)?;
        lstat_at(self.as_fd(), name).map_err(|e| StorageError::io(Op::Stat, e))
    }

    /// The `fstat` of the directory itself.
    pub fn stat_self(&self) -> Result<EntryStat> {
        stat_fd(self).map_err(|e| StorageError::io(Op::Stat, e))
    }

    /// Every entry name except `.` and `..`, in byte order. Reads a fresh descriptor of the directory
    /// (`openat(fd, ".")`), so listing never moves a shared offset.
    pub fn list(&self) -> Result<Vec<OsString>> {
        let fd =
            openat(self.as_fd(), ".", OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())
                .map_err(|e| StorageError::io(Op::List, e))?;
        let dir = Dir::from_fd(fd).map_err(|e| StorageError::io(Op::List, e))?;
        let mut names = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| StorageError::io(Op::List, e))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        Ok(names)
    }

    /// Removes the non-directory entry `name`.
    pub fn remove_file(&self, name: &OsStr) -> Result<()> {
        check_name(name)?;
        unlinkat(self.as_fd(), name, UnlinkatFlags::NoRemoveDir).map_err(|e| StorageError::io(Op::Unlink, e))
    }

    /// Removes the empty subdirectory `name`.
    pub fn remove_dir(&self, name: &OsStr) -> Result<()> {
        check_name(name)?;
        unlinkat(self.as_fd(), name, UnlinkatFlags::RemoveDir).map_err(|e| StorageError::io(Op::Rmdir, e))
    }

    /// Renames `from` to `to` inside this directory.
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> Result<()> {
        check_name(from)?;
        check_name(to)?;
        renameat(self.as_fd(), from, self.as_fd(), to).map_err(|e| StorageError::io(Op::Rename, e))
    }

    /// fsync of the directory (`F_FULLFSYNC` on macOS), making creations, renames and removals durable.
    pub fn sync(&self) -> Result<()> {
        sync_fd(self)
    }
}

/// The errno behind a `std::io::Error` from a descriptor call (`EIO` if it carries none).
fn io_errno(e: &std::io::Error) -> Errno {
    e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO)
}

#[cfg(test)]
#[path = "private_dir_tests.rs"]
mod tests;
