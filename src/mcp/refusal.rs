//! The fixed answers of the transport checks M2–M9 on `/mcp` (http-mcp.md §5, §6, §10.1):
//! `{"error":"<code>"}` bodies, their statuses and extra headers.
//!
//! Owns the closed set of transport refusals and their exact bytes. Every one of them is written before
//! the body was read to the end (or after it failed to read), so each carries `connection: close` when a
//! body was declared (http-mcp.md §2.5); the answers of the body read (http-mcp.md §6.9) always close. It
//! does not own JSON-RPC bodies (`rpc`) or the method check (http-mcp.md §6.1,
//! `crate::http::mcp::method_rule`).

use hyper::header::{HeaderValue, WWW_AUTHENTICATE};
use hyper::{Response, StatusCode};

use crate::http::response::{fixed_json, ResponseBody};

/// A refusal of a transport check (http-mcp.md §6.2–§6.9) that answers with a fixed body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Header size (http-mcp.md §6.2): 431 `request_headers_too_large`.
    HeadersTooLarge,
    /// Authority (http-mcp.md §6.3): 400 `invalid_authority`.
    InvalidAuthority,
    /// Origin (http-mcp.md §6.4): 403 `origin_forbidden`.
    OriginForbidden,
    /// Bearer (http-mcp.md §6.5): 401 `unauthorized`, `www-authenticate: Bearer`.
    Unauthorized,
    /// Content-Type (http-mcp.md §6.6): 415 `unsupported_media_type`.
    UnsupportedMediaType,
    /// Accept (http-mcp.md §6.7): 406 `not_acceptable`.
    NotAcceptable,
    /// Body read (http-mcp.md §6.9): 413 `request_too_large`.
    RequestTooLarge,
    /// Body read (http-mcp.md §6.9): 408 `request_timeout`.
    RequestTimeout,
    /// Body read (http-mcp.md §6.9): 400 `request_invalid`.
    RequestInvalid,
}

impl Refusal {
    /// The status (http-mcp.md §5).
    pub fn status(self) -> StatusCode {
        match self {
            Refusal::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Refusal::InvalidAuthority | Refusal::RequestInvalid => StatusCode::BAD_REQUEST,
            Refusal::OriginForbidden => StatusCode::FORBIDDEN,
            Refusal::Unauthorized => StatusCode::UNAUTHORIZED,
            Refusal::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Refusal::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
            Refusal::RequestTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
        }
    }

    /// The closed code inside the body (`unauthorized` for `{"error":"unauthorized"}`), named by the refusal
    /// line (http-mcp.md §5.1).
    pub fn code(self) -> &'static str {
        match self {
            Refusal::HeadersTooLarge => "request_headers_too_large",
            Refusal::InvalidAuthority => "invalid_authority",
            Refusal::OriginForbidden => "origin_forbidden",
            Refusal::Unauthorized => "unauthorized",
            Refusal::UnsupportedMediaType => "unsupported_media_type",
            Refusal::NotAcceptable => "not_acceptable",
            Refusal::RequestTooLarge => "request_too_large",
            Refusal::RequestTimeout => "request_timeout",
            Refusal::RequestInvalid => "request_invalid",
        }
    }

    /// The exact body (http-mcp.md §5), deterministic JSON.
    pub fn body(self) -> &'static str {
        match self {
            Refusal::HeadersTooLarge => r#"{"error":"request_headers_too_large"}"#,
            Refusal::InvalidAuthority => r#"{"error":"invalid_authority"}"#,
            Refusal::OriginForbidden => r#"{"error":"origin_forbidden"}"#,
            Refusal::Unauthorized => r#"{"error":"unauthorized"}"#,
            Refusal::UnsupportedMediaType => r#"{"error":"unsupported_media_type"}"#,
            Refusal::NotAcceptable => r#"{"error":"not_acceptable"}"#,
            Refusal::RequestTooLarge => r#"{"error":"request_too_large"}"#,
            Refusal::RequestTimeout => r#"{"error":"request_timeout"}"#,
            Refusal::RequestInvalid => r#"{"error":"request_invalid"}"#,
        }
    }

    /// The body-read refusals always close (http-mcp.md §6.9: the body was not read to its end); the earlier
    /// ones close when a body was declared (http-mcp.md §2.5).
    fn always_closes(self) -> bool {
        matches!(self, Refusal::RequestTooLarge | Refusal::RequestTimeout | Refusal::RequestInvalid)
    }

    /// The whole answer with the headers of http-mcp.md §10.1 and the step's extra header.
    pub fn response(self, body_declared: bool) -> Response<ResponseBody> {
        let close = body_declared || self.always_closes();
        let mut response = fixed_json(self.status(), self.body(), None, close);
        if self == Refusal::Unauthorized {
            // http-mcp.md §6.5 rule 6: exactly `Bearer`, no parameters.
            response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_exact() {
        let all = [
            (Refusal::HeadersTooLarge, 431),
            (Refusal::InvalidAuthority, 400),
            (Refusal::OriginForbidden, 403),
            (Refusal::Unauthorized, 401),
            (Refusal::UnsupportedMediaType, 415),
            (Refusal::NotAcceptable, 406),
            (Refusal::RequestTooLarge, 413),
            (Refusal::RequestTimeout, 408),
            (Refusal::RequestInvalid, 400),
        ];
        for (refusal, status) in all {
            assert_eq!(refusal.status().as_u16(), status, "{refusal:?}");
            let parsed: serde_json::Value = serde_json::from_str(refusal.body()).unwrap();
            assert_eq!(serde_json::to_string(&parsed).unwrap(), refusal.body());
            assert_eq!(parsed["error"], refusal.code(), "{refusal:?}");
            let response = refusal.response(false);
            let closes = response.headers().get("connection").is_some();
            assert_eq!(closes, refusal.always_closes(), "{refusal:?}");
            assert!(refusal.response(true).headers().get("connection").is_some());
            let www = response.headers().get("www-authenticate").map(|v| v.as_bytes().to_vec());
            assert_eq!(www.as_deref(), (refusal == Refusal::Unauthorized).then_some(&b"Bearer"[..]));
        }
    }
}
