//! Fixed responses of the HTTP front (http-mcp.md §1 "Fixed bodies", §2.5, §4.2).
//!
//! Every answer built here carries exactly the headers the spec names: `content-type`,
//! `cache-control: no-store`, framing, optional `connection: close`, and for 405 the `allow` header.
//! Nothing adds `server`, CORS or session headers.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Response, StatusCode};

/// The body type of every response of the front (a fixed body now, an event stream for `tools/call`).
pub type ResponseBody = BoxBody<Bytes, Infallible>;

/// `application/json; charset=utf-8` (http-mcp.md §4.2).
pub const JSON_UTF8: &str = "application/json; charset=utf-8";

/// A fixed JSON answer. `close` adds `connection: close` (http-mcp.md §2.5: a body was left unread).
pub fn fixed_json(
    status: StatusCode,
    body: &'static str,
    allow: Option<&'static str>,
    close: bool,
) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_UTF8));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
    if let Some(allow) = allow {
        headers.insert(ALLOW, HeaderValue::from_static(allow));
    }
    if close {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
