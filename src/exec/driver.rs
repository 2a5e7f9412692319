//! One admitted call from its input contract check (http-mcp.md §8.5) to the release of its run slot
//! (execution.md §2–§10).
//!
//! Owns the order: the input check, the reservation, the commit, activation only after a complete commit
//! (or with it, for a provider-free run whose commit `commit` holds back, execution.md §4.5),
//! heartbeats after every 5,000 ms of silence, cancellation when the client is gone or the drain cuts off,
//! the deadline, classification, result validation, publication within 10,000 ms, and the release order of
//! execution.md §10 (run settled → audit record durable → message written, abandoned or skipped → run slot →
//! request lease). The settle path after the run (the outcome table, the audit, the trace's end) is
//! `settle`, shared with the PCC front. It does not own the application runtime (`runner`), the result
//! shapes (`result`), the stream's mechanics (`stream`) or the audit's durability (`crate::audit`).

use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use ptc_actors::{Lease, Refusal};
use tokio::sync::oneshot;
use tokio::time::Instant as TokioInstant;

use super::commit::{Head, GROUPING_HOLD};
use super::outcome::{fixed_text, Dispatch, Outcome};
use super::result::{message_event, success_response, tool_error_response};
use super::runner::{Activation, Ran};
use super::settle::{self, Client, Ending, Render, Settled};
use super::stream::{self, StreamWriter, HEARTBEAT};
use super::{trace, Shared};
use crate::apps::ServedTool;
use crate::audit::CallId;
use crate::config::manifest::Effect;
use crate::http::response::ResponseBody;
use crate::http::soon::within;
use crate::http::timer_floor;
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

/// Answers one admitted call, from its input contract check on. The response goes to hyper once its
/// commit may be written: at once, or, for a provider-free run, after the run's first slice
/// (execution.md §4.5).
pub async fn answer(shared: &Arc<Shared>, call: AdmittedCall) -> hyper::Response<ResponseBody> {
    // The input contract (execution.md §3.1): invalid input is committed and answered without a run slot,
    // even while every slot is used.
    if !call.tool.input.is_valid(&call.arguments) {
        return answer_invalid_input(call);
    }
    let template = call.tool.clone();
    let run = match reserve_run(shared, &template) {
        Ok(run) => run,
        Err(error) => return refuse(error, call),
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
    let (response, mut writer) = stream::open(call.progress.clone(), call.http10);
    // execution.md §4.5: a provider-free run's commit is held back while the run takes its first slice;
    // any other commit is queued now, so it leaves with the head, and the run waits until it was written.
    let (head, released) = if shared.runner.provider_free(&template) {
        let (head, released) = Head::held();
        (head, Some(released))
    } else {
        (Head::queued(&mut writer), None)
    };
    // Requests in flight, this one included, read before the call moves into its future: the inline first
    // poll of `launch` is for a call served alone (see there).
    let served_alone = call.lease.pool().in_use() <= 1;
    let reserved = Reserved { call_id, trace_id, traced, run, deadline };
    // Boxed once here: the call's future is large (the run's watch, the settle path), and a task that is
    // spawned with it inline copies its whole state on the way into the task (issue 27).
    let calling: Calling = Box::pin(call_task(shared.clone(), call, reserved, head, writer));
    launch(shared, calling, released, served_alone).await;
    response
}

/// The invalid-input answer (execution.md §3.1, §4.3): its whole stream is known, so it leaves in one
/// write (execution.md §4.5); nothing was dispatched.
fn answer_invalid_input(call: AdmittedCall) -> hyper::Response<ResponseBody> {
    let (response, mut writer) = stream::open(call.progress.clone(), call.http10);
    let text = fixed_text(call.tool.effect, Dispatch::False, Outcome::InvalidInput);
    let event = message_event(&tool_error_response(&call.id, text, None));
    let queued = stream::queue_commit(&mut writer).and_then(|()| writer.queue_last(Bytes::from(event)));
    tokio::spawn(publish_only(writer, queued, call.lease));
    response
}

/// Run admission (execution.md §3.3): one slot, at once, or the refusal to answer with the call's id (the
/// body was read, so no close).
fn reserve_run(shared: &Shared, template: &ServedTool) -> Result<Lease, RpcError> {
    // A write tool is served only with its audit (config.md: `private_audit` is present iff a tool may
    // write); without a committer its result could not be made durable first (config.md §10).
    if template.effect == Effect::Write && shared.audit.is_none() {
        return Err(RpcError::Unavailable);
    }
    shared.runs.try_reserve().map_err(|refusal| match refusal {
        Refusal::Exhausted => RpcError::RunCapacityExhausted,
        Refusal::Quiescing | Refusal::Unavailable => RpcError::Unavailable,
    })
}

/// Starts the call's work, linked to the run-admission owner: a panic of the call's work anywhere is that
/// owner's loss (lifecycle.md §6.3), even one that left the call unanswered. Returns once the response
/// may go to hyper: at once for a queued commit, after the release of a held one (execution.md §4.5).
async fn launch(
    shared: &Shared,
    mut calling: Calling,
    released: Option<oneshot::Receiver<()>>,
    served_alone: bool,
) {
    let owner = &shared.run_owner;
    let Some(released) = released else {
        drop(owner.spawn_linked(async move { calling.await.finish().await }));
        return;
    };
    if !served_alone || shared.runs.in_use() > 1 {
        // Other requests or runs are in progress: the call goes to its own task, which the runtime may
        // run on either worker and batch with the others' (issue 27, G2). The run count alone is not
        // enough: under load a quick run holds its slot so briefly that it is often the only one, and
        // the inline path then measured about a tenth fewer calls a second at 16 connections
        // (docs/decisions.md, "The bench after issue 27's third round").
        drop(owner.spawn_linked(async move { calling.await.finish().await }));
        // Dropped without a release only by a panic of the call's task, which fences the domain; the
        // response then ends with what was queued.
        let _ = released.await;
        return;
    }
    // A held commit, a call served alone and no other run in progress: the call's first poll (the run's
    // first slice, and for a run that settled in it the classification and the message) happens here, on
    // the task that serves the request. A quick call then needs no hand-off between tasks before its
    // response goes to hyper, and so no wake-up of the idle worker (issue 27, G1); what remains (the wait
    // for the write, then the releases of execution.md §10) runs in a small task of its own. Anything else
    // goes on in the call's own task as above.
    let polled = std::future::poll_fn(|cx| {
        let poll = std::panic::AssertUnwindSafe(|| calling.as_mut().poll(cx));
        std::task::Poll::Ready(std::panic::catch_unwind(poll))
    })
    .await;
    match polled {
        Ok(std::task::Poll::Ready(finish)) => drop(owner.spawn_linked(finish.finish())),
        Ok(std::task::Poll::Pending) => {
            drop(owner.spawn_linked(async move { calling.await.finish().await }));
            // Dropped without a release only by a panic of the call's task, which fences the domain;
            // the response then ends with what was queued.
            let _ = released.await;
        }
        // The owner's loss, as for a panic in the call's task; the response ends with what was queued.
        Err(_) => owner.report_lost_work(),
    }
}

/// What a call holds once its run slot was granted: its ids, its trace files, the slot and the deadline.
struct Reserved {
    call_id: CallId,
    trace_id: TraceId,
    traced: RunFiles,
    run: Lease,
    deadline: Instant,
}

/// The work of one call that holds a run slot, up to its settlement or its queued stream.
type Calling = std::pin::Pin<Box<dyn std::future::Future<Output = Finish> + Send>>;

/// Drives one call ([`drive`]) and hands back what its end needs.
async fn call_task(
    shared: Arc<Shared>,
    call: AdmittedCall,
    reserved: Reserved,
    head: Head,
    writer: StreamWriter,
) -> Finish {
    let AdmittedCall { tool, arguments, id, lease, .. } = call;
    let Reserved { call_id, trace_id, traced, run, deadline } = reserved;
    let call = Call { tool: &tool, id: &id, call_id, trace_id, traced, run: &run, deadline };
    let drove = drive(&shared, call, arguments, head, writer).await;
    Finish { shared, tool: tool.index(), drove, run, lease }
}

/// The end of one call: its publication, if queued, then the releases of execution.md §10.
struct Finish {
    shared: Arc<Shared>,
    /// The served tool's index, for the `publication_failed` counter.
    tool: usize,
    drove: Drove,
    run: Lease,
    lease: Lease,
}

impl Finish {
    /// Waits for a queued stream's write, then releases the run slot and the request lease, in that order.
    async fn finish(self) {
        let Finish { shared, tool, drove, run, lease } = self;
        let settlement = match drove {
            Drove::Ended(settlement) => settlement,
            Drove::Queued(queued) => queued.published(&shared, tool).await,
        };
        tracing::debug!(
            outcome = settlement.outcome.as_str(),
            dispatch = settlement.dispatch.as_str(),
            "call ended"
        );
        // execution.md §10: the run slot after the message; the request lease when the exchange ends.
        drop(run);
        drop(lease);
    }
}

/// How [`drive`] left a call.
enum Drove {
    /// Nothing more is written: the call's settlement.
    Ended(Settlement),
    /// The held commit, the message event and the end of the stream are queued for the response's one
    /// write (execution.md §4.5); the call ends once they were written.
    Queued(Queued),
}

/// A stream whose every piece is queued, and the outcome its call settled with.
struct Queued {
    writer: StreamWriter,
    outcome: Outcome,
    dispatch: Dispatch,
}

impl Queued {
    /// Waits, within the write bound, until the queued stream was written (execution.md §9): a failed or
    /// late write closes the connection, and the outcome is `publication_failed` unless `cleanup_failed`
    /// or `cancelled` applied already.
    async fn published(self, shared: &Shared, tool: usize) -> Settlement {
        let Queued { mut writer, outcome, dispatch } = self;
        let written = within(WRITE_BOUND, pin!(writer.queued_written())).await;
        if matches!(written, Ok(Ok(()))) {
            return Settlement { outcome, dispatch, disconnected: false };
        }
        publication_failed(shared, &mut writer, tool, outcome, dispatch)
    }
}

/// execution.md §9: a failed or late publication closes the connection; the outcome is
/// `publication_failed` unless `cleanup_failed` or `cancelled` applied already.
fn publication_failed(
    shared: &Shared,
    writer: &mut StreamWriter,
    tool: usize,
    outcome: Outcome,
    dispatch: Dispatch,
) -> Settlement {
    writer.abandon();
    // audit-events.md §3.5: counted also when cleanup_failed or cancelled keeps the outcome.
    shared.events.publication_failed(tool);
    Settlement { outcome: outcome.strongest(Outcome::PublicationFailed), dispatch, disconnected: true }
}

/// A JSON-RPC refusal with the call's id; the body was read, so the connection stays open, and the
/// request lease is held until the answer is written (http-mcp.md §5).
fn refuse(error: RpcError, call: AdmittedCall) -> hyper::Response<ResponseBody> {
    let response = error.response(Some(&call.id), false);
    hold_until_written(response, call.lease)
}

/// The invalid-input path (execution.md §3.1, §4.3): the commit, the event and the end, queued together;
/// nothing was dispatched. Waits until they were written, holding the request lease.
async fn publish_only(mut writer: StreamWriter, queued: Result<(), stream::Gone>, lease: Lease) {
    let written = within(
        WRITE_BOUND,
        pin!(async {
            queued?;
            writer.queued_written().await
        }),
    )
    .await;
    if !matches!(written, Ok(Ok(()))) {
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
    mut head: Head,
    mut writer: StreamWriter,
) -> Drove {
    let Call { tool, id, call_id, trace_id, traced, run, deadline } = call;
    // execution.md §4.2: unless the run is provider-free (execution.md §4.5), nothing runs before the
    // commit is written; a failed or late commit dispatches nothing.
    if !head.is_held() && committed_in_time(&mut head, &mut writer).await.is_err() {
        writer.abandon();
        return commit_failed(shared, tool, traced);
    }
    let started_at = SystemTime::now();
    let activation = shared.runner.activate(tool, arguments, deadline, trace_id, &traced);
    let watched = settle::guarded(pin!(watch(activation, &mut head, &mut writer, run, deadline))).await;
    let (ran, disconnected) = watched.unwrap_or_else(|| (Ran::Lost, writer.is_gone()));
    // execution.md §5.2: found gone before classification: cancelled, and nothing is written.
    let client = Client { stopped: disconnected, disconnected };
    let ending = Ending { tool, id, call_id, started_at, traced };
    let settling = settle::settle(shared, ending, ran, client, &McpShapes);
    let Settled { outcome, dispatch, response, audit_lost } = if head.is_held() {
        // execution.md §4.5: the held commit waits for the message at most the grouping hold; a settle
        // that needs no wait (no audit record) arms no timer.
        tokio::pin!(settling);
        match futures::poll!(&mut settling) {
            std::task::Poll::Ready(settled) => settled,
            std::task::Poll::Pending => {
                // The hold's timer, 1,000 ms ahead, is armed without unparking the time driver while
                // calls come (`timer_floor`): otherwise every audited quick call woke the other worker
                // with an eventfd write, and again for the connection's next idle timer.
                timer_floor::hold();
                match tokio::time::timeout(GROUPING_HOLD, &mut settling).await {
                    Ok(settled) => settled,
                    Err(_) => {
                        let _ = head.release(&mut writer);
                        settling.await
                    }
                }
            }
        }
    } else {
        settling.await
    };
    if audit_lost {
        // execution.md §10 "Audit failure": nothing is published (the stream closes without a message event).
        commit_alone(&mut head, &mut writer).await;
        writer.abandon();
        return Drove::Ended(Settlement { outcome, dispatch, disconnected });
    }
    if disconnected {
        return Drove::Ended(Settlement { outcome, dispatch, disconnected });
    }
    publish(shared, tool, head, writer, Bytes::from(message_event(&response)), (outcome, dispatch)).await
}

/// A commit that could not be written in time (execution.md §4.2): nothing was dispatched, and it counts
/// as publication_failed (audit-events.md §3.5).
fn commit_failed(shared: &Shared, tool: &ServedTool, traced: RunFiles) -> Drove {
    shared.events.publication_failed(tool.index());
    let ended = trace::Ended {
        outcome: Outcome::PublicationFailed,
        dispatch: Dispatch::False,
        disconnected: true,
        why: None,
        published: trace::Published::default(),
    };
    trace::end(shared, tool, traced, ended);
    Drove::Ended(Settlement {
        outcome: Outcome::PublicationFailed,
        dispatch: Dispatch::False,
        disconnected: true,
    })
}

/// Publishes a settled call's message event (execution.md §9): with a held commit in the same write
/// (execution.md §4.5), otherwise after the commit, within the write bound.
async fn publish(
    shared: &Shared,
    tool: &ServedTool,
    mut head: Head,
    mut writer: StreamWriter,
    message: Bytes,
    (outcome, dispatch): (Outcome, Dispatch),
) -> Drove {
    let injected = fault::injected(FaultPoint::PublicationWrite);
    if head.is_held() && !injected {
        // execution.md §4.5: the head, `: accepted`, the event and the end in one write, which the call's
        // end waits for (`Queued::published`).
        if head.release_with_last(&mut writer, message).is_ok() {
            return Drove::Queued(Queued { writer, outcome, dispatch });
        }
        return Drove::Ended(publication_failed(shared, &mut writer, tool.index(), outcome, dispatch));
    }
    let published = within(
        WRITE_BOUND,
        pin!(async {
            if injected {
                commit_alone(&mut head, &mut writer).await;
                return Err(stream::Gone);
            }
            writer.finish_with(message).await
        }),
    )
    .await;
    if matches!(published, Ok(Ok(()))) {
        return Drove::Ended(Settlement { outcome, dispatch, disconnected: false });
    }
    Drove::Ended(publication_failed(shared, &mut writer, tool.index(), outcome, dispatch))
}

/// Releases a held commit alone and waits, within the write bound, until it was written: a stream that
/// then closes without its message event still carried the head and `: accepted` (execution.md §4.5, §10).
async fn commit_alone(head: &mut Head, writer: &mut StreamWriter) {
    if head.is_held() && head.release(writer).is_ok() {
        let _ = within(WRITE_BOUND, pin!(writer.queued_written())).await;
    }
}

/// Waits, within the write bound, until the queued commit was written (execution.md §4.2).
async fn committed_in_time(head: &mut Head, writer: &mut StreamWriter) -> Result<(), stream::Gone> {
    let committed = async {
        head.release(writer)?;
        stream::committed(writer).await
    };
    within(WRITE_BOUND, pin!(committed)).await.unwrap_or(Err(stream::Gone))
}

/// Watches the run until it settles. A held commit (execution.md §4.5) waits for the run's first slice:
/// a run that settled in it returns at once, its commit still held for its message; any other has its
/// commit released and watched while it runs on.
async fn watch(
    activation: Activation,
    head: &mut Head,
    writer: &mut StreamWriter,
    run: &Lease,
    deadline: Instant,
) -> (Ran, bool) {
    let Activation { mut settled, cancel } = activation;
    let commit: Option<Committing> = if head.is_held() {
        if let std::task::Poll::Ready(ran) = futures::poll!(&mut settled) {
            return (ran, false);
        }
        if fault::injected(FaultPoint::CommitWrite) {
            // Test build: the commit's write fails as for a gone client; the body fails at hyper's first
            // poll and the connection closes.
            writer.abandon();
        }
        let released = head.release(writer);
        let written = writer.queued_written();
        Some(Box::pin(async move {
            released?;
            tokio::time::timeout(WRITE_BOUND, written).await.unwrap_or(Err(stream::Gone))
        }))
    } else {
        None
    };
    watch_run(Activation { settled, cancel }, writer, run, deadline, commit).await
}
/// An early-activated run's commit on its way: completes when it was written, or with `Gone` when its
/// write failed or did not complete within the write bound.
type Committing = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), stream::Gone>> + Send>>;

/// Waits for the run to settle while writing heartbeats, cancelling it when the client is gone, the
/// deadline passes or the drain cuts off (execution.md §5). An early-activated run's commit that fails or
/// is late is a gone client too (execution.md §4.5), and the connection is closed. Returns how the run
/// settled and whether the client was found gone.
async fn watch_run(
    activation: Activation,
    writer: &mut StreamWriter,
    run: &Lease,
    deadline: Instant,
    commit: Option<Committing>,
) -> (Ran, bool) {
    let Activation { mut settled, cancel } = activation;
    let mut committing = commit.is_some();
    let mut commit: Committing = commit.unwrap_or_else(|| Box::pin(std::future::pending()));
    let mut disconnected = false;
    let mut cancelled = false;
    let mut silent_since = TokioInstant::now();
    let deadline = TokioInstant::from_std(deadline);
    // The timers below, and those of the run's provider calls, are armed without unparking the time
    // driver while calls come (`timer_floor`).
    timer_floor::hold();
    loop {
        let heartbeat_due = silent_since + HEARTBEAT_INTERVAL;
        // One timer for both the deadline and the heartbeat: each timer armed while the runtime's time
        // driver sleeps longer unparks it (an eventfd write and a wake-up of the other worker), and a
        // provider-reaching run arms these on every call (issue 27).
        let next = match (cancelled, disconnected) {
            (false, false) => Some(deadline.min(heartbeat_due)),
            (false, true) => Some(deadline),
            (true, false) => Some(heartbeat_due),
            (true, true) => None,
        };
        tokio::select! {
            ran = &mut settled => return (ran, disconnected),
            written = &mut commit, if committing => {
                committing = false;
                if written.is_err() && !disconnected {
                    writer.abandon();
                    disconnected = true;
                    cancel();
                }
            }
            _ = writer.gone(), if !disconnected => {
                disconnected = true;
                cancel();
            }
            _ = run.cancelled(), if !cancelled => {
                cancelled = true;
                cancel();
            }
            _ = sleep_until_some(next) => {
                let now = TokioInstant::now();
                if !cancelled && now >= deadline {
                    // The runtime checks the deadline itself; this covers a run waiting outside Luau.
                    cancelled = true;
                    cancel();
                }
                if !disconnected && now >= heartbeat_due {
                    // execution.md §5.1–§5.2: check the client before the heartbeat; heartbeats go on
                    // while a cancelled run settles.
                    if writer.is_gone() || writer.send(Bytes::from_static(HEARTBEAT)).await.is_err() {
                        disconnected = true;
                        cancel();
                    }
                    silent_since = TokioInstant::now();
                }
            }
        }
    }
}

/// Completes at `at`; never when there is nothing left to wait for.
async fn sleep_until_some(at: Option<TokioInstant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
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
