//! UTC calendar arithmetic shared by the audit's and the event log's timestamps (audit-events.md §1.1).
//!
//! Owns the conversion from seconds since the Unix epoch to `YYYY-MM-DDTHH:MM:SS` in the proleptic
//! Gregorian calendar. It does not own the fractional digits or the bounds, which differ between the audit
//! (milliseconds) and the event log (microseconds), nor reading the clock.

/// Days since 1970-01-01 to (year, month, day) (H. Hinnant's `civil_from_days`, restricted to non-negative
/// days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DDTHH:MM:SS` of `secs` seconds after 1970-01-01T00:00:00Z.
pub fn utc_seconds(secs: u64) -> String {
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rem = secs % 86_400;
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}", rem / 3_600, rem % 3_600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors() {
        let table = [
            (0, "1970-01-01T00:00:00"),
            (951_782_400, "2000-02-29T00:00:00"),
            (1_789_546_200, "2026-09-16T08:10:00"),
            (4_107_542_399, "2100-02-28T23:59:59"),
            (253_402_300_799, "9999-12-31T23:59:59"),
        ];
        for (secs, text) in table {
            assert_eq!(utc_seconds(secs), text, "{secs}");
        }
    }
}
