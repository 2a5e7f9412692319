//! One admitted call from its input contract check (http-mcp.md §8.5) to the release of its run slot
//! (execution.md §2–§10).
//!
//! Owns the order: the input check, the reservation, the commit, activation only after a complete commit,
//! heartbeats after every 5,000 ms of silence, cancellation when the client is gone or the drain cuts off,
//! the deadline, classification, result validation, publication within 10,000 ms, and the release order of
//! execution.md §10 (run settled → audit record durable → message written, abandoned or skipped → run slot →
//! request lease). The settle path after the run (the outcome table, the audit, the trace's end) is
//! `settle`, shared with the PCC front. It does not own the application runtime (`runner`), the result
//! shapes (`result`), the stream's mechanics (`stream`) or the audit's durability (`crate::audit`).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use ptc_actors::{Lease, Refusal};
use tokio::time::Instant as TokioInstant;

use super::outcome::{fixed_text, Dispatch, Outcome};
use super::result::{message_event, success_response, tool_error_response};
use super::runner::Ran;
use super::settle::{self, Client, Ending, Render, Settled};
use super::stream::{self, StreamWriter, HEARTBEAT};
use super::{trace, Shared};
use crate::apps::ServedTool;
use crate::audit::CallId;
use crate::config::manifest::Effect;
use crate::http::response::ResponseBody;
use crate::mcp::call::AdmittedCall;
use crate::mcp::leased::hold_until_written;
use crate::mcp::rpc::{RequestId, RpcError};
use crate::providers::trace::TraceId;
use crate::support::fault::{self, FaultPoint};
use crate::traces::RunFiles;

/// execution.md §5.1: a heartbeat after this much silence.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_millis(5_000);
/// execution.md §4.2 and §9: the commit and the message event must be written within this.
pub const WRITE_BOUND: Duration = Duration::from_millis(10_000);

/// What the driver learned about one call; the audit hook and the event log read it (issue 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settlement {
    pub outcome: Outcome,
    pub dispatch: Dispatch,
    /// The client was found gone after the commit and before the message event was written
    /// (execution.md §6.4).
    pub disconnected: bool,
}

/// Answers one admitted call, from its input contract check on.
pub fn answer(shared: &Arc<Shared>, call: AdmittedCall) -> hyper::Response<ResponseBody> {
    let progress = call.progress.clone();
    let template = call.tool.clone();
    // The input contract (execution.md §3.1): invalid input is committed and answered without a run slot,
    // even while every slot is used.
    if !template.input.is_valid(&call.arguments) {
        let (response, mut writer) = stream::open(progress, call.http10);
        let queued = stream::queue_commit(&mut writer);
        let text = fixed_text(template.effect, Dispatch::False, Outcome::InvalidInput);
        let event = message_event(&tool_error_response(&call.id, text, None));
        tokio::spawn(publish_only(writer, queued, event, call.lease));
        return response;
    }
    // A write tool is served only with its audit (config.md: `private_audit` is present iff a tool may
    // write); without a committer its result could not be made durable first (config.md §10).
    if template.effect == Effect::Write && shared.audit.is_none() {
        return refuse(RpcError::Unavailable, call);
    }
    // Run admission (execution.md §3.3): one slot, at once, or a refusal with the id; the body was read, so
    // no close.
    let run = match shared.runs.try_reserve() {
        Ok(run) => run,
        Err(Refusal::Exhausted) => return refuse(RpcError::RunCapacityExhausted, call),
        Err(Refusal::Quiescing | Refusal::Unavailable) => return refuse(RpcError::Unavailable, call),
    };
    let deadline = Instant::now() + Duration::from_millis(template.run_duration_ms);
    // execution.md §3.4: the call id and the trace id, after the granted reservation and before the
    // commit; then the run's artifacts (traces.md §4.2), whose failure refuses the call before it runs.
    let (call_id, trace_id) = (CallId::random(), TraceId::fresh());
    let start = trace::Start {
        tool: &call.tool,
        front: trace::Front::Mcp,
        call_id: &call_id,
        trace_id: &trace_id,
        deadline_ms: template.run_duration_ms,
        input: &call.arguments,
    };
    let Ok(traced) = trace::reserve(shared, start) else {
        drop(run);
        return refuse(RpcError::ArtifactUnavailable, call);
    };
    let (response, mut writer) = stream::open(progress, call.http10);
    // Queued now, so the comment leaves with the head; the run still waits until it was written.
    let queued = stream::queue_commit(&mut writer);
    let shared = shared.clone();
    // Linked to the run-admission owner: a panic of this task anywhere is that owner's loss
    // (lifecycle.md §6.3), even one that left the call unanswered.
    let owner = shared.run_owner.clone();
    drop(owner.spawn_linked(async move {
        let AdmittedCall { tool, arguments, id, lease, .. } = call;
        let call = Call { tool: &tool, id: &id, call_id, trace_id, traced, run: &run, deadline };
        let settlement = drive(&shared, call, arguments, queued, writer).await;
        tracing::debug!(
            outcome = settlement.outcome.as_str(),
            dispatch = settlement.dispatch.as_str(),
            "call ended"
        );
        // execution.md §10: the run slot after the message; the request lease when the exchange ends.
        drop(run);
        drop(lease);
    }));
    response
}

/// A JSON-RPC refusal with the call's id; the body was read, so the connection stays open, and the
/// request lease is held until the answer is written (http-mcp.md §5).
fn refuse(error: RpcError, call: AdmittedCall) -> hyper::Response<ResponseBody> {
    let response = error.response(Some(&call.id), false);
    hold_until_written(response, call.lease)
}

/// The invalid-input path (execution.md §3.1, §4.3): commit, the event, the end; nothing was dispatched.
async fn publish_only(
    mut writer: StreamWriter,
    queued: Result<(), stream::Gone>,
    event: String,
    lease: Lease,
) {
    let written = tokio::time::timeout(WRITE_BOUND, async {
        queued?;
        stream::committed(&mut writer).await?;
        writer.finish_with(Bytes::from(event)).await
    })
    .await;
    if written.is_err() {
        writer.abandon();
    }
    drop(lease);
}

/// What identifies one reserved call while it is driven.
struct Call<'a> {
    /// The served tool, resolved by the front.
    tool: &'a ServedTool,
    /// The JSON-RPC id (published, never audited).
    id: &'a RequestId,
    /// The audit's call id (audited, never published; execution.md §3.4).
    call_id: CallId,
    /// execution.md §3.4: a `/mcp` call's trace id is 16 fresh random bytes.
    trace_id: TraceId,
    /// The call's trace and inspection files (traces.md), each when configured.
    traced: RunFiles,
    /// The run slot, held until this call is done (execution.md §10).
    run: &'a Lease,
    deadline: Instant,
}

/// Commit, run, classify, audit and publish one call that holds a run slot.
async fn drive(
    shared: &Arc<Shared>,
    call: Call<'_>,
    arguments: serde_json::Value,
    queued: Result<(), stream::Gone>,
    mut writer: StreamWriter,
) -> Settlement {
    let Call { tool, id, call_id, trace_id, traced, run, deadline } = call;
    // execution.md §4.2: nothing runs before the commit is written; a failed or late commit dispatches
    // nothing.
    let committed = async {
        queued?;
        stream::committed(&mut writer).await
    };
    match tokio::time::timeout(WRITE_BOUND, committed).await {
        Ok(Ok(())) => {}
        Ok(Err(stream::Gone)) | Err(_) => {
            writer.abandon();
            // audit-events.md §3.5: a commit that could not be written counts as publication_failed.
            shared.events.publication_failed(tool.index());
            let ended = trace::Ended {
                outcome: Outcome::PublicationFailed,
                dispatch: Dispatch::False,
                disconnected: true,
                why: None,
                published: trace::Published::default(),
            };
            trace::end(shared, tool, traced, ended);
            return Settlement {
                outcome: Outcome::PublicationFailed,
                dispatch: Dispatch::False,
                disconnected: true,
            };
        }
    }
    let started_at = SystemTime::now();
    let activation = shared.runner.activate(tool, arguments, deadline, trace_id, &traced);
    let watched = settle::guarded(watch_run(activation, &mut writer, run, deadline)).await;
    let (ran, disconnected) = watched.unwrap_or_else(|| (Ran::Lost, writer.is_gone()));
    // execution.md §5.2: found gone before classification: cancelled, and nothing is written.
    let client = Client { stopped: disconnected, disconnected };
    let ending = Ending { tool, id, call_id, started_at, traced };
    let Settled { outcome, dispatch, response, audit_lost } =
        settle::settle(shared, ending, ran, client, &McpShapes).await;
    if audit_lost {
        // execution.md §10 "Audit failure": nothing is published (the stream closes without a message event).
        writer.abandon();
        return Settlement { outcome, dispatch, disconnected };
    }
    if disconnected {
        return Settlement { outcome, dispatch, disconnected };
    }
    let published = tokio::time::timeout(WRITE_BOUND, async {
        if fault::injected(FaultPoint::PublicationWrite) {
            return Err(stream::Gone);
        }
        writer.finish_with(Bytes::from(message_event(&response))).await
    })
    .await;
    if matches!(published, Ok(Ok(()))) {
        return Settlement { outcome, dispatch, disconnected: false };
    }
    // execution.md §9: a failed or late publication closes the connection; the outcome is publication_failed
    // unless cleanup_failed or cancelled applied already.
    writer.abandon();
    // audit-events.md §3.5: counted also when cleanup_failed or cancelled keeps the outcome.
    shared.events.publication_failed(tool.index());
    Settlement { outcome: outcome.strongest(Outcome::PublicationFailed), dispatch, disconnected: true }
}

/// Waits for the run to settle while writing heartbeats, cancelling it when the client is gone, the
/// deadline passes or the drain cuts off (execution.md §5). Returns how it settled and whether the client was
/// found gone.
async fn watch_run(
    activation: super::runner::Activation,
    writer: &mut StreamWriter,
    run: &Lease,
    deadline: Instant,
) -> (Ran, bool) {
    let super::runner::Activation { mut settled, cancel } = activation;
    let mut disconnected = false;
    let mut cancelled = false;
    let mut silent_since = TokioInstant::now();
    let deadline = TokioInstant::from_std(deadline);
    loop {
        let heartbeat_due = silent_since + HEARTBEAT_INTERVAL;
        tokio::select! {
            ran = &mut settled => return (ran, disconnected),
            _ = writer.gone(), if !disconnected => {
                disconnected = true;
                cancel();
            }
            _ = run.cancelled(), if !cancelled => {
                cancelled = true;
                cancel();
            }
            _ = tokio::time::sleep_until(deadline), if !cancelled => {
                // The runtime checks the deadline itself; this covers a run waiting outside Luau.
                cancelled = true;
                cancel();
            }
            _ = tokio::time::sleep_until(heartbeat_due), if !disconnected => {
                // execution.md §5.1–§5.2: check the client before the heartbeat; heartbeats go on while a
                // cancelled run settles.
                if writer.is_gone() || writer.send(Bytes::from_static(HEARTBEAT)).await.is_err() {
                    disconnected = true;
                    cancel();
                }
                silent_since = TokioInstant::now();
            }
        }
    }
}

/// The `/mcp` shapes of the settled call's response (execution.md §8).
struct McpShapes;

impl Render for McpShapes {
    fn success(&self, id: &RequestId, value: serde_json::Value) -> Option<String> {
        success_response(id, value).ok()
    }

    fn tool_error(&self, id: &RequestId, text: &str, detail: Option<&str>, _: Outcome) -> String {
        tool_error_response(id, text, detail)
    }
}
