//! Step M6 (http-mcp.md §6.6): the `Content-Type` of a `POST /mcp` request.
//!
//! Owns the JSON media type rule
//! `^application/json(?:[ \t]*;[ \t]*charset[ \t]*=[ \t]*(?:utf-8|"utf-8"))?$`, ASCII case-insensitive,
//! over the value of exactly one field line.

use hyper::header::CONTENT_TYPE;
use hyper::HeaderMap;

use crate::mcp::fields::exactly_one;

fn skip_ws(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    s.get(n..).unwrap_or_default()
}

/// `value` without its first `prefix.len()` bytes when they equal `prefix` ASCII case-insensitively.
fn strip_prefix_ignore_case<'a>(value: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let head = value.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| value.get(prefix.len()..).unwrap_or_default())
}

/// The rule over one trimmed value.
pub fn is_json(value: &[u8]) -> bool {
    // Compared ASCII case-insensitively in place (no lowercased copy: this runs on every request).
    const JSON: &[u8] = b"application/json";
    let Some(rest) = strip_prefix_ignore_case(value, JSON) else { return false };
    if rest.is_empty() {
        return true;
    }
    let Some(rest) = strip_prefix_ignore_case(skip_ws(rest), b";") else { return false };
    let Some(rest) = strip_prefix_ignore_case(skip_ws(rest), b"charset") else { return false };
    let Some(rest) = strip_prefix_ignore_case(skip_ws(rest), b"=") else { return false };
    let charset = skip_ws(rest);
    charset.eq_ignore_ascii_case(b"utf-8") || charset.eq_ignore_ascii_case(b"\"utf-8\"")
}

/// The `Content-Type` check passes.
pub fn acceptable(headers: &HeaderMap) -> bool {
    exactly_one(headers, CONTENT_TYPE).is_some_and(is_json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn content_type_vectors() {
        // http-mcp.md §6.6 and §12.5 rows 68–74.
        let cases: &[(&str, bool)] = &[
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("Application/JSON;Charset=\"UTF-8\"", true),
            ("application/json ;charset = utf-8", true),
            ("application/json\t;\tcharset\t=\tutf-8", true),
            ("APPLICATION/JSON", true),
            ("application/json; charset=utf-16", false),
            ("application/json; charset=utf8", false),
            ("application/json; charset=utf-8; foo=bar", false),
            ("application/json; charset=utf-8; boundary=x", false),
            ("application/json-seq", false),
            ("application/json;", false),
            ("application/json; charset=\"utf-8", false),
            ("text/json", false),
            ("text/plain", false),
            ("", false),
        ];
        for (value, expected) in cases {
            assert_eq!(is_json(value.as_bytes()), *expected, "{value}");
            let mut headers = HeaderMap::new();
            headers.append(CONTENT_TYPE, HeaderValue::from_str(value).unwrap());
            assert_eq!(acceptable(&headers), *expected, "{value}");
        }
        let mut two = HeaderMap::new();
        two.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        two.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        assert!(!acceptable(&two));
        assert!(!acceptable(&HeaderMap::new()));
    }
}
