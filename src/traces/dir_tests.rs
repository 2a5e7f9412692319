//! traces.md §4.3 and §7: a reuse, a creation or a retention removal that fails keeps the storage error
//! for the debug log, and the directory goes on as the chapter says (created instead, counted as a write
//! failure, the name kept for the next attempt).

use std::fs;

use super::*;
use crate::config::gateway::Artifacts;
use crate::storage::testutil::Scratch;
use crate::storage::{ArtifactRoot, StartRef};

#[test]
fn each_failure_leaves_the_os_reason_in_the_debug_log() {
    let s = Scratch::new();
    let root = s.path().join("artifacts");
    let config = RunArtifactsConfig { max_file_bytes: 16_384, max_retained_files: 2, replay: false };
    let artifacts =
        Artifacts { root: root.clone(), events: None, trace: Some(config), inspection: None, metrics: None };
    let opened = ArtifactRoot::open(&artifacts, &StartRef::from_parts(7, [7; 8])).unwrap();
    let dir = ArtifactDir::new(opened.traces().unwrap(), config, ".jsonl").unwrap();
    let traces = root.join("traces");
    for run in ["a", "b"] {
        assert!(!dir.create(run).unwrap().retention_failed);
    }
    // The oldest file turned into a directory: it can be neither opened for reuse nor unlinked.
    fs::remove_file(traces.join("a.jsonl")).unwrap();
    fs::create_dir(traces.join("a.jsonl")).unwrap();
    // The next name taken by another entry: the exclusive create fails.
    fs::write(traces.join("d.jsonl"), b"").unwrap();
    let log = crate::support::log_capture::capture();
    let created = dir.create("c").unwrap();
    assert!(created.retention_failed, "the directory is a write failure of run c (traces.md §4.3)");
    assert!(!fs::exists(traces.join("b.jsonl")).unwrap(), "retention removed b");
    assert!(matches!(dir.create("d"), Err(CreateFailure::Other)));
    let open = "error=a filesystem operation failed (open)";
    let unlink = "error=a filesystem operation failed (unlink)";
    assert_eq!(
        log.lines_with("run file"),
        [
            format!("DEBUG the oldest run file not reused file=a.jsonl {open}: Is a directory"),
            // Run c's retention keeps `a` and removes the next oldest, `b`, to keep two files.
            format!("DEBUG run file not removed by retention file=a.jsonl {unlink}: Is a directory"),
            format!("DEBUG the oldest run file not reused file=a.jsonl {open}: Is a directory"),
            format!("DEBUG run file not created file=d.jsonl {open}: File exists"),
        ]
    );
    opened.release().unwrap();
}
