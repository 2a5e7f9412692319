//! Naming, lazy open, rotation, retention across starts, oversized lines and suspension
//! (audit-events.md §3.3, §3.7), on the real filesystem through the stage-4 store.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::config::gateway::{Artifacts, EventsConfig};
use crate::storage::testutil::{mode_of, names, Scratch};
use crate::storage::{ArtifactRoot, StartRef};

const LINE: &[u8] = b"{\"kind\":\"events_lock_recovered\",\"timestamp\":\"2026-09-16T08:00:00.010087Z\"}\n";

/// One "start": stage 4 and a writer with `start_ref` over the store.
fn start(
    root: &Path,
    start_ref: StartRef,
    max_file_bytes: u64,
    max_retained_files: u32,
) -> (ArtifactRoot, EventFiles) {
    let cfg = EventsConfig { max_file_bytes, max_retained_files, stderr: false };
    let artifacts = Artifacts::events_only(root, Some(cfg));
    let opened = ArtifactRoot::open(&artifacts, &start_ref).unwrap();
    let store = opened.events().unwrap();
    let files = EventFiles::new(
        store.dir().try_clone().unwrap(),
        start_ref.as_str(),
        max_file_bytes,
        max_retained_files,
        store.inventory(),
    );
    (opened, files)
}

fn event_files(dir: &Path) -> Vec<String> {
    names(dir).into_iter().filter(|n| n != ".gateway-lock").collect()
}

fn events_dir(s: &Scratch) -> (PathBuf, PathBuf) {
    let root = s.path().join("artifacts");
    (root.clone(), root.join("events"))
}

#[test]
fn lazy_open_names_modes_and_rotation() {
    let s = Scratch::new();
    let (root, dir) = events_dir(&s);
    let sref = StartRef::from_parts(0x5f3a9c2b1e0d4000, [0x7c, 0x1e, 0x9a, 0x3b, 0x5d, 0x2f, 0x6e, 0x81]);
    let (held, mut files) = start(&root, sref, 1024, 8);
    assert!(event_files(&dir).is_empty(), "the first file opens with the first record");
    // 13 lines of 77 bytes fit 1,001 bytes; the 14th rotates.
    for _ in 0..14 {
        files.write_line(LINE).unwrap();
    }
    files.close();
    let first = "5f3a9c2b1e0d40007c1e9a3b5d2f6e81-00000000000000000001.jsonl";
    let second = "5f3a9c2b1e0d40007c1e9a3b5d2f6e81-00000000000000000002.jsonl";
    assert_eq!(event_files(&dir), [first, second]);
    assert_eq!(fs::read(dir.join(first)).unwrap(), LINE.repeat(13));
    assert_eq!(fs::read(dir.join(second)).unwrap(), LINE);
    assert_eq!(mode_of(&dir.join(first)), 0o600);
    assert_eq!(mode_of(&dir), 0o700);
    held.release().unwrap();
}

#[test]
fn retention_holds_across_starts_oldest_first() {
    let s = Scratch::new();
    let (root, dir) = events_dir(&s);
    let mut all = Vec::new();
    for start_no in 1..=4u64 {
        let sref = StartRef::from_parts(start_no, [0; 8]);
        let (held, mut files) = start(&root, sref, 1024, 2);
        // Two files per start: 14 lines of 77 bytes.
        for _ in 0..14 {
            files.write_line(LINE).unwrap();
        }
        files.close();
        all.push(format!("{sref}-00000000000000000001.jsonl"));
        all.push(format!("{sref}-00000000000000000002.jsonl"));
        let present = event_files(&dir);
        assert_eq!(present, all[all.len() - 2..], "start {start_no}");
        for name in &present {
            assert!(fs::metadata(dir.join(name)).unwrap().len() <= 1024);
        }
        held.release().unwrap();
    }
}

#[test]
fn oversized_lines_are_refused_and_nothing_is_opened() {
    let s = Scratch::new();
    let (root, dir) = events_dir(&s);
    let (held, mut files) = start(&root, StartRef::from_parts(9, [1; 8]), 1024, 2);
    let long = vec![b'x'; 1025];
    assert_eq!(files.write_line(&long), Err(WriteFail::Oversized));
    assert!(event_files(&dir).is_empty());
    // Exactly the bound fits.
    let exact = vec![b'x'; 1024];
    files.write_line(&exact).unwrap();
    files.close();
    held.release().unwrap();
}

#[test]
fn an_open_failure_suspends_until_the_next_tick() {
    let s = Scratch::new();
    let (root, dir) = events_dir(&s);
    let sref = StartRef::from_parts(10, [1; 8]);
    let (held, mut files) = start(&root, sref, 1024, 4);
    // An entry that appeared after the inventory makes the exclusive create of file 1 fail (the tests
    // run as root, so a mode change would not).
    let squatter = format!("{sref}-00000000000000000001.jsonl");
    fs::write(dir.join(&squatter), b"").unwrap();
    let refused = StorageError::io(crate::storage::Op::Open, Errno::EEXIST);
    assert_eq!(files.write_line(LINE), Err(WriteFail::Open { sequence: 1, error: refused }));
    assert_eq!(files.write_line(LINE), Err(WriteFail::Suspended));
    files.tick();
    files.write_line(LINE).unwrap();
    files.close();
    let second = format!("{sref}-00000000000000000002.jsonl");
    assert_eq!(event_files(&dir), [squatter.clone(), second.clone()]);
    assert_eq!(fs::read(dir.join(&squatter)).unwrap(), b"", "never written to");
    assert_eq!(fs::read(dir.join(&second)).unwrap(), LINE);
    held.release().unwrap();
}
