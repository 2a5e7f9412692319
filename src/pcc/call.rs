//! One PCC `tools/call` from the reservation to its settled response (pcc.md §7.5 steps 6–8, pcc.md §8, §11;
//! execution.md §3–§10 with this front's shapes).
//!
//! Owns what differs from the `/mcp` driver (`crate::exec::driver`): there is no commit and no heartbeat
//! (the stream is already open, liveness is HTTP/2 keepalive), cancellation arrives as a [`Stop`] from the
//! stream (reset, or `notifications/cancelled`), and the outcome is rendered with `result`. It shares the
//! runner, the settle path (`crate::exec::settle`: the outcome table, the audit hook, the trace's end)
//! and the release order of `crate::exec`: run settled → audit record durable → response handed to the
//! stream (by the caller, within 10,000 ms) → run slot. It does not own the stream or the publication
//! itself (`stream`).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use ptc_actors::{Lease, Refusal};
use serde_json::Value;
use tokio::sync::watch;

use super::result::{success, tool_error};
use super::wire::PccError;
use crate::apps::ServedTool;
use crate::audit::CallId;
use crate::config::manifest::Effect;
use crate::exec::outcome::{fixed_text, Dispatch, Outcome};
use crate::exec::runner::Ran;
use crate::exec::settle::{self, Client, Ending, Render, Settled as Ended};
use crate::exec::{trace, Shared};
use crate::mcp::rpc::RequestId;
use crate::providers::trace::TraceId;
use crate::traces::RunFiles;

/// Why the stream stopped a call in flight (pcc.md §11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Reset, connection loss, client deadline, or the stream ended for another reason: no response can
    /// be sent; the call counts as disconnected.
    Disconnected,
    /// `notifications/cancelled` for this call: no response is sent; not disconnected.
    Requested,
}

/// One PCC `tools/call` as the stream hands it to execution (pcc.md §7.5 steps 6–7).
pub struct PccCall {
    /// The served tool, resolved at the stream's `tools/call` check (pcc.md §7.5 step 4).
    pub tool: ServedTool,
    /// The `arguments` object, `{}` when absent.
    pub arguments: Value,
    /// The caller's JSON-RPC id, echoed in the response.
    pub id: RequestId,
    /// The stream's trace id (pcc.md §12): the run's provider calls carry it in `_meta.traceparent`.
    pub trace: TraceId,
    /// The client deadline (`grpc-timeout`) of the whole stream, if any (pcc.md §4, §7.5 step 7).
    pub client_deadline: Option<Instant>,
}

/// The start of a call (pcc.md §7.5 step 6).
pub enum Begun {
    /// Answered without a run slot: the `invalid_input` tool result.
    Answered(String),
    /// Refused before execution (not audited): -31999 or -31998.
    Refused(PccError),
    /// Reserved and running; in flight from now on.
    Running(Running),
}

/// A reserved call: its settled response arrives on `done`; `stop` cancels it.
pub struct Running {
    pub done: tokio::sync::oneshot::Receiver<Settled>,
    pub stop: watch::Sender<Option<Stop>>,
}

/// A settled call: the response to hand to the stream (`None` when a [`Stop`] applied), and the run
/// slot, which the stream drops after the hand-over (execution.md §10).
pub struct Settled {
    pub response: Option<String>,
    pub run: Lease,
    pub tool: ServedTool,
}

/// Reserves and starts `call`.
pub fn begin(shared: &Arc<Shared>, call: PccCall) -> Begun {
    let PccCall { tool, arguments, id, trace, client_deadline } = call;
    let template = &tool;
    // execution.md §3.1: invalid input is answered without a run slot, even while every slot is used.
    if !template.input.is_valid(&arguments) {
        let text = fixed_text(template.effect, Dispatch::False, Outcome::InvalidInput);
        return Begun::Answered(tool_error(&id, text, None, Outcome::InvalidInput));
    }
    if template.effect == Effect::Write && shared.audit.is_none() {
        return Begun::Refused(PccError::Unavailable);
    }
    let run = match shared.runs.try_reserve() {
        Ok(run) => run,
        Err(Refusal::Exhausted) => return Begun::Refused(PccError::RunCapacityExhausted),
        Err(Refusal::Quiescing | Refusal::Unavailable) => return Begun::Refused(PccError::Unavailable),
    };
    let run_deadline = Instant::now() + Duration::from_millis(template.run_duration_ms);
    let deadlines = Deadlines { run: run_deadline, client: client_deadline };
    // execution.md §3.4 and traces.md §4.2: the call id, then the run's artifacts, before it runs.
    let call_id = CallId::random();
    let start = trace::Start {
        tool: &tool,
        front: trace::Front::Pcc,
        call_id: &call_id,
        trace_id: &trace,
        deadline_ms: millis_until(deadlines.earliest()),
        input: &arguments,
    };
    let Ok(traced) = trace::reserve(shared, start) else {
        drop(run);
        return Begun::Refused(PccError::ArtifactUnavailable);
    };
    let (stop_tx, stop_rx) = watch::channel(None);
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let shared = shared.clone();
    // Linked to the run-admission owner (lifecycle.md §6.3); a panic drops `done_tx`, which the stream
    // answers as a lost run (`pcc/stream.rs`).
    let owner = shared.run_owner.clone();
    drop(owner.spawn_linked(async move {
        let activation = Activation { tool: tool.clone(), arguments, trace, deadlines, call_id, traced };
        let response = drive(&shared, activation, &id, &run, stop_rx).await;
        // The stream may be gone already; the slot is then released here.
        let _ = done_tx.send(Settled { response, run, tool });
    }));
    Begun::Running(Running { done: done_rx, stop: stop_tx })
}

/// The two deadlines of a call (pcc.md §7.5 step 7): the run deadline of execution.md and the client's.
struct Deadlines {
    run: Instant,
    client: Option<Instant>,
}

impl Deadlines {
    /// The run is bounded by the earlier of the two.
    fn earliest(&self) -> Instant {
        self.client.map_or(self.run, |c| c.min(self.run))
    }

    /// pcc.md §11, audit-events.md §2.2: an expired client deadline counts as a disconnect.
    fn client_expired(&self) -> bool {
        self.client.is_some_and(|c| Instant::now() >= c)
    }
}

/// What the spawned task activates.
struct Activation {
    tool: ServedTool,
    arguments: Value,
    trace: TraceId,
    deadlines: Deadlines,
    call_id: CallId,
    traced: RunFiles,
}

/// Whole milliseconds from now to `deadline` (the trace's `deadline_ms`, traces.md §5.2).
fn millis_until(deadline: Instant) -> u64 {
    u64::try_from(deadline.saturating_duration_since(Instant::now()).as_millis()).unwrap_or(u64::MAX)
}

/// Runs, classifies and audits one reserved call; the response, unless a stop applied or the audit
/// was lost.
async fn drive(
    shared: &Arc<Shared>,
    activation: Activation,
    id: &RequestId,
    run: &Lease,
    mut stop: watch::Receiver<Option<Stop>>,
) -> Option<String> {
    let Activation { tool, arguments, trace, deadlines, call_id, traced } = activation;
    let started_at = SystemTime::now();
    let deadline = deadlines.earliest();
    let crate::exec::runner::Activation { mut settled, cancel } =
        shared.runner.activate(&tool, arguments, deadline, trace, &traced);
    let deadline = tokio::time::Instant::from_std(deadline);
    let mut stopped = None;
    let mut cancelled = false;
    let ran = {
        let watch = std::pin::pin!(async {
            loop {
                tokio::select! {
                    ran = &mut settled => break ran,
                    changed = stop.wait_for(Option::is_some), if stopped.is_none() => {
                        // A dropped sender means the stream task is gone: a disconnect (pcc.md §11).
                        stopped = Some(changed.map_or(Stop::Disconnected, |s| s.unwrap_or(Stop::Disconnected)));
                        cancel();
                    }
                    _ = run.cancelled(), if !cancelled => { cancelled = true; cancel(); }
                    _ = tokio::time::sleep_until(deadline), if !cancelled => { cancelled = true; cancel(); }
                }
            }
        });
        settle::guarded(watch).await.unwrap_or(Ran::Lost)
    };
    // The client deadline may be seen here first (the run stopped at it) or by the stream (which then
    // stops the call): either way the call is disconnected and nothing is sent (pcc.md §5.2, §11).
    if stopped.is_none() && deadlines.client_expired() {
        stopped = Some(Stop::Disconnected);
    }
    let client = Client { stopped: stopped.is_some(), disconnected: stopped == Some(Stop::Disconnected) };
    let ending = Ending { tool: &tool, id, call_id, started_at, traced };
    let Ended { outcome, dispatch, response, audit_lost } =
        settle::settle(shared, ending, ran, client, &PccShapes).await;
    tracing::debug!(outcome = outcome.as_str(), dispatch = dispatch.as_str(), "pcc call ended");
    if audit_lost || stopped.is_some() {
        return None;
    }
    Some(response)
}

/// The PCC shapes of the settled call's response (pcc.md §8).
struct PccShapes;

impl Render for PccShapes {
    fn success(&self, id: &RequestId, value: Value) -> Option<String> {
        success(id, value)
    }

    fn tool_error(&self, id: &RequestId, text: &str, detail: Option<&str>, outcome: Outcome) -> String {
        tool_error(id, text, detail, outcome)
    }
}
