//! Step M4 (http-mcp.md §6.4): the `Origin` header of a `POST /mcp` request.
//!
//! Owns the rule: absent passes; exactly one field line whose value is byte-identical to an entry of
//! `listen.allowed_origins` passes; anything else fails. The syntax of the entries is config.md's.

use hyper::header::ORIGIN;
use hyper::HeaderMap;

use crate::mcp::fields::{lines, Lines};

/// The Origin check passes for `headers` against the configured `allowed` origins.
pub fn allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    match lines(headers, ORIGIN) {
        Lines::Absent => true,
        // Exact bytes: no case folding, no trailing-slash or default-port normalisation.
        Lines::One(value) => allowed.iter().any(|entry| entry.as_bytes() == value),
        Lines::Repeated => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn origin_vectors() {
        // http-mcp.md §6.4 and §12.5 rows 49–53.
        let list = vec!["http://127.0.0.1:3000".to_string()];
        let cases: &[(&[&str], bool)] = &[
            (&[], true),
            (&["http://127.0.0.1:3000"], true),
            (&[" http://127.0.0.1:3000\t"], true),
            (&["http://127.0.0.1:3000/"], false),
            (&["HTTP://127.0.0.1:3000"], false),
            (&["null"], false),
            (&[""], false),
            (&["https://evil.example"], false),
            (&["http://127.0.0.1:3000", "http://127.0.0.1:3000"], false),
        ];
        for (values, expected) in cases {
            let mut headers = HeaderMap::new();
            for v in *values {
                headers.append(ORIGIN, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(allowed(&headers, &list), *expected, "{values:?}");
        }
        assert!(!allowed(
            &{
                let mut h = HeaderMap::new();
                h.append(ORIGIN, HeaderValue::from_static("null"));
                h
            },
            &[]
        ));
    }
}
