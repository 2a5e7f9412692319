//! Stage 5c (config.md §6.3): the closure of an application, the contract files and Luau component
//! sources its manifest names, each read exactly once and kept.
//!
//! Owns the path rules (relative, no empty, `.` or `..` segment), confinement (no symbolic link for the
//! file or any directory between the manifest's directory and the file, checked while opening, one
//! component at a time, relative to an open directory descriptor, so nothing can be swapped in between a
//! check and a use), the reference count, the per-file size bound and UTF-8 of component sources. Does not
//! own what the bytes mean: the content pin, contracts and Luau compilation read the bytes kept here.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use nix::errno::Errno;
use nix::fcntl::{open, openat, OFlag};
use nix::sys::stat::Mode;

use super::error::{fail, AppError, AppErrorKind};
use crate::config::manifest::{Component, Manifest, Workflow};

/// config.md §6.3: at most 512 file references (the manifest, two contract references, every component).
pub const MAX_REFERENCES: usize = 512;
/// config.md §6.3: each contract file and each component source is at most 1,000,000 bytes.
pub const MAX_FILE_BYTES: usize = 1_000_000;

/// The bytes of every closure file, keyed by the closure path as written. Two references with the same
/// path share one read (the same file may serve both contracts, pins.md §6.1).
#[derive(Clone, Default)]
pub struct Closure {
    files: BTreeMap<String, Arc<[u8]>>,
}

impl Closure {
    /// The bytes read for `path`, `None` when the manifest does not name it.
    pub fn bytes(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(|b| &b[..])
    }

    /// The same bytes as a shared handle, so that compiled and served forms can keep them without a copy.
    pub fn shared(&self, path: &str) -> Option<Arc<[u8]>> {
        self.files.get(path).cloned()
    }

    /// How many distinct files were read.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }
}

impl std::fmt::Debug for Closure {
    // Content never reaches Debug output; sizes are enough to diagnose.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.files.iter().map(|(path, bytes)| (path, bytes.len()))).finish()
    }
}

/// One path the manifest names, and whether it is a component source (which must be UTF-8).
struct Reference<'a> {
    path: &'a str,
    component: bool,
}

/// Every component of every environment, in manifest order: the workflow, then missions by name.
pub(crate) fn all_components(manifest: &Manifest) -> impl Iterator<Item = &Component> {
    let workflow: &[Component] = match &manifest.workflow {
        Workflow::Luau { components, .. } => components,
        Workflow::Forward { .. } => &[],
    };
    workflow.iter().chain(manifest.missions.values().flat_map(|m| m.components.iter()))
}

/// Stage 5c: checks every closure path, then reads each named file once under the rules of
/// config.md §6.3. `manifest_dir` is the directory of the manifest (config.md §3.2); it may itself be reached
/// through a symbolic link, only what lies below it is confined.
pub fn read(manifest_dir: &Path, manifest: &Manifest) -> Result<Closure, AppError> {
    let mut refs = vec![
        Reference { path: &manifest.contracts.input_schema.path, component: false },
        Reference { path: &manifest.contracts.result_schema.path, component: false },
    ];
    refs.extend(all_components(manifest).map(|c| Reference { path: &c.path, component: true }));
    // The manifest itself is the first reference.
    if refs.len().saturating_add(1) > MAX_REFERENCES {
        return fail(AppErrorKind::ClosureTooManyReferences);
    }
    // Every path is checked before any file is opened.
    for r in &refs {
        check_path(r.path).map_err(|e| e.in_closure_file(r.path))?;
    }
    let root = open(manifest_dir, OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())
        .map_err(|errno| AppError::os(AppErrorKind::ClosureUnreadable, errno).in_closure_file("."))?;
    let mut closure = Closure::default();
    for r in &refs {
        let bytes = match closure.files.get(r.path) {
            Some(bytes) => bytes.clone(),
            None => {
                let bytes: Arc<[u8]> =
                    read_confined(&root, r.path).map_err(|e| e.in_closure_file(r.path))?.into();
                closure.files.insert(r.path.to_owned(), bytes.clone());
                bytes
            }
        };
        if r.component && std::str::from_utf8(&bytes).is_err() {
            return Err(AppError::new(AppErrorKind::ComponentSourceNotUtf8).in_closure_file(r.path));
        }
    }
    Ok(closure)
}

/// config.md §6.3: relative, and no empty, `.` or `..` segment (so also no trailing `/` and not empty).
pub fn check_path(path: &str) -> Result<(), AppError> {
    let plain = !path.starts_with('/')
        && path.split('/').all(|segment| !matches!(segment, "" | "." | ".."))
        && !path.contains('\0');
    if plain {
        Ok(())
    } else {
        fail(AppErrorKind::ClosurePathInvalid)
    }
}

/// Flags for each directory on the way down. `O_NOFOLLOW` refuses a symbolic link in that position;
/// `O_DIRECTORY` refuses anything else that is not a directory. On Linux `O_PATH` lets a directory that
/// may be searched but not listed still be passed through, as a path lookup would.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn directory_flags() -> OFlag {
    OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn directory_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// A refusal of `openat` on the way to a closure file. `ELOOP` is what `O_NOFOLLOW` reports for a symbolic
/// link (some systems report `EMLINK` or `EFTYPE`); `ENOTDIR` means a segment that should be a directory
/// is not one (with `O_PATH | O_NOFOLLOW`, a symbolic link to a directory also lands here).
fn open_error(errno: Errno) -> AppError {
    match errno {
        Errno::ELOOP | Errno::EMLINK | Errno::ENOTDIR => AppError::new(AppErrorKind::ClosureNotConfined),
        #[cfg(target_vendor = "apple")]
        Errno::EFTYPE => AppError::new(AppErrorKind::ClosureNotConfined),
        _ => AppError::os(AppErrorKind::ClosureUnreadable, errno),
    }
}

/// A failed `fstat` or read of an opened closure file.
fn io_error(error: std::io::Error) -> AppError {
    AppError::os(
        AppErrorKind::ClosureUnreadable,
        error.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO),
    )
}

/// Opens `path` below `root` one segment at a time without following any symbolic link, checks that it
/// is a regular file, and reads at most `MAX_FILE_BYTES + 1` bytes of it.
fn read_confined(root: &OwnedFd, path: &str) -> Result<Vec<u8>, AppError> {
    let mut segments = path.split('/');
    let name = segments.next_back().ok_or(AppError::new(AppErrorKind::ClosurePathInvalid))?;
    let mut dir: Option<OwnedFd> = None;
    for segment in segments {
        let parent = dir.as_ref().unwrap_or(root).as_fd();
        dir = Some(openat(parent, segment, directory_flags(), Mode::empty()).map_err(open_error)?);
    }
    let parent = dir.as_ref().unwrap_or(root).as_fd();
    // O_NONBLOCK: a FIFO opens at once instead of blocking startup, and is then refused as not regular.
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let file = File::from(openat(parent, name, flags, Mode::empty()).map_err(open_error)?);
    let meta = file.metadata().map_err(io_error)?;
    if !meta.is_file() {
        return fail(AppErrorKind::ClosureNotRegularFile);
    }
    let cap = u64::try_from(MAX_FILE_BYTES).unwrap_or(u64::MAX).saturating_add(1);
    let hint = usize::try_from(meta.len()).unwrap_or(0).min(MAX_FILE_BYTES.saturating_add(1));
    let mut bytes = Vec::with_capacity(hint);
    file.take(cap).read_to_end(&mut bytes).map_err(io_error)?;
    if bytes.len() > MAX_FILE_BYTES {
        return fail(AppErrorKind::ClosureFileTooLarge);
    }
    Ok(bytes)
}
