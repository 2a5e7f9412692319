//! The seam between the listener and the MCP front (http-mcp.md §5 onward).
//!
//! The router hands every request whose path is `/mcp` to an [`McpEndpoint`]. The full validation
//! table (M1–M17, C1–C6) and the `tools/call` stream are the MCP front's; until it is wired in, the
//! [`MethodOnly`] endpoint answers step M1 exactly and refuses everything else as not ready.

use std::future::Future;
use std::pin::Pin;

use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use crate::http::response::{fixed_json, ResponseBody};
use crate::http::router::has_body;

/// A boxed response future.
pub type ResponseFuture<'a> = Pin<Box<dyn Future<Output = Response<ResponseBody>> + Send + 'a>>;

/// What answers `/mcp`.
pub trait McpEndpoint: Send + Sync + 'static {
    /// Answers one request whose path is `/mcp`, for any method.
    fn handle(&self, request: Request<Incoming>) -> ResponseFuture<'_>;
}

/// The endpoint before the MCP front exists: step M1 (405 with `allow: POST` for every method but
/// POST), and 503 `{"error":"not_ready"}` for a POST, which no client can mistake for a served answer.
pub struct MethodOnly;

impl McpEndpoint for MethodOnly {
    fn handle(&self, request: Request<Incoming>) -> ResponseFuture<'_> {
        let close = has_body(request.headers());
        Box::pin(async move {
            if request.method() != Method::POST {
                // M1 (http-mcp.md §6.1): before any other check, so a wrong Host still gets 405.
                return fixed_json(
                    StatusCode::METHOD_NOT_ALLOWED,
                    r#"{"error":"method_not_allowed"}"#,
                    Some("POST"),
                    close,
                );
            }
            fixed_json(StatusCode::SERVICE_UNAVAILABLE, r#"{"error":"not_ready"}"#, None, close)
        })
    }
}
