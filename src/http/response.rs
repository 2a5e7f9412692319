//! Fixed responses of the HTTP front (http-mcp.md §1 "Fixed bodies", http-mcp.md §2.4 "empty-body response",
//! http-mcp.md §2.5, §4.2, §10.1).
//!
//! Owns the exact bytes and headers of every answer the front writes before JSON-RPC: the health and router
//! bodies, the method-check body of `/mcp`, and the empty-body refusal of a parser limit; and the fixed body
//! types every answer is sent in (one buffer, or chunks that share precomputed bytes). It does not decide
//! *which* answer applies (the router, health and the MCP front do) and it does not own JSON-RPC bodies.
//!
//! Every answer built here carries exactly the headers the spec names: `content-type`,
//! `cache-control: no-store`, `content-length` (hyper writes it from the body's exact length, also for
//! `HEAD`, where it writes no body), optional `connection: close`, and for 405 the `allow` header.
//! Nothing here adds `server`, CORS, session, `retry-after`, `set-cookie` or `vary` headers, and hyper
//! adds none of them either (it adds only `date`, which http-mcp.md §1 allows).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::{Body, Frame, SizeHint};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONNECTION, CONTENT_TYPE};
use hyper::{HeaderMap, Response, StatusCode};

/// The body type of every response of the front: a fixed body here, an event stream for a committed
/// `tools/call` (execution.md). A fixed body never fails; an event stream fails only with
/// [`BodyAbandoned`], which makes hyper close the connection without ending the chunked body, so the
/// client can tell an abandoned stream from a complete one (execution.md §4.2, §9).
pub type ResponseBody = BoxBody<Bytes, BodyAbandoned>;

/// The gateway gave up writing a response body (a commit or publication that did not complete within
/// its bound, execution.md §4.2 and §9): hyper closes the connection at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyAbandoned;

impl std::fmt::Display for BodyAbandoned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("response body abandoned")
    }
}

impl std::error::Error for BodyAbandoned {}

/// A complete, fixed body.
pub fn full(bytes: Bytes) -> ResponseBody {
    Full::new(bytes).map_err(|never: Infallible| match never {}).boxed()
}

/// A complete, fixed body written as `first` then `second`, so that a part shared between answers (bytes
/// encoded once at startup) is sent without being copied into each body. The size hint stays exact, so
/// hyper writes `content-length` as for [`full`] (http-mcp.md §10.1). The parts are held inline (no
/// queue to allocate per answer).
pub(crate) fn two_parts(first: Bytes, second: Bytes) -> ResponseBody {
    let remaining = (first.len() + second.len()) as u64;
    TwoParts { parts: [first, second], next: 0, remaining }.boxed()
}

/// The body of [`two_parts`]: one data frame per non-empty part.
struct TwoParts {
    parts: [Bytes; 2],
    /// The index of the next part to send.
    next: usize,
    remaining: u64,
}

impl Body for TwoParts {
    type Data = Bytes;
    type Error = BodyAbandoned;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyAbandoned>>> {
        let this = self.get_mut();
        while let Some(part) = this.parts.get_mut(this.next) {
            this.next += 1;
            if !part.is_empty() {
                let part = std::mem::take(part);
                this.remaining = this.remaining.saturating_sub(part.len() as u64);
                return Poll::Ready(Some(Ok(Frame::data(part))));
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

/// Room for this many fields in a response's header map. hyper parses a connection's next request head
/// into the (cleared) header map of the response it wrote last, growing it to the request's field count
/// first; the MCP headers make a request of 7 to 10 fields, which outgrow a map sized for the three or
/// four fields of an answer, so every keep-alive request paid a reallocation of that map. A map made with
/// this room up front spares it (the answer's own fields need one allocation either way).
pub(crate) const HEADER_ROOM: usize = 12;

/// A response over `body` whose header map has [`HEADER_ROOM`].
pub(crate) fn with_header_room(body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    *response.headers_mut() = HeaderMap::with_capacity(HEADER_ROOM);
    response
}

/// `application/json; charset=utf-8` (http-mcp.md §4.2, §10.1).
pub const JSON_UTF8: &str = "application/json; charset=utf-8";

/// The fixed bodies of the router and the health endpoints (http-mcp.md §3, §4.1, §4.3), and of the
/// method check on `/mcp` (http-mcp.md §6.1). All are deterministic JSON (http-mcp.md §1).
pub mod bodies {
    /// `GET /health/live` (http-mcp.md §4.3).
    pub const LIVE: &str = r#"{"status":"live"}"#;
    /// `GET /health/ready`, domain ready (http-mcp.md §4.3).
    pub const READY: &str = r#"{"status":"ready"}"#;
    /// `GET /health/ready`, domain not ready (http-mcp.md §4.3).
    pub const NOT_READY: &str = r#"{"status":"not_ready"}"#;
    /// A target not in origin form (http-mcp.md §3.1) or a failed authority check (http-mcp.md §4.1).
    pub const INVALID_AUTHORITY: &str = r#"{"status":"invalid_authority"}"#;
    /// Not a health path (http-mcp.md §4.1).
    pub const NOT_FOUND: &str = r#"{"status":"not_found"}"#;
    /// Not `GET` on a health path (http-mcp.md §4.1); 31 bytes, the `content-length` of a `HEAD` refusal
    /// (http-mcp.md §12.3 row 3).
    pub const METHOD_NOT_ALLOWED: &str = r#"{"status":"method_not_allowed"}"#;
    /// Not `POST` on `/mcp` (http-mcp.md §6.1).
    pub const MCP_METHOD_NOT_ALLOWED: &str = r#"{"error":"method_not_allowed"}"#;
}

/// A fixed JSON answer with the headers of http-mcp.md §4.2 / §10.1.
///
/// `allow` is the `allow` header of a 405; `close` adds `connection: close`, which hyper then honours by
/// closing the connection after the response (http-mcp.md §2.5: a body was left unread).
pub fn fixed_json(
    status: StatusCode,
    body: &'static str,
    allow: Option<&'static str>,
    close: bool,
) -> Response<ResponseBody> {
    let mut response = with_header_room(full(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_UTF8));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(allow) = allow {
        headers.insert(ALLOW, HeaderValue::from_static(allow));
    }
    if close {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The status of an empty-body refusal of a parser limit (http-mcp.md §2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyBodyStatus {
    /// 400: syntax or body framing.
    BadRequest,
    /// 414: the request line is longer than 8,192 bytes.
    UriTooLong,
    /// 431: a field line longer than 8,192 bytes, or more than 64 field lines.
    HeaderFieldsTooLarge,
}

impl EmptyBodyStatus {
    /// The status code.
    pub fn status(self) -> StatusCode {
        match self {
            EmptyBodyStatus::BadRequest => StatusCode::BAD_REQUEST,
            EmptyBodyStatus::UriTooLong => StatusCode::URI_TOO_LONG,
            EmptyBodyStatus::HeaderFieldsTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        }
    }

    /// The whole response, byte for byte, as the connection layer writes it itself when a head guard
    /// refused a request that hyper never parsed: the status line, `content-length: 0` and
    /// `connection: close`, no `content-type`, no body (http-mcp.md §2.4).
    pub fn wire_bytes(self) -> &'static [u8] {
        match self {
            EmptyBodyStatus::BadRequest => {
                b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            }
            EmptyBodyStatus::UriTooLong => {
                b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            }
            EmptyBodyStatus::HeaderFieldsTooLarge => {
                b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_bodies_have_their_spec_lengths() {
        // http-mcp.md §12.3 row 3: the HEAD refusal announces the length of the GET refusal's body.
        assert_eq!(bodies::METHOD_NOT_ALLOWED.len(), 31);
        assert_eq!(bodies::MCP_METHOD_NOT_ALLOWED.len(), 30);
        for body in [
            bodies::LIVE,
            bodies::READY,
            bodies::NOT_READY,
            bodies::INVALID_AUTHORITY,
            bodies::NOT_FOUND,
            bodies::METHOD_NOT_ALLOWED,
            bodies::MCP_METHOD_NOT_ALLOWED,
        ] {
            let parsed: serde_json::Value = serde_json::from_str(body).unwrap();
            assert_eq!(serde_json::to_string(&parsed).unwrap(), body, "deterministic JSON");
        }
    }

    #[test]
    fn fixed_json_headers_are_exact() {
        type Expected<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Option<&'static str>, bool, Expected)] = &[
            (None, false, &[("cache-control", "no-store"), ("content-type", JSON_UTF8)]),
            (
                Some("GET"),
                true,
                &[
                    ("allow", "GET"),
                    ("cache-control", "no-store"),
                    ("connection", "close"),
                    ("content-type", JSON_UTF8),
                ],
            ),
        ];
        for (allow, close, expected) in cases {
            let response = fixed_json(StatusCode::METHOD_NOT_ALLOWED, bodies::NOT_FOUND, *allow, *close);
            let mut got: Vec<(String, String)> = response
                .headers()
                .iter()
                .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
                .collect();
            got.sort();
            let expected: Vec<(String, String)> =
                expected.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn empty_body_refusals_are_exact() {
        let cases = [
            (EmptyBodyStatus::BadRequest, 400, "HTTP/1.1 400 Bad Request\r\n"),
            (EmptyBodyStatus::UriTooLong, 414, "HTTP/1.1 414 URI Too Long\r\n"),
            (EmptyBodyStatus::HeaderFieldsTooLarge, 431, "HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        ];
        for (refusal, code, line) in cases {
            assert_eq!(refusal.status().as_u16(), code);
            let text = std::str::from_utf8(refusal.wire_bytes()).unwrap();
            assert_eq!(text, format!("{line}content-length: 0\r\nconnection: close\r\n\r\n"));
        }
    }
}
