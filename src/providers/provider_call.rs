//! One provider call on a stdio acquisition (providers.md §8.1 steps 4, 6–8; providers.md §11 trace context):
//! forms the era's `tools/call` message, waits with the call's deadline and cancellation, and classifies the
//! answer.
//!
//! This file does not resolve aliases or grants (providers.md §8.1 step 1, the mission layer), does not run
//! provider-call admission (providers.md §9) and does not compute the deadline from the run (the caller
//! passes it).

use std::future::Future;

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::failure::{CallFailure, Dispatch, FailureClass};
pub use super::inspect::Inspect;
use super::listing::Era;
use super::negotiate::modern_meta;
use super::result::{classify, CallError, CallSuccess};
use super::transport::{InflightSlot, Settlement, StdioTransport, Waited};

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
    /// The run's inspection file, when inspection is configured.
    pub inspect: Option<Inspect<'a>>,
}

/// The outcome: the result, plus the settlement of a detached request the run must await
/// (providers.md §10.3).
pub struct CallOutcome {
    pub result: Result<CallSuccess, CallError>,
    pub settlement: Option<Settlement>,
    /// The JSON-RPC id of the `tools/call` request once it was handed to the transport (the trace's
    /// `request_id`, traces.md §5.4); `None` when it was refused before.
    pub request_id: Option<u64>,
}

impl CallOutcome {
    /// An outcome without a request sent.
    pub fn unsent(result: Result<CallSuccess, CallError>) -> CallOutcome {
        CallOutcome { result, settlement: None, request_id: None }
    }

    /// The same outcome, for the request `id`.
    pub fn for_request(self, id: u64) -> CallOutcome {
        CallOutcome { request_id: Some(id), ..self }
    }
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
        Err(refused) => CallOutcome::unsent(failure(refused)),
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
        return CallOutcome::unsent(failure(invalid));
    }
    let params =
        call_params(request.era, request.version, request.name, request.arguments, request.traceparent);
    let pending = match transport.send_reserved(slot, "tools/call", Some(params), false, request.inspect) {
        Ok(pending) => pending,
        Err(refused) => return CallOutcome::unsent(failure(refused)),
    };
    let id = pending.id();
    let outcome = match transport.wait(pending, request.deadline, cancel).await {
        Waited::Answered(reply) => {
            if let Some(inspect) = request.inspect {
                inspect.file.response(inspect.provider, id, None, &reply.raw);
            }
            CallOutcome::unsent(classify(reply.message, reply.size, request.max_result_bytes))
        }
        Waited::Failed(failed) => CallOutcome::unsent(failure(failed)),
        Waited::Detached(failed, settlement) => {
            CallOutcome { result: failure(failed), settlement: Some(settlement), request_id: None }
        }
    };
    outcome.for_request(id)
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
