//! Applications as a [`Runner`] (execution.md §4.4, §12, §13): each activation runs the tool's Luau
//! workflow in fresh sandboxes on a blocking thread, so a busy Luau program never stalls the gateway's
//! other work (execution.md §12.8 "Fairness"), or, for the forward form, issues its one upstream call; a
//! cancel reaches it through the runtime's cancel token.
//!
//! Owns the mapping between the runtime's entry point and the runner seam: limits from the template, the
//! blocking task, the run's provider borrow and its end (execution.md §10.3 of providers.md: a detached
//! request that does not settle makes the run `cleanup_failed`), and `RunEnd` → [`Ran`]. A task that panics
//! is a lost run ([`Ran::Lost`]).

use std::sync::Arc;
use std::time::Instant;

use super::borrow::Borrow;
use super::runner::{Activation, Ran, Runner};
use crate::apps::runtime::{
    run_workflow, run_workflow_with, tidy_after_run, CallLimits, CancelToken, RunEnd, ToolReply,
};
use crate::apps::template::Run;
use crate::apps::Built;
use crate::json::Value;
use crate::providers::runtime::ProviderRuntime;
use crate::providers::trace::TraceId;

/// Runs applications, reaching upstreams through `providers` (absent without provider-bearing tools).
#[derive(Default)]
pub struct LuauRunner {
    pub providers: Option<Arc<ProviderRuntime>>,
}

impl Runner for LuauRunner {
    fn activate(
        &self,
        built: &Arc<Built>,
        tool: usize,
        input: Value,
        deadline: Instant,
        trace: TraceId,
    ) -> Activation {
        let token = CancelToken::new();
        let borrow = self.providers.as_ref().and_then(|runtime| {
            let deadline = tokio::time::Instant::from_std(deadline);
            Borrow::new(runtime.clone(), built.clone(), tool, trace, deadline, token.clone()).map(Arc::new)
        });
        let forward = built.templates.get(tool).and_then(|t| match &t.run {
            Run::Forward { mission, tool } => Some((mission.clone(), tool.clone())),
            Run::Luau => None,
        });
        let settled = match forward {
            Some((mission, alias)) => forward_run(borrow, token.clone(), mission, alias, input),
            None => luau_run(built.clone(), tool, input, deadline, token.clone(), borrow),
        };
        Activation { settled, cancel: Box::new(move || token.cancel()) }
    }
}

type Settled = std::pin::Pin<Box<dyn std::future::Future<Output = Ran> + Send>>;

fn luau_run(
    built: Arc<Built>,
    tool: usize,
    input: Value,
    deadline: Instant,
    token: CancelToken,
    borrow: Option<Arc<Borrow>>,
) -> Settled {
    let port = borrow.clone();
    let (answer, answered) = tokio::sync::oneshot::channel();
    // The blocking task owns the run; its answer goes out before the task tidies its Luau state, so the
    // collection is off the call's path. A task that dies before answering drops `answer`: the run is
    // lost (execution.md §6.2).
    drop(tokio::task::spawn_blocking(move || {
        let end = built.templates.get(tool).map(|template| {
            let limits = CallLimits::for_application(template.memory_bytes, deadline);
            match port {
                Some(port) => run_workflow_with(&template.luau, &input, limits, &token, port),
                None => run_workflow(&template.luau, &input, limits, &token),
            }
        });
        let _ = answer.send(end);
        tidy_after_run();
    }));
    Box::pin(async move {
        let ran = match answered.await {
            Ok(Some(RunEnd::Returned(value))) => Ran::Returned(value),
            Ok(Some(RunEnd::NotConvertible)) => Ran::NotConvertible,
            Ok(Some(RunEnd::Failed { detail, cause })) => {
                // The class only: a `fail` detail or an error message may carry the run's data.
                tracing::debug!(cause = %cause.as_str(), "run failed");
                Ran::Failed { detail }
            }
            Ok(Some(RunEnd::Cancelled)) => Ran::Cancelled,
            Ok(None) | Err(_) => Ran::Lost,
        };
        end_borrow(borrow, ran).await
    })
}

/// execution.md §13: one upstream call with the decoded arguments; no Luau.
fn forward_run(
    borrow: Option<Arc<Borrow>>,
    token: CancelToken,
    mission: String,
    alias: String,
    input: Value,
) -> Settled {
    Box::pin(async move {
        let Some(port) = borrow.clone() else { return Ran::Failed { detail: None } };
        let reply = port.call_async(&mission, &alias, Some(input)).await;
        let ran = if token.is_cancelled() {
            // A deadline or disconnect gives `cancelled` (execution.md §13).
            Ran::Cancelled
        } else {
            match reply {
                ToolReply::Ok { value: Some(value), .. } => Ran::Returned(value),
                // No structured value could be derived: `invalid_result`.
                ToolReply::Ok { value: None, .. } => Ran::NotConvertible,
                ToolReply::Failed { .. } => Ran::Failed { detail: None },
            }
        };
        end_borrow(borrow, ran).await
    })
}

async fn end_borrow(borrow: Option<Arc<Borrow>>, ran: Ran) -> Ran {
    match borrow {
        Some(borrow) if !borrow.end().await => Ran::CleanupFailed,
        _ => ran,
    }
}
