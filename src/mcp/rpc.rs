//! JSON-RPC answers of `/mcp` (http-mcp.md §5, §7.2, §10.1, §11): the request id, the closed set of error
//! codes with their exact messages and statuses, and the bytes of a response.
//!
//! Owns the wire form of every JSON-RPC body the HTTP front writes, so that each code, message, status and
//! `data` member is written in exactly one place. It does not decide *when* an error applies (the
//! validation steps do) and does not own the fixed `{"error":"<code>"}` bodies of
//! the transport checks (http-mcp.md §6).

use bytes::Bytes;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONNECTION, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde_json::{Map, Value};

use crate::http::response::{full, two_parts, with_header_room, ResponseBody, JSON_UTF8};
use crate::json::encode::{write_integer, write_string};
use crate::json::write_deterministic;

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
            Value::Number(n) => {
                // A float token has no `i64`; neither has an integer above `i64::MAX`. `unsigned_abs`,
                // because `i64::MIN.abs()` overflows.
                let i = n.as_i64()?;
                (i.unsigned_abs() <= MAX_INTEGER_ID.unsigned_abs()).then_some(RequestId::Integer(i))
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
            RequestId::Integer(i) => Value::from(*i),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }
}

/// Every JSON-RPC error the HTTP front emits (http-mcp.md §11). The set is closed: a code not listed here
/// is never written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RpcError {
    /// Strict JSON (http-mcp.md §7.1): the body is not strict JSON within the request limits.
    ParseError,
    /// Envelope (http-mcp.md §7.2): not a JSON-RPC request object, or an invalid id.
    InvalidRequest,
    /// `_meta` (http-mcp.md §7.3): `params` or `_meta` missing or malformed (HTTP 400).
    InvalidMeta,
    /// Bad method parameters or an unknown tool (HTTP 200; http-mcp.md §7.7, §8.2).
    InvalidParams,
    /// A header disagrees with the body: protocol version, method, `Mcp-Name` or `Mcp-Param-*`
    /// (http-mcp.md §7.4, §8.1, §8.3).
    HeaderMismatch,
    /// Protocol version (http-mcp.md §7.5): a protocol version other than `2026-07-28`; carries the requested
    /// string as sent.
    UnsupportedProtocolVersion { requested: String },
    /// Method (http-mcp.md §7.6): any method but the three served ones.
    MethodNotFound,
    /// Request admission (http-mcp.md §6.8): every request lease is held.
    RequestCapacityExhausted,
    /// Run admission (http-mcp.md §8.6): every run slot is in use.
    RunCapacityExhausted,
    /// Unavailable: request admission's owner gone (http-mcp.md §6.8), not ready or fenced
    /// (http-mcp.md §7.8, §8.4), run admission unavailable or undecided (http-mcp.md §8.6).
    Unavailable,
    /// Run admission (http-mcp.md §8.6): the run's artifacts could not be reserved, the process being out of
    /// descriptors (traces.md §4.2).
    ArtifactUnavailable,
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
            RpcError::Unavailable | RpcError::ArtifactUnavailable => -31998,
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
            RpcError::Unavailable | RpcError::ArtifactUnavailable => "Server unavailable",
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
            RpcError::Unavailable | RpcError::ArtifactUnavailable => StatusCode::SERVICE_UNAVAILABLE,
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
            RpcError::ArtifactUnavailable => {
                data.insert("reason".into(), Value::from("artifact_unavailable"));
            }
            _ => return None,
        }
        Some(Value::Object(data))
    }

    /// The deterministic JSON body: `{"error":{"code":…,"data":…,"message":…},"id":…,"jsonrpc":"2.0"}`,
    /// without `id` when `id` is `None`.
    pub fn body(&self, id: Option<&RequestId>) -> String {
        let mut error = Map::new();
        error.insert("code".into(), Value::from(self.code()));
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
/// sent: the caller must check first (see [`StaticResult::response`]).
pub fn json_response(status: StatusCode, body: String, close: bool) -> Response<ResponseBody> {
    with_json_headers(status, full(Bytes::from(body)), close)
}

fn with_json_headers(status: StatusCode, body: ResponseBody, close: bool) -> Response<ResponseBody> {
    let mut response = with_header_room(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_UTF8));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if close {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The 200 answer of a method whose result is the same for the whole run: `server/discover`
/// (http-mcp.md §10.2) and `tools/list` (http-mcp.md §10.3, encoded once at startup). Only the id varies,
/// and in the deterministic encoding it is the first member, so everything after it is encoded once here
/// and an answer is `{"id":` and the id, followed by those shared bytes. Per request nothing is built or
/// encoded but the id, and the result is not copied. The bytes equal [`result_body`]'s for every id.
#[derive(Clone, Debug)]
pub(crate) struct StaticResult {
    /// `,"jsonrpc":"2.0","result":<result>}`.
    tail: Bytes,
}

/// What every result answer starts with (http-mcp.md §10.1: `"id"` sorts before `"jsonrpc"`).
const ID_HEAD: &str = "{\"id\":";

impl StaticResult {
    /// Over `result_json`, already deterministic JSON.
    pub(crate) fn new(result_json: &str) -> StaticResult {
        let mut tail = String::with_capacity(result_json.len() + 28);
        tail.push_str(",\"jsonrpc\":\"2.0\",\"result\":");
        tail.push_str(result_json);
        tail.push('}');
        StaticResult { tail: Bytes::from(tail) }
    }

    /// The answer to a request with `id`, or the 500 `-32603` of http-mcp.md §10.1 when the body would
    /// exceed 4,194,304 bytes (unreachable for a listing bounded at startup).
    pub(crate) fn response(&self, id: &RequestId) -> Response<ResponseBody> {
        let mut head = String::with_capacity(ID_HEAD.len() + 24);
        head.push_str(ID_HEAD);
        write_id(&mut head, id);
        if head.len().saturating_add(self.tail.len()) > MAX_RESPONSE_BYTES {
            return RpcError::Internal.response(Some(id), false);
        }
        with_json_headers(StatusCode::OK, two_parts(Bytes::from(head), self.tail.clone()), false)
    }
}

/// Appends the id's deterministic JSON (pins.md §2) without building a [`Value`]: the same bytes as
/// `write_deterministic(out, &id.to_value())`.
fn write_id(out: &mut String, id: &RequestId) {
    match id {
        // An `i64`'s `Display` is the `i128` one of pins.md §2.2 for the same number.
        RequestId::Integer(i) => write_integer(out, i128::from(*i)),
        RequestId::String(s) => write_string(out, s),
    }
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
            (Value::from(1), Some(RequestId::Integer(1))),
            (Value::from(9_007_199_254_740_991i64), Some(RequestId::Integer(9_007_199_254_740_991))),
            (Value::from(-9_007_199_254_740_991i64), Some(RequestId::Integer(-9_007_199_254_740_991))),
            (Value::from(9_007_199_254_740_992i64), None),
            (Value::from(-9_007_199_254_740_992i64), None),
            (Value::from(18_446_744_073_709_551_615u64), None),
            (Value::from(i64::MIN), None),
            (Value::from(1.0), None),
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

    /// The ids of the table below: every form http-mcp.md §7.2 admits, at and near its bounds, and strings
    /// with each escape of pins.md §2.4 and raw non-ASCII.
    fn id_table() -> Vec<RequestId> {
        let s = |s: &str| RequestId::String(s.into());
        vec![
            RequestId::Integer(0),
            RequestId::Integer(1),
            RequestId::Integer(-1),
            RequestId::Integer(42),
            RequestId::Integer(-7_000_000_000),
            RequestId::Integer(MAX_INTEGER_ID),
            RequestId::Integer(-MAX_INTEGER_ID),
            RequestId::Integer(i64::MAX),
            RequestId::Integer(i64::MIN),
            s("a"),
            s("1"),
            s("null"),
            s("a\"b"),
            s("back\\slash"),
            s("\"\\\"\\"),
            s("line\nfeed\ttab\rreturn\u{8}back\u{c}form"),
            s("\u{0}\u{1}\u{1f}\u{7f}"),
            s("/slash/"),
            s("é日本語😀"),
            s(&"x".repeat(MAX_STRING_ID_BYTES)),
            s(&"é".repeat(MAX_STRING_ID_BYTES / 2)),
            s(&"\u{0}".repeat(MAX_STRING_ID_BYTES)),
        ]
    }

    async fn collect(response: Response<ResponseBody>) -> (u16, Option<u64>, Vec<(String, String)>, Vec<u8>) {
        use http_body_util::BodyExt;
        use hyper::body::Body;
        let status = response.status().as_u16();
        let exact = response.body().size_hint().exact();
        let mut headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
            .collect();
        headers.sort();
        let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
        (status, exact, headers, body)
    }

    /// http-mcp.md §10.1–§10.3: the answer spliced from bytes encoded once is byte for byte the answer built
    /// per request, for every id form: the same bytes as [`result_body`], and as the whole response encoded
    /// as one JSON tree; the same status and headers; an exact length for `content-length`.
    #[tokio::test]
    async fn a_static_result_equals_the_full_build_for_every_id() {
        use crate::apps::catalog::{self, ListingTool};
        use crate::config::manifest::Effect;
        use crate::json::{decode, to_deterministic_string, Limits};

        let schema =
            decode(br#"{"properties":{"q":{"type":"string"}},"type":"object"}"#, Limits::REQUEST).unwrap();
        let tools = [
            ListingTool {
                name: "alpha",
                title: "Alpha \"quoted\"",
                description: "Line one.\nLine two, with a backslash \\ and é.",
                input_schema: &schema,
                output_schema: &schema,
                effect: Effect::Read,
            },
            ListingTool {
                name: "beta",
                title: "Beta",
                description: "日本語",
                input_schema: &schema,
                output_schema: &schema,
                effect: Effect::Write,
            },
        ];
        let listing = catalog::build(&tools).unwrap();
        let results = ["{}", listing.result_json()];
        for result_json in results {
            let cached = StaticResult::new(result_json);
            let result = decode(result_json.as_bytes(), Limits::REQUEST).unwrap();
            for id in id_table() {
                let mut tree = Map::new();
                tree.insert("id".into(), id.to_value());
                tree.insert("jsonrpc".into(), Value::from("2.0"));
                tree.insert("result".into(), result.clone());
                let full = to_deterministic_string(&Value::Object(tree));
                assert_eq!(result_body(&id, result_json), full, "{id:?}");
                let built = collect(json_response(StatusCode::OK, full.clone(), false)).await;
                let spliced = collect(cached.response(&id)).await;
                assert_eq!(String::from_utf8(spliced.3.clone()).unwrap(), full, "{id:?}");
                assert_eq!(spliced, built, "{id:?}");
                assert_eq!(spliced.1, Some(full.len() as u64), "{id:?}: exact length");
            }
        }
    }

    /// http-mcp.md §10.1: a body of exactly 4,194,304 bytes is sent; one byte more is the 500 `-32603`
    /// with the id.
    #[tokio::test]
    async fn a_static_result_over_the_response_bound_is_an_internal_error() {
        let id = RequestId::Integer(1);
        // `{"id":1` + `,"jsonrpc":"2.0","result":` + result + `}`.
        let envelope = 7 + 26 + 1;
        let sized = |len: usize| format!("\"{}\"", "x".repeat(len - envelope - 2));
        let at = collect(StaticResult::new(&sized(MAX_RESPONSE_BYTES)).response(&id)).await;
        assert_eq!((at.0, at.1, at.3.len()), (200, Some(MAX_RESPONSE_BYTES as u64), MAX_RESPONSE_BYTES));
        let over = collect(StaticResult::new(&sized(MAX_RESPONSE_BYTES + 1)).response(&id)).await;
        assert_eq!(over.0, 500);
        assert_eq!(
            String::from_utf8(over.3).unwrap(),
            r#"{"error":{"code":-32603,"message":"Internal error"},"id":1,"jsonrpc":"2.0"}"#
        );
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
