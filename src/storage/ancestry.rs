//! The ancestry rule R-ANC (audit-events.md §1.2) and the store-directory opener built on it.
//!
//! Owns: splitting a configured (anchored, absolute) path into its parent and final component, resolving
//! the longest existing prefix of the parent physically, checking every directory on the resolved path
//! from `/` down, creating the missing components one at a time (mode 0700, `fchmod` 0700, fsync of the
//! parent), and handing the final component to R-DIR. Does not own: R-DIR itself (`private_dir.rs`) or
//! anything inside the store directory.
//!
//! The walk is descriptor-based: once the prefix is resolved to a path without symbolic links, each of its
//! components is opened with `O_NOFOLLOW` relative to the previous one and checked on the opened
//! descriptor, so a component swapped for a link after resolution is refused rather than followed.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{openat, OFlag, AT_FDCWD};
use nix::sys::stat::Mode;
use nix::unistd::geteuid;

use super::error::{ErrorKind, Op, Result, StorageError};
use super::private_dir::{make_dir_at, PrivateDir};
use super::sys::{is_absent, lstat_at, open_dir_at, stat_fd, EntryKind, EntryStat};

/// The sticky bit.
const STICKY: u32 = 0o1000;
/// Group- and world-write bits.
const GROUP_OR_WORLD_WRITE: u32 = 0o022;

/// R-ANC step 1 for one directory on the resolved path: a directory owned by the effective uid or uid 0,
/// not group- or world-writable unless its sticky bit is set (audit-events.md §1.2).
fn check_ancestor(st: &EntryStat) -> Result<()> {
    if st.kind != EntryKind::Directory {
        return Err(StorageError::rule(ErrorKind::AncestorNotDirectory));
    }
    if st.uid != geteuid().as_raw() && st.uid != 0 {
        return Err(StorageError::rule(ErrorKind::AncestorForeignOwner));
    }
    if st.perm & GROUP_OR_WORLD_WRITE != 0 && st.perm & STICKY == 0 {
        return Err(StorageError::rule(ErrorKind::AncestorWritable));
    }
    Ok(())
}

/// A configured path split for R-ANC: the parent's components below `/` and the final component.
struct Split<'a> {
    parent: Vec<Component<'a>>,
    name: &'a OsStr,
}

fn split(dir: &Path) -> Result<Split<'_>> {
    let mut comps: Vec<Component<'_>> = dir.components().collect();
    let name = match comps.pop() {
        Some(Component::Normal(name)) => name,
        _ => return Err(StorageError::rule(ErrorKind::PathInvalid)),
    };
    match comps.first() {
        Some(Component::RootDir) => {}
        _ => return Err(StorageError::rule(ErrorKind::PathInvalid)),
    }
    let parent = comps.into_iter().skip(1).collect();
    Ok(Split { parent, name })
}

/// Whether a failed `realpath` means "this prefix does not exist" (so a shorter one is tried).
fn is_missing(e: &io::Error) -> bool {
    matches!(e.raw_os_error().map(Errno::from_raw), Some(Errno::ENOENT | Errno::ENOTDIR))
}

/// Finds the longest existing prefix of `parent` and resolves it physically (links followed, `..` applied
/// after resolution). Returns the resolved path and the number of components it covers.
fn resolve_existing(parent: &[Component<'_>]) -> Result<(PathBuf, usize)> {
    for len in (0..=parent.len()).rev() {
        let prefix: PathBuf =
            std::iter::once(Component::RootDir).chain(parent.iter().take(len).copied()).collect();
        match std::fs::canonicalize(&prefix) {
            Ok(resolved) => return Ok((resolved, len)),
            Err(e) if is_missing(&e) && len > 0 => continue,
            Err(e) => {
                let errno = e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO);
                return Err(StorageError::with_errno(ErrorKind::AncestorUnresolvable, errno));
            }
        }
    }
    // `/` always resolves; reaching here means even that failed without an errno.
    Err(StorageError::rule(ErrorKind::AncestorUnresolvable))
}

/// Opens one existing component of the resolved path and checks it as an ancestor.
fn step_existing(cur: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd> {
    let seen =
        lstat_at(cur, name).map_err(|e| StorageError::with_errno(ErrorKind::AncestorUnresolvable, e))?;
    match seen.kind {
        EntryKind::Directory => {}
        // The resolved path holds no links; one appearing now means the path changed under us.
        EntryKind::Symlink => return Err(StorageError::rule(ErrorKind::AncestorUnresolvable)),
        EntryKind::Regular | EntryKind::Other => {
            return Err(StorageError::rule(ErrorKind::AncestorNotDirectory))
        }
    }
    let fd =
        open_dir_at(cur, name).map_err(|e| StorageError::with_errno(ErrorKind::AncestorUnresolvable, e))?;
    let opened = stat_fd(&fd).map_err(|e| StorageError::io(Op::Stat, e))?;
    if opened.identity() != seen.identity() {
        return Err(StorageError::rule(ErrorKind::AncestorUnresolvable));
    }
    check_ancestor(&opened)?;
    Ok(fd)
}

/// Creates one missing component (R-ANC step 2); one created concurrently is checked like any ancestor.
fn step_missing(cur: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd> {
    match make_dir_at(cur, name) {
        Ok(fd) => {
            let st = stat_fd(&fd).map_err(|e| StorageError::io(Op::Stat, e))?;
            check_ancestor(&st)?;
            Ok(fd)
        }
        Err(StorageError { kind: ErrorKind::Io(Op::Mkdir), errno: Some(Errno::EEXIST) }) => {
            step_existing(cur, name)
        }
        Err(e) => Err(e),
    }
}

/// R-ANC step 1 from `/` down the physically resolved, existing path `resolved`: each directory opened
/// relative to the previous one and checked; returns the last.
fn walk_existing(resolved: &Path) -> Result<OwnedFd> {
    let root = openat(AT_FDCWD, "/", OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())
        .map_err(|e| StorageError::with_errno(ErrorKind::AncestorUnresolvable, e))?;
    check_ancestor(&stat_fd(&root).map_err(|e| StorageError::io(Op::Stat, e))?)?;
    let mut cur = root;
    for comp in resolved.components() {
        match comp {
            Component::RootDir => {}
            Component::Normal(name) => cur = step_existing(cur.as_fd(), name)?,
            // `realpath` yields neither; refuse rather than guess.
            _ => return Err(StorageError::rule(ErrorKind::AncestorUnresolvable)),
        }
    }
    Ok(cur)
}

/// R-ANC steps 1 and 2 for the parent of `dir`: returns a descriptor of the checked (and, where missing,
/// created) parent directory and the final component, which the caller hands to R-DIR.
pub fn open_parent(dir: &Path) -> Result<(OwnedFd, OsString)> {
    let split = split(dir)?;
    let (resolved, existing) = resolve_existing(&split.parent)?;
    let mut cur = walk_existing(&resolved)?;
    for comp in split.parent.iter().skip(existing) {
        match comp {
            Component::Normal(name) => cur = step_missing(cur.as_fd(), name)?,
            // A `..` below a missing component cannot be created (anchoring never leaves one).
            _ => return Err(StorageError::rule(ErrorKind::PathInvalid)),
        }
    }
    Ok((cur, split.name.to_os_string()))
}

/// R-ANC and R-DIR on a store directory `dir` and its existing subdirectories `subdirs`, creating nothing
/// (`ptc check`, lifecycle.md §1.5): the existing ancestry is checked as startup checks it, an existing
/// directory is validated and never repaired, and a missing one passes when its deepest existing ancestor
/// is writable, so startup could create it.
pub fn probe_store_dir(dir: &Path, subdirs: &[&str]) -> Result<()> {
    let split = split(dir)?;
    let (resolved, existing) = resolve_existing(&split.parent)?;
    let cur = walk_existing(&resolved)?;
    let writable = |fd: &OwnedFd| {
        nix::unistd::faccessat(fd.as_fd(), ".", nix::unistd::AccessFlags::W_OK, nix::fcntl::AtFlags::empty())
            .map_err(|e| StorageError::io(Op::Mkdir, e))
    };
    if existing < split.parent.len() {
        return writable(&cur);
    }
    match lstat_at(cur.as_fd(), split.name) {
        Err(e) if is_absent(e) => writable(&cur),
        Err(e) => Err(StorageError::with_errno(ErrorKind::DirectoryUnavailable, e)),
        Ok(_) => {
            let store = PrivateDir::open_at(cur.as_fd(), split.name)?;
            for sub in subdirs {
                match lstat_at(store.as_fd(), OsStr::new(sub)) {
                    Err(e) if is_absent(e) => {}
                    Err(e) => return Err(StorageError::with_errno(ErrorKind::DirectoryUnavailable, e)),
                    Ok(_) => drop(store.open_subdir(OsStr::new(sub))?),
                }
            }
            Ok(())
        }
    }
}

/// R-ANC then R-DIR on a store directory `dir` (absolute, as anchored by config.md §3.2): the directory is
/// created (0700) when missing, an existing one is validated and never repaired. Returns the handle and
/// whether the directory itself was created by this call.
pub fn open_store_dir(dir: &Path) -> Result<(PrivateDir, bool)> {
    let (parent, name) = open_parent(dir)?;
    PrivateDir::ensure_at(parent.as_fd(), &name)
}

#[cfg(test)]
#[path = "ancestry_tests.rs"]
mod tests;
