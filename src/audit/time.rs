//! Audit timestamps (audit-events.md §1.1): UTC, millisecond precision, exactly
//! `YYYY-MM-DDTHH:MM:SS.mmmZ` (24 characters), from the system's real-time clock.
//!
//! Owns the formatting and the shape check used by record validation. Does not own the event log's
//! microsecond timestamps.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// The length of an audit timestamp.
pub const LEN: usize = 24;

/// `t` as an audit timestamp. A clock before 1970 is written as the epoch (it cannot be represented, and
/// a record must still be written).
pub fn format(t: SystemTime) -> String {
    let mut out = String::with_capacity(LEN);
    write(&mut out, t);
    out
}

/// Appends [`format`]`(t)` to `out`.
pub fn write(out: &mut String, t: SystemTime) {
    let ms = t.duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let ms = u64::try_from(ms).unwrap_or(u64::MAX);
    // Writing to a `String` cannot fail.
    let _ = write!(out, "{}.{:03}Z", crate::calendar::utc_seconds(ms / 1000), ms % 1000);
}

/// Whether `s` has the exact shape of an audit timestamp (digits where digits belong, the separators,
/// month 01–12, day 01–31, hour < 24, minute and second < 60).
pub fn is_valid(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != LEN {
        return false;
    }
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':'), (19, b'.'), (23, b'Z')];
    if !seps.iter().all(|&(i, c)| b[i] == c) {
        return false;
    }
    let digits = (0..LEN).filter(|i| !seps.iter().any(|&(j, _)| j == *i));
    if !digits.clone().all(|i| b[i].is_ascii_digit()) {
        return false;
    }
    let num = |from: usize, to: usize| s[from..to].parse::<u32>().unwrap_or(u32::MAX);
    (1..=12).contains(&num(5, 7))
        && (1..=31).contains(&num(8, 10))
        && num(11, 13) < 24
        && num(14, 16) < 60
        && num(17, 19) < 60
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats() {
        let table: [(u64, &str); 4] = [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400_123, "2000-02-29T00:00:00.123Z"),
            (1_789_546_502_418, "2026-09-16T08:15:02.418Z"),
            (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
        ];
        for (ms, text) in table {
            let t = UNIX_EPOCH + Duration::from_millis(ms);
            assert_eq!(format(t), text);
            assert!(is_valid(text), "{text}");
        }
    }

    #[test]
    fn shapes() {
        let table = [
            ("2026-09-16T08:15:02.418Z", true),
            ("2026-09-16T08:15:02.418", false),
            ("2026-13-16T08:15:02.418Z", false),
            ("2026-09-16 08:15:02.418Z", false),
            ("2026-09-16T24:15:02.418Z", false),
            ("2026-09-16T08:15:02.41xZ", false),
            ("2026-09-16T08:15:02.4180Z", false),
        ];
        for (s, ok) in table {
            assert_eq!(is_valid(s), ok, "{s}");
        }
    }
}
