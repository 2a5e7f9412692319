//! Tests of R-LOCK (audit-events.md §1.4) on the real filesystem.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::storage::ancestry::open_store_dir;
use crate::storage::testutil::{mode_of, names, Scratch};

fn sref() -> StartRef {
    StartRef::from_parts(0x5f3a9c2b1e0d4000, [0x7c, 0x1e, 0x9a, 0x3b, 0x5d, 0x2f, 0x6e, 0x81])
}

fn store(s: &Scratch) -> (PrivateDir, PathBuf) {
    let p = s.path().join("store");
    (open_store_dir(&p).unwrap().0, p)
}

fn expected_owner() -> String {
    format!("{{\"pid\":{},\"start_ref\":\"5f3a9c2b1e0d40007c1e9a3b5d2f6e81\"}}\n", std::process::id())
}

/// Every entry below `p`, with its bytes for files, so "nothing was touched" can be asserted exactly.
fn snapshot(p: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    for name in names(p) {
        let child = p.join(&name);
        let meta = fs::symlink_metadata(&child).unwrap();
        if meta.is_dir() {
            out.push((name.clone(), None));
            for (sub, bytes) in snapshot(&child) {
                out.push((format!("{name}/{sub}"), bytes));
            }
        } else if meta.is_file() {
            out.push((name, Some(fs::read(&child).unwrap())));
        } else if meta.file_type().is_symlink() {
            out.push((name, Some(fs::read_link(&child).unwrap().into_os_string().into_encoded_bytes())));
        } else {
            out.push((format!("{name} (special)"), None));
        }
    }
    out
}

#[test]
fn owner_line_bytes() {
    assert_eq!(
        owner_line(4242, &sref()),
        "{\"pid\":4242,\"start_ref\":\"5f3a9c2b1e0d40007c1e9a3b5d2f6e81\"}\n"
    );
}

#[test]
fn fresh_lock_creates_the_lock_directory_and_owner() {
    for policy in [LockPolicy::Audit, LockPolicy::Events] {
        let s = Scratch::new();
        let (dir, p) = store(&s);
        let lock = StoreLock::acquire(&dir, policy, &sref()).unwrap();
        assert!(!lock.recovered());
        assert_eq!(mode_of(&p.join(LOCK_DIR)), 0o700);
        assert_eq!(mode_of(&p.join(".gateway-lock/owner")), 0o600);
        assert_eq!(fs::read_to_string(p.join(".gateway-lock/owner")).unwrap(), expected_owner());
        assert_eq!(names(&p.join(LOCK_DIR)), ["owner"]);
        lock.release().unwrap();
        assert!(names(&p).is_empty(), "{policy:?}: release removes everything");
    }
}

#[test]
fn held_lock_is_refused_under_both_policies() {
    let s = Scratch::new();
    let (dir, p) = store(&s);
    let first = StoreLock::acquire(&dir, LockPolicy::Events, &sref()).unwrap();
    let before = snapshot(&p);
    // A second attempt opens `owner` again: a separate open file description, so the flock is seen held.
    for policy in [LockPolicy::Audit, LockPolicy::Events] {
        let e = StoreLock::acquire(&dir, policy, &sref()).unwrap_err();
        assert_eq!(e, StorageError::rule(ErrorKind::LockHeld), "{policy:?}");
        assert_eq!(snapshot(&p), before, "{policy:?}: the held lock is untouched");
    }
    first.release().unwrap();
}

/// `.gateway-lock/owner` without anyone holding its flock, as an unclean death leaves it.
fn plant_stale(p: &Path) {
    fs::create_dir(p.join(LOCK_DIR)).unwrap();
    fs::write(
        p.join(".gateway-lock/owner"),
        "{\"pid\":1,\"start_ref\":\"00000000000000000000000000000000\"}\n",
    )
    .unwrap();
}

#[test]
fn stale_lock_refuses_the_audit_and_is_not_touched() {
    let s = Scratch::new();
    let (dir, p) = store(&s);
    plant_stale(&p);
    let before = snapshot(&p);
    let e = StoreLock::acquire(&dir, LockPolicy::Audit, &sref()).unwrap_err();
    assert_eq!(e, StorageError::rule(ErrorKind::LockStale));
    assert_eq!(snapshot(&p), before);
}

#[test]
fn stale_lock_is_taken_over_by_the_events_policy_and_reported() {
    let s = Scratch::new();
    let (dir, p) = store(&s);
    plant_stale(&p);
    let lock = StoreLock::acquire(&dir, LockPolicy::Events, &sref()).unwrap();
    assert!(lock.recovered());
    assert_eq!(fs::read_to_string(p.join(".gateway-lock/owner")).unwrap(), expected_owner());
    assert_eq!(mode_of(&p.join(LOCK_DIR)), 0o700);
    assert_eq!(mode_of(&p.join(".gateway-lock/owner")), 0o600);
    // The new lock is really held.
    assert_eq!(
        StoreLock::acquire(&dir, LockPolicy::Events, &sref()).unwrap_err(),
        StorageError::rule(ErrorKind::LockHeld)
    );
    lock.release().unwrap();
    assert!(names(&p).is_empty());
}

#[test]
fn a_dropped_lock_behaves_like_a_crashed_one() {
    let s = Scratch::new();
    let (dir, _p) = store(&s);
    drop(StoreLock::acquire(&dir, LockPolicy::Events, &sref()).unwrap());
    assert_eq!(
        StoreLock::acquire(&dir, LockPolicy::Audit, &sref()).unwrap_err(),
        StorageError::rule(ErrorKind::LockStale)
    );
    let lock = StoreLock::acquire(&dir, LockPolicy::Events, &sref()).unwrap();
    assert!(lock.recovered());
    lock.release().unwrap();
}

/// Odd lock directories: the events policy refuses them and touches nothing; the audit calls them stale.
#[test]
fn odd_lock_directories_are_refused_untouched() {
    type Plant = fn(&Scratch, &Path);
    let table: [(&str, Plant); 7] = [
        ("a regular file", |_, p| fs::write(p.join(LOCK_DIR), b"x").unwrap()),
        ("a symlink to a stale lock directory", |s, p| {
            let elsewhere = s.dir("elsewhere", 0o700);
            fs::write(elsewhere.join("owner"), b"x").unwrap();
            std::os::unix::fs::symlink(&elsewhere, p.join(LOCK_DIR)).unwrap();
        }),
        ("an extra file besides an unlocked owner", |_, p| {
            plant_stale(p);
            fs::write(p.join(".gateway-lock/extra"), b"x").unwrap();
        }),
        ("an empty lock directory", |_, p| fs::create_dir(p.join(LOCK_DIR)).unwrap()),
        ("an owner that is a directory", |_, p| {
            fs::create_dir_all(p.join(".gateway-lock/owner")).unwrap();
        }),
        ("an owner that is a symlink", |s, p| {
            let target = s.file("target", b"x", 0o600);
            fs::create_dir(p.join(LOCK_DIR)).unwrap();
            std::os::unix::fs::symlink(target, p.join(".gateway-lock/owner")).unwrap();
        }),
        ("an owner that is a FIFO", |_, p| {
            fs::create_dir(p.join(LOCK_DIR)).unwrap();
            nix::unistd::mkfifo(&p.join(".gateway-lock/owner"), crate::storage::sys::mode(0o600)).unwrap();
        }),
    ];
    for (what, plant) in table {
        let s = Scratch::new();
        let (dir, p) = store(&s);
        plant(&s, &p);
        let before = (snapshot(&p), snapshot(s.path()));
        let e = StoreLock::acquire(&dir, LockPolicy::Events, &sref()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LockNotTakeable, "{what}");
        assert_eq!((snapshot(&p), snapshot(s.path())), before, "{what}: nothing touched");
        let e = StoreLock::acquire(&dir, LockPolicy::Audit, &sref()).unwrap_err();
        assert_eq!(e, StorageError::rule(ErrorKind::LockStale), "{what}");
        assert_eq!((snapshot(&p), snapshot(s.path())), before, "{what}: nothing touched");
    }
}

#[test]
fn release_removes_a_probe_file_too() {
    let s = Scratch::new();
    let (dir, p) = store(&s);
    let lock = StoreLock::acquire(&dir, LockPolicy::Audit, &sref()).unwrap();
    drop(lock.lock_dir().create_file(OsStr::new(PROBE)).unwrap());
    assert_eq!(names(&p.join(LOCK_DIR)), ["owner", "probe"]);
    lock.release().unwrap();
    assert!(names(&p).is_empty());
    // A released lock can be taken afresh.
    let again = StoreLock::acquire(&dir, LockPolicy::Audit, &sref()).unwrap();
    assert!(!again.recovered());
    again.release().unwrap();
}

#[test]
fn release_reports_a_failure() {
    let s = Scratch::new();
    let (dir, p) = store(&s);
    let lock = StoreLock::acquire(&dir, LockPolicy::Events, &sref()).unwrap();
    // Something unexpected inside the lock directory makes its removal fail.
    fs::write(p.join(".gateway-lock/stray"), b"x").unwrap();
    let e = lock.release().unwrap_err();
    assert_eq!(e, StorageError::io(Op::Rmdir, Errno::ENOTEMPTY));
}

/// The holder a person is told of reads back the pid [`owner_line`] wrote; anything else names nobody.
#[test]
fn holder_pid_reads_the_owner_line() {
    let dir = tempfile::tempdir().unwrap();
    let owner = dir.path().join(OWNER);
    let table: [(&[u8], Option<u32>); 4] = [
        (b"{\"pid\":4242,\"start_ref\":\"x\"}\n", Some(4242)),
        (b"{\"start_ref\":\"x\",\"pid\":4242}\n", None),
        (b"{\"pid\":}\n", None),
        (b"", None),
    ];
    for (content, want) in table {
        std::fs::write(&owner, content).unwrap();
        assert_eq!(holder_pid(dir.path()), want, "{}", String::from_utf8_lossy(content));
    }
    std::fs::remove_file(&owner).unwrap();
    assert_eq!(holder_pid(dir.path()), None, "no owner file");
}
