//! Classification of one `request_body` (pcc.md §6, the last rows of pcc.md §5.2): size, strict decoding,
//! batch, and the request / notification / response envelope with its id.
//!
//! Owns only the shape of the message; what a method does in a state is `crate::pcc::stream`.

use serde_json::{Map, Value};

use crate::json::{decode, Limits};
use crate::mcp::rpc::RequestId;
use crate::pcc::wire::PccError;

/// pcc.md §14: a larger `request_body` is -32600 `request_too_large`.
pub const MAX_REQUEST_BODY_BYTES: usize = 2_097_152;

/// One classified inbound JSON-RPC message.
#[derive(Debug, PartialEq)]
pub enum Inbound {
    Request {
        id: RequestId,
        method: String,
        params: Option<Map<String, Value>>,
    },
    Notification {
        method: String,
        params: Option<Map<String, Value>>,
    },
    /// A JSON-RPC response: ignored (the gateway never sends requests).
    Response,
}

/// Classifies `body` (the raw bytes of `request_body`, see `crate::pcc::proto::served`), or the error to
/// answer (with the id when one was determined). The size is judged before the text: a too-large body
/// is `request_too_large` whatever it holds (pcc.md §5.2 row order); invalid UTF-8 is `-32700` like any other
/// text the strict decoder refuses (pcc.md §6).
pub fn classify(body: &[u8]) -> Result<Inbound, (PccError, Option<RequestId>)> {
    if body.len() > MAX_REQUEST_BODY_BYTES {
        return Err((PccError::RequestTooLarge, None));
    }
    let value = decode(body, Limits::REQUEST).map_err(|_| (PccError::ParseError, None))?;
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => return Err((PccError::BatchUnsupported, None)),
        _ => return Err((PccError::InvalidEnvelope, None)),
    };
    let invalid = |id: Option<RequestId>| (PccError::InvalidEnvelope, id);
    let id = match object.get("id") {
        Some(raw) => Some(RequestId::from_value(raw).ok_or_else(|| invalid(None))?),
        None => None,
    };
    if object.get("jsonrpc") != Some(&Value::from("2.0")) {
        return Err(invalid(id));
    }
    if let Some(method) = object.get("method") {
        let Value::String(method) = method else { return Err(invalid(id)) };
        let allowed = |k: &str| matches!(k, "jsonrpc" | "id" | "method" | "params");
        if !object.keys().all(|k| allowed(k)) {
            return Err(invalid(id));
        }
        let params = match object.get("params") {
            None => None,
            Some(Value::Object(params)) => Some(params.clone()),
            Some(_) => return Err(invalid(id)),
        };
        let method = method.clone();
        return Ok(match id {
            Some(id) => Inbound::Request { id, method, params },
            None => Inbound::Notification { method, params },
        });
    }
    // A response: `id`, and exactly one of `result` and `error`, nothing else.
    let has_result = object.contains_key("result");
    let has_error = object.contains_key("error");
    let allowed = |k: &str| matches!(k, "jsonrpc" | "id" | "result" | "error");
    if id.is_some() && has_result != has_error && object.keys().all(|k| allowed(k)) {
        return Ok(Inbound::Response);
    }
    Err(invalid(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_vectors() {
        use PccError::*;
        let errors: Vec<(&[u8], PccError, Option<RequestId>)> = vec![
            (b"{", ParseError, None),
            // pcc.md §5.2: invalid UTF-8 text is a parse error, in a string and outside one.
            (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}", ParseError, None),
            (b"\xc3\x28", ParseError, None),
            (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xed\xa0\x80\"}", ParseError, None),
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}"#, ParseError, None),
            (br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, BatchUnsupported, None),
            (br#"{"jsonrpc":"2.0","id":"","method":"ping"}"#, InvalidEnvelope, None),
            (br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, InvalidEnvelope, None),
            (br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, InvalidEnvelope, None),
            (br#"{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}"#, InvalidEnvelope, None),
            (br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, InvalidEnvelope, Some(RequestId::Integer(1))),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1}"#,
                InvalidEnvelope,
                Some(RequestId::Integer(1)),
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}"#,
                InvalidEnvelope,
                Some(RequestId::Integer(1)),
            ),
            (br#"{"jsonrpc":"2.0","id":1,"method":7}"#, InvalidEnvelope, Some(RequestId::Integer(1))),
            (
                br#"{"jsonrpc":"2.0","id":5,"result":{},"error":{}}"#,
                InvalidEnvelope,
                Some(RequestId::Integer(5)),
            ),
            (br#"{"jsonrpc":"2.0","result":{}}"#, InvalidEnvelope, None),
            (b"7", InvalidEnvelope, None),
        ];
        for (body, error, id) in errors {
            assert_eq!(classify(body), Err((error, id)), "{}", String::from_utf8_lossy(body));
        }
        let big = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"s":"{}"}}}}"#, "a".repeat(2_097_152));
        assert_eq!(classify(big.as_bytes()), Err((RequestTooLarge, None)));
        // The size is judged first, whatever the bytes are.
        assert_eq!(classify(&vec![0xff; MAX_REQUEST_BODY_BYTES + 1]), Err((RequestTooLarge, None)));
        assert_eq!(classify(br#"{"jsonrpc":"2.0","id":5,"result":{}}"#), Ok(Inbound::Response));
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Inbound::Notification { method: "notifications/initialized".into(), params: None })
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}"#),
            Ok(Inbound::Request {
                id: RequestId::String("a".into()),
                method: "ping".into(),
                params: Some(Map::new())
            })
        );
    }
}

#[cfg(test)]
#[path = "envelope_props.rs"]
mod props;
