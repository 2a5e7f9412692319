//! The settle path of a call that ran, one for both fronts (execution.md §6, §8, §10; pcc.md §8, §11): the
//! run's part of the call's task guarded against a panic, the outcome table from how the run settled to
//! the outcome, dispatch and response, then in this order: the lost run reported to run admission's
//! owner, the audit record made durable, the trace ended, and run admission fenced when the audit was
//! lost.
//!
//! Owns that sequence and the audit hook. Each front supplies only its response shapes ([`Render`]) and
//! what it saw of the client ([`Client`]), and publishes (or withholds) the response itself afterwards:
//! the `/mcp` driver (`driver`) as the stream's message event, the PCC front (`pcc::call`) as the
//! stream's response. Does not own the run (`runner`), the streams, nor the audit's files
//! (`crate::audit`).

use std::future::Future;
use std::time::SystemTime;

use super::outcome::{fixed_text, Dispatch, Outcome};
use super::runner::Ran;
use super::{trace, Shared};
use crate::apps::ServedTool;
use crate::audit::{AuditRecord, CallId};
use crate::config::manifest::Effect;
use crate::mcp::rpc::RequestId;
use crate::support::fault::{self, FaultPoint};
use crate::traces::RunFiles;
use serde_json::Value;

/// A front's response shapes: execution.md §8 for `/mcp`, pcc.md §8 for PCC.
pub(crate) trait Render: Sync {
    /// The success response carrying `value`; `None` when it cannot be encoded (execution.md §8 step 4).
    fn success(&self, id: &RequestId, value: Value) -> Option<String>;

    /// The tool-error response with the fixed text of execution.md §7 and the `fail` detail, if any.
    fn tool_error(&self, id: &RequestId, text: &str, detail: Option<&str>, outcome: Outcome) -> String;
}

/// Runs the run's part of a call's task (watching the run until it settles) under a guard: a panic of it
/// outside the Luau call, which has its own guard, is a run lost before it settled (execution.md §6.2),
/// and the task, the call's owner, still classifies, audits and answers it. `None` after such a panic.
/// The watch comes pinned where the caller holds it, so that this future does not hold a copy of it
/// (`soon::within` says why).
pub(crate) async fn guarded<T>(watch: std::pin::Pin<&mut impl Future<Output = T>>) -> Option<T> {
    let watched = std::panic::AssertUnwindSafe(async {
        let watched = watch.await;
        if fault::injected(FaultPoint::PanicInRun) {
            panic!("injected fault: a panic in a run task outside Luau");
        }
        watched
    });
    futures::FutureExt::catch_unwind(watched).await.ok()
}

/// A call that holds a run slot and ran.
pub(crate) struct Ending<'a> {
    pub tool: &'a ServedTool,
    /// The JSON-RPC id (published, never audited).
    pub id: &'a RequestId,
    /// The audit's call id (audited, never published; execution.md §3.4).
    pub call_id: CallId,
    /// When the run was activated (the audit record's `started_at`).
    pub started_at: SystemTime,
    /// The call's trace and inspection files (traces.md), each when configured.
    pub traced: RunFiles,
}

/// What the front saw of the client while the call ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Client {
    /// The client stopped the call (gone, or `notifications/cancelled` on PCC): the outcome is at least
    /// `cancelled` and no response is published (execution.md §5.2, pcc.md §11).
    pub stopped: bool,
    /// The client was gone: the audit record's and the trace's `disconnected` (audit-events.md §2.2).
    pub disconnected: bool,
}

/// A settled call.
pub(crate) struct Settled {
    pub outcome: Outcome,
    pub dispatch: Dispatch,
    /// The response to publish, unless the client stopped the call or the audit was lost.
    pub response: String,
    /// The audit record could not be made durable: nothing is published, and run admission is fenced
    /// already (execution.md §10 "Audit failure"; the committer stopped the domain, exit 70).
    pub audit_lost: bool,
}

/// Classifies, reports, audits and ends the trace of one call that ran, in the order of execution.md §10
/// (the run slot is still held: the caller releases it after publishing).
pub(crate) async fn settle(
    shared: &Shared,
    ending: Ending<'_>,
    ran: Ran,
    client: Client,
    render: &dyn Render,
) -> Settled {
    let Ending { tool, id, call_id, started_at, traced } = ending;
    // traces.md §5.5: why a Luau run failed goes to its trace only (taken before the answer is made).
    let why = match &ran {
        Ran::Failed { why, .. } => why.clone(),
        _ => None,
    };
    // traces.md §5.5.2: what the run published, for the trace's `result_digest`.
    let published = trace::published(&traced, &ran);
    let (outcome, dispatch, response) = classify(tool, id, ran, render);
    if outcome == Outcome::InternalError {
        // execution.md §6.2 step 4: a run lost before it settled fences run admission (its owner's loss)
        // before anything is released.
        shared.run_owner.report_lost_work();
    }
    let outcome = if client.stopped { outcome.strongest(Outcome::Cancelled) } else { outcome };
    // execution.md §10: a dispatched write call's record is durable before anything is published.
    let audited = audit(shared, tool, call_id, started_at, outcome, dispatch, client.disconnected).await;
    // traces.md §5.5: after the audit record is durable, before the response is published.
    trace::end(
        shared,
        tool,
        traced,
        trace::Ended { outcome, dispatch, disconnected: client.disconnected, why, published },
    );
    let audit_lost = audited.is_err();
    if audit_lost {
        // execution.md §10 "Audit failure": the slot is never handed to new work.
        shared.runs.fence();
    }
    Settled { outcome, dispatch, response, audit_lost }
}

/// The outcome table (execution.md §6 and §8): from how the run settled to the outcome, the dispatch and
/// the response in the front's shapes.
fn classify(tool: &ServedTool, id: &RequestId, ran: Ran, render: &dyn Render) -> (Outcome, Dispatch, String) {
    let fail = |outcome: Outcome, dispatch: Dispatch, detail: Option<&str>| {
        (
            outcome,
            dispatch,
            render.tool_error(id, fixed_text(tool.effect, dispatch, outcome), detail, outcome),
        )
    };
    match ran {
        Ran::Returned(value) => {
            // execution.md §8 step 3, then step 4.
            if !tool.result.is_valid(&value) {
                return fail(Outcome::InvalidResult, Dispatch::True, None);
            }
            match render.success(id, value) {
                Some(response) => (Outcome::Success, Dispatch::True, response),
                None => fail(Outcome::InvalidResult, Dispatch::True, None),
            }
        }
        Ran::NotConvertible => fail(Outcome::InvalidResult, Dispatch::True, None),
        Ran::Failed { detail, .. } => fail(Outcome::ExecutionFailed, Dispatch::True, detail.as_deref()),
        Ran::Cancelled => fail(Outcome::Cancelled, Dispatch::True, None),
        Ran::Lost => fail(Outcome::InternalError, Dispatch::Unknown, None),
        Ran::CleanupFailed => fail(Outcome::CleanupFailed, Dispatch::Unknown, None),
    }
}

/// The record could not be made durable.
struct AuditLost;

/// Writes the audit record of a dispatched write call and waits until it is durable
/// (audit-events.md §2.2); read tools and undispatched calls are not audited.
async fn audit(
    shared: &Shared,
    tool: &ServedTool,
    call_id: CallId,
    started_at: SystemTime,
    outcome: Outcome,
    dispatch: Dispatch,
    disconnected: bool,
) -> Result<(), AuditLost> {
    if tool.effect != Effect::Write || dispatch == Dispatch::False {
        return Ok(());
    }
    let Some(log) = &shared.audit else { return Err(AuditLost) };
    let record =
        AuditRecord { call_id, tool_name: tool.name.clone(), started_at, outcome, dispatch, disconnected };
    log.record(&record).await.map_err(|_| AuditLost)
}
