use super::*;
use std::time::{Duration, UNIX_EPOCH};

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn record(outcome: Outcome, dispatch: Dispatch, disconnected: bool) -> AuditRecord {
    AuditRecord {
        call_id: CallId([0x6f; 16]),
        tool_name: "notes_append".into(),
        started_at: at(1_789_546_502_377),
        outcome,
        dispatch,
        disconnected,
    }
}

#[test]
fn the_spec_examples_byte_for_byte() {
    let mut r = record(Outcome::Success, Dispatch::True, false);
    r.call_id = CallId([
        0x6f, 0x1c, 0x2a, 0x9e, 0x0b, 0x7d, 0x4c, 0x3f, 0x8a, 0x5e, 0x1d, 0x2c, 0x3b, 0x4a, 0x59, 0x68,
    ]);
    let line = r.encode(at(1_789_546_502_418));
    assert_eq!(
        String::from_utf8(line.clone()).unwrap(),
        "{\"call_id\":\"6f1c2a9e0b7d4c3f8a5e1d2c3b4a5968\",\"cleanup_status\":\"complete\",\"disconnected\":false,\"dispatch_state\":\"true\",\"ended_at\":\"2026-09-16T08:15:02.418Z\",\"outcome_code\":\"success\",\"started_at\":\"2026-09-16T08:15:02.377Z\",\"tool_name\":\"notes_append\",\"write_effects_may_have_occurred\":true}\n"
    );
    assert!(is_valid_line(&line));
}

#[test]
fn cleanup_status_and_validity_per_outcome() {
    use Dispatch::*;
    use Outcome::*;
    let table = [
        (Success, True, "complete"),
        (ExecutionFailed, True, "complete"),
        (InvalidResult, True, "complete"),
        (Cancelled, True, "complete"),
        (CleanupFailed, Unknown, "uncertain"),
        (InternalError, Unknown, "uncertain"),
        (InternalError, True, "complete"),
    ];
    for (outcome, dispatch, status) in table {
        let r = record(outcome, dispatch, true);
        assert_eq!(r.cleanup_status(), status, "{outcome:?}");
        let line = r.encode(at(1_789_546_502_400));
        assert!(is_valid_line(&line), "{outcome:?}");
        assert!(line.len() <= MAX_RECORD_BYTES);
    }
}

#[test]
fn a_clock_that_went_backwards_yields_started_at() {
    let r = record(Outcome::Success, Dispatch::True, false);
    let line = String::from_utf8(r.encode(at(1_000))).unwrap();
    assert!(line.contains("\"ended_at\":\"2026-09-16T08:15:02.377Z\""), "{line}");
}

#[test]
fn the_longest_record_fits_the_bound() {
    let mut r = record(Outcome::ExecutionFailed, Dispatch::Unknown, true);
    r.tool_name = "x".repeat(128);
    assert!(r.encode(at(4_102_444_799_999)).len() <= MAX_RECORD_BYTES);
}

#[test]
fn invalid_lines() {
    let good =
        String::from_utf8(record(Outcome::Success, Dispatch::True, false).encode(at(1_789_546_502_418)))
            .unwrap();
    let cases: Vec<(&str, String)> = vec![
        ("no LF", good.trim_end().to_owned()),
        ("two LFs", format!("{good}\n")),
        ("whitespace", good.replacen(":", ": ", 1)),
        ("extra key", good.replacen("{", "{\"a\":1,", 1)),
        ("missing key", good.replacen("\"disconnected\":false,", "", 1)),
        ("publication_failed", good.replace("success", "publication_failed")),
        ("dispatch false", good.replace("\"dispatch_state\":\"true\"", "\"dispatch_state\":\"false\"")),
        ("uppercase id", good.replace("6f6f", "6F6F")),
        ("bad time", good.replace("08:15:02.418Z", "08:15:02.418")),
        ("ended before started", good.replace("08:15:02.418Z", "08:15:02.300Z")),
        ("bool as string", good.replace("\"disconnected\":false", "\"disconnected\":\"false\"")),
        ("uncertain success", good.replace("\"complete\"", "\"uncertain\"")),
        ("bad tool name", good.replace("notes_append", "notes append")),
        ("torn", good[..good.len() / 2].to_owned() + "\n"),
    ];
    for (what, line) in cases {
        assert!(!is_valid_line(line.as_bytes()), "{what}: {line}");
    }
}

#[test]
fn call_ids_are_32_lowercase_hex_and_fresh() {
    let a = CallId::random();
    let b = CallId::random();
    assert_ne!(a, b);
    assert!(is_call_id(&a.hex()));
}

#[test]
fn the_direct_encoding_is_the_deterministic_encoding_of_the_nine_members() {
    let outcomes = [
        Outcome::Success,
        Outcome::ExecutionFailed,
        Outcome::InvalidResult,
        Outcome::Cancelled,
        Outcome::CleanupFailed,
        Outcome::InternalError,
    ];
    for outcome in outcomes {
        for dispatch in [Dispatch::True, Dispatch::Unknown] {
            for disconnected in [false, true] {
                for (tool_name, started, now) in
                    [("note", 1_789_546_502_418, 1_789_546_502_419), ("a-Z_0.9", 0, 4_102_444_799_999)]
                {
                    let mut r = record(outcome, dispatch, disconnected);
                    r.tool_name = tool_name.to_owned();
                    r.call_id = CallId(std::array::from_fn(|i| u8::try_from(i * 17).unwrap()));
                    r.started_at = at(started);
                    let line = Line {
                        call_id: r.call_id.hex(),
                        cleanup_status: r.cleanup_status(),
                        disconnected,
                        dispatch_state: dispatch,
                        ended_at: time::format(at(now)),
                        outcome_code: outcome,
                        started_at: time::format(at(started)),
                        tool_name,
                        write_effects_may_have_occurred: true,
                    };
                    let oracle = format!("{}\n", crate::json::to_deterministic_record(&line).unwrap());
                    let got = String::from_utf8(r.encode(at(now))).unwrap();
                    assert_eq!(got, oracle);
                    assert!(is_valid_line(got.as_bytes()), "{got}");
                }
            }
        }
    }
}
