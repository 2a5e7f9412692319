//! The health endpoints and the not-found answer (http-mcp.md §4): the ordered checks H1–H4 (authority,
//! path, method, then the answer) for every path but `/mcp`.
//!
//! Owns the order of checks and the answer of each step. It does not own the target-form check (the
//! router runs it first, http-mcp.md §3.1), nor readiness itself (lifecycle.md §6: a snapshot read once per
//! request, never a message round trip). Health never reads a body, needs no bearer, ignores `Origin`,
//! `Authorization`, `Accept` and `Content-Type`, and takes no request lease (http-mcp.md §4.1).

use hyper::{HeaderMap, Method, Response, StatusCode};

use crate::http::fields::authority_matches;
use crate::http::response::{bodies, fixed_json, ResponseBody};

/// The answer of the health checks for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthAnswer {
    /// The authority check failed: 400 `{"status":"invalid_authority"}`.
    InvalidAuthority,
    /// Not a health path: 404 `{"status":"not_found"}`, for any method.
    NotFound,
    /// Not `GET`: 405 `{"status":"method_not_allowed"}` with `allow: GET` (also for `HEAD`).
    MethodNotAllowed,
    /// The answer of `/health/live`: 200 `{"status":"live"}`.
    Live,
    /// The answer of `/health/ready`, ready: 200 `{"status":"ready"}`.
    Ready,
    /// The answer of `/health/ready`, not ready: 503 `{"status":"not_ready"}`.
    NotReady,
}

/// Which endpoint a path names (the path check).
#[derive(Clone, Copy)]
enum Endpoint {
    Live,
    Ready,
}

/// Runs the health checks (http-mcp.md §4.1) in order: authority, path, method, then the answer; the first
/// failing step answers.
///
/// `path` is the request target up to its first `?`, compared byte for byte (http-mcp.md §3.2). `is_ready` is
/// asked only for the answer of `/health/ready`, so the readiness snapshot is read only when it decides the
/// answer.
pub fn decide(
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    authority: &str,
    is_ready: impl FnOnce() -> bool,
) -> HealthAnswer {
    // The authority, before the path and the method (http-mcp.md §12.3 rows 6–8).
    if !authority_matches(headers, authority) {
        return HealthAnswer::InvalidAuthority;
    }
    // A health path, byte for byte; `/health`, `/health/` and `/health/ready/` are not
    // (http-mcp.md §3.3).
    let endpoint = match path {
        "/health/live" => Endpoint::Live,
        "/health/ready" => Endpoint::Ready,
        _ => return HealthAnswer::NotFound,
    };
    // Exactly `GET` (method tokens are case-sensitive; `HEAD` fails too).
    if method != Method::GET {
        return HealthAnswer::MethodNotAllowed;
    }
    // The answer.
    match endpoint {
        Endpoint::Live => HealthAnswer::Live,
        Endpoint::Ready if is_ready() => HealthAnswer::Ready,
        Endpoint::Ready => HealthAnswer::NotReady,
    }
}

impl HealthAnswer {
    /// The status, body and `allow` header of this answer (http-mcp.md §4.1, §4.3).
    pub fn parts(self) -> (StatusCode, &'static str, Option<&'static str>) {
        match self {
            HealthAnswer::InvalidAuthority => (StatusCode::BAD_REQUEST, bodies::INVALID_AUTHORITY, None),
            HealthAnswer::NotFound => (StatusCode::NOT_FOUND, bodies::NOT_FOUND, None),
            HealthAnswer::MethodNotAllowed => {
                (StatusCode::METHOD_NOT_ALLOWED, bodies::METHOD_NOT_ALLOWED, Some("GET"))
            }
            HealthAnswer::Live => (StatusCode::OK, bodies::LIVE, None),
            HealthAnswer::Ready => (StatusCode::OK, bodies::READY, None),
            HealthAnswer::NotReady => (StatusCode::SERVICE_UNAVAILABLE, bodies::NOT_READY, None),
        }
    }

    /// The response with the health headers of http-mcp.md §4.2; `close` when a body was declared and left
    /// unread (http-mcp.md §2.5).
    pub fn into_response(self, close: bool) -> Response<ResponseBody> {
        let (status, body, allow) = self.parts();
        fixed_json(status, body, allow, close)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    const AUTHORITY: &str = "127.0.0.1:8765";

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                hyper::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn the_order_of_h1_to_h4() {
        use HealthAnswer::*;
        let host = [("host", AUTHORITY)];
        let evil = [("host", "evil.example")];
        let two = [("host", AUTHORITY), ("Host", AUTHORITY)];
        let with_origin = [("host", AUTHORITY), ("origin", "https://evil.example")];
        // (row, method, path, headers, ready, answer): http-mcp.md §12.3.
        type Pairs<'a> = &'a [(&'a str, &'a str)];
        let rows: &[(&str, &str, &str, Pairs, bool, HealthAnswer)] = &[
            ("1", "GET", "/health/ready", &host, true, Ready),
            ("2", "GET", "/health/live", &host, true, Live),
            ("3", "HEAD", "/health/ready", &host, true, MethodNotAllowed),
            ("4", "POST", "/health/ready", &host, true, MethodNotAllowed),
            ("5", "OPTIONS", "/health/ready", &host, true, MethodNotAllowed),
            ("6", "GET", "/health/ready", &evil, true, InvalidAuthority),
            ("7", "POST", "/health/ready", &evil, true, InvalidAuthority),
            ("8", "GET", "/health/ready", &two, true, InvalidAuthority),
            ("9", "GET", "/health/ready", &with_origin, true, Ready),
            ("10", "GET", "/unknown", &host, true, NotFound),
            ("11", "GET", "/", &host, true, NotFound),
            ("12", "GET", "/health/ready/", &host, true, NotFound),
            ("13", "GET", "/MCP", &host, true, NotFound),
            ("14", "POST", "/unknown", &host, true, NotFound),
            ("22", "GET", "/health/ready", &host, false, NotReady),
            ("23", "GET", "/health/live", &host, false, Live),
            ("no host", "GET", "/health/live", &[], true, InvalidAuthority),
            ("404 after authority", "GET", "/nope", &evil, true, InvalidAuthority),
            ("/health", "GET", "/health", &host, true, NotFound),
            ("/health/", "GET", "/health/", &host, true, NotFound),
            ("percent", "GET", "/%6Dcp", &host, true, NotFound),
            ("lowercase get", "get", "/health/live", &host, true, MethodNotAllowed),
        ];
        for (row, method, path, pairs, ready, expected) in rows {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let got = decide(&method, path, &headers(pairs), AUTHORITY, || *ready);
            assert_eq!(got, *expected, "row {row}");
        }
    }

    #[test]
    fn readiness_is_read_only_when_it_decides() {
        let host = headers(&[("host", AUTHORITY)]);
        let mut asked = 0;
        decide(&Method::GET, "/health/live", &host, AUTHORITY, || {
            asked += 1;
            true
        });
        decide(&Method::HEAD, "/health/ready", &host, AUTHORITY, || {
            asked += 1;
            true
        });
        assert_eq!(asked, 0);
        assert_eq!(decide(&Method::GET, "/health/ready", &host, AUTHORITY, || false), HealthAnswer::NotReady);
    }

    #[test]
    fn answers_map_to_their_exact_parts() {
        let cases = [
            (HealthAnswer::InvalidAuthority, 400, r#"{"status":"invalid_authority"}"#, None),
            (HealthAnswer::NotFound, 404, r#"{"status":"not_found"}"#, None),
            (HealthAnswer::MethodNotAllowed, 405, r#"{"status":"method_not_allowed"}"#, Some("GET")),
            (HealthAnswer::Live, 200, r#"{"status":"live"}"#, None),
            (HealthAnswer::Ready, 200, r#"{"status":"ready"}"#, None),
            (HealthAnswer::NotReady, 503, r#"{"status":"not_ready"}"#, None),
        ];
        for (answer, status, body, allow) in cases {
            let (s, b, a) = answer.parts();
            assert_eq!((s.as_u16(), b, a), (status, body, allow), "{answer:?}");
        }
    }
}
