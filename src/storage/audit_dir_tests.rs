//! Tests of audit startup steps 1–3 (audit-events.md §2.4–§2.5) and their reason classes
//! (audit-events.md §4.1).

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::storage::error::{ErrorKind, Op};
use crate::storage::testutil::{chown, foreign_uid, mode_of, names, Scratch};

fn sref() -> StartRef {
    StartRef::from_parts(7, [9; 8])
}

fn cfg(dir: &Path) -> PrivateAudit {
    PrivateAudit { directory: dir.to_path_buf(), max_file_bytes: 1024, max_retained_files: 2 }
}

fn reason(dir: &Path) -> &'static str {
    let e = AuditDir::open(&cfg(dir), &sref()).unwrap_err();
    assert_eq!(e.code(), StartupCode::AuditUnavailable);
    e.reason.as_str()
}

#[test]
fn missing_nested_directories_are_created_and_locked() {
    let s = Scratch::new();
    let d = s.path().join("var/audit");
    let audit = AuditDir::open(&cfg(&d), &sref()).unwrap();
    assert_eq!(mode_of(&d), 0o700);
    assert_eq!(mode_of(&s.path().join("var")), 0o700);
    assert!(audit.files().is_empty());
    assert_eq!(names(&d.join(".gateway-lock")), ["owner"]);
    drop(audit.lock_dir().create_file(std::ffi::OsStr::new("probe")).unwrap());
    audit.release().unwrap();
    assert!(names(&d).is_empty());
}

#[test]
fn retained_files_are_inventoried_by_number() {
    let s = Scratch::new();
    let d = s.dir("audit", 0o700);
    s.file("audit/00000000000000000010.jsonl", b"", 0o600);
    s.file("audit/00000000000000000002.jsonl", b"{}\n", 0o600);
    let audit = AuditDir::open(&cfg(&d), &sref()).unwrap();
    assert_eq!(audit.files(), [AuditFile { number: 2, size: 3 }, AuditFile { number: 10, size: 0 }]);
    audit.release().unwrap();
}

#[test]
fn reason_classes() {
    type Plant = fn(&Scratch) -> PathBuf;
    let table: [(&str, Plant, &str); 9] = [
        ("ancestor 0777", |s| s.dir("ww", 0o777).join("audit"), "audit_ancestry_unsafe"),
        ("ancestor is a file", |s| s.file("f", b"", 0o600).join("audit"), "audit_ancestry_unsafe"),
        ("directory 0750", |s| s.dir("audit", 0o750), "audit_directory_invalid"),
        (
            "directory is a symlink to a valid directory",
            |s| {
                let real = s.dir("real", 0o700);
                s.link("audit", &real)
            },
            "audit_directory_invalid",
        ),
        (
            "stale lock",
            |s| {
                let d = s.dir("audit", 0o700);
                s.dir("audit/.gateway-lock", 0o700);
                s.file("audit/.gateway-lock/owner", b"{}\n", 0o600);
                d
            },
            "audit_lock_stale",
        ),
        (
            "lock directory without owner",
            |s| {
                let d = s.dir("audit", 0o700);
                s.dir("audit/.gateway-lock", 0o700);
                d
            },
            "audit_lock_stale",
        ),
        (
            "unexpected entry",
            |s| {
                let d = s.dir("audit", 0o700);
                s.file("audit/notes.txt", b"", 0o600);
                d
            },
            "audit_inventory_invalid",
        ),
        (
            "record file 0644",
            |s| {
                let d = s.dir("audit", 0o700);
                s.file("audit/00000000000000000001.jsonl", b"", 0o644);
                d
            },
            "audit_inventory_invalid",
        ),
        (
            "file larger than a reduced max_file_bytes",
            |s| {
                let d = s.dir("audit", 0o700);
                s.file("audit/00000000000000000001.jsonl", &[b'x'; 1025], 0o600);
                d
            },
            "audit_inventory_invalid",
        ),
    ];
    for (what, plant, class) in table {
        let s = Scratch::new();
        let d = plant(&s);
        let stale_before = d.join(".gateway-lock").exists();
        assert_eq!(reason(&d), class, "{what}");
        if !stale_before && d.is_dir() {
            assert!(!d.join(".gateway-lock").exists(), "{what}: the refusal leaves no lock");
        }
    }
}

#[test]
fn held_lock_is_audit_lock_held_and_the_holder_is_unaffected() {
    let s = Scratch::new();
    let d = s.path().join("audit");
    let first = AuditDir::open(&cfg(&d), &sref()).unwrap();
    let owner = fs::read(d.join(".gateway-lock/owner")).unwrap();
    assert_eq!(reason(&d), "audit_lock_held");
    assert_eq!(fs::read(d.join(".gateway-lock/owner")).unwrap(), owner);
    first.release().unwrap();
}

#[test]
fn stale_lock_needs_the_operator() {
    let s = Scratch::new();
    let d = s.path().join("audit");
    // Dropped without release: as after SIGKILL, the lock directory stays and its flock is free.
    drop(AuditDir::open(&cfg(&d), &sref()).unwrap());
    assert_eq!(reason(&d), "audit_lock_stale");
    assert_eq!(names(&d.join(".gateway-lock")), ["owner"], "never removed by the gateway");
    fs::remove_dir_all(d.join(".gateway-lock")).unwrap();
    AuditDir::open(&cfg(&d), &sref()).unwrap().release().unwrap();
}

#[test]
fn foreign_owner_classes() {
    let Some(uid) = foreign_uid("foreign_owner_classes") else { return };
    let s = Scratch::new();
    let anc = s.dir("anc", 0o755);
    chown(&anc, uid);
    assert_eq!(reason(&anc.join("audit")), "audit_ancestry_unsafe");
    let d = s.dir("audit", 0o700);
    chown(&d, uid);
    assert_eq!(reason(&d), "audit_directory_invalid");
    let d = s.dir("audit2", 0o700);
    let f = s.file("audit2/00000000000000000001.jsonl", b"", 0o600);
    chown(&f, uid);
    assert_eq!(reason(&d), "audit_inventory_invalid");
}

#[test]
fn reason_mapping_table() {
    let table: [(StorageError, AuditReason); 6] = [
        (StorageError::rule(ErrorKind::AncestorForeignOwner), AuditReason::AncestryUnsafe),
        (StorageError::rule(ErrorKind::DirectoryIdentityChanged), AuditReason::DirectoryInvalid),
        (StorageError::rule(ErrorKind::LockHeld), AuditReason::LockHeld),
        (StorageError::rule(ErrorKind::LockStale), AuditReason::LockStale),
        (StorageError::rule(ErrorKind::InventoryLinked), AuditReason::InventoryInvalid),
        (StorageError::io(Op::Mkdir, nix::errno::Errno::ENOSPC), AuditReason::IoError),
    ];
    for (e, r) in table {
        assert_eq!(AuditReason::of(&e), r, "{e:?}");
    }
}
