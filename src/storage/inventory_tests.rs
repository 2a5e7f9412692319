//! Tests of the inventory rules (audit-events.md §2.4, §3.2): name vectors and real-filesystem entries.

use std::fs;
use std::path::PathBuf;

use super::*;
use crate::storage::ancestry::open_store_dir;
use crate::storage::testutil::{chown, foreign_uid, Scratch};

const EV: &str = "5f3a9c2b1e0d40007c1e9a3b5d2f6e81-00000000000000000001.jsonl";

#[test]
fn audit_name_vectors() {
    let table: [(&str, Option<u64>); 12] = [
        ("00000000000000000001.jsonl", Some(1)),
        ("00000000000000000042.jsonl", Some(42)),
        ("18446744073709551615.jsonl", Some(u64::MAX)),
        ("00000000000000000000.jsonl", None),
        ("18446744073709551616.jsonl", None),
        ("99999999999999999999.jsonl", None),
        ("0000000000000000001.jsonl", None),
        ("000000000000000000001.jsonl", None),
        ("00000000000000000001.json", None),
        ("00000000000000000001.JSONL", None),
        ("+0000000000000000001.jsonl", None),
        ("notes.txt", None),
    ];
    for (name, number) in table {
        assert_eq!(audit_file_number(name.as_bytes()), number, "{name}");
    }
}

#[test]
fn event_name_vectors() {
    let table: [(&str, bool); 9] = [
        (EV, true),
        ("00000000000000000000000000000000-00000000000000000000.jsonl", true),
        ("5F3A9C2B1E0D40007C1E9A3B5D2F6E81-00000000000000000001.jsonl", false),
        ("5f3a9c2b1e0d40007c1e9a3b5d2f6e8-00000000000000000001.jsonl", false),
        ("5f3a9c2b1e0d40007c1e9a3b5d2f6e81_00000000000000000001.jsonl", false),
        ("5f3a9c2b1e0d40007c1e9a3b5d2f6e81-0000000000000000001a.jsonl", false),
        ("5f3a9c2b1e0d40007c1e9a3b5d2f6e81-00000000000000000001.json", false),
        ("g f3a9c2b1e0d40007c1e9a3b5d2f6e81-00000000000000000001.jsonl", false),
        ("00000000000000000001.jsonl", false),
    ];
    for (name, ok) in table {
        assert_eq!(is_event_file_name(name.as_bytes()), ok, "{name}");
    }
}

fn store(s: &Scratch) -> (PrivateDir, PathBuf) {
    let p = s.path().join("store");
    (open_store_dir(&p).unwrap().0, p)
}

#[test]
fn valid_entries_are_listed_in_order() {
    let s = Scratch::new();
    let (dir, p) = store(&s);
    for n in [3u64, 1, 2] {
        s.file(&format!("store/{n:020}.jsonl"), &vec![b'x'; n as usize], 0o600);
    }
    fs::create_dir(p.join(LOCK_DIR)).unwrap();
    let files = audit_inventory(&dir, 1024).unwrap();
    let got: Vec<(u64, u64)> = files.iter().map(|f| (f.number, f.size)).collect();
    assert_eq!(got, [(1, 1), (2, 2), (3, 3)]);
    assert_eq!(files[0].name(), "00000000000000000001.jsonl");

    let s = Scratch::new();
    let (dir, p) = store(&s);
    let older = "00000000000000000000000000000000-00000000000000000007.jsonl";
    s.file(&format!("store/{EV}"), b"", 0o600);
    s.file(&format!("store/{older}"), b"abc", 0o600);
    fs::create_dir(p.join(LOCK_DIR)).unwrap();
    let files = events_inventory(&dir, 1024).unwrap();
    assert_eq!(
        files,
        [EventFile { name: older.to_owned(), size: 3 }, EventFile { name: EV.to_owned(), size: 0 }]
    );
}

#[test]
fn exactly_max_file_bytes_is_allowed() {
    let s = Scratch::new();
    let (dir, _) = store(&s);
    s.file(&format!("store/{EV}"), &[b'x'; 1024], 0o600);
    assert!(events_inventory(&dir, 1024).is_ok());
    assert_eq!(events_inventory(&dir, 1023).unwrap_err().kind, ErrorKind::InventoryOversized);
}

/// One bad entry next to a valid one; both inventories must refuse it with the same kind.
#[test]
fn bad_entries_are_refused() {
    type Plant = fn(&Scratch, &str);
    let table: [(&str, Plant, ErrorKind); 9] = [
        (
            "unexpected name",
            |s, _| drop(s.file("store/notes.txt", b"", 0o600)),
            ErrorKind::InventoryUnexpectedName,
        ),
        (
            "wrong mode 0644",
            |s, n| drop(s.file(&format!("store/{n}"), b"", 0o644)),
            ErrorKind::InventoryWrongMode,
        ),
        (
            "wrong mode 0400",
            |s, n| drop(s.file(&format!("store/{n}"), b"", 0o400)),
            ErrorKind::InventoryWrongMode,
        ),
        (
            "setuid bit",
            |s, n| drop(s.file(&format!("store/{n}"), b"", 0o4600)),
            ErrorKind::InventoryWrongMode,
        ),
        (
            "hard link (link count 2)",
            |s, n| {
                let f = s.file(&format!("store/{n}"), b"", 0o600);
                fs::hard_link(f, s.path().join("outside")).unwrap();
            },
            ErrorKind::InventoryLinked,
        ),
        (
            "oversized",
            |s, n| drop(s.file(&format!("store/{n}"), &[b'x'; 1025], 0o600)),
            ErrorKind::InventoryOversized,
        ),
        (
            "symlinked record file",
            |s, n| {
                let t = s.file("target", b"", 0o600);
                s.link(&format!("store/{n}"), &t);
            },
            ErrorKind::InventoryNotRegular,
        ),
        (
            "directory with a record name",
            |s, n| drop(s.dir(&format!("store/{n}"), 0o700)),
            ErrorKind::InventoryNotRegular,
        ),
        (
            "FIFO with a record name",
            |s, n| {
                nix::unistd::mkfifo(&s.path().join(format!("store/{n}")), crate::storage::sys::mode(0o600))
                    .unwrap()
            },
            ErrorKind::InventoryNotRegular,
        ),
    ];
    type Inventory = fn(&PrivateDir) -> Result<()>;
    let stores: [(&str, &str, Inventory); 2] = [
        ("00000000000000000009.jsonl", "00000000000000000001.jsonl", |d| audit_inventory(d, 1024).map(drop)),
        ("f0000000000000000000000000000000-00000000000000000001.jsonl", EV, |d| {
            events_inventory(d, 1024).map(drop)
        }),
    ];
    for (what, plant, kind) in table {
        for (bad_name, good_name, inventory) in stores {
            let s = Scratch::new();
            let (dir, _) = store(&s);
            s.file(&format!("store/{good_name}"), b"ok\n", 0o600);
            plant(&s, bad_name);
            assert_eq!(inventory(&dir).unwrap_err().kind, kind, "{what} ({bad_name})");
        }
    }
}

#[test]
fn foreign_owned_file_is_refused() {
    let Some(uid) = foreign_uid("foreign_owned_file_is_refused") else { return };
    let s = Scratch::new();
    let (dir, _) = store(&s);
    let f = s.file(&format!("store/{EV}"), b"", 0o600);
    chown(&f, uid);
    assert_eq!(events_inventory(&dir, 1024).unwrap_err().kind, ErrorKind::InventoryForeignOwner);
}
