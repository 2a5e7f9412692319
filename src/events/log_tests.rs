//! The log over a real store: first records, the EV5 burst against a parked writer, the observer's
//! shutdown mode, and the counters' final report at close.

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::*;
use crate::config::gateway::Artifacts;
use crate::json::{as_integer, decode, Limits};
use crate::storage::testutil::Scratch;
use crate::storage::ArtifactRoot;

const BOUND: Duration = Duration::from_secs(5);

fn open(root: &Path, sref: StartRef) -> (ArtifactRoot, EventLog) {
    let cfg = EventsConfig { max_file_bytes: 1_048_576, max_retained_files: 8, stderr: false };
    let artifacts = Artifacts::events_only(root, Some(cfg));
    let opened = ArtifactRoot::open(&artifacts, &sref).unwrap();
    let log = EventLog::start(opened.events().unwrap(), &cfg, &sref, vec!["alpha".into(), "echo".into()]);
    assert!(log.is_enabled());
    (opened, log)
}

/// Every record of the events directory, in file then line order.
fn records(root: &Path) -> Vec<Value> {
    let dir = root.join("events");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let bytes = fs::read(dir.join(name)).unwrap();
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            assert_eq!(line.last(), Some(&b'\n'));
            out.push(decode(&line[..line.len() - 1], Limits::REQUEST).unwrap());
        }
    }
    out
}

fn kind(v: &Value) -> &str {
    v.get("kind").and_then(Value::as_str).unwrap()
}

fn counts(records: &[Value], of: &str, tool: Option<&str>) -> i128 {
    records
        .iter()
        .filter(|r| kind(r) == of && r.get("tool").and_then(Value::as_str) == tool)
        .map(|r| r.get("count").and_then(as_integer).unwrap())
        .sum()
}

#[test]
fn a_burst_against_a_parked_writer_keeps_256_and_reports_the_rest() {
    let s = Scratch::new();
    let root = s.path().join("artifacts");
    let (held, log) = open(&root, StartRef::from_parts(1, [1; 8]));
    assert!(log.hold(BOUND));
    for _ in 0..300 {
        log.stage(StartupStage::Listener, StartupOutcome::Started);
    }
    log.release_hold();
    assert!(log.close());
    held.release().unwrap();
    let all = records(&root);
    assert_eq!(kind(&all[0]), "startup_stage");
    assert_eq!(all[0].get("stage").and_then(Value::as_str), Some("artifact_root"));
    let burst = all.iter().filter(|r| r.get("stage").and_then(Value::as_str) == Some("listener")).count();
    assert_eq!(burst, 256);
    assert_eq!(counts(&all, "dropped_events", None), 44);
    // The dropped_events report follows the burst.
    let last_burst = all.iter().rposition(|r| r.get("stage").and_then(Value::as_str) == Some("listener"));
    let first_report = all.iter().position(|r| kind(r) == "dropped_events");
    assert!(first_report > last_burst);
}

#[test]
fn lock_takeover_is_the_first_record_and_publication_failures_are_counted() {
    let s = Scratch::new();
    let root = s.path().join("artifacts");
    let lock = root.join("events/.gateway-lock");
    fs::create_dir_all(&lock).unwrap();
    fs::set_permissions(root.join("events"), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    fs::set_permissions(&lock, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    fs::write(lock.join("owner"), b"{\"pid\":1,\"start_ref\":\"00\"}\n").unwrap();
    fs::set_permissions(lock.join("owner"), std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let (held, log) = open(&root, StartRef::from_parts(2, [2; 8]));
    log.publication_failed(1);
    log.publication_failed(1);
    log.publication_failed(9);
    assert!(log.close());
    held.release().unwrap();
    let all = records(&root);
    let kinds: Vec<&str> = all.iter().map(kind).collect();
    assert_eq!(kinds, ["events_lock_recovered", "startup_stage", "publication_failed"]);
    assert_eq!(counts(&all, "publication_failed", Some("echo")), 2);
    let interval = all[2].get("interval_ms").and_then(as_integer).unwrap();
    assert!((1..=1000).contains(&interval));
}

#[test]
fn the_observer_records_transitions_and_shutdown_mode_silences_readiness() {
    let s = Scratch::new();
    let root = s.path().join("artifacts");
    let (held, log) = open(&root, StartRef::from_parts(3, [3; 8]));
    log.ready();
    log.not_ready(NotReadyCause::Shutdown);
    log.shutdown_stage_started(StageId::StopListeners);
    log.shutdown_stage(StageId::StopListeners, StageOutcome::Clean);
    log.enter_shutdown_mode();
    log.not_ready(NotReadyCause::OwnerLost);
    log.shutdown_stage(StageId::AuditFlush, StageOutcome::Skipped);
    log.shutdown_stage_started(StageId::EventLogClose);
    assert!(log.close());
    held.release().unwrap();
    let lines: Vec<String> = records(&root)
        .iter()
        .map(|r| {
            let mut r = r.as_object().unwrap().clone();
            r.remove("timestamp");
            crate::json::to_deterministic_string(&Value::Object(r))
        })
        .collect();
    assert_eq!(
        lines,
        [
            r#"{"kind":"startup_stage","outcome":"ready","stage":"artifact_root"}"#,
            r#"{"cause":"startup","kind":"readiness","provider":null,"tool":null,"transition":"ready"}"#,
            r#"{"cause":"shutdown","kind":"readiness","provider":null,"tool":null,"transition":"not_ready"}"#,
            r#"{"kind":"shutdown_stage","outcome":"started","stage":"stop_listeners"}"#,
            r#"{"kind":"shutdown_stage","outcome":"clean","stage":"stop_listeners"}"#,
        ]
    );
}

#[test]
fn a_disabled_log_does_nothing() {
    let log = EventLog::disabled();
    assert!(!log.is_enabled());
    log.emit(Record::EventsLockRecovered);
    log.publication_failed(0);
    assert!(!log.hold(Duration::from_millis(1)));
    assert!(log.close());
}
