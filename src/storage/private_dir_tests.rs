//! Tests of R-DIR (audit-events.md §1.3) and of the descriptor-relative [`PrivateDir`] operations.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;

use super::*;
use crate::storage::ancestry::open_store_dir;
use crate::storage::testutil::{chown, foreign_uid, mode_of, names, Scratch};

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

fn kind_of(dir: &Path) -> Option<ErrorKind> {
    open_store_dir(dir).err().map(|e| e.kind)
}

#[test]
fn existing_directory_mode_must_be_exactly_0700() {
    let table: [(u32, Option<ErrorKind>); 9] = [
        (0o700, None),
        (0o750, Some(ErrorKind::DirectoryWrongMode)),
        (0o755, Some(ErrorKind::DirectoryWrongMode)),
        (0o701, Some(ErrorKind::DirectoryWrongMode)),
        (0o600, Some(ErrorKind::DirectoryWrongMode)),
        (0o1700, Some(ErrorKind::DirectoryWrongMode)),
        (0o2700, Some(ErrorKind::DirectoryWrongMode)),
        (0o4700, Some(ErrorKind::DirectoryWrongMode)),
        (0o777, Some(ErrorKind::DirectoryWrongMode)),
    ];
    for (mode, expected) in table {
        let s = Scratch::new();
        let d = s.dir("store", mode);
        assert_eq!(kind_of(&d), expected, "mode {mode:o}");
        assert_eq!(mode_of(&d), mode, "a wrong mode is refused, never repaired");
    }
}

#[test]
fn symlinked_final_component_is_refused_even_to_a_valid_directory() {
    let s = Scratch::new();
    let real = s.dir("real", 0o700);
    let link = s.link("store", &real);
    assert_eq!(kind_of(&link), Some(ErrorKind::DirectoryIsSymlink));
    let dangling = s.link("dangling", &s.path().join("missing"));
    assert_eq!(kind_of(&dangling), Some(ErrorKind::DirectoryIsSymlink));
    assert!(!s.path().join("missing").exists());
}

#[test]
fn final_component_that_is_a_file_is_refused() {
    let s = Scratch::new();
    let f = s.file("store", b"", 0o700);
    assert_eq!(kind_of(&f), Some(ErrorKind::DirectoryNotDirectory));
}

#[test]
fn foreign_owned_directory_is_refused() {
    let Some(uid) = foreign_uid("foreign_owned_directory_is_refused") else { return };
    let s = Scratch::new();
    let d = s.dir("store", 0o700);
    chown(&d, uid);
    assert_eq!(kind_of(&d), Some(ErrorKind::DirectoryForeignOwner));
}

#[test]
fn created_files_are_0600_and_exclusive() {
    let s = Scratch::new();
    let (dir, _) = open_store_dir(&s.path().join("store")).unwrap();
    let mut f = dir.create_file(os("a.jsonl")).unwrap();
    f.write_all(b"x\n").unwrap();
    assert_eq!(mode_of(&s.path().join("store/a.jsonl")), 0o600);
    let again = dir.create_file(os("a.jsonl")).unwrap_err();
    assert_eq!(again, StorageError::io(Op::Open, Errno::EEXIST));
    // O_EXCL | O_NOFOLLOW: never through a link, not even a dangling one.
    std::os::unix::fs::symlink(s.path().join("elsewhere"), s.path().join("store/l")).unwrap();
    assert_eq!(dir.create_file(os("l")).unwrap_err(), StorageError::io(Op::Open, Errno::EEXIST));
    assert!(!s.path().join("elsewhere").exists());
}

#[test]
fn open_file_refuses_links_and_non_regular_files() {
    let s = Scratch::new();
    let (dir, _) = open_store_dir(&s.path().join("store")).unwrap();
    s.file("target", b"t", 0o600);
    std::os::unix::fs::symlink(s.path().join("target"), s.path().join("store/l")).unwrap();
    assert_eq!(dir.open_file(os("l"), Access::Read).unwrap_err(), StorageError::io(Op::Open, Errno::ELOOP));
    nix::unistd::mkfifo(&s.path().join("store/fifo"), mode(0o600)).unwrap();
    assert_eq!(dir.open_file(os("fifo"), Access::Read).unwrap_err().kind, ErrorKind::InventoryNotRegular);
    drop(dir.create_file(os("r")).unwrap());
    assert!(dir.open_file(os("r"), Access::ReadWrite).is_ok());
}

#[test]
fn operations_stay_relative_to_the_descriptor() {
    let s = Scratch::new();
    let (dir, _) = open_store_dir(&s.path().join("store")).unwrap();
    // Moving the directory away after it was opened does not redirect later operations.
    std::fs::rename(s.path().join("store"), s.path().join("moved")).unwrap();
    std::fs::create_dir(s.path().join("store")).unwrap();
    drop(dir.create_file(os("f")).unwrap());
    assert!(s.path().join("moved/f").exists());
    assert!(!s.path().join("store/f").exists());

    dir.rename(os("f"), os("g")).unwrap();
    let sub = dir.create_dir(os("sub")).unwrap();
    assert_eq!(mode_of(&s.path().join("moved/sub")), 0o700);
    drop(sub.create_file(os("inner")).unwrap());
    assert_eq!(dir.list().unwrap(), vec![os("g").to_os_string(), os("sub").to_os_string()]);
    assert_eq!(dir.stat(os("g")).unwrap().kind, EntryKind::Regular);
    sub.remove_file(os("inner")).unwrap();
    dir.remove_dir(os("sub")).unwrap();
    dir.remove_file(os("g")).unwrap();
    dir.sync().unwrap();
    assert!(names(&s.path().join("moved")).is_empty());
    let clone = dir.try_clone().unwrap();
    assert_eq!(clone.stat_self().unwrap().identity(), dir.stat_self().unwrap().identity());
}

#[test]
fn names_must_be_single_components() {
    let s = Scratch::new();
    let (dir, _) = open_store_dir(&s.path().join("store")).unwrap();
    for bad in ["", ".", "..", "../x", "a/b"] {
        assert_eq!(dir.create_file(os(bad)).unwrap_err().kind, ErrorKind::NameInvalid, "{bad:?}");
        assert_eq!(dir.remove_file(os(bad)).unwrap_err().kind, ErrorKind::NameInvalid, "{bad:?}");
    }
}
