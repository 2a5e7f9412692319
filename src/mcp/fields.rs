//! Critical header lookup for the `/mcp` steps (http-mcp.md §1 "Critical headers", "Field lines and
//! values").
//!
//! Owns one rule every step shares: a critical header that is allowed at all is allowed in exactly one
//! field line, and its value is compared OWS-trimmed, as raw bytes (hyper keeps every field line, and
//! `HeaderValue::as_bytes` keeps bytes 0x80–0xFF). It does not own what any step does with the value.

use hyper::header::AsHeaderName;
use hyper::HeaderMap;

use crate::http::fields::trim_ows;

/// How many field lines a header has, and the one value when there is exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lines<'a> {
    /// No field line with this name.
    Absent,
    /// Exactly one field line; its OWS-trimmed value.
    One(&'a [u8]),
    /// Two or more field lines (a failure of the step that checks the header, http-mcp.md §1).
    Repeated,
}

/// The field lines of `name` (case-insensitive, as hyper stores names lowercased).
pub fn lines<K: AsHeaderName>(headers: &HeaderMap, name: K) -> Lines<'_> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (None, _) => Lines::Absent,
        (Some(value), None) => Lines::One(trim_ows(value.as_bytes())),
        (Some(_), Some(_)) => Lines::Repeated,
    }
}

/// The OWS-trimmed value of a header that must occur in exactly one field line, or `None`.
pub fn exactly_one<K: AsHeaderName>(headers: &HeaderMap, name: K) -> Option<&[u8]> {
    match lines(headers, name) {
        Lines::One(value) => Some(value),
        Lines::Absent | Lines::Repeated => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{HeaderValue, ACCEPT};

    #[test]
    fn line_counts() {
        let cases: &[(&[&str], Lines<'static>)] = &[
            (&[], Lines::Absent),
            (&["  a b\t"], Lines::One(b"a b")),
            (&[""], Lines::One(b"")),
            (&["a", "a"], Lines::Repeated),
            (&["a", "b", "c"], Lines::Repeated),
        ];
        for (values, expected) in cases {
            let mut headers = HeaderMap::new();
            for v in *values {
                headers.append(ACCEPT, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(lines(&headers, ACCEPT), *expected, "{values:?}");
            assert_eq!(exactly_one(&headers, "ACCEPT").is_some(), matches!(expected, Lines::One(_)));
        }
    }
}
