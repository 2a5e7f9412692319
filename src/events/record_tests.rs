//! Every kind's exact line (keys sorted, exact key set) and the values that do not validate.

use super::*;
use std::time::{Duration, UNIX_EPOCH};

const AT: u64 = 1_789_545_600_010_203; // 2026-09-16T08:00:00.010203Z
const TS: &str = "\"timestamp\":\"2026-09-16T08:00:00.010203Z\"";

fn line(record: Record) -> Option<String> {
    Event { at: UNIX_EPOCH + Duration::from_micros(AT), record }.to_line()
}

#[test]
fn exact_lines() {
    let table: Vec<(Record, String)> = vec![
        (Record::EventsLockRecovered, format!("{{\"kind\":\"events_lock_recovered\",{TS}}}")),
        (
            Record::StartupStage { stage: StartupStage::ArtifactRoot, outcome: StartupOutcome::Ready },
            format!("{{\"kind\":\"startup_stage\",\"outcome\":\"ready\",\"stage\":\"artifact_root\",{TS}}}"),
        ),
        (
            Record::StartupStage { stage: StartupStage::RequestAdmission, outcome: StartupOutcome::Started },
            format!(
                "{{\"kind\":\"startup_stage\",\"outcome\":\"started\",\"stage\":\"request_admission\",{TS}}}"
            ),
        ),
        (
            Record::StartupFailed {
                code: StartupCode::ApplicationContentDigestMismatch,
                reason_class: ReasonClass::Code(StartupCode::ApplicationContentDigestMismatch),
            },
            format!(
                "{{\"code\":\"application_content_digest_mismatch\",\"kind\":\"startup_failed\",\
                 \"reason_class\":\"application_content_digest_mismatch\",{TS}}}"
            ),
        ),
        (
            Record::StartupFailed {
                code: StartupCode::AuditUnavailable,
                reason_class: ReasonClass::Audit(AuditReason::LockHeld),
            },
            format!(
                "{{\"code\":\"audit_unavailable\",\"kind\":\"startup_failed\",\
                 \"reason_class\":\"audit_lock_held\",{TS}}}"
            ),
        ),
        (
            Record::StartupFailed { code: StartupCode::InternalError, reason_class: ReasonClass::Other },
            format!(
                "{{\"code\":\"internal_error\",\"kind\":\"startup_failed\",\"reason_class\":\"other\",{TS}}}"
            ),
        ),
        (
            Record::Readiness(Transition::Ready),
            format!(
                "{{\"cause\":\"startup\",\"kind\":\"readiness\",\"provider\":null,{TS},\"tool\":null,\
                 \"transition\":\"ready\"}}"
            ),
        ),
        (
            Record::Readiness(Transition::NotReady(NotReadyCause::Shutdown)),
            format!(
                "{{\"cause\":\"shutdown\",\"kind\":\"readiness\",\"provider\":null,{TS},\"tool\":null,\
                 \"transition\":\"not_ready\"}}"
            ),
        ),
        (
            Record::Counter {
                kind: CounterKind::PublicationFailed,
                tool: Some("echo".into()),
                provider: None,
                count: 2,
                interval_ms: 1000,
            },
            format!(
                "{{\"count\":2,\"interval_ms\":1000,\"kind\":\"publication_failed\",\"provider\":null,\
                 {TS},\"tool\":\"echo\"}}"
            ),
        ),
        (
            Record::Counter {
                kind: CounterKind::Busy,
                tool: Some("briefs".into()),
                provider: Some("notes".into()),
                count: 3,
                interval_ms: 1000,
            },
            format!(
                "{{\"count\":3,\"interval_ms\":1000,\"kind\":\"busy\",\"provider\":\"notes\",\
                 {TS},\"tool\":\"briefs\"}}"
            ),
        ),
        (
            Record::Transport {
                tool: "briefs".into(),
                provider: "notes".into(),
                fault: crate::codes::transport::TransportFault::ServerExit,
                exit_status: Some(3),
            },
            format!(
                "{{\"exit_status\":3,\"fault\":\"server_exit\",\"kind\":\"transport\",\"provider\":\"notes\",\
                 {TS},\"tool\":\"briefs\"}}"
            ),
        ),
        (
            Record::Transport {
                tool: "briefs".into(),
                provider: "notes".into(),
                fault: crate::codes::transport::TransportFault::ServerExit,
                exit_status: None,
            },
            format!(
                "{{\"exit_status\":null,\"fault\":\"server_exit\",\"kind\":\"transport\",\
                 \"provider\":\"notes\",{TS},\"tool\":\"briefs\"}}"
            ),
        ),
        (
            Record::ModelFailure {
                tool: "briefs".into(),
                provider: "writer".into(),
                class: crate::codes::model::ModelFailure::Timeout,
                dispatch: crate::codes::provider::Dispatch::Unknown,
            },
            format!(
                "{{\"class\":\"model_timeout\",\"dispatch\":\"unknown\",\"kind\":\"model_failure\",\
                 \"provider\":\"writer\",{TS},\"tool\":\"briefs\"}}"
            ),
        ),
        (
            Record::PairNotReady {
                cause: NotReadyCause::ProviderRuntimeLost,
                tool: "briefs".into(),
                provider: "notes".into(),
            },
            format!(
                "{{\"cause\":\"provider_runtime_lost\",\"kind\":\"readiness\",\"provider\":\"notes\",\
                 {TS},\"tool\":\"briefs\",\"transition\":\"not_ready\"}}"
            ),
        ),
        (
            Record::StderrTail {
                tool: "briefs".into(),
                provider: "notes".into(),
                text: "fatal\n".into(),
                truncated: false,
            },
            format!(
                "{{\"kind\":\"stderr_tail\",\"provider\":\"notes\",\"text\":\"fatal\\n\",\
                 {TS},\"tool\":\"briefs\",\"truncated\":false}}"
            ),
        ),
        (
            Record::Counter {
                kind: CounterKind::DroppedEvents,
                tool: None,
                provider: None,
                count: 44,
                interval_ms: 17,
            },
            format!(
                "{{\"count\":44,\"interval_ms\":17,\"kind\":\"dropped_events\",\"provider\":null,\
                 {TS},\"tool\":null}}"
            ),
        ),
        (
            Record::AuditRecovered { removed_bytes: 137, removed_empty_files: 1 },
            format!("{{\"kind\":\"audit_recovered\",\"removed_bytes\":137,\"removed_empty_files\":1,{TS}}}"),
        ),
        (
            Record::shutdown_stage(StageId::StopListeners, ShutdownOutcome::Started).unwrap(),
            format!(
                "{{\"kind\":\"shutdown_stage\",\"outcome\":\"started\",\"stage\":\"stop_listeners\",{TS}}}"
            ),
        ),
        (
            Record::shutdown_stage(StageId::AdmissionClean, ShutdownOutcome::Unclean).unwrap(),
            format!(
                "{{\"kind\":\"shutdown_stage\",\"outcome\":\"unclean\",\"stage\":\"admission_clean\",{TS}}}"
            ),
        ),
    ];
    for (record, want) in table {
        assert_eq!(line(record.clone()), Some(format!("{want}\n")), "{record:?}");
    }
}

#[test]
fn values_outside_their_domain_do_not_validate() {
    let counter = |count, interval_ms| Record::Counter {
        kind: CounterKind::Busy,
        tool: None,
        provider: None,
        count,
        interval_ms,
    };
    let table: Vec<Record> = vec![
        counter(0, 1000),
        counter(MAX_COUNT + 1, 1000),
        counter(1, 0),
        counter(1, 1001),
        Record::AuditRecovered { removed_bytes: 0, removed_empty_files: 0 },
        Record::AuditRecovered { removed_bytes: MAX_COUNT + 1, removed_empty_files: 0 },
        Record::Transport {
            tool: "briefs".into(),
            provider: "notes".into(),
            fault: crate::codes::transport::TransportFault::ServerExit,
            exit_status: Some(256),
        },
    ];
    for record in table {
        assert_eq!(line(record.clone()), None, "{record:?}");
    }
    assert!(line(counter(MAX_COUNT, 1)).is_some());
    let early = Event { at: UNIX_EPOCH - Duration::from_secs(1), record: Record::EventsLockRecovered };
    assert_eq!(early.to_line(), None);
}

#[test]
fn shutdown_stage_names_and_s8() {
    let names: Vec<Option<String>> = StageId::ALL
        .iter()
        .map(|s| match Record::shutdown_stage(*s, ShutdownOutcome::Clean) {
            Some(Record::ShutdownStage { stage, .. }) => Some(stage.to_owned()),
            _ => None,
        })
        .collect();
    let want = [
        Some("stop_listeners"),
        Some("quiesce"),
        Some("drain_runs"),
        Some("checkpoint_events"),
        Some("provider_cleanup"),
        Some("admission_clean"),
        Some("audit_flush"),
        None,
    ];
    assert_eq!(names, want.map(|n| n.map(str::to_owned)));
    assert_eq!(ShutdownOutcome::of(StageOutcome::Skipped), None);
}

#[test]
fn stderr_text_follows_section_3_8() {
    // (bytes, ring truncated, max_file_bytes, text, truncated)
    let big = vec![b'e'; 60 * 1024];
    let cases: Vec<(&[u8], bool, u64, String, bool)> = vec![
        (b"fatal: index out of range\n", false, 1_048_576, "fatal: index out of range\n".into(), false),
        (b"kept", true, 1_048_576, "kept".into(), true),
        // EV8: N = floor((1024 - 512) / 6) = 85 newest bytes.
        (&big, false, 1024, "e".repeat(85), true),
        // A split UTF-8 sequence at the cut loses its continuation bytes; invalid bytes become U+FFFD.
        ("xé".as_bytes(), false, 512 + 6, String::new(), true),
        (b"a\xffb", false, 1_048_576, "a\u{fffd}b".into(), false),
    ];
    for (bytes, ring, max, text, truncated) in cases {
        assert_eq!(stderr_text(bytes, ring, max), (text, truncated), "{bytes:?}");
    }
}

/// docs/security.md section 9: upstream stderr that imitates a record, or carries terminal control bytes, an
/// escape sequence, NUL, CR and invalid UTF-8, stays inside the `text` string of one `stderr_tail` line
/// (audit-events.md §3.8, escaped by pins.md §2): exactly one LF, at the end; no raw control byte.
#[test]
fn stderr_that_imitates_a_record_stays_inside_one_escaped_line() {
    let forged = b"boom\n{\"kind\":\"startup_failed\",\"code\":\"x\"}\r\n\x1b[2J\x00\x07\x7f\"\\\xff\n";
    let (text, truncated) = stderr_text(forged, false, 1_048_576);
    assert!(!truncated);
    let record = Record::StderrTail { tool: "briefs".into(), provider: "notes".into(), text, truncated };
    let want = format!(
        "{{\"kind\":\"stderr_tail\",\"provider\":\"notes\",\
         \"text\":\"boom\\n{{\\\"kind\\\":\\\"startup_failed\\\",\\\"code\\\":\\\"x\\\"}}\\r\\n\\u001b[2J\\u0000\\u0007\x7f\\\"\\\\\u{fffd}\\n\",\
         {TS},\"tool\":\"briefs\",\"truncated\":false}}\n"
    );
    let got = line(record).expect("a stderr_tail validates");
    assert_eq!(got, want);
    assert_eq!(got.bytes().filter(|b| *b == b'\n').count(), 1);
    assert!(!got.bytes().any(|b| b < 0x20 && b != b'\n'), "{got:?}");
    // Parsing the line gives back one record whose text is the stderr, byte for byte where it was UTF-8.
    let parsed: serde_json::Value = serde_json::from_str(got.trim_end()).expect("one JSON object");
    assert_eq!(parsed["kind"], "stderr_tail");
    assert_eq!(
        parsed["text"],
        "boom\n{\"kind\":\"startup_failed\",\"code\":\"x\"}\r\n\u{1b}[2J\u{0}\u{7}\u{7f}\"\\\u{fffd}\n"
    );
}
