//! Tests of startup stage 4 (lifecycle.md §3.2; audit-events.md §3.2) on the real filesystem.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::config::gateway::EventsConfig;
use crate::storage::error::ErrorKind;
use crate::storage::testutil::{mode_of, names, Scratch};

const EV: &str = "5f3a9c2b1e0d40007c1e9a3b5d2f6e81-00000000000000000001.jsonl";

fn sref() -> StartRef {
    StartRef::from_parts(1, [2; 8])
}

fn artifacts(root: &Path, events: bool) -> Artifacts {
    let events =
        events.then_some(EventsConfig { max_file_bytes: 1024, max_retained_files: 2, stderr: false });
    Artifacts::events_only(root, events)
}

fn failure(a: &Artifacts) -> (ArtifactStep, ErrorKind) {
    let e = ArtifactRoot::open(a, &sref()).unwrap_err();
    assert_eq!(e.code(), StartupCode::ArtifactRootUnavailable);
    (e.step, e.cause.kind)
}

#[test]
fn missing_root_and_events_are_created_and_locked() {
    let s = Scratch::new();
    let root = s.path().join("deploy/artifacts");
    let opened = ArtifactRoot::open(&artifacts(&root, true), &sref()).unwrap();
    assert_eq!(mode_of(&root), 0o700);
    assert_eq!(mode_of(&s.path().join("deploy")), 0o700);
    assert_eq!(mode_of(&root.join(EVENTS_DIR)), 0o700);
    assert_eq!(names(&root.join(EVENTS_DIR)), [".gateway-lock"]);
    let events = opened.events().unwrap();
    assert!(!events.lock_recovered());
    assert!(events.inventory().is_empty());
    opened.release().unwrap();
    assert!(names(&root.join(EVENTS_DIR)).is_empty(), "release removes the lock");
}

#[test]
fn without_events_no_events_directory_exists() {
    let s = Scratch::new();
    let root = s.path().join("artifacts");
    let opened = ArtifactRoot::open(&artifacts(&root, false), &sref()).unwrap();
    assert!(opened.events().is_none());
    assert!(names(&root).is_empty());
    opened.release().unwrap();
}

#[test]
fn refusals() {
    type Plant = fn(&Scratch, &Path);
    let table: [(&str, Plant, ArtifactStep, ErrorKind); 8] = [
        (
            "root 0755",
            |s, _| drop(s.dir("artifacts", 0o755)),
            ArtifactStep::Root,
            ErrorKind::DirectoryWrongMode,
        ),
        (
            "root is a symlink",
            |s, _| {
                let real = s.dir("real", 0o700);
                s.link("artifacts", &real);
            },
            ArtifactStep::Root,
            ErrorKind::DirectoryIsSymlink,
        ),
        ("ancestor 0777", |s, _| drop(s.dir("ww", 0o777)), ArtifactStep::Root, ErrorKind::AncestorWritable),
        (
            "events 0755",
            |s, _| drop(s.dir("artifacts/events", 0o755)),
            ArtifactStep::EventsDirectory,
            ErrorKind::DirectoryWrongMode,
        ),
        (
            "events is a file",
            |s, _| {
                s.dir("artifacts", 0o700);
                s.file("artifacts/events", b"", 0o600);
            },
            ArtifactStep::EventsDirectory,
            ErrorKind::DirectoryNotDirectory,
        ),
        (
            "events is a symlink",
            |s, _| {
                s.dir("artifacts", 0o700);
                let real = s.dir("real", 0o700);
                s.link("artifacts/events", &real);
            },
            ArtifactStep::EventsDirectory,
            ErrorKind::DirectoryIsSymlink,
        ),
        (
            "unexpected file",
            |s, _| {
                s.dir("artifacts/events", 0o700);
                s.file("artifacts/events/notes.txt", b"", 0o600);
            },
            ArtifactStep::EventsInventory,
            ErrorKind::InventoryUnexpectedName,
        ),
        (
            "file above the current max_file_bytes",
            |s, _| {
                s.dir("artifacts/events", 0o700);
                s.file(&format!("artifacts/events/{EV}"), &[b'x'; 1025], 0o600);
            },
            ArtifactStep::EventsInventory,
            ErrorKind::InventoryOversized,
        ),
    ];
    for (what, plant, step, kind) in table {
        let s = Scratch::new();
        let root: PathBuf =
            if what == "ancestor 0777" { s.path().join("ww/artifacts") } else { s.path().join("artifacts") };
        plant(&s, &root);
        assert_eq!(failure(&artifacts(&root, true)), (step, kind), "{what}");
        let events = root.join(EVENTS_DIR);
        if fs::symlink_metadata(&events).map(|m| m.is_dir()).unwrap_or(false) {
            assert!(!events.join(".gateway-lock").exists(), "{what}: a refused start leaves no lock");
        }
    }
}

#[test]
fn held_events_lock_is_refused_and_the_first_gateway_keeps_it() {
    let s = Scratch::new();
    let root = s.path().join("artifacts");
    let first = ArtifactRoot::open(&artifacts(&root, true), &sref()).unwrap();
    let owner = fs::read(root.join("events/.gateway-lock/owner")).unwrap();
    assert_eq!(failure(&artifacts(&root, true)), (ArtifactStep::EventsLock, ErrorKind::LockHeld));
    assert_eq!(fs::read(root.join("events/.gateway-lock/owner")).unwrap(), owner);
    first.release().unwrap();
}

#[test]
fn stale_events_lock_is_taken_over_and_reported() {
    let s = Scratch::new();
    let root = s.path().join("artifacts");
    s.dir("artifacts/events/.gateway-lock", 0o700);
    s.file("artifacts/events/.gateway-lock/owner", b"{\"pid\":1}\n", 0o600);
    // A torn retained file from the crashed run is neither read nor changed.
    s.file(&format!("artifacts/events/{EV}"), b"{\"kind\":\"torn", 0o600);
    let mut opened = ArtifactRoot::open(&artifacts(&root, true), &sref()).unwrap();
    let events = opened.take_events().unwrap();
    assert!(events.lock_recovered());
    assert_eq!(events.inventory(), [EventFile { name: EV.to_owned(), size: 13 }]);
    assert_eq!(fs::read(root.join(format!("events/{EV}"))).unwrap(), b"{\"kind\":\"torn");
    assert!(opened.events().is_none());
    opened.release().unwrap();
    assert!(root.join("events/.gateway-lock").exists(), "the taken store keeps its lock");
    events.release().unwrap();
    assert_eq!(names(&root.join(EVENTS_DIR)), [EV]);
}

#[test]
fn events_lock_symlink_is_refused_untouched() {
    let s = Scratch::new();
    let root = s.path().join("artifacts");
    s.dir("artifacts/events", 0o700);
    let elsewhere = s.dir("elsewhere", 0o700);
    s.file("elsewhere/owner", b"x", 0o600);
    s.link("artifacts/events/.gateway-lock", &elsewhere);
    assert_eq!(failure(&artifacts(&root, true)), (ArtifactStep::EventsLock, ErrorKind::LockNotTakeable));
    assert_eq!(names(&elsewhere), ["owner"]);
    assert!(fs::symlink_metadata(root.join("events/.gateway-lock")).unwrap().file_type().is_symlink());
}

#[test]
fn error_display_carries_no_path() {
    let s = Scratch::new();
    let root = s.dir("artifacts", 0o755);
    let e = ArtifactRoot::open(&artifacts(&root, true), &sref()).unwrap_err();
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(s.path().to_str().unwrap()), "{shown}");
    assert_eq!(e.to_string(), "artifact root (root): the directory mode is not exactly 0700");
}
