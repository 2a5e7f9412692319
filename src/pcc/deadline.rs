//! The client deadline of a stream (pcc.md §4: "A client deadline (`grpc-timeout`) applies to the whole
//! stream"), read from the `grpc-timeout` metadata entry at stream start.
//!
//! Owns only the parse, which follows the gRPC over HTTP/2 protocol: `TimeoutValue TimeoutUnit`, 1 to 8
//! ASCII digits followed by one of `H M S m u n`. A missing or malformed entry means no client deadline,
//! as tonic's own timeout layer treats it (an invalid timeout is not one of the pcc.md §4 checks, so it never
//! refuses a stream). What happens at the deadline is `crate::pcc::stream`'s (pcc.md §11).

use std::time::{Duration, Instant};

/// The gRPC protocol bounds the value to 8 digits.
const MAX_DIGITS: usize = 8;

/// The duration of a `grpc-timeout` value, or `None` when it is malformed.
pub fn parse_grpc_timeout(value: &[u8]) -> Option<Duration> {
    let (unit, digits) = value.split_last()?;
    if digits.is_empty() || digits.len() > MAX_DIGITS || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // At most 99,999,999: no overflow in u64.
    let amount = digits.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    Some(match unit {
        b'H' => Duration::from_secs(amount * 3_600),
        b'M' => Duration::from_secs(amount * 60),
        b'S' => Duration::from_secs(amount),
        b'm' => Duration::from_millis(amount),
        b'u' => Duration::from_micros(amount),
        b'n' => Duration::from_nanos(amount),
        _ => return None,
    })
}

/// The stream's client deadline, measured from `start` (the moment the stream was admitted).
pub fn client_deadline(metadata: &tonic::metadata::MetadataMap, start: Instant) -> Option<Instant> {
    let value = metadata.get("grpc-timeout")?;
    start.checked_add(parse_grpc_timeout(value.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeout_values() {
        let cases: Vec<(&[u8], Option<Duration>)> = vec![
            (b"1H", Some(Duration::from_secs(3_600))),
            (b"2M", Some(Duration::from_secs(120))),
            (b"3S", Some(Duration::from_secs(3))),
            (b"1500m", Some(Duration::from_millis(1_500))),
            (b"7u", Some(Duration::from_micros(7))),
            (b"99999999n", Some(Duration::from_nanos(99_999_999))),
            (b"0m", Some(Duration::ZERO)),
            (b"123456789m", None),
            (b"m", None),
            (b"", None),
            (b"10", None),
            (b"10s", None),
            (b"-1S", None),
            (b"1 S", None),
            (b"1.5S", None),
        ];
        for (value, expected) in cases {
            assert_eq!(parse_grpc_timeout(value), expected, "{}", String::from_utf8_lossy(value));
        }
    }
}
