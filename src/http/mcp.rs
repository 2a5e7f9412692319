//! The seam between the listener and the MCP front (http-mcp.md §5 onward).
//!
//! The router hands every request whose path is `/mcp` to an [`McpEndpoint`], for every method, with the body
//! unread. Owns only that contract and the method check (http-mcp.md §6.1), which every endpoint shares. The
//! rest of the validation table (http-mcp.md §6.2–§8.4) is the MCP front's (`mcp::McpFront`, wired at stage
//! 11), and the `tools/call` stream is execution's. [`MethodOnly`] stays the listener's default endpoint for
//! in-process listener tests that need no front: it answers the method check exactly and refuses every
//! `POST`.

use std::future::Future;
use std::pin::Pin;

use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

use crate::http::fields::declares_body;
use crate::http::response::{bodies, fixed_json, ResponseBody};

/// A boxed response future: the endpoint is a trait object so the listener does not depend on the MCP
/// front's types, and the future is `Unpin` so the connection layer can drive hyper without shutdown.
pub type ResponseFuture<'a> = Pin<Box<dyn Future<Output = Response<ResponseBody>> + Send + 'a>>;

/// What answers `/mcp`.
///
/// The endpoint receives the request with its body unread and no `100 Continue` sent (hyper sends it only
/// when the body is first polled, which is what http-mcp.md §2.5 asks: only the body read, http-mcp.md §6.9,
/// reads it). Whenever it answers without reading a declared body to the end it must add `connection: close`
/// ([`crate::http::fields::declares_body`] tells it whether one was declared). To close without any response
/// (http-mcp.md §6.9 half-close) it triggers the request's [`crate::http::CloseSignal`] extension and leaves
/// its future pending.
pub trait McpEndpoint: Send + Sync + 'static {
    /// Answers one request whose path is `/mcp`, for any method.
    fn handle(&self, request: Request<Incoming>) -> ResponseFuture<'_>;
}

/// Step M1 (http-mcp.md §6.1): every method but `POST` (compared case-sensitively) is answered 405
/// `{"error":"method_not_allowed"}` with `allow: POST`, before any other check, so `GET /mcp` with a
/// foreign `Host` is 405 (http-mcp.md §12.3 row 17). `None` means the request passed the method check.
pub fn method_rule(request: &Request<Incoming>) -> Option<Response<ResponseBody>> {
    if request.method() == Method::POST {
        return None;
    }
    Some(fixed_json(
        StatusCode::METHOD_NOT_ALLOWED,
        bodies::MCP_METHOD_NOT_ALLOWED,
        Some("POST"),
        declares_body(request.body()),
    ))
}

/// The provisional endpoint before the MCP front exists: the method check exactly, and 503
/// `{"error":"not_ready"}` for every `POST`, which no client can mistake for a served answer. It never reads
/// a body, so a declared body closes the connection (http-mcp.md §2.5).
pub struct MethodOnly;

/// The provisional body of a `POST /mcp` while no MCP front is wired in.
pub const PROVISIONAL_NOT_READY: &str = r#"{"error":"not_ready"}"#;

impl McpEndpoint for MethodOnly {
    fn handle(&self, request: Request<Incoming>) -> ResponseFuture<'_> {
        let answer = method_rule(&request).unwrap_or_else(|| {
            fixed_json(
                StatusCode::SERVICE_UNAVAILABLE,
                PROVISIONAL_NOT_READY,
                None,
                declares_body(request.body()),
            )
        });
        Box::pin(std::future::ready(answer))
    }
}
