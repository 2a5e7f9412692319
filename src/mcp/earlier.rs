//! The earlier-revision rule of step M12 (http-mcp.md §7.3.1): a request of an earlier MCP revision is told
//! which revision is served (`-32022`) instead of that its `params` are invalid (`-32602`).
//!
//! Owns what makes a request one of an earlier revision once its `_meta` failed the check of
//! http-mcp.md §7.3 (a 2025 client sends no `_meta`): the `initialize` method, or one
//! `MCP-Protocol-Version` field line naming another version; and which string it requested. It does not
//! own the `_meta` check itself (`meta`) or the version check of a request whose `_meta` passed
//! (http-mcp.md §7.5, `method`).

use hyper::HeaderMap;
use serde_json::{Map, Value};

use crate::mcp::consistency::PROTOCOL_VERSION_HEADER;
use crate::mcp::fields::exactly_one;
use crate::mcp::rpc::PROTOCOL_VERSION;

/// The handshake method of the revisions before 2026-07-28, removed in it.
const INITIALIZE: &str = "initialize";
/// The member of `initialize`'s `params` that names the version in the revisions before 2026-07-28.
const INITIALIZE_VERSION: &str = "protocolVersion";

/// The version a request of an earlier revision requested, or `None` when the request is not one
/// (http-mcp.md §7.3.1). Asked only when the `_meta` check failed.
///
/// - `initialize`: its `params.protocolVersion` when that is a string, else the empty string (the request
///   named no version; a made-up one would be a lie, and `null` would not be the string SDKs expect).
/// - any other method: the value of the one `MCP-Protocol-Version` field line (OWS-trimmed) when it is
///   valid UTF-8, not empty and not `2026-07-28`. No line, two lines, an empty value or `2026-07-28` make
///   no earlier-revision request: the `_meta` refusal stands.
pub fn requested(headers: &HeaderMap, method: &str, params: Option<&Map<String, Value>>) -> Option<String> {
    if method == INITIALIZE {
        let named = params.and_then(|p| p.get(INITIALIZE_VERSION)).and_then(Value::as_str);
        return Some(named.unwrap_or_default().to_owned());
    }
    let header = exactly_one(headers, PROTOCOL_VERSION_HEADER)?;
    let header = std::str::from_utf8(header).ok()?;
    (!header.is_empty() && header != PROTOCOL_VERSION).then(|| header.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode, Limits};
    use hyper::header::{HeaderName, HeaderValue};

    fn headers(lines: &[(&str, &[u8])]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in lines {
            let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
            headers.append(name, HeaderValue::from_bytes(value).unwrap());
        }
        headers
    }

    #[test]
    fn earlier_revision_vectors() {
        // http-mcp.md §7.3.1 and §12.8 rows 249–256.
        let v = |value: &'static [u8]| ("MCP-Protocol-Version", value);
        type Case<'a> = (&'a [(&'a str, &'a [u8])], &'a str, Option<&'a str>, Option<&'a str>);
        let cases: &[Case] = &[
            (
                &[],
                "initialize",
                Some(r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#),
                Some("2025-11-25"),
            ),
            (
                &[v(b"2025-06-18")],
                "initialize",
                Some(r#"{"protocolVersion":"2025-03-26"}"#),
                Some("2025-03-26"),
            ),
            (&[], "initialize", Some(r#"{"protocolVersion":20251125}"#), Some("")),
            (&[], "initialize", None, Some("")),
            (&[v(b"2026-07-28")], "initialize", Some("{}"), Some("")),
            (&[v(b"2025-11-25")], "tools/list", None, Some("2025-11-25")),
            (&[v(b" 2025-06-18\t")], "tools/call", Some("{}"), Some("2025-06-18")),
            (&[v(b"v999.0.0")], "resources/list", Some("{}"), Some("v999.0.0")),
            (&[v(b"")], "tools/list", None, None),
            (&[v(b"2026-07-28")], "tools/list", None, None),
            (&[], "tools/list", Some("{}"), None),
            (&[v(b"2025-11-25"), v(b"2025-11-25")], "tools/list", None, None),
            (&[v(b"\xff")], "tools/list", None, None),
        ];
        for (lines, method, params, expected) in cases {
            let params = params.map(|p| decode(p.as_bytes(), Limits::REQUEST).unwrap());
            let got = requested(&headers(lines), method, params.as_ref().and_then(Value::as_object));
            assert_eq!(got.as_deref(), *expected, "{lines:?} {method} {params:?}");
        }
    }
}
