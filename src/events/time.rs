//! Event timestamps (audit-events.md §1.1): UTC with microsecond precision, exactly
//! `YYYY-MM-DDTHH:MM:SS.ffffffZ` (27 characters), from the real-time clock.
//!
//! Owns: the formatting of a [`SystemTime`]. Does not own: when a timestamp is taken (at record creation,
//! audit-events.md §3.4, by the emitter) or the audit's millisecond format.

use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch of `at`, or `None` before the epoch or after year 9999 (the format
/// has four year digits; such a record cannot validate and is dropped, audit-events.md §3.4).
fn micros(at: SystemTime) -> Option<u64> {
    let micros = u64::try_from(at.duration_since(UNIX_EPOCH).ok()?.as_micros()).ok()?;
    // 10000-01-01T00:00:00Z.
    (micros < 253_402_300_800_000_000).then_some(micros)
}

/// The 27-character event timestamp of `at`, or `None` when `at` cannot be written in the format.
pub fn event_timestamp(at: SystemTime) -> Option<String> {
    let micros = micros(at)?;
    Some(format!("{}.{:06}Z", crate::calendar::utc_seconds(micros / 1_000_000), micros % 1_000_000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn vectors() {
        let table: [(u64, Option<&str>); 6] = [
            (0, Some("1970-01-01T00:00:00.000000Z")),
            (1_789_546_200_010_203, Some("2026-09-16T08:10:00.010203Z")),
            (951_782_400_000_001, Some("2000-02-29T00:00:00.000001Z")),
            (4_107_542_399_999_999, Some("2100-02-28T23:59:59.999999Z")),
            (253_402_300_799_999_999, Some("9999-12-31T23:59:59.999999Z")),
            (253_402_300_800_000_000, None),
        ];
        for (micros, want) in table {
            let at = UNIX_EPOCH + Duration::from_micros(micros);
            assert_eq!(event_timestamp(at).as_deref(), want, "{micros}");
        }
        assert_eq!(event_timestamp(UNIX_EPOCH - Duration::from_micros(1)), None);
    }

    #[test]
    fn now_has_27_characters() {
        assert_eq!(event_timestamp(SystemTime::now()).map(|s| s.len()), Some(27));
    }
}
