//! Audit startup steps 4–8, the committer over the real directory, and a failed start
//! (audit-events.md §2.5, §2.7, §2.10; §6.1 AU8, AU9, AU11, AU14).

use std::fs;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::codes::outcome::{Dispatch, Outcome};
use crate::storage::testutil::{mode_of, names, Scratch};
use crate::storage::AuditReason;

fn sref() -> StartRef {
    StartRef::from_parts(7, [9; 8])
}

fn cfg(dir: &Path, max_file_bytes: u64, max_retained_files: u32) -> PrivateAudit {
    PrivateAudit { directory: dir.to_path_buf(), max_file_bytes, max_retained_files }
}

fn start(c: &PrivateAudit) -> Result<Audit, AuditDirError> {
    Audit::start(c, &sref(), Box::new(|_| {}))
}

fn rec(i: u64) -> AuditRecord {
    AuditRecord {
        call_id: CallId::random(),
        tool_name: format!("tool_{i}"),
        started_at: UNIX_EPOCH + Duration::from_millis(1_789_546_502_000 + i),
        outcome: Outcome::Success,
        dispatch: Dispatch::True,
        disconnected: false,
    }
}

fn files(d: &Path) -> Vec<String> {
    names(d).into_iter().filter(|n| n != ".gateway-lock").collect()
}

fn name(n: u64) -> String {
    format!("{n:020}.jsonl")
}

/// Starts, writes `records` records, closes.
async fn run_once(c: &PrivateAudit, records: u64) {
    let audit = start(c).unwrap();
    let log = audit.log();
    for i in 0..records {
        log.record(&rec(i)).await.unwrap();
    }
    assert!(audit.close().await);
}

#[tokio::test]
async fn a_start_creates_the_next_file_and_a_close_keeps_it() {
    let s = Scratch::new();
    let d = s.path().join("audit");
    let c = cfg(&d, 1 << 20, 4);
    run_once(&c, 3).await;
    assert_eq!(files(&d), [name(1)]);
    assert_eq!(mode_of(&d.join(name(1))), 0o600);
    assert!(!d.join(".gateway-lock").exists(), "the lock is released");
    let content = fs::read(d.join(name(1))).unwrap();
    assert_eq!(recovery::valid_prefix(&content), content.len(), "every line validates");
    assert_eq!(content.iter().filter(|&&b| b == b'\n').count(), 3);
}

#[tokio::test]
async fn restarts_retain_files_and_narrowing_prunes_oldest_first() {
    let s = Scratch::new();
    let d = s.path().join("audit");
    // Vector AU8 (audit-events.md §6.1): four restarts with max_retained_files 2 (each start writes one
    // record).
    for _ in 0..4 {
        run_once(&cfg(&d, 1 << 20, 2), 1).await;
    }
    assert_eq!(files(&d), [name(3), name(4)]);
    for _ in 0..3 {
        run_once(&cfg(&d, 1 << 20, 5), 1).await;
    }
    assert_eq!(files(&d), [name(3), name(4), name(5), name(6), name(7)]);
    run_once(&cfg(&d, 1 << 20, 3), 1).await;
    assert_eq!(files(&d), [name(6), name(7), name(8)]);
    run_once(&cfg(&d, 1 << 20, 2), 1).await;
    assert_eq!(files(&d), [name(8), name(9)]);
}

#[tokio::test]
async fn empty_closed_files_are_removed_at_the_next_start() {
    let s = Scratch::new();
    let d = s.path().join("audit");
    run_once(&cfg(&d, 1 << 20, 4), 1).await;
    run_once(&cfg(&d, 1 << 20, 4), 0).await;
    assert_eq!(files(&d), [name(1), name(2)], "no empty file is removed at shutdown");
    let audit = start(&cfg(&d, 1 << 20, 4)).unwrap();
    assert_eq!(audit.recovered().removed_empty_files, 1);
    assert!(audit.close().await);
    assert_eq!(files(&d), [name(1), name(3)]);
}

#[tokio::test]
async fn rotation_keeps_every_file_within_max_file_bytes() {
    // Vector AU11 (audit-events.md §6.1): max_file_bytes 1024 and 10 records.
    let s = Scratch::new();
    let d = s.path().join("audit");
    run_once(&cfg(&d, 1024, 128), 10).await;
    let mut lines = Vec::new();
    for f in files(&d) {
        let content = fs::read(d.join(&f)).unwrap();
        assert!(content.len() <= 1024, "{f}: {}", content.len());
        assert_eq!(recovery::valid_prefix(&content), content.len(), "{f}: no record spans files");
        lines.extend(String::from_utf8(content).unwrap().lines().map(str::to_owned));
    }
    assert_eq!(lines.len(), 10);
    assert!(lines[9].contains("\"tool_name\":\"tool_9\""), "the newest record is the last line");
}

#[tokio::test]
async fn torn_tails_and_damage() {
    // Vector AU14 (audit-events.md §6.1): a torn tail is repaired, other damage is refused.
    let s = Scratch::new();
    let d = s.path().join("audit");
    let big = 1 << 20;
    run_once(&cfg(&d, big, 8), 2).await;
    let newest = d.join(name(1));
    let before = fs::read(&newest).unwrap();
    let mut torn = before.clone();
    torn.extend_from_slice(&[b'{'; 100]);
    fs::write(&newest, &torn).unwrap();
    let audit = start(&cfg(&d, big, 8)).unwrap();
    assert_eq!(audit.recovered().removed_bytes, 100);
    assert!(audit.close().await);
    assert_eq!(fs::read(&newest).unwrap(), before, "repaired to the valid prefix");

    // Now file 2 is empty and newest; file 1 is the newest non-empty one.
    let mut garbage = before.clone();
    garbage.extend(std::iter::repeat_n(b'x', 70 * 1024));
    fs::write(&newest, &garbage).unwrap();
    let e = start(&cfg(&d, big, 8)).unwrap_err();
    assert_eq!(e.reason, AuditReason::FileCorrupt);
    assert_eq!(e.reason.as_str(), "audit_file_corrupt");
    assert!(!d.join(".gateway-lock").exists(), "a refused start releases its lock");
    assert_eq!(files(&d), [name(1), name(2)], "a refused start adds no file");

    // Garbage appended to an older file (a newer non-empty file exists).
    fs::write(&newest, &before).unwrap();
    run_once(&cfg(&d, big, 8), 1).await;
    let mut old = before.clone();
    old.extend_from_slice(b"garbage");
    fs::write(&newest, &old).unwrap();
    let e = start(&cfg(&d, big, 8)).unwrap_err();
    assert_eq!(e.reason, AuditReason::FileCorrupt);
}

#[tokio::test]
async fn a_failed_start_after_the_stage_removes_the_new_file() {
    // Vector AU9 (audit-events.md §6.1): a start that fails after the audit stage leaves no new file.
    let s = Scratch::new();
    let d = s.path().join("audit");
    run_once(&cfg(&d, 1 << 20, 4), 1).await;
    let before = fs::read(d.join(name(1))).unwrap();
    let audit = start(&cfg(&d, 1 << 20, 4)).unwrap();
    assert_eq!(files(&d), [name(1), name(2)]);
    assert!(audit.abandon().await);
    assert_eq!(files(&d), [name(1)]);
    assert_eq!(fs::read(d.join(name(1))).unwrap(), before);
    assert!(!d.join(".gateway-lock").exists());
}

#[tokio::test]
async fn an_invalid_record_is_a_write_failure_and_reports_the_loss() {
    let s = Scratch::new();
    let d = s.path().join("audit");
    let lost = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = lost.clone();
    let audit = Audit::start(
        &cfg(&d, 1 << 20, 4),
        &sref(),
        Box::new(move |_| flag.store(true, std::sync::atomic::Ordering::Release)),
    )
    .unwrap();
    let mut bad = rec(0);
    bad.tool_name = "no spaces allowed".into();
    assert_eq!(audit.log().record(&bad).await, Err(AuditUnavailable));
    assert_eq!(audit.log().record(&rec(1)).await, Err(AuditUnavailable));
    assert!(lost.load(std::sync::atomic::Ordering::Acquire));
    assert!(!audit.close().await, "the close reports the failure");
    assert!(!d.join(".gateway-lock").exists(), "the lock is still removed");
    assert_eq!(fs::read(d.join(name(1))).unwrap(), b"", "nothing was written");
}
