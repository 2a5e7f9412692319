//! One PCC `tools/call` from the reservation to its settled response (pcc.md §7.5 steps 6–8, pcc.md §8, §11;
//! execution.md §3–§10 with this front's shapes).
//!
//! Owns what differs from the `/mcp` driver (`crate::exec::driver`): there is no commit and no heartbeat
//! (the stream is already open, liveness is HTTP/2 keepalive), cancellation arrives as a [`Stop`] from the
//! stream (reset, or `notifications/cancelled`), and the outcome is rendered with `result`. It shares the
//! runner, the audit hook (`driver::audit`) and the release order of `crate::exec`: run settled → audit
//! record durable → response handed to the stream (by the caller, within 10,000 ms) → run slot. It does
//! not own the stream or the publication itself (`stream`).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use ptc_actors::{Lease, Refusal};
use serde_json::Value;
use tokio::sync::watch;

use super::result::{success, tool_error};
use super::wire::PccError;
use crate::audit::CallId;
use crate::config::manifest::Effect;
use crate::exec::driver::{audit, AuditLost};
use crate::exec::outcome::{fixed_text, Dispatch, Outcome};
use crate::exec::runner::Ran;
use crate::exec::{trace, Shared};
use crate::fault::{self, FaultPoint};
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
    /// The served tool: an index into the built templates.
    pub tool: usize,
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
    pub tool: usize,
}

/// Reserves and starts `call`.
pub fn begin(shared: &Arc<Shared>, call: PccCall) -> Begun {
    let PccCall { tool, arguments, id, trace, client_deadline } = call;
    let Some(template) = shared.built.templates.get(tool) else { return Begun::Refused(PccError::Internal) };
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
        tool,
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
        let activation = Activation { tool, arguments, trace, deadlines, call_id, traced };
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
    tool: usize,
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
        shared.runner.activate(&shared.built, tool, arguments, deadline, trace, &traced);
    let deadline = tokio::time::Instant::from_std(deadline);
    let mut stopped = None;
    let mut cancelled = false;
    // execution.md §6.2: a panic of the run's part of this task is a run lost before it settled; this
    // task, the call's owner, still classifies, audits and answers it.
    let watched = std::panic::AssertUnwindSafe(async {
        let ran = loop {
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
        };
        if fault::injected(FaultPoint::PanicInRun) {
            panic!("injected fault: a panic in a run task outside Luau");
        }
        ran
    });
    let ran = futures::FutureExt::catch_unwind(watched).await.unwrap_or(Ran::Lost);
    // The client deadline may be seen here first (the run stopped at it) or by the stream (which then
    // stops the call): either way the call is disconnected and nothing is sent (pcc.md §5.2, §11).
    if stopped.is_none() && deadlines.client_expired() {
        stopped = Some(Stop::Disconnected);
    }
    let (outcome, dispatch, response) = classify(shared, tool, id, ran);
    if outcome == Outcome::InternalError {
        // execution.md §6.2 step 4: run admission's owner hears the lost run and is lost itself.
        shared.run_owner.report_lost_work();
    }
    let outcome = if stopped.is_some() { outcome.strongest(Outcome::Cancelled) } else { outcome };
    let disconnected = stopped == Some(Stop::Disconnected);
    tracing::debug!(outcome = outcome.as_str(), dispatch = dispatch.as_str(), "pcc call ended");
    let audited = audit(shared, tool, call_id, started_at, outcome, dispatch, disconnected).await;
    // traces.md §5.5: after the audit record is durable, before the response is handed over.
    trace::end(shared, tool, traced, outcome, dispatch, disconnected);
    if let Err(AuditLost) = audited {
        shared.runs.fence();
        return None;
    }
    if stopped.is_some() {
        return None;
    }
    Some(response)
}

/// execution.md §6 and §8 with the shapes of pcc.md §8.
fn classify(shared: &Shared, tool: usize, id: &RequestId, ran: Ran) -> (Outcome, Dispatch, String) {
    let effect = shared.built.templates.get(tool).map_or(Effect::Read, |t| t.effect);
    let fail = |outcome: Outcome, dispatch: Dispatch, detail: Option<&str>| {
        (outcome, dispatch, tool_error(id, fixed_text(effect, dispatch, outcome), detail, outcome))
    };
    let Some(template) = shared.built.templates.get(tool) else {
        return fail(Outcome::InternalError, Dispatch::Unknown, None);
    };
    match ran {
        Ran::Returned(value) => {
            if !template.result.is_valid(&value) {
                return fail(Outcome::InvalidResult, Dispatch::True, None);
            }
            match success(id, value) {
                Some(response) => (Outcome::Success, Dispatch::True, response),
                None => fail(Outcome::InvalidResult, Dispatch::True, None),
            }
        }
        Ran::NotConvertible => fail(Outcome::InvalidResult, Dispatch::True, None),
        Ran::Failed { detail } => fail(Outcome::ExecutionFailed, Dispatch::True, detail.as_deref()),
        Ran::Cancelled => fail(Outcome::Cancelled, Dispatch::True, None),
        Ran::Lost => fail(Outcome::InternalError, Dispatch::Unknown, None),
        Ran::CleanupFailed => fail(Outcome::CleanupFailed, Dispatch::Unknown, None),
    }
}
