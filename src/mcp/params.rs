//! Step C3 (http-mcp.md §8.3, §9.2–§9.4): the `Mcp-Param-*` headers of a `tools/call` must mirror the
//! projected arguments exactly.
//!
//! Owns the matching of the received param lines against the expected headers. The expected value of
//! each header parameter, its encoding and the 16,384-byte bound are shared with the clients
//! (`crate::mcp_param`); the projection itself (which properties, which suffixes) is computed once at
//! startup by `crate::apps::header`.

use hyper::HeaderMap;
use serde_json::Value;

use crate::http::fields::trim_ows;
use crate::mcp_param::encoding::{canonical_encoding, decode};
use crate::mcp_param::{expected, HeaderParam, MAX_EXPECTED_BYTES};

/// The lowercase prefix of a param line.
const PREFIX: &str = "mcp-param-";

/// The `Mcp-Param-*` check passes: the param lines of `headers` match the expected headers of `params` for
/// `arguments`.
pub fn matches(headers: &HeaderMap, params: &[HeaderParam], arguments: &Value) -> bool {
    let mut wanted = Vec::with_capacity(params.len());
    let mut total = 0usize;
    for p in params {
        match expected(arguments, &p.path) {
            Err(()) => return false,
            Ok(None) => {}
            Ok(Some(canonical)) => {
                let name_bytes = "Mcp-Param-".len() + p.suffix.len();
                total = total.saturating_add(name_bytes + canonical_encoding(&canonical).len() + 4);
                wanted.push((format!("{PREFIX}{}", p.suffix.to_ascii_lowercase()), canonical));
            }
        }
    }
    if total > MAX_EXPECTED_BYTES {
        return false;
    }
    let lines: Vec<(&str, &[u8])> = headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with(PREFIX))
        .map(|(name, value)| (name.as_str(), trim_ows(value.as_bytes())))
        .collect();
    // http-mcp.md §9.4 rule 1: as many param lines as expected headers; rules 2–3: one line each, decoding
    // exactly.
    lines.len() == wanted.len()
        && wanted.iter().all(|(name, canonical)| {
            let mut same = lines.iter().filter(|(n, _)| n == name);
            match (same.next(), same.next()) {
                (Some((_, value)), None) => decode(value).is_some_and(|d| d == *canonical),
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode as json, Limits};
    use crate::mcp_param::expected_headers;
    use hyper::header::{HeaderName, HeaderValue};

    fn weather() -> Vec<HeaderParam> {
        // The fixture's projection (http-mcp.md §12.1), sorted by lowercased suffix.
        let p = |name: &str, suffix: &str| HeaderParam { path: vec![name.into()], suffix: suffix.into() };
        vec![p("days", "Days"), p("metric", "Metric"), p("region", "Region")]
    }

    #[test]
    fn the_client_side_sends_what_the_server_side_accepts() {
        type Lines<'a> = Option<&'a [(&'a str, &'a str)]>;
        let cases: &[(&str, Lines)] = &[
            (r#"{"region":"us-west1"}"#, Some(&[("Mcp-Param-Region", "us-west1")])),
            (
                r#"{"days":3.0,"metric":true,"region":" padded "}"#,
                Some(&[
                    ("Mcp-Param-Days", "3"),
                    ("Mcp-Param-Metric", "true"),
                    ("Mcp-Param-Region", "=?base64?IHBhZGRlZCA=?="),
                ]),
            ),
            (r#"{"region":null}"#, Some(&[])),
            (r#"{"days":1.5}"#, None),
            (r#"{"days":9007199254740992}"#, None),
        ];
        for (arguments, expected) in cases {
            let arguments = json(arguments.as_bytes(), Limits::REQUEST).unwrap();
            let got = expected_headers(&weather(), &arguments);
            let want =
                expected.map(|l| l.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect::<Vec<_>>());
            assert_eq!(got, want, "{arguments:?}");
            if let Some(lines) = got {
                let mut headers = HeaderMap::new();
                for (name, value) in &lines {
                    headers.append(
                        HeaderName::from_bytes(name.as_bytes()).unwrap(),
                        HeaderValue::from_str(value).unwrap(),
                    );
                }
                assert!(matches(&headers, &weather(), &arguments), "{lines:?}");
            }
        }
    }

    #[test]
    fn matching_vectors() {
        // http-mcp.md §12.10 rows 194–229 (the SSE rows pass this check; their outcome is execution's).
        type Lines<'a> = &'a [(&'a str, &'a [u8])];
        let cases: &[(&str, Lines, bool)] = &[
            (r#"{"region":"us-west1"}"#, &[("Mcp-Param-Region", b"us-west1")], true),
            (r#"{"region":"us-west1"}"#, &[], false),
            (r#"{"region":"us-west1"}"#, &[("mcp-param-region", b"us-west1")], true),
            (r#"{"region":"us-west1"}"#, &[("MCP-PARAM-REGION", b"us-west1")], true),
            (r#"{"region":"us-west1"}"#, &[("Mcp-Param-Region", b"=?base64?dXMtd2VzdDE=?=")], true),
            (r#"{"region":"us-west1"}"#, &[("Mcp-Param-Region", b"US-WEST1")], false),
            (
                r#"{"region":"us-west1"}"#,
                &[("Mcp-Param-Region", b"us-west1"), ("Mcp-Param-Region", b"us-west1")],
                false,
            ),
            (
                r#"{"region":"us-west1"}"#,
                &[("Mcp-Param-Region", b"us-west1"), ("Mcp-Param-Extra", b"1")],
                false,
            ),
            (r#"{"region":"us west 1"}"#, &[("Mcp-Param-Region", b"us west 1")], true),
            (
                r#"{"region":"Hello, 世界"}"#,
                &[("Mcp-Param-Region", b"=?base64?SGVsbG8sIOS4lueVjA==?=")],
                true,
            ),
            (r#"{"region":"Hello, 世界"}"#, &[("Mcp-Param-Region", "Hello, 世界".as_bytes())], false),
            (r#"{"region":" padded "}"#, &[("Mcp-Param-Region", b"=?base64?IHBhZGRlZCA=?=")], true),
            (r#"{"region":" padded "}"#, &[("Mcp-Param-Region", b" padded ")], false),
            (
                r#"{"region":"=?base64?literal?="}"#,
                &[("Mcp-Param-Region", b"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")],
                true,
            ),
            (r#"{"region":"=?base64?literal?="}"#, &[("Mcp-Param-Region", b"=?base64?literal?=")], false),
            (r#"{"region":"Hello"}"#, &[("Mcp-Param-Region", b"=?base64?SGVsbG8=?=")], true),
            (r#"{"region":"Hello"}"#, &[("Mcp-Param-Region", b"=?base64?SGVsbG8?=")], false),
            (r#"{"region":"Hello"}"#, &[("Mcp-Param-Region", b"=?base64?SGVs!!!bG8=?=")], false),
            (r#"{"region":"Hello"}"#, &[("Mcp-Param-Region", b"=?BASE64?SGVsbG8=?=")], false),
            (r#"{"region":"SGVsbG8="}"#, &[("Mcp-Param-Region", b"SGVsbG8=")], true),
            (r#"{"region":"=?base64?SGVsbG8="}"#, &[("Mcp-Param-Region", b"=?base64?SGVsbG8=")], true),
            (r#"{"region":""}"#, &[("Mcp-Param-Region", b"")], true),
            (r#"{"region":"x","days":3}"#, &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"3")], true),
            (r#"{"region":"x","days":3}"#, &[("Mcp-Param-Region", b"x")], false),
            (r#"{"region":"x","days":3}"#, &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"03")], false),
            (
                r#"{"region":"x","days":3}"#,
                &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"=?base64?Mw==?=")],
                true,
            ),
            (r#"{"region":"x","days":3}"#, &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"+3")], false),
            (r#"{"region":"x","days":3}"#, &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"3.0")], false),
            (r#"{"region":"x","days":3.0}"#, &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"3")], true),
            (r#"{"region":"x","days":-0.0}"#, &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"0")], true),
            (r#"{"region":"x","days":-7}"#, &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"-7")], true),
            (
                r#"{"region":"x","days":1.5}"#,
                &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"1.5")],
                false,
            ),
            (
                r#"{"region":"x","days":9007199254740991}"#,
                &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"9007199254740991")],
                true,
            ),
            (
                r#"{"region":"x","days":9007199254740992}"#,
                &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"9007199254740992")],
                false,
            ),
            (r#"{"region":"x","days":null}"#, &[("Mcp-Param-Region", b"x")], true),
            (r#"{"region":"x","days":null}"#, &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Days", b"0")], false),
            (
                r#"{"region":"x","metric":true}"#,
                &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Metric", b"true")],
                true,
            ),
            (
                r#"{"region":"x","metric":true}"#,
                &[("Mcp-Param-Region", b"x"), ("Mcp-Param-Metric", b"True")],
                false,
            ),
            (r#"{"region":5}"#, &[("Mcp-Param-Region", b"5")], true),
            (r#"{"region":{"a":1}}"#, &[("Mcp-Param-Region", br#"{"a":1}"#)], false),
            (r#"{"region":[1]}"#, &[], false),
            (r#"{"days":3}"#, &[("Mcp-Param-Days", b"3")], true),
            (r#"{}"#, &[], true),
        ];
        let params = weather();
        for (arguments, lines, expected) in cases {
            let arguments = json(arguments.as_bytes(), Limits::REQUEST).unwrap();
            let mut headers = HeaderMap::new();
            headers.append("host", HeaderValue::from_static("127.0.0.1:8765"));
            for (name, value) in *lines {
                headers.append(
                    HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_bytes(value).unwrap(),
                );
            }
            assert_eq!(matches(&headers, &params, &arguments), *expected, "{arguments:?} {lines:?}");
        }
        // A tool without projected parameters expects no param line at all (http-mcp.md §8.3, row 192).
        let mut one = HeaderMap::new();
        one.append("mcp-param-region", HeaderValue::from_static("x"));
        assert!(!matches(&one, &[], &Value::Object(Default::default())));
        assert!(matches(&HeaderMap::new(), &[], &Value::Object(Default::default())));
    }

    #[test]
    fn nested_paths_and_the_size_bound() {
        let nested =
            vec![HeaderParam { path: vec!["filter".into(), "owner".into()], suffix: "Owner".into() }];
        let args = |s: &str| json(s.as_bytes(), Limits::REQUEST).unwrap();
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.append("mcp-param-owner", HeaderValue::from_str(v).unwrap());
            h
        };
        assert!(matches(&with("me"), &nested, &args(r#"{"filter":{"owner":"me"}}"#)));
        assert!(matches(&HeaderMap::new(), &nested, &args(r#"{"filter":"me"}"#)), "not an object: absent");
        assert!(!matches(&with("me"), &nested, &args(r#"{"filter":"me"}"#)));
        // 16,384 = len("Mcp-Param-Owner") + value + 4.
        let fits = "v".repeat(MAX_EXPECTED_BYTES - 15 - 4);
        let over = "v".repeat(MAX_EXPECTED_BYTES - 15 - 3);
        assert!(matches(&with(&fits), &nested, &args(&format!(r#"{{"filter":{{"owner":"{fits}"}}}}"#))));
        assert!(!matches(&with(&over), &nested, &args(&format!(r#"{{"filter":{{"owner":"{over}"}}}}"#))));
    }
}
