//! The hand-over of an admitted `tools/call` from the front to execution (http-mcp.md §5, §8.5, §8.6;
//! execution.md §1 "Call").
//!
//! Owns only the contract between the two: what the front has established when it hands a call over
//! (the checks of http-mcp.md §8.1–§8.4 passed: known tool, headers matched, domain ready) and what
//! execution must do with it (the input contract and run admission of http-mcp.md §8.5–§8.6, the commit and
//! the event stream, or a 429/503 JSON-RPC refusal with the id). Keeping it a trait lets the front be tested
//! without the runtime and the runtime without HTTP.

use ptc_actors::Lease;
use serde_json::Value;

use crate::apps::ServedTool;
use crate::http::mcp::ResponseFuture;
use crate::mcp::rpc::{RequestId, RpcError};

/// A `tools/call` that passed the front's checks (http-mcp.md §8.1–§8.4).
pub struct AdmittedCall {
    /// The served tool, resolved by the tool lookup (http-mcp.md §8.2).
    pub tool: ServedTool,
    /// The raw `arguments` object, `{}` when the member was absent (http-mcp.md §7.7).
    pub arguments: Value,
    /// The validated request id, echoed in the response.
    pub id: RequestId,
    /// The request lease of request admission (http-mcp.md §6.8). Execution holds it until the exchange ends:
    /// the JSON answer is written, or the event stream has ended or the connection is gone (http-mcp.md §5,
    /// last paragraph).
    pub lease: Lease,
    /// The request was HTTP/1.0: the stream is delimited by closing the connection (execution.md §4.1).
    pub http10: bool,
    /// The connection's flush counter (`crate::http::progress`), taken from the request extensions, so
    /// that execution knows when the commit and the message event were written (execution.md §4.2, §9).
    pub progress: Option<std::sync::Arc<crate::http::progress::WriteProgress>>,
}

/// Runs admitted calls from the input contract check on (execution.md §3–§10).
pub trait CallExecutor: Send + Sync + 'static {
    /// Answers one admitted call: a committed `200 text/event-stream` response, or the JSON-RPC refusal of
    /// run admission (http-mcp.md §8.6: 429 `run_capacity_exhausted`, 503 `-31998`) with the call's id.
    fn execute(&self, call: AdmittedCall) -> ResponseFuture<'_>;
}

/// The executor used before execution exists: every admitted call is refused 503 `-31998` with its id,
/// which no client can mistake for a result.
pub struct Unavailable;

impl CallExecutor for Unavailable {
    fn execute(&self, call: AdmittedCall) -> ResponseFuture<'_> {
        let answer = RpcError::Unavailable.response(Some(&call.id), false);
        drop(call.lease);
        Box::pin(std::future::ready(answer))
    }
}
