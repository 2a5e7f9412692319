//! Routing (http-mcp.md §3) and the health endpoints (§4).
//!
//! The order is the spec's: the target form first (anything but origin form is 400
//! `invalid_authority` whatever the path), then the path. `/mcp` goes to the MCP endpoint, which checks
//! the method before the authority (§12.3 row 17). Every other path runs H1 authority → H2 path →
//! H3 method → H4 answer. Health never reads a body, never needs a bearer and never waits: readiness is
//! one atomic load.

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use ptc_actors::Readiness;

use crate::http::mcp::McpEndpoint;
use crate::http::response::{fixed_json, ResponseBody};

/// The fixed bodies of §4.3 and §3.
pub mod bodies {
    pub const LIVE: &str = r#"{"status":"live"}"#;
    pub const READY: &str = r#"{"status":"ready"}"#;
    pub const NOT_READY: &str = r#"{"status":"not_ready"}"#;
    pub const INVALID_AUTHORITY: &str = r#"{"status":"invalid_authority"}"#;
    pub const NOT_FOUND: &str = r#"{"status":"not_found"}"#;
    pub const METHOD_NOT_ALLOWED: &str = r#"{"status":"method_not_allowed"}"#;
}

/// What every request on the listener is routed with.
pub struct Router {
    /// The configured authority (http-mcp.md §1): `127.0.0.1:8765`, `[::1]:8765`, `127.0.0.1` on port 80.
    authority: String,
    readiness: Readiness,
    mcp: Arc<dyn McpEndpoint>,
}

impl Router {
    pub fn new(authority: String, readiness: Readiness, mcp: Arc<dyn McpEndpoint>) -> Router {
        Router { authority, readiness, mcp }
    }

    /// Routes one request to its answer.
    pub async fn route(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        let close = has_body(request.headers());
        // §3.1: only origin-form targets.
        let uri = request.uri();
        if uri.scheme().is_some() || uri.authority().is_some() || !uri.path().starts_with('/') {
            return fixed_json(StatusCode::BAD_REQUEST, bodies::INVALID_AUTHORITY, None, true);
        }
        // §3.2–§3.3: the path up to `?`, byte for byte.
        if uri.path() == "/mcp" {
            return self.mcp.handle(request).await;
        }
        self.health(&request, close)
    }

    fn health(&self, request: &Request<Incoming>, close: bool) -> Response<ResponseBody> {
        // H1: exactly one Host line equal to the configured authority.
        if !authority_matches(request.headers(), &self.authority) {
            return fixed_json(StatusCode::BAD_REQUEST, bodies::INVALID_AUTHORITY, None, close);
        }
        // H2: a health path.
        let path = request.uri().path();
        let live = match path {
            "/health/live" => true,
            "/health/ready" => false,
            _ => return fixed_json(StatusCode::NOT_FOUND, bodies::NOT_FOUND, None, close),
        };
        // H3: GET only (HEAD included in the refusal; hyper writes no body for HEAD).
        if request.method() != Method::GET {
            return fixed_json(
                StatusCode::METHOD_NOT_ALLOWED,
                bodies::METHOD_NOT_ALLOWED,
                Some("GET"),
                close,
            );
        }
        // H4.
        if live {
            fixed_json(StatusCode::OK, bodies::LIVE, None, close)
        } else if self.readiness.is_ready() {
            fixed_json(StatusCode::OK, bodies::READY, None, close)
        } else {
            fixed_json(StatusCode::SERVICE_UNAVAILABLE, bodies::NOT_READY, None, close)
        }
    }
}

/// http-mcp.md §6.3 / H1: exactly one `Host` field line whose OWS-trimmed value equals `authority`.
pub fn authority_matches(headers: &HeaderMap, authority: &str) -> bool {
    let mut values = headers.get_all(HOST).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => trim_ows(value.as_bytes()) == authority.as_bytes(),
        _ => false,
    }
}

/// Removes leading and trailing SP and HTAB (http-mcp.md §1 "Field lines and values").
pub fn trim_ows(value: &[u8]) -> &[u8] {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = value.iter().position(|b| !is_ows(b)).unwrap_or(value.len());
    let end = value.iter().rposition(|b| !is_ows(b)).map_or(start, |i| i + 1);
    value.get(start..end).unwrap_or_default()
}

/// http-mcp.md §2.5: the request declared a body (`Content-Length` > 0 or any `Transfer-Encoding`);
/// answering without reading it closes the connection.
pub fn has_body(headers: &HeaderMap) -> bool {
    if headers.contains_key(TRANSFER_ENCODING) {
        return true;
    }
    headers.get_all(CONTENT_LENGTH).iter().any(|v| trim_ows(v.as_bytes()).iter().any(|b| *b != b'0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn authority_vectors() {
        let cases: &[(&[&str], bool)] = &[
            (&["127.0.0.1:8765"], true),
            (&[" 127.0.0.1:8765\t"], true),
            (&["127.0.0.1:8765", "127.0.0.1:8765"], false),
            (&[], false),
            (&["evil.example"], false),
            (&["127.0.0.1:08765"], false),
            (&["localhost:8765"], false),
        ];
        for (values, expected) in cases {
            let mut headers = HeaderMap::new();
            for v in *values {
                headers.append(HOST, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(authority_matches(&headers, "127.0.0.1:8765"), *expected, "{values:?}");
        }
    }

    #[test]
    fn body_detection() {
        let cases: &[(&[(&str, &str)], bool)] = &[
            (&[], false),
            (&[("content-length", "0")], false),
            (&[("content-length", "2")], true),
            (&[("content-length", "000")], false),
            (&[("transfer-encoding", "chunked")], true),
        ];
        for (pairs, expected) in cases {
            let mut headers = HeaderMap::new();
            for (n, v) in *pairs {
                headers.append(*n, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(has_body(&headers), *expected, "{pairs:?}");
        }
    }
}
