//! One admitted call from C5 to the release of its run slot (execution.md §2–§10).
//!
//! Owns the order: the input check, the reservation, the commit, activation only after a complete commit,
//! heartbeats after every 5,000 ms of silence, cancellation when the client is gone or the drain cuts off,
//! the deadline, classification, result validation, publication within 10,000 ms, and the release order of
//! execution.md §10 (run settled → audit record durable → message written, abandoned or skipped → run slot →
//! request lease). It does not own the application runtime (`runner`), the result shapes (`result`), the
//! stream's mechanics (`stream`) or the audit's durability (`crate::audit`).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use ptc_actors::{Lease, Refusal};
use tokio::time::Instant as TokioInstant;

use super::outcome::{fixed_text, Dispatch, Outcome};
use super::result::{message_event, success_response, tool_error_response};
use super::runner::Ran;
use super::stream::{self, StreamWriter, HEARTBEAT};
use super::{trace, Shared};
use crate::audit::{AuditRecord, CallId};
use crate::config::manifest::Effect;
use crate::fault::{self, FaultPoint};
use crate::http::response::ResponseBody;
use crate::mcp::call::AdmittedCall;
use crate::mcp::leased::hold_until_written;
use crate::mcp::rpc::{RequestId, RpcError};
use crate::providers::trace::TraceId;
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

/// Answers one admitted call (C5 onward).
pub fn answer(shared: &Arc<Shared>, call: AdmittedCall) -> hyper::Response<ResponseBody> {
    let progress = call.progress.clone();
    let Some(template) = shared.built.templates.get(call.tool) else {
        return refuse(RpcError::Internal, call);
    };
    // C5 (execution.md §3.1): invalid input is committed and answered without a run slot, even while every
    // slot is used.
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
    // C6 (execution.md §3.3): one slot, at once, or a refusal with the id; the body was read, so no close.
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
        tool: call.tool,
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
        let call = Call { tool, id: &id, call_id, trace_id, traced, run: &run, deadline };
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
    /// The template index.
    tool: usize,
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
            shared.events.publication_failed(tool);
            trace::end(shared, tool, traced, Outcome::PublicationFailed, Dispatch::False, true);
            return Settlement {
                outcome: Outcome::PublicationFailed,
                dispatch: Dispatch::False,
                disconnected: true,
            };
        }
    }
    let started_at = SystemTime::now();
    let activation = shared.runner.activate(&shared.built, tool, arguments, deadline, trace_id, &traced);
    // execution.md §6.2: a panic of the run's part of this task (outside the Luau call, which has its
    // own guard) is a run lost before it settled; this task, the call's owner, still answers it.
    let watched = std::panic::AssertUnwindSafe(async {
        let watched = watch_run(activation, &mut writer, run, deadline).await;
        if fault::injected(FaultPoint::PanicInRun) {
            panic!("injected fault: a panic in a run task outside Luau");
        }
        watched
    });
    let (ran, disconnected) = match futures::FutureExt::catch_unwind(watched).await {
        Ok(watched) => watched,
        Err(_panic) => (Ran::Lost, writer.is_gone()),
    };
    let classified = classify(shared, tool, id, ran);
    if classified.outcome == Outcome::InternalError {
        // execution.md §6.2: a run lost before it settled fences run admission (its owner's loss) before
        // anything is released.
        shared.run_owner.report_lost_work();
    }
    let Classified { outcome, dispatch, response } = classified;
    // execution.md §5.2: found gone before classification: cancelled, and nothing is written.
    let outcome = if disconnected { outcome.strongest(Outcome::Cancelled) } else { outcome };
    // execution.md §10: a dispatched write call's record is durable before anything is published. The run
    // slot is still held (the caller releases it after this returns).
    let audited = audit(shared, tool, call_id, started_at, outcome, dispatch, disconnected).await;
    // traces.md §5.5: after the audit record is durable, before the message is published.
    trace::end(shared, tool, traced, outcome, dispatch, disconnected);
    if let Err(AuditLost) = audited {
        // execution.md §10 "Audit failure": nothing is published (the stream closes without a message event);
        // the committer already stopped the domain (exit 70), and the slot is never handed to new work.
        shared.runs.fence();
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
    shared.events.publication_failed(tool);
    Settlement { outcome: outcome.strongest(Outcome::PublicationFailed), dispatch, disconnected: true }
}

/// The record could not be made durable.
pub(crate) struct AuditLost;

/// Writes the audit record of a dispatched write call and waits until it is durable (audit-events.md
/// audit-events.md §2.2); read tools and undispatched calls are not audited.
pub(crate) async fn audit(
    shared: &Shared,
    tool: usize,
    call_id: CallId,
    started_at: SystemTime,
    outcome: Outcome,
    dispatch: Dispatch,
    disconnected: bool,
) -> Result<(), AuditLost> {
    let Some(template) = shared.built.templates.get(tool) else { return Ok(()) };
    if template.effect != Effect::Write || dispatch == Dispatch::False {
        return Ok(());
    }
    let Some(log) = &shared.audit else { return Err(AuditLost) };
    let record = AuditRecord {
        call_id,
        tool_name: template.name.clone(),
        started_at,
        outcome,
        dispatch,
        disconnected,
    };
    log.record(&record).await.map_err(|_| AuditLost)
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

/// The classified call: outcome, dispatch, and the JSON-RPC response to publish.
struct Classified {
    outcome: Outcome,
    dispatch: Dispatch,
    response: String,
}

/// execution.md §6 and §8: from how the run settled to the outcome and its response.
fn classify(shared: &Shared, tool: usize, id: &RequestId, ran: Ran) -> Classified {
    let Some(template) = shared.built.templates.get(tool) else {
        return failure(Effect::Read, id, Outcome::InternalError, Dispatch::Unknown, None);
    };
    let effect = template.effect;
    match ran {
        Ran::Returned(value) => {
            // execution.md §8 step 3, then step 4.
            if !template.result.is_valid(&value) {
                return failure(effect, id, Outcome::InvalidResult, Dispatch::True, None);
            }
            match success_response(id, value) {
                Ok(response) => Classified { outcome: Outcome::Success, dispatch: Dispatch::True, response },
                Err(_) => failure(effect, id, Outcome::InvalidResult, Dispatch::True, None),
            }
        }
        Ran::NotConvertible => failure(effect, id, Outcome::InvalidResult, Dispatch::True, None),
        Ran::Failed { detail } => {
            failure(effect, id, Outcome::ExecutionFailed, Dispatch::True, detail.as_deref())
        }
        Ran::Cancelled => failure(effect, id, Outcome::Cancelled, Dispatch::True, None),
        Ran::Lost => failure(effect, id, Outcome::InternalError, Dispatch::Unknown, None),
        Ran::CleanupFailed => failure(effect, id, Outcome::CleanupFailed, Dispatch::Unknown, None),
    }
}

fn failure(
    effect: Effect,
    id: &RequestId,
    outcome: Outcome,
    dispatch: Dispatch,
    detail: Option<&str>,
) -> Classified {
    let response = tool_error_response(id, fixed_text(effect, dispatch, outcome), detail);
    Classified { outcome, dispatch, response }
}
