//! The fixed messages the stdio transport writes on its own (providers.md §4.3, §10.1): the cancellation
//! of an abandoned request and the replies to server requests; and the generic request line
//! (providers.md §8.1 step 6) that every request but `tools/call` uses.
//!
//! Pure encoders, and why a wait was abandoned ([`AbandonReason`], the cancellation's `reason`); the
//! transports (`transport.rs`, `http/transport.rs`) decide when to write them.

use super::failure::FailureClass;
use crate::json;
use serde_json::{Map, Value};

/// Why a wait ended without an answer (providers.md §10.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbandonReason {
    Timeout,
    Cancelled,
}

impl AbandonReason {
    pub(crate) fn wire(self) -> &'static str {
        match self {
            AbandonReason::Timeout => "timeout",
            AbandonReason::Cancelled => "cancelled",
        }
    }

    pub(crate) fn class(self) -> FailureClass {
        match self {
            AbandonReason::Timeout => FailureClass::McpTimeout,
            AbandonReason::Cancelled => FailureClass::McpCancelled,
        }
    }
}

/// One JSON-RPC request of `method` (`id` absent: a notification) with optional `params` (absent: no
/// `params` member, the legacy first `tools/list`, providers.md §7.2), `DJ` of the message (pins.md §2):
/// the stdio transport's request lines and the HTTP transport's bodies.
pub(crate) fn message(id: Option<u64>, method: &str, params: Option<Value>) -> Vec<u8> {
    let mut message = Map::new();
    if let Some(id) = id {
        message.insert("id".to_owned(), Value::from(id));
    }
    message.insert("jsonrpc".to_owned(), Value::String("2.0".to_owned()));
    message.insert("method".to_owned(), Value::String(method.to_owned()));
    if let Some(params) = params {
        message.insert("params".to_owned(), params);
    }
    json::to_deterministic(&Value::Object(message))
}

pub(crate) fn cancellation_line(id: u64, reason: AbandonReason) -> Vec<u8> {
    let mut params = Map::new();
    params.insert("reason".to_owned(), Value::String(reason.wire().to_owned()));
    params.insert("requestId".to_owned(), Value::from(id));
    let mut message = Map::new();
    message.insert("jsonrpc".to_owned(), Value::String("2.0".to_owned()));
    message.insert("method".to_owned(), Value::String("notifications/cancelled".to_owned()));
    message.insert("params".to_owned(), Value::Object(params));
    json::to_deterministic(&Value::Object(message))
}

pub(crate) fn server_reply(id: Value, method: &str) -> Vec<u8> {
    let mut message = Map::new();
    message.insert("id".to_owned(), id);
    message.insert("jsonrpc".to_owned(), Value::String("2.0".to_owned()));
    if method == "ping" {
        message.insert("result".to_owned(), Value::Object(Map::new()));
    } else {
        // The gateway declares no client capabilities (providers.md §4.3).
        let mut error = Map::new();
        error.insert("code".to_owned(), Value::from(-32601));
        error.insert("message".to_owned(), Value::String("Method not found".to_owned()));
        message.insert("error".to_owned(), Value::Object(error));
    }
    json::to_deterministic(&Value::Object(message))
}
