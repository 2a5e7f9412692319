//! One provider call on a stdio acquisition (providers.md §8.1 steps 4, 6–8; providers.md §11 trace context):
//! forms the era's `tools/call` message, waits with the call's deadline and cancellation, and classifies the
//! answer.
//!
//! This file does not resolve aliases or grants (providers.md §8.1 step 1, the mission layer), does not run
//! provider-call admission (providers.md §9) and does not compute the deadline from the run (the caller
//! passes it).

use std::future::Future;

use tokio::time::Instant;

use super::failure::{CallFailure, Dispatch, FailureClass};
use super::listing::Era;
use super::negotiate::modern_meta;
use super::result::{classify, CallError, CallSuccess};
use super::transport::{InflightSlot, Settlement, StdioTransport, Waited};
use crate::json::{Map, Value};

/// What the caller supplies.
pub struct CallRequest<'a> {
    pub era: Era,
    pub version: &'a str,
    /// The upstream tool name.
    pub name: &'a str,
    pub arguments: Value,
    /// `00-<trace>-<parent>-01` (providers.md §11), minted by the caller per provider call.
    pub traceparent: &'a str,
    pub deadline: Instant,
    pub max_result_bytes: u64,
}

/// The outcome: the result, plus the settlement of a detached request the run must await
/// (providers.md §10.3).
pub struct CallOutcome {
    pub result: Result<CallSuccess, CallError>,
    pub settlement: Option<Settlement>,
}

fn failure(failure: CallFailure) -> Result<CallSuccess, CallError> {
    Err(CallError { failure, tool_content: None })
}

/// The `params` of `tools/call` for the era (providers.md §8.1 step 6).
pub fn call_params(era: Era, version: &str, name: &str, arguments: Value, traceparent: &str) -> Value {
    let mut meta = match era {
        Era::Modern => modern_meta(version),
        Era::Legacy => Map::new(),
    };
    meta.insert("traceparent".to_owned(), Value::String(traceparent.to_owned()));
    let mut params = Map::new();
    params.insert("_meta".to_owned(), Value::Object(meta));
    params.insert("arguments".to_owned(), arguments);
    params.insert("name".to_owned(), Value::String(name.to_owned()));
    Value::Object(params)
}

/// Issue one `tools/call` and wait for it (providers.md §8.1).
pub async fn call(
    transport: &StdioTransport,
    request: CallRequest<'_>,
    cancel: impl Future<Output = ()>,
) -> CallOutcome {
    match transport.reserve() {
        Ok(slot) => call_reserved(transport, slot, request, cancel).await,
        Err(refused) => CallOutcome { result: failure(refused), settlement: None },
    }
}

/// [`call`] with an in-flight slot reserved earlier (before provider-call admission, providers.md §8.1 steps
/// 4–5).
pub async fn call_reserved(
    transport: &StdioTransport,
    slot: InflightSlot,
    request: CallRequest<'_>,
    cancel: impl Future<Output = ()>,
) -> CallOutcome {
    if !matches!(request.arguments, Value::Object(_)) {
        let invalid = CallFailure::new(FailureClass::McpRequestInvalid, Dispatch::False);
        return CallOutcome { result: failure(invalid), settlement: None };
    }
    let params =
        call_params(request.era, request.version, request.name, request.arguments, request.traceparent);
    let pending = match transport.send_reserved(slot, "tools/call", Some(params), false) {
        Ok(pending) => pending,
        Err(refused) => return CallOutcome { result: failure(refused), settlement: None },
    };
    match transport.wait(pending, request.deadline, cancel).await {
        Waited::Answered(reply) => CallOutcome {
            result: classify(reply.message, reply.size, request.max_result_bytes),
            settlement: None,
        },
        Waited::Failed(failed) => CallOutcome { result: failure(failed), settlement: None },
        Waited::Detached(failed, settlement) => {
            CallOutcome { result: failure(failed), settlement: Some(settlement) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_deterministic_string;

    #[test]
    fn call_messages_are_byte_exact() {
        let args = Value::Object(Map::new());
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let cases = [
            (
                Era::Legacy,
                r#"{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"arguments":{},"name":"echo"}"#,
            ),
            (
                Era::Modern,
                r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"ptc-gateway","version":"v"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"arguments":{},"name":"echo"}"#,
            ),
        ];
        for (era, expected) in cases {
            assert_eq!(to_deterministic_string(&call_params(era, "v", "echo", args.clone(), tp)), expected);
        }
    }
}
