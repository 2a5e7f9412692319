//! The lock rule R-LOCK (audit-events.md §1.4): one gateway per store directory, for the process lifetime.
//!
//! Owns: creating `.gateway-lock/owner` and holding its exclusive `flock`, the two policies for a
//! `.gateway-lock` that already exists (audit: always refused, held vs stale told apart by a non-blocking
//! probe; events: a stale lock is taken over exactly as specified, anything odd is refused untouched), and
//! the orderly release. Does not own: the audit's probe file content (only its removal on release) or what
//! the caller does with a recovery (the event log writes `events_lock_recovered`).

use std::ffi::OsStr;
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::error::{ErrorKind, Op, Result, StorageError};
use super::private_dir::{Access, PrivateDir};
use super::start_ref::StartRef;
use super::sys::{is_absent, sync_fd, EntryKind};

/// The lock directory inside a store directory.
pub const LOCK_DIR: &str = ".gateway-lock";
/// The owner file inside the lock directory.
pub const OWNER: &str = "owner";
/// The audit's startup probe file inside the lock directory (audit-events.md §2.5 step 6); removed on
/// release.
pub const PROBE: &str = "probe";

/// Which store a lock protects; the two differ only when `.gateway-lock` already exists
/// (audit-events.md §1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockPolicy {
    /// The private audit: an existing lock is always refused (`LockHeld` or `LockStale`).
    Audit,
    /// The event log: a stale lock is taken over; a held or odd one is refused.
    Events,
}

/// The `owner` line: `{"pid":<pid>,"start_ref":"<ref>"}` + LF (keys in byte order, pins.md §2).
pub fn owner_line(pid: u32, start_ref: &StartRef) -> String {
    format!("{{\"pid\":{pid},\"start_ref\":\"{start_ref}\"}}\n")
}

/// The pid an `owner` line names ([`owner_line`]), read from the lock directory `lock` of a store for a
/// person told that the lock is held; `None` when the file cannot be read (another user's lock) or holds no
/// owner line. Bounded: an owner line is about 70 bytes.
pub fn holder_pid(lock: &std::path::Path) -> Option<u32> {
    use std::io::Read;
    let mut line = String::new();
    File::open(lock.join(OWNER)).ok()?.take(256).read_to_string(&mut line).ok()?;
    let digits: String = line.strip_prefix("{\"pid\":")?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A held store lock. Keep it for the process lifetime and end it with [`StoreLock::release`]. Dropping
/// it without `release` frees the `flock` but leaves the lock directory behind, exactly as a crash would
/// (an audit lock then needs an operator, an events lock is taken over by the next start).
pub struct StoreLock {
    store: PrivateDir,
    lock_dir: PrivateDir,
    owner: HeldFlock,
    recovered: bool,
}

impl fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreLock").field("recovered", &self.recovered).finish_non_exhaustive()
    }
}

/// A held exclusive `flock` that never panics when it ends: nix's `Flock` panics in `drop` if `LOCK_UN`
/// fails, so this unlocks explicitly and, should that fail, leaks the descriptor (the kernel drops the
/// lock when the process exits). `lock` is `Some` until [`HeldFlock::unlock`] or drop.
#[derive(Debug)]
struct HeldFlock {
    lock: Option<Flock<File>>,
}

impl HeldFlock {
    /// Writes `bytes` to the locked file and makes them durable.
    fn write_and_sync(&mut self, bytes: &[u8]) -> Result<()> {
        let Some(file) = self.lock.as_mut() else { return Err(StorageError::io(Op::Write, Errno::EBADF)) };
        file.write_all(bytes).map_err(|e| {
            StorageError::io(Op::Write, e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO))
        })?;
        sync_fd(file.as_fd())
    }

    /// Unlocks and closes, reporting a failed `LOCK_UN`.
    fn unlock(mut self) -> Result<()> {
        match self.lock.take() {
            Some(lock) => unlock_quietly(lock),
            None => Ok(()),
        }
    }
}

impl Drop for HeldFlock {
    fn drop(&mut self) {
        if let Some(lock) = self.lock.take() {
            let _ = unlock_quietly(lock);
        }
    }
}

fn unlock_quietly(lock: Flock<File>) -> Result<()> {
    match lock.unlock() {
        Ok(file) => {
            drop(file);
            Ok(())
        }
        Err((lock, e)) => {
            std::mem::forget(lock);
            Err(StorageError::io(Op::Flock, e))
        }
    }
}

/// Takes a non-blocking exclusive flock; `Ok(None)` when another open file description holds it.
fn try_flock(file: File) -> Result<Option<HeldFlock>> {
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Some(HeldFlock { lock: Some(lock) })),
        Err((_, Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(StorageError::io(Op::Flock, e)),
    }
}

/// R-LOCK steps 2–3 inside a freshly created lock directory. The flock is taken right after `owner` is
/// created, before its line is written: the end state is the spec's, and a concurrent events start never
/// sees a fresh `owner` whose flock is free and mistakes it for a stale one.
fn fill_lock(store: &PrivateDir, lock_dir: &PrivateDir, start_ref: &StartRef) -> Result<HeldFlock> {
    let file = lock_dir.create_file(OsStr::new(OWNER))?;
    // Nobody else can hold a flock on a file this call just created; treat it as held if it happens.
    let mut owner = try_flock(file)?.ok_or(StorageError::rule(ErrorKind::LockHeld))?;
    owner.write_and_sync(owner_line(std::process::id(), start_ref).as_bytes())?;
    lock_dir.sync()?;
    store.sync()?;
    Ok(owner)
}

/// R-LOCK steps 1–3. `EEXIST` from step 1 comes back as `Io(Mkdir)` with that errno. A failure after the
/// lock directory was created removes what this call created, so a failed acquisition leaves no lock.
fn create_lock(store: &PrivateDir, start_ref: &StartRef) -> Result<(PrivateDir, HeldFlock)> {
    let lock_dir = store.create_dir(OsStr::new(LOCK_DIR))?;
    match fill_lock(store, &lock_dir, start_ref) {
        Ok(owner) => Ok((lock_dir, owner)),
        Err(e) => {
            let _ = lock_dir.remove_file(OsStr::new(OWNER));
            let _ = store.remove_dir(OsStr::new(LOCK_DIR));
            let _ = store.sync();
            Err(e)
        }
    }
}

fn exists_error(e: &StorageError) -> bool {
    e.kind == ErrorKind::Io(Op::Mkdir) && e.errno == Some(Errno::EEXIST)
}

/// Audit policy for an existing lock (audit-events.md §1.4): refused, touching nothing. `LockHeld` if a
/// non-blocking flock on `.gateway-lock/owner` is refused, otherwise (free, no owner, not a directory)
/// `LockStale`.
fn audit_refusal(store: &PrivateDir) -> StorageError {
    let held = store
        .open_subdir_unchecked(OsStr::new(LOCK_DIR))
        .and_then(|dir| dir.open_file(OsStr::new(OWNER), Access::Read))
        .and_then(try_flock);
    match held {
        Ok(None) => StorageError::rule(ErrorKind::LockHeld),
        Ok(Some(probe)) => {
            let _ = probe.unlock();
            StorageError::rule(ErrorKind::LockStale)
        }
        Err(_) => StorageError::rule(ErrorKind::LockStale),
    }
}

fn not_takeable(errno: Option<Errno>) -> StorageError {
    StorageError { kind: ErrorKind::LockNotTakeable, errno }
}

/// Events policy, the checks before anything is changed: `.gateway-lock` is a directory (not a link)
/// holding exactly one entry, a regular file `owner`, which opens. Returns the lock directory and the
/// opened owner.
fn inspect_existing(store: &PrivateDir) -> Result<(PrivateDir, File)> {
    let name = OsStr::new(LOCK_DIR);
    let seen = store.stat(name).map_err(|e| not_takeable(e.errno))?;
    if seen.kind != EntryKind::Directory {
        return Err(not_takeable(None));
    }
    let lock_dir = store.open_subdir_unchecked(name).map_err(|e| not_takeable(e.errno))?;
    let opened = lock_dir.stat_self().map_err(|e| not_takeable(e.errno))?;
    if opened.identity() != seen.identity() {
        return Err(not_takeable(None));
    }
    let entries = lock_dir.list().map_err(|e| not_takeable(e.errno))?;
    if entries.len() != 1 || entries.first().map(|n| n.as_os_str()) != Some(OsStr::new(OWNER)) {
        return Err(not_takeable(None));
    }
    let owner_seen = lock_dir.stat(OsStr::new(OWNER)).map_err(|e| not_takeable(e.errno))?;
    if owner_seen.kind != EntryKind::Regular {
        return Err(not_takeable(None));
    }
    let owner = lock_dir.open_file(OsStr::new(OWNER), Access::Read).map_err(|e| not_takeable(e.errno))?;
    Ok((lock_dir, owner))
}

/// Events policy for an existing lock (audit-events.md §1.4): if the owner's flock is free, keep it, remove
/// `owner` and `.gateway-lock`, fsync the store, perform steps 1–3, then close the old descriptor.
fn take_over(store: &PrivateDir, start_ref: &StartRef) -> Result<(PrivateDir, HeldFlock)> {
    let (old_dir, old_owner) = inspect_existing(store)?;
    let old_flock = match try_flock(old_owner) {
        Ok(Some(lock)) => lock,
        Ok(None) => return Err(StorageError::rule(ErrorKind::LockHeld)),
        Err(e) => return Err(not_takeable(e.errno)),
    };
    // Relative to the old lock directory's descriptor: if a concurrent start already took it over, this
    // fails instead of touching the new lock.
    old_dir.remove_file(OsStr::new(OWNER))?;
    let now = store.stat(OsStr::new(LOCK_DIR))?;
    if now.identity() != old_dir.stat_self()?.identity() {
        return Err(not_takeable(None));
    }
    store.remove_dir(OsStr::new(LOCK_DIR))?;
    store.sync()?;
    let fresh = match create_lock(store, start_ref) {
        Ok(fresh) => fresh,
        // Another start created a lock between our removal and our mkdirat: it holds the directory now.
        Err(e) if exists_error(&e) => return Err(StorageError::rule(ErrorKind::LockHeld)),
        Err(e) => return Err(e),
    };
    // Closing the old descriptor only ends a lock on an unlinked file; its outcome cannot matter.
    let _ = old_flock.unlock();
    Ok(fresh)
}

impl StoreLock {
    /// R-LOCK on `store` under `policy`, writing `start_ref` and this process's pid to `owner`.
    ///
    /// Errors: `LockHeld` (a live gateway holds it), `LockStale` (audit policy, an unheld lock exists),
    /// `LockNotTakeable` (events policy, the lock directory is odd; nothing inside it was touched), or
    /// `Io` for a failed create, write, fsync or remove.
    pub fn acquire(store: &PrivateDir, policy: LockPolicy, start_ref: &StartRef) -> Result<StoreLock> {
        let store = store.try_clone()?;
        let (lock_dir, owner, recovered) = match create_lock(&store, start_ref) {
            Ok((lock_dir, owner)) => (lock_dir, owner, false),
            Err(e) if exists_error(&e) => match policy {
                LockPolicy::Audit => return Err(audit_refusal(&store)),
                LockPolicy::Events => {
                    let (lock_dir, owner) = take_over(&store, start_ref)?;
                    (lock_dir, owner, true)
                }
            },
            Err(e) => return Err(e),
        };
        Ok(StoreLock { store, lock_dir, owner, recovered })
    }

    /// Whether a stale events lock was taken over: the event log's first record must then be
    /// `events_lock_recovered` (audit-events.md §3.5). Always `false` under the audit policy.
    pub fn recovered(&self) -> bool {
        self.recovered
    }

    /// The lock directory, where the audit's startup probe file is created (audit-events.md §2.5 step 6).
    pub fn lock_dir(&self) -> &PrivateDir {
        &self.lock_dir
    }

    /// Orderly release (audit-events.md §1.4): remove `owner`, any probe file and `.gateway-lock`, then fsync
    /// the store directory; the flock is dropped last. Every step is attempted; the first failure is returned
    /// (at shutdown the caller turns it into exit status 70, after a failed startup the exit stays 78).
    pub fn release(self) -> Result<()> {
        let StoreLock { store, lock_dir, owner, .. } = self;
        let steps = [
            lock_dir.remove_file(OsStr::new(OWNER)),
            match lock_dir.remove_file(OsStr::new(PROBE)) {
                Err(StorageError { errno: Some(e), .. }) if is_absent(e) => Ok(()),
                other => other,
            },
            store.remove_dir(OsStr::new(LOCK_DIR)),
            store.sync(),
            owner.unlock(),
        ];
        steps.into_iter().find(|r| r.is_err()).unwrap_or(Ok(()))
    }
}

#[cfg(test)]
#[path = "lock_tests.rs"]
mod tests;
