//! Reading a request head the way http-mcp.md §1 compares it: OWS-trimmed field values, critical headers
//! in exactly one field line, and whether a body was declared (http-mcp.md §2.5).
//!
//! Owns the small, pure predicates every endpoint shares (the authority check of health and that of `/mcp`
//! are the same rule). It does not own the order of checks (the router, health and the MCP front do) nor the
//! parser limits of http-mcp.md §2.4.

use hyper::body::Body;
use hyper::header::HOST;
use hyper::HeaderMap;

/// Removes leading and trailing SP (0x20) and HTAB (0x09) bytes (http-mcp.md §1 "Field lines and values").
/// hyper's parser already drops them around a value; trimming again keeps the rule independent of it.
pub fn trim_ows(value: &[u8]) -> &[u8] {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = value.iter().position(|b| !is_ows(b)).unwrap_or(value.len());
    let end = value.iter().rposition(|b| !is_ows(b)).map_or(start, |i| i + 1);
    value.get(start..end).unwrap_or_default()
}

/// The authority check of health (http-mcp.md §4.1) and of `/mcp` (http-mcp.md §6.3): exactly one `Host`
/// field line whose OWS-trimmed value equals the configured authority byte for byte. Zero lines and two lines
/// (even identical ones) fail: hyper keeps every field line in the `HeaderMap`, so duplicates are visible
/// here.
pub fn authority_matches(headers: &HeaderMap, authority: &str) -> bool {
    let mut values = headers.get_all(HOST).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => trim_ows(value.as_bytes()) == authority.as_bytes(),
        _ => false,
    }
}

/// http-mcp.md §2.5: the request declared a body that has not been read (`Content-Length` greater than
/// 0, or `Transfer-Encoding: chunked`). Answering such a request without reading the body closes the
/// connection.
///
/// This asks hyper's own framing decision rather than re-reading the headers, so it agrees with what hyper
/// would otherwise try to read next: a body hyper considers empty (no framing header, `Content-Length: 0`)
/// is not a body, and one it would read (a length or chunked coding) is. Called before any body byte is
/// polled, "declared" and "unread" are the same thing.
pub fn declares_body<B: Body>(body: &B) -> bool {
    !body.is_end_stream()
}

/// The configured authority of http-mcp.md §1 for a bound socket address: `127.0.0.1:8765`,
/// `[::1]:8765`, and no port when it is 80.
pub fn authority_of(addr: std::net::SocketAddr) -> String {
    let host = match addr {
        std::net::SocketAddr::V4(v4) => v4.ip().to_string(),
        std::net::SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
    };
    if addr.port() == 80 {
        host
    } else {
        format!("{host}:{}", addr.port())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Empty, Full, StreamBody};
    use hyper::header::HeaderValue;

    #[test]
    fn trim_vectors() {
        let cases: &[(&[u8], &[u8])] =
            &[(b"", b""), (b" \t ", b""), (b"  a b\t", b"a b"), (b"\ta", b"a"), (b"a\r", b"a\r")];
        for (input, expected) in cases {
            assert_eq!(trim_ows(input), *expected, "{input:?}");
        }
    }

    #[test]
    fn authority_vectors() {
        // http-mcp.md §6.3 and §12.5 rows 39–48 (the rule is the same for health).
        let v4 = "127.0.0.1:8765";
        let v6 = "[::1]:8765";
        let cases: &[(&str, &[&str], bool)] = &[
            (v4, &["127.0.0.1:8765"], true),
            (v4, &["  127.0.0.1:8765  "], true),
            (v4, &["\t127.0.0.1:8765"], true),
            (v4, &["127.0.0.1:8765", "127.0.0.1:8765"], false),
            (v4, &[], false),
            (v4, &["evil.example"], false),
            (v4, &["localhost:8765"], false),
            (v4, &["127.0.0.1"], false),
            (v4, &["127.0.0.1:8766"], false),
            (v4, &["127.0.0.1:08765"], false),
            (v4, &["127.0.0.1.:8765"], false),
            (v4, &["[::1]:8765"], false),
            (v4, &[""], false),
            (v6, &["[::1]:8765"], true),
            (v6, &["::1:8765"], false),
            (v6, &["[0:0:0:0:0:0:0:1]:8765"], false),
            ("127.0.0.1", &["127.0.0.1"], true),
            ("127.0.0.1", &["127.0.0.1:80"], false),
        ];
        for (authority, values, expected) in cases {
            let mut headers = HeaderMap::new();
            for v in *values {
                headers.append(HOST, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(authority_matches(&headers, authority), *expected, "{authority} {values:?}");
        }
    }

    #[test]
    fn configured_authority_of_an_address() {
        let cases = [
            ("127.0.0.1:8765", "127.0.0.1:8765"),
            ("[::1]:8765", "[::1]:8765"),
            ("127.0.0.1:80", "127.0.0.1"),
            ("[::1]:80", "[::1]"),
            ("127.0.0.1:1", "127.0.0.1:1"),
        ];
        for (addr, expected) in cases {
            assert_eq!(authority_of(addr.parse().unwrap()), expected);
        }
    }

    #[test]
    fn body_declaration_follows_the_framing() {
        assert!(!declares_body(&Empty::<bytes::Bytes>::new()));
        assert!(!declares_body(&Full::new(bytes::Bytes::new())));
        assert!(declares_body(&Full::new(bytes::Bytes::from_static(b"x"))));
        let stream =
            futures::stream::iter(Vec::<Result<hyper::body::Frame<bytes::Bytes>, std::io::Error>>::new());
        assert!(declares_body(&StreamBody::new(stream).boxed()), "an unknown length is a body");
    }
}
