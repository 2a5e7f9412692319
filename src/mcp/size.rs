//! Step M2 (http-mcp.md §6.2): the aggregate header size of a `POST /mcp` request.
//!
//! Owns the sum and its bound. It does not own the parser limits of http-mcp.md §2.4 (line lengths and the
//! count of 64 field lines are enforced before routing).

use hyper::HeaderMap;

use crate::http::fields::trim_ows;

/// http-mcp.md §6.2: the sum over all field lines of (lowercase name bytes + OWS-trimmed value bytes) is at
/// most this.
pub const MAX_HEADER_BYTES: usize = 32_768;

/// The aggregate header size. hyper stores names lowercased and keeps every field line, so duplicates count
/// separately.
pub fn header_bytes(headers: &HeaderMap) -> usize {
    headers.iter().map(|(name, value)| name.as_str().len() + trim_ows(value.as_bytes()).len()).sum()
}

/// The header-size check passes.
pub fn within_bound(headers: &HeaderMap) -> bool {
    header_bytes(headers) <= MAX_HEADER_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{HeaderName, HeaderValue};

    #[test]
    fn boundary() {
        // (lines of (name, value)) → sum. `x-fill` is 6 bytes; values are trimmed before counting.
        let filler = |n: usize| "x".repeat(n);
        let cases: Vec<(Vec<(&str, String)>, usize)> = vec![
            (vec![], 0),
            (vec![("Host", "  127.0.0.1:8765 ".into())], 4 + 14),
            (vec![("x-a", "1".into()), ("x-a", "1".into())], 8),
            (vec![("X-Fill", filler(MAX_HEADER_BYTES - 6))], MAX_HEADER_BYTES),
            (vec![("X-Fill", filler(MAX_HEADER_BYTES - 5))], MAX_HEADER_BYTES + 1),
            (vec![("x-fill", format!("\t{}\t", filler(MAX_HEADER_BYTES - 6)))], MAX_HEADER_BYTES),
        ];
        for (lines, sum) in cases {
            let mut headers = HeaderMap::new();
            for (name, value) in &lines {
                headers.append(
                    HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(value).unwrap(),
                );
            }
            assert_eq!(header_bytes(&headers), sum);
            assert_eq!(within_bound(&headers), sum <= MAX_HEADER_BYTES);
        }
    }
}
