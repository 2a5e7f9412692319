//! Routing (http-mcp.md §3): the target form, the path, and the dispatch to `/mcp` or to health.
//!
//! Owns the first decision about every request hyper has parsed. The order is the spec's: the target form
//! first (anything but origin form is 400 `invalid_authority` with the health headers, whatever the path,
//! http-mcp.md §3.1), then the path up to `?`, byte for byte (http-mcp.md §3.2), then `/mcp` → the MCP
//! endpoint (which checks the method before the authority, http-mcp.md §6.1) and every other path → the
//! health checks (http-mcp.md §4.1). It does not own what either endpoint answers.

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, Uri};

use crate::codes::domain::Readiness;
use crate::http::fields::declares_body;
use crate::http::health;
use crate::http::mcp::McpEndpoint;
use crate::http::response::{bodies, fixed_json, ResponseBody};

/// Where a request goes, decided from its target alone (http-mcp.md §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// An absolute-form, authority-form or asterisk-form target (http-mcp.md §3.1).
    NotOriginForm,
    /// The path is exactly `/mcp` (http-mcp.md §3.3).
    Mcp,
    /// Any other origin-form path: health or not found, after the authority check (http-mcp.md §3.3, §4.1).
    Other,
}

/// Classifies a request target (http-mcp.md §3.1–§3.3).
///
/// hyper hands the target over as an `http::Uri`: an origin-form target has neither scheme nor authority
/// and a path that starts with `/`; `*` parses as the path `*`, and an authority-form target
/// (`CONNECT host:port`) as an authority without a path. `Uri::path` is the target up to its first `?`,
/// with no decoding or normalisation.
pub fn classify(uri: &Uri) -> Target {
    if uri.scheme().is_some() || uri.authority().is_some() || !uri.path().starts_with('/') {
        return Target::NotOriginForm;
    }
    if uri.path() == "/mcp" {
        Target::Mcp
    } else {
        Target::Other
    }
}

/// What every request on the listener is routed with.
pub struct Router {
    /// The configured authority (http-mcp.md §1): `127.0.0.1:8765`, `[::1]:8765`, `127.0.0.1` on port 80.
    authority: String,
    readiness: Readiness,
    mcp: Arc<dyn McpEndpoint>,
}

impl Router {
    /// A router for the configured `authority`, reading `readiness` per request and handing `/mcp` to
    /// `mcp`.
    pub fn new(authority: String, readiness: Readiness, mcp: Arc<dyn McpEndpoint>) -> Router {
        Router { authority, readiness, mcp }
    }

    /// The configured authority this router compares `Host` with.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// Routes one request to its answer.
    pub async fn route(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        // http-mcp.md §2.5: nothing here reads a body, so a declared body means `connection: close`.
        let close = declares_body(request.body());
        match classify(request.uri()) {
            Target::NotOriginForm => {
                fixed_json(StatusCode::BAD_REQUEST, bodies::INVALID_AUTHORITY, None, close)
            }
            Target::Mcp => self.mcp.handle(request).await,
            Target::Other => {
                let answer = health::decide(
                    request.method(),
                    request.uri().path(),
                    request.headers(),
                    &self.authority,
                    || self.readiness.is_ready(),
                );
                answer.into_response(close)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_vectors() {
        // http-mcp.md §3 and §12.3 rows 13, 15, 20, 21.
        let cases: &[(&str, Target)] = &[
            ("/mcp", Target::Mcp),
            ("/mcp?trace=1", Target::Mcp),
            ("/mcp?", Target::Mcp),
            ("/mcp/", Target::Other),
            ("/MCP", Target::Other),
            ("/%6Dcp", Target::Other),
            ("/health/ready?verbose=1", Target::Other),
            ("/", Target::Other),
            ("http://127.0.0.1:8765/mcp", Target::NotOriginForm),
            ("http://127.0.0.1:8765/health/ready", Target::NotOriginForm),
            ("https://evil.example/", Target::NotOriginForm),
            ("127.0.0.1:8765", Target::NotOriginForm),
            ("*", Target::NotOriginForm),
        ];
        for (target, expected) in cases {
            let uri: Uri = target.parse().unwrap();
            assert_eq!(classify(&uri), *expected, "{target}");
        }
    }

    #[test]
    fn the_path_stops_at_the_first_question_mark() {
        let uri: Uri = "/health/ready?verbose=1?x".parse().unwrap();
        assert_eq!(uri.path(), "/health/ready");
    }
}
