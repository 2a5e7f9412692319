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

use crate::json::encode::{write_integer, write_string};
use crate::json::write_deterministic;

use super::failure::{CallFailure, Dispatch, FailureClass};
pub use super::inspect::Inspect;
use super::listing::Era;
use super::negotiate::{modern_meta, MODERN};
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

/// The `tools/call` request line for `id` (providers.md §8.1 step 6), written directly: the same bytes as
/// `DJ` (pins.md §2) of the message `{id, jsonrpc, method, params: call_params(…)}`, without building that
/// message as maps first. The members are written in their byte order: `id` < `jsonrpc` < `method` <
/// `params`; `_meta` < `arguments` < `name`; the three `io.modelcontextprotocol/…` keys of
/// `negotiate::modern_meta` (in that function's order) < `traceparent`.
pub(crate) fn call_line(
    id: u64,
    era: Era,
    version: &str,
    name: &str,
    arguments: &Value,
    traceparent: &str,
) -> Vec<u8> {
    let mut out = String::with_capacity(CALL_LINE_CAPACITY);
    out.push_str(r#"{"id":"#);
    write_integer(&mut out, i128::from(id));
    out.push_str(r#","jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"#);
    if era == Era::Modern {
        out.push_str(
            r#""io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"ptc-gateway","version":"#,
        );
        write_string(&mut out, version);
        out.push_str(r#"},"io.modelcontextprotocol/protocolVersion":"#);
        write_string(&mut out, MODERN);
        out.push(',');
    }
    out.push_str(r#""traceparent":"#);
    write_string(&mut out, traceparent);
    out.push_str(r#"},"arguments":"#);
    write_deterministic(&mut out, arguments);
    out.push_str(r#","name":"#);
    write_string(&mut out, name);
    out.push_str("}}");
    out.into_bytes()
}

/// Room for a small call's line in one allocation (the modern `_meta` and traceparent alone take about
/// 250 bytes).
const CALL_LINE_CAPACITY: usize = 512;

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
    let line = |id| {
        call_line(id, request.era, request.version, request.name, &request.arguments, request.traceparent)
    };
    let pending = match transport.send_line_reserved(slot, false, request.inspect, line) {
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
#[path = "provider_call_tests.rs"]
mod tests;
