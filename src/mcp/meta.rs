//! Step M12 (http-mcp.md §7.3): `params._meta`, including `clientInfo` and the absolute-URI rule.
//!
//! Owns the shape checks of `_meta` and its 65,536-byte deterministic-encoding bound. Other `_meta`
//! members (progress tokens, log levels, trace context, vendor keys) are accepted and ignored: the
//! gateway sends no notifications. It does not own the protocol version's value (http-mcp.md §7.4, §7.5).

use serde_json::{Map, Value};

use crate::json::deterministic_len;

/// http-mcp.md §7.3 rule 6.
pub const MAX_META_BYTES: usize = 65_536;
/// The `_meta` members the gateway reads.
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";

/// http-mcp.md §7.3 "Absolute URI": `^[A-Za-z][A-Za-z0-9+.-]*:` followed only by the listed bytes and `%HH`.
pub fn is_absolute_uri(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(colon) = b.iter().position(|c| *c == b':') else { return false };
    let (scheme, rest) = b.split_at(colon);
    let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme.iter().all(|c| c.is_ascii_alphanumeric() || b"+.-".contains(c));
    if !scheme_ok {
        return false;
    }
    let mut i = 1; // past the colon
    while let Some(&c) = rest.get(i) {
        if c == b'%' {
            let hex = rest.get(i + 1..i + 3);
            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                return false;
            }
            i += 3;
        } else if c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

fn optional(map: &Map<String, Value>, key: &str, check: impl Fn(&Value) -> bool) -> bool {
    map.get(key).is_none_or(check)
}

fn is_string(v: &Value) -> bool {
    matches!(v, Value::String(_))
}

fn is_uri(v: &Value) -> bool {
    v.as_str().is_some_and(is_absolute_uri)
}

fn icon_ok(icon: &Value) -> bool {
    let Some(icon) = icon.as_object() else { return false };
    icon.get("src").is_some_and(is_uri)
        && optional(icon, "mimeType", is_string)
        && optional(icon, "sizes", |v| v.as_array().is_some_and(|a| a.iter().all(is_string)))
        && optional(icon, "theme", |v| matches!(v.as_str(), Some("light" | "dark")))
}

/// http-mcp.md §7.3 rule 5.
fn client_info_ok(info: &Value) -> bool {
    let Some(info) = info.as_object() else { return false };
    info.get("name").is_some_and(is_string)
        && info.get("version").is_some_and(is_string)
        && optional(info, "title", is_string)
        && optional(info, "description", is_string)
        && optional(info, "websiteUrl", is_uri)
        && optional(info, "icons", |v| v.as_array().is_some_and(|a| a.iter().all(icon_ok)))
}

/// The `_meta` check over `params`; returns the requested protocol version (body side) when it passes.
pub fn check(params: Option<&Map<String, Value>>) -> Option<&str> {
    let meta_value = params?.get("_meta")?;
    let meta = meta_value.as_object()?;
    let version = meta.get(PROTOCOL_VERSION_KEY)?.as_str()?;
    meta.get(CAPABILITIES_KEY)?.as_object()?;
    if !optional(meta, CLIENT_INFO_KEY, client_info_ok) {
        return None;
    }
    (deterministic_len(meta_value) <= MAX_META_BYTES).then_some(version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode, Limits};

    #[test]
    fn absolute_uri_vectors() {
        let cases: &[(&str, bool)] = &[
            ("HTTP://example.com/path", true),
            ("http://example.com:80", true),
            ("data:image/png;base64,iVBORw0KGgo=", true),
            ("urn:x", true),
            ("a:", true),
            ("http://example.com/%41%7e", true),
            ("http://exa mple.com", false),
            ("http://example.com/%", false),
            ("http://example.com/%4", false),
            ("http://exa%ZZmple", false),
            ("/icon.png", false),
            ("1http://x", false),
            (":x", false),
            ("ht_tp://x", false),
            ("http://exämple.com", false),
            ("http://x/\"", false),
            ("", false),
        ];
        for (s, expected) in cases {
            assert_eq!(is_absolute_uri(s), *expected, "{s}");
        }
    }

    #[test]
    fn meta_vectors() {
        // http-mcp.md §7.3 and §12.8 rows 120–140.
        let base = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;
        let info = |i: &str| format!(r#"{{"_meta":{{{base},"io.modelcontextprotocol/clientInfo":{i}}}}}"#);
        // `{"_meta":{<base>,"pad":"…"}}`: `_meta` encodes to 2 + base + 9 + n bytes (`,"pad":"` and `"`).
        let pad = |n: usize| format!(r#"{{"_meta":{{{base},"pad":"{}"}}}}"#, "x".repeat(n));
        let fill = MAX_META_BYTES - 2 - base.len() - 9;
        let cases: Vec<(String, bool)> = vec![
            (format!(r#"{{"_meta":{{{base}}}}}"#), true),
            ("{}".into(), false),
            (r#"{"_meta":[]}"#.into(), false),
            (r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#.into(), false),
            (format!(r#"{{"_meta":{{{}}}}}"#, base.replace(r#""2026-07-28""#, "20260728")), false),
            (r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#.into(), false),
            (format!(r#"{{"_meta":{{{}}}}}"#, base.replace("{}", "null")), false),
            (info(r#"{"name":"c","version":"1"}"#), true),
            (info(r#"{"name":"c"}"#), false),
            (info(r#"{"version":"1"}"#), false),
            (info(r#"{"name":"c","version":1}"#), false),
            (info(r#""c""#), false),
            (info(r#"{"name":"c","version":"1","icons":42}"#), false),
            (info(r#"{"name":"c","version":"1","websiteUrl":"http://exa mple.com"}"#), false),
            (info(r#"{"name":"c","version":"1","websiteUrl":"http://example.com/%"}"#), false),
            (info(r#"{"name":"c","version":"1","websiteUrl":"http://exa%ZZmple"}"#), false),
            (info(r#"{"name":"c","version":"1","websiteUrl":"HTTP://example.com/path"}"#), true),
            (info(r#"{"name":"c","version":"1","websiteUrl":"http://example.com:80"}"#), true),
            (info(r#"{"name":"c","version":"1","icons":[{"src":"/icon.png"}]}"#), false),
            (
                info(
                    r#"{"name":"c","version":"1","icons":[{"src":"https://x.example/i.png","theme":"blue"}]}"#,
                ),
                false,
            ),
            (
                info(
                    r#"{"name":"c","version":"1","icons":[{"src":"https://x.example/i.png","theme":"dark","sizes":["48x48"],"mimeType":"image/png"}]}"#,
                ),
                true,
            ),
            (
                info(
                    r#"{"name":"c","version":"1","icons":[{"src":"https://x.example/i.png","sizes":[48]}]}"#,
                ),
                false,
            ),
            (info(r#"{"name":"c","version":"1","icons":[{}]}"#), false),
            (info(r#"{"name":"c","version":"1","title":5}"#), false),
            (info(r#"{"name":"c","version":"1","description":"d","vendor":"x"}"#), true),
            (
                format!(
                    r#"{{"_meta":{{{base},"progressToken":"p1","io.modelcontextprotocol/logLevel":"debug"}}}}"#
                ),
                true,
            ),
            (pad(fill), true),
            (pad(fill + 1), false),
        ];
        for (params, expected) in cases {
            let value = decode(params.as_bytes(), Limits::REQUEST).unwrap();
            let got = check(value.as_object());
            assert_eq!(got.is_some(), expected, "{}", &params[..params.len().min(160)]);
            if expected {
                assert_eq!(got, Some("2026-07-28"));
            }
        }
        assert_eq!(check(None), None, "params missing");
    }
}
