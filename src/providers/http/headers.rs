//! The headers of every upstream POST (providers.md §5.2, §11): the fixed ones, the operator's static
//! credential headers, the era headers, and `traceparent` on provider calls.
//!
//! This file owns header values only. Credential values are built once, marked sensitive (hyper never
//! prints a sensitive value, and nothing here formats one) and never appear in an error. The `Mcp-Param-*`
//! values come from the gateway's own encoder (`crate::mcp_param::expected_headers`), so the client
//! side cannot drift from what the HTTP front validates (http-mcp.md §9).

use hyper::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, HOST, USER_AGENT};
use hyper::HeaderMap;
use serde_json::Value;

use crate::config::host::HeaderScheme;
use crate::config::secret::Secret;
use crate::mcp_param::encoding::{canonical_encoding, encode_base64};
use crate::mcp_param::{expected_headers, HeaderParam};

use super::super::negotiate::MODERN;

/// One configured credential header with its captured value (config.md §5.4.2).
#[derive(Clone)]
pub struct CredentialHeader {
    pub name: String,
    pub scheme: HeaderScheme,
    pub value: Secret,
}

/// The static headers, built once per acquisition, in configured order.
#[derive(Clone, Default)]
pub struct StaticHeaders(Vec<(HeaderName, HeaderValue)>);

impl StaticHeaders {
    /// The built fields, in configured order.
    pub fn iter(&self) -> impl Iterator<Item = &(HeaderName, HeaderValue)> {
        self.0.iter()
    }

    /// `None` when a name or value is not a valid field (config validation and capture refuse both, so
    /// this is defence in depth). The error says nothing about the value.
    pub fn build(headers: &[CredentialHeader]) -> Option<StaticHeaders> {
        let mut out = Vec::with_capacity(headers.len());
        for header in headers {
            let name = HeaderName::from_bytes(header.name.as_bytes()).ok()?;
            let raw = header.value.expose();
            let text = match header.scheme {
                HeaderScheme::Raw => raw.to_owned(),
                HeaderScheme::Bearer => format!("Bearer {raw}"),
                HeaderScheme::Basic => format!("Basic {}", encode_base64(raw.as_bytes())),
            };
            let mut value = HeaderValue::from_str(&text).ok()?;
            // Never logged, never in a diagnostic (providers.md §5.2).
            value.set_sensitive(true);
            out.push((name, value));
        }
        Some(StaticHeaders(out))
    }
}

/// The era-specific part of one request's headers.
pub enum EraHeaders<'a> {
    /// `MCP-Protocol-Version: 2026-07-28` and `Mcp-Method`; for `tools/call` also `Mcp-Name` and the
    /// mirrored parameters (already encoded by [`mirror`]).
    Modern { method: &'a str, name: Option<&'a str>, params: &'a [(String, String)] },
    /// No era header at all: the legacy `initialize` (providers.md §5.2).
    Initialize,
    /// After `initialize`: the negotiated version when 2025-06-18 or later, and the session id if any.
    Legacy { version: &'a str, session: Option<&'a str> },
}

/// Whether a legacy revision carries `MCP-Protocol-Version` (providers.md §5.2): dates compare as strings.
pub fn sends_version(version: &str) -> bool {
    version >= "2025-06-18"
}

/// Every header of one POST. `None` when a generated value is not a valid field (an unmirrorable name
/// is encoded, so this only guards against a defect).
pub fn request_headers(
    authority: &str,
    gateway_version: &str,
    statics: &StaticHeaders,
    era: &EraHeaders<'_>,
    traceparent: Option<&str>,
) -> Option<HeaderMap> {
    let mut map = HeaderMap::new();
    map.insert(HOST, HeaderValue::from_str(authority).ok()?);
    map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    map.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
    map.insert(USER_AGENT, HeaderValue::from_str(&format!("ptc-gateway/{gateway_version}")).ok()?);
    for (name, value) in &statics.0 {
        map.append(name.clone(), value.clone());
    }
    if let Some(traceparent) = traceparent {
        map.insert("traceparent", HeaderValue::from_str(traceparent).ok()?);
    }
    match era {
        EraHeaders::Modern { method, name, params } => {
            map.insert("mcp-protocol-version", HeaderValue::from_static(MODERN));
            map.insert("mcp-method", HeaderValue::from_str(method).ok()?);
            if let Some(name) = name {
                map.insert("mcp-name", HeaderValue::from_str(&canonical_encoding(name)).ok()?);
            }
            for (name, value) in *params {
                map.append(HeaderName::from_bytes(name.as_bytes()).ok()?, HeaderValue::from_str(value).ok()?);
            }
        }
        EraHeaders::Initialize => {}
        EraHeaders::Legacy { version, session } => {
            if sends_version(version) {
                map.insert("mcp-protocol-version", HeaderValue::from_str(version).ok()?);
            }
            if let Some(session) = session {
                map.insert("mcp-session-id", HeaderValue::from_str(session).ok()?);
            }
        }
    }
    Some(map)
}

/// The `Mcp-Param-*` lines of a modern `tools/call` (providers.md §5.2): `None` when an argument cannot be
/// mirrored (the call fails `mcp_request_invalid` before anything is sent).
pub fn mirror(params: &[HeaderParam], arguments: &Value) -> Option<Vec<(String, String)>> {
    expected_headers(params, arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode, Limits};

    fn lines(map: &HeaderMap) -> Vec<(String, String)> {
        map.iter().map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned())).collect()
    }

    #[test]
    fn static_headers_follow_their_scheme() {
        let header = |name: &str, scheme, value: &str| CredentialHeader {
            name: name.into(),
            scheme,
            value: Secret::new(value.into()),
        };
        let statics = StaticHeaders::build(&[
            header("X-Api-Key", HeaderScheme::Raw, "k1"),
            header("Authorization", HeaderScheme::Bearer, "tok"),
            header("Proxy-Authorization", HeaderScheme::Basic, "user:pa ss"),
        ])
        .unwrap();
        let map = request_headers("127.0.0.1:1", "0.1.0", &statics, &EraHeaders::Initialize, None).unwrap();
        assert_eq!(
            lines(&map),
            [
                ("host", "127.0.0.1:1"),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("user-agent", "ptc-gateway/0.1.0"),
                ("x-api-key", "k1"),
                ("authorization", "Bearer tok"),
                ("proxy-authorization", "Basic dXNlcjpwYSBzcw=="),
            ]
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
        );
        assert!(map.get("authorization").unwrap().is_sensitive());
        assert!(format!("{:?}", map.get("authorization").unwrap()).contains("Sensitive"));
        assert!(StaticHeaders::build(&[header("X", HeaderScheme::Raw, "a\nb")]).is_none());
    }

    #[test]
    fn era_headers_table() {
        let statics = StaticHeaders::default();
        let params = vec![("Mcp-Param-Region".to_owned(), "=?base64?IHBhZGRlZCA=?=".to_owned())];
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        type Row<'a> = (EraHeaders<'a>, Option<&'a str>, Vec<(&'a str, &'a str)>);
        let rows: Vec<Row> = vec![
            (
                EraHeaders::Modern { method: "tools/call", name: Some("wéather"), params: &params },
                Some(tp),
                vec![
                    ("traceparent", tp),
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "=?base64?d8OpYXRoZXI=?="),
                    ("mcp-param-region", "=?base64?IHBhZGRlZCA=?="),
                ],
            ),
            (
                EraHeaders::Modern { method: "server/discover", name: None, params: &[] },
                None,
                vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", "server/discover")],
            ),
            (EraHeaders::Legacy { version: "2025-03-26", session: None }, None, vec![]),
            (
                EraHeaders::Legacy { version: "2025-06-18", session: Some("abc") },
                None,
                vec![("mcp-protocol-version", "2025-06-18"), ("mcp-session-id", "abc")],
            ),
        ];
        for (era, traceparent, expected) in rows {
            let map = request_headers("h", "v", &statics, &era, traceparent).unwrap();
            let got: Vec<(String, String)> = lines(&map).into_iter().skip(4).collect();
            let want: Vec<(String, String)> =
                expected.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn unmirrorable_arguments_are_refused() {
        let params = vec![HeaderParam { path: vec!["n".into()], suffix: "N".into() }];
        let args = |s: &str| decode(s.as_bytes(), Limits::REQUEST).unwrap();
        assert_eq!(mirror(&params, &args(r#"{"n":3}"#)), Some(vec![("Mcp-Param-N".into(), "3".into())]));
        assert_eq!(mirror(&params, &args(r#"{"n":null}"#)), Some(vec![]));
        assert_eq!(mirror(&params, &args(r#"{"n":1.5}"#)), None);
        assert_eq!(mirror(&params, &args(r#"{"n":{"a":1}}"#)), None);
    }
}
