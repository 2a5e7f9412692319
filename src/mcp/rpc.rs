//! JSON-RPC answers of `/mcp` (http-mcp.md §5, §7.2, §10.1, §11): the request id, the closed set of error
//! codes with their exact messages and statuses, and the bytes of a response.
//!
//! Owns the wire form of every JSON-RPC body the HTTP front writes, so that each code, message, status and
//! `data` member is written in exactly one place. It does not decide *when* an error applies (the
//! validation steps do) and does not own the fixed `{"error":"<code>"}` bodies of M1–M9.

use bytes::Bytes;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONNECTION, CONTENT_TYPE};
use hyper::{Response, StatusCode};

use crate::http::response::{full, ResponseBody, JSON_UTF8};
use crate::json::{write_deterministic, Map, Value};

/// The largest JSON response body ever sent (http-mcp.md §10.1); a larger one becomes 500 `-32603`.
pub const MAX_RESPONSE_BYTES: usize = 4_194_304;

/// http-mcp.md §7.2: a string id has 1 to 256 UTF-8 bytes.
pub const MAX_STRING_ID_BYTES: usize = 256;
/// http-mcp.md §7.2: an integer id lies within ±(2^53 − 1).
pub const MAX_INTEGER_ID: i64 = 9_007_199_254_740_991;

/// A validated request id (http-mcp.md §7.2), echoed in every later answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestId {
    /// An integer written without fraction or exponent, within ±(2^53 − 1); `-0` is `0`.
    Integer(i64),
    /// A string of 1 to 256 UTF-8 bytes.
    String(String),
}

impl RequestId {
    /// The id of a decoded `id` member, or `None` when the member is not a valid id (http-mcp.md §7.2):
    /// `null`, booleans, floats (`1.0`, `1e3`), the empty string, a string over 256 bytes, integers beyond
    /// ±(2^53 − 1), objects and arrays.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::Integer(i) => {
                let i = i64::try_from(*i).ok()?;
                (i.abs() <= MAX_INTEGER_ID).then_some(RequestId::Integer(i))
            }
            Value::String(s) if !s.is_empty() && s.len() <= MAX_STRING_ID_BYTES => {
                Some(RequestId::String(s.clone()))
            }
            _ => None,
        }
    }

    /// The id as a JSON value, in the form it is echoed.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Integer(i) => Value::Integer(i128::from(*i)),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }
}

/// Every JSON-RPC error the HTTP front emits (http-mcp.md §11). The set is closed: a code not listed here
/// is never written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RpcError {
    /// M10: the body is not strict JSON within the request limits.
    ParseError,
    /// M11: not a JSON-RPC request object, or an invalid id.
    InvalidRequest,
    /// M12: `params` or `_meta` missing or malformed (HTTP 400).
    InvalidMeta,
    /// M16 and C2: bad method parameters or an unknown tool (HTTP 200).
    InvalidParams,
    /// M13, C1, C3: a header disagrees with the body.
    HeaderMismatch,
    /// M14: a protocol version other than `2026-07-28`; carries the requested string as sent.
    UnsupportedProtocolVersion { requested: String },
    /// M15: any method but the three served ones.
    MethodNotFound,
    /// M8: every request lease is held.
    RequestCapacityExhausted,
    /// C6: every run slot is in use.
    RunCapacityExhausted,
    /// M8 (owner gone), M17 and C4 (not ready or fenced), C6 (unavailable or undecided).
    Unavailable,
    /// A gateway defect before the commit, or a JSON response over 4,194,304 bytes.
    Internal,
}

/// The only protocol version served (http-mcp.md §7.5).
pub const PROTOCOL_VERSION: &str = "2026-07-28";

impl RpcError {
    /// The JSON-RPC code (http-mcp.md §11).
    pub fn code(&self) -> i64 {
        match self {
            RpcError::ParseError => -32700,
            RpcError::InvalidRequest => -32600,
            RpcError::InvalidMeta | RpcError::InvalidParams => -32602,
            RpcError::HeaderMismatch => -32020,
            RpcError::UnsupportedProtocolVersion { .. } => -32022,
            RpcError::MethodNotFound => -32601,
            RpcError::RequestCapacityExhausted | RpcError::RunCapacityExhausted => -31999,
            RpcError::Unavailable => -31998,
            RpcError::Internal => -32603,
        }
    }

    /// The exact message (http-mcp.md §11).
    pub fn message(&self) -> &'static str {
        match self {
            RpcError::ParseError => "Parse error",
            RpcError::InvalidRequest => "Invalid Request",
            RpcError::InvalidMeta | RpcError::InvalidParams => "Invalid params",
            RpcError::HeaderMismatch => "Header mismatch",
            RpcError::UnsupportedProtocolVersion { .. } => "Unsupported protocol version",
            RpcError::MethodNotFound => "Method not found",
            RpcError::RequestCapacityExhausted | RpcError::RunCapacityExhausted => "Server busy",
            RpcError::Unavailable => "Server unavailable",
            RpcError::Internal => "Internal error",
        }
    }

    /// The HTTP status the error is answered with (http-mcp.md §5, §11).
    pub fn status(&self) -> StatusCode {
        match self {
            RpcError::ParseError
            | RpcError::InvalidRequest
            | RpcError::InvalidMeta
            | RpcError::HeaderMismatch
            | RpcError::UnsupportedProtocolVersion { .. } => StatusCode::BAD_REQUEST,
            RpcError::InvalidParams => StatusCode::OK,
            RpcError::MethodNotFound => StatusCode::NOT_FOUND,
            RpcError::RequestCapacityExhausted | RpcError::RunCapacityExhausted => {
                StatusCode::TOO_MANY_REQUESTS
            }
            RpcError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            RpcError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The `data` member, when the code has one (http-mcp.md §11).
    pub fn data(&self) -> Option<Value> {
        let mut data = Map::new();
        match self {
            RpcError::UnsupportedProtocolVersion { requested } => {
                data.insert("requested".into(), Value::String(requested.clone()));
                data.insert("supported".into(), Value::Array(vec![Value::from(PROTOCOL_VERSION)]));
            }
            RpcError::RequestCapacityExhausted => {
                data.insert("reason".into(), Value::from("request_capacity_exhausted"));
            }
            RpcError::RunCapacityExhausted => {
                data.insert("reason".into(), Value::from("run_capacity_exhausted"));
            }
            _ => return None,
        }
        Some(Value::Object(data))
    }

    /// The deterministic JSON body: `{"error":{"code":…,"data":…,"message":…},"id":…,"jsonrpc":"2.0"}`,
    /// without `id` when `id` is `None`.
    pub fn body(&self, id: Option<&RequestId>) -> String {
        let mut error = Map::new();
        error.insert("code".into(), Value::Integer(i128::from(self.code())));
        if let Some(data) = self.data() {
            error.insert("data".into(), data);
        }
        error.insert("message".into(), Value::from(self.message()));
        let mut response = Map::new();
        response.insert("error".into(), Value::Object(error));
        if let Some(id) = id {
            response.insert("id".into(), id.to_value());
        }
        response.insert("jsonrpc".into(), Value::from("2.0"));
        let mut out = String::new();
        write_deterministic(&mut out, &Value::Object(response));
        out
    }

    /// The whole answer with the JSON response headers of http-mcp.md §10.1; `close` adds `connection: close`
    /// (an unread body, http-mcp.md §2.5).
    pub fn response(&self, id: Option<&RequestId>, close: bool) -> Response<ResponseBody> {
        json_response(self.status(), self.body(id), close)
    }
}

/// `{"id":<id>,"jsonrpc":"2.0","result":<result_json>}`, where `result_json` is already deterministic
/// JSON (the static listing is encoded once at startup, http-mcp.md §10.3).
pub fn result_body(id: &RequestId, result_json: &str) -> String {
    let mut out = String::with_capacity(result_json.len() + 48);
    out.push_str("{\"id\":");
    write_deterministic(&mut out, &id.to_value());
    out.push_str(",\"jsonrpc\":\"2.0\",\"result\":");
    out.push_str(result_json);
    out.push('}');
    out
}

/// A JSON answer with the headers of http-mcp.md §10.1. A body over [`MAX_RESPONSE_BYTES`] is never
/// sent: the caller must check first (see [`result_response`]).
pub fn json_response(status: StatusCode, body: String, close: bool) -> Response<ResponseBody> {
    let mut response = Response::new(full(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_UTF8));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if close {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A 200 result answer, or the 500 `-32603` of http-mcp.md §10.1 when the body would exceed 4,194,304 bytes.
pub fn result_response(id: &RequestId, result_json: &str) -> Response<ResponseBody> {
    let body = result_body(id, result_json);
    if body.len() > MAX_RESPONSE_BYTES {
        return RpcError::Internal.response(Some(id), false);
    }
    json_response(StatusCode::OK, body, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_are_exact() {
        let one = RequestId::Integer(1);
        let cases: &[(RpcError, Option<&RequestId>, u16, &str)] = &[
            (
                RpcError::ParseError,
                None,
                400,
                r#"{"error":{"code":-32700,"message":"Parse error"},"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::InvalidRequest,
                Some(&one),
                400,
                r#"{"error":{"code":-32600,"message":"Invalid Request"},"id":1,"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::InvalidMeta,
                Some(&one),
                400,
                r#"{"error":{"code":-32602,"message":"Invalid params"},"id":1,"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::InvalidParams,
                Some(&one),
                200,
                r#"{"error":{"code":-32602,"message":"Invalid params"},"id":1,"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::HeaderMismatch,
                Some(&one),
                400,
                r#"{"error":{"code":-32020,"message":"Header mismatch"},"id":1,"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::UnsupportedProtocolVersion { requested: "2025-11-25".into() },
                Some(&one),
                400,
                r#"{"error":{"code":-32022,"data":{"requested":"2025-11-25","supported":["2026-07-28"]},"message":"Unsupported protocol version"},"id":1,"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::MethodNotFound,
                Some(&one),
                404,
                r#"{"error":{"code":-32601,"message":"Method not found"},"id":1,"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::RequestCapacityExhausted,
                None,
                429,
                r#"{"error":{"code":-31999,"data":{"reason":"request_capacity_exhausted"},"message":"Server busy"},"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::RunCapacityExhausted,
                Some(&one),
                429,
                r#"{"error":{"code":-31999,"data":{"reason":"run_capacity_exhausted"},"message":"Server busy"},"id":1,"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::Unavailable,
                None,
                503,
                r#"{"error":{"code":-31998,"message":"Server unavailable"},"jsonrpc":"2.0"}"#,
            ),
            (
                RpcError::Internal,
                None,
                500,
                r#"{"error":{"code":-32603,"message":"Internal error"},"jsonrpc":"2.0"}"#,
            ),
        ];
        for (error, id, status, body) in cases {
            assert_eq!(error.status().as_u16(), *status, "{error:?}");
            assert_eq!(error.body(*id), *body, "{error:?}");
        }
    }

    #[test]
    fn id_vectors() {
        // http-mcp.md §7.2 and §12.7 rows 109–118.
        let s = |s: &str| Value::String(s.into());
        let cases: Vec<(Value, Option<RequestId>)> = vec![
            (Value::Integer(1), Some(RequestId::Integer(1))),
            (Value::Integer(9_007_199_254_740_991), Some(RequestId::Integer(9_007_199_254_740_991))),
            (Value::Integer(-9_007_199_254_740_991), Some(RequestId::Integer(-9_007_199_254_740_991))),
            (Value::Integer(9_007_199_254_740_992), None),
            (Value::Integer(-9_007_199_254_740_992), None),
            (Value::Integer(18_446_744_073_709_551_615), None),
            (Value::Float(1.0), None),
            (Value::Null, None),
            (Value::Bool(true), None),
            (s(""), None),
            (s(&"x".repeat(256)), Some(RequestId::String("x".repeat(256)))),
            (s(&"x".repeat(257)), None),
            (s(&"é".repeat(128)), Some(RequestId::String("é".repeat(128)))),
            (s(&"é".repeat(129)), None),
            (Value::Array(vec![]), None),
            (Value::Object(Map::new()), None),
        ];
        for (value, expected) in cases {
            assert_eq!(RequestId::from_value(&value), expected, "{value:?}");
        }
    }

    #[test]
    fn results_echo_the_id() {
        assert_eq!(result_body(&RequestId::Integer(-7), "{}"), r#"{"id":-7,"jsonrpc":"2.0","result":{}}"#);
        assert_eq!(
            result_body(&RequestId::String("a\"b".into()), "{}"),
            r#"{"id":"a\"b","jsonrpc":"2.0","result":{}}"#
        );
    }
}
