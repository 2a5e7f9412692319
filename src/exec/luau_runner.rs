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
use std::time::{Instant, SystemTime};

use serde_json::Value;

use super::borrow::{Borrow, Borrowed};
use super::runner::{Activation, Ran, Runner, Why};
use crate::apps::runtime::{
    run_workflow_with, tidy_after_run, try_workflow_here, CallLimits, CancelToken, ModelPort, RunEnd,
    RunObserver, RunPorts, ToolPort, ToolReply, ToolReturned, HERE_SLICE,
};
use crate::apps::template::Run;
use crate::apps::ServedTool;
use crate::providers::runtime::ProviderRuntime;
use crate::providers::trace::TraceId;
use crate::traces::{RunFiles, RunTrace};

/// Runs applications, reaching upstreams through `providers` (absent without provider-bearing tools).
#[derive(Default)]
pub struct LuauRunner {
    pub providers: Option<Arc<ProviderRuntime>>,
}

impl Runner for LuauRunner {
    fn activate(
        &self,
        tool: &ServedTool,
        input: Value,
        deadline: Instant,
        trace: TraceId,
        files: &RunFiles,
    ) -> Activation {
        let observer = files.trace.clone();
        let token = CancelToken::new();
        let borrow = self.lent_providers(tool).and_then(|runtime| {
            let deadline = tokio::time::Instant::from_std(deadline);
            let call = Borrowed {
                tool: tool.clone(),
                trace,
                run_deadline: deadline,
                inspection: files.inspection.clone(),
            };
            Borrow::new(runtime.clone(), call, token.clone())
        });
        let forward = match &tool.run {
            Run::Forward { mission, tool } => Some((mission.clone(), tool.clone())),
            Run::Luau => None,
        };
        let settled = match forward {
            Some((mission, alias)) => {
                forward_run(borrow, token.clone(), Forward { mission, alias, input, observer })
            }
            None => {
                let ports = Ports { borrow, observer };
                luau_run(tool.clone(), input, deadline, token.clone(), ports)
            }
        };
        Activation { settled, cancel: Box::new(move || token.cancel()) }
    }

    /// A Luau workflow without a provider borrow: its first poll tries the run on the serving thread
    /// (`luau_run`) and reaches nothing outside its sandboxes (execution.md §4.5).
    fn provider_free(&self, tool: &ServedTool) -> bool {
        matches!(tool.run, Run::Luau) && self.lent_providers(tool).is_none()
    }
}

impl LuauRunner {
    /// The provider runtime a run of `tool` borrows from, if it reaches any provider. A tool whose
    /// missions are granted no alias reaches no upstream (every `tool` is `tool_not_granted`, the same
    /// answer the port would give after its grant check): it needs no borrow, and its run is pure, so it
    /// may be tried on the serving thread (`luau_run`). A tool with workflow model providers reaches its
    /// model sites through the borrow too (models.md §7).
    fn lent_providers(&self, tool: &ServedTool) -> Option<&Arc<ProviderRuntime>> {
        let grants =
            tool.selections.missions.values().any(|g| !g.is_empty()) || !tool.selections.models.is_empty();
        self.providers.as_ref().filter(|_| grants)
    }
}

type Settled = std::pin::Pin<Box<dyn std::future::Future<Output = Ran> + Send>>;

/// What a Luau run reaches outside its sandboxes: its provider borrow and its trace.
struct Ports {
    borrow: Option<Arc<Borrow>>,
    observer: Option<Arc<RunTrace>>,
}

fn luau_run(
    template: ServedTool,
    input: Value,
    deadline: Instant,
    token: CancelToken,
    ports: Ports,
) -> Settled {
    Box::pin(async move {
        let limits = CallLimits::for_application(template.memory_bytes, deadline);
        let Ports { borrow, observer } = ports;
        // A run with no upstream reaches nothing outside its sandboxes, so it is first tried here, on the
        // async worker, for a slice short enough not to hold up the worker's other work; most finish
        // within it and save the hand-off to a run thread and back. One that does not is abandoned and
        // runs from the start on a run thread (execution.md §12.8 "Fairness"); its trace records are held
        // until the try is known to count, so an abandoned try leaves none (traces.md §5).
        // A panic of the runtime here is this run's loss, as on a run thread, not the worker's.
        let held = observer.as_ref().map(|trace| Arc::new(trace.held()));
        let tried = match borrow {
            None => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let held = held.clone().map(|h| h as Arc<dyn RunObserver>);
                try_workflow_here(&template.luau, &input, limits, &token, HERE_SLICE, held)
            }))
            .ok(),
            Some(_) => Some(RunEnd::Unfinished),
        };
        let end = match tried {
            Some(RunEnd::Unfinished) => {
                let tools = borrow.clone().map(|b| b as Arc<dyn ToolPort>);
                let models = borrow.clone().map(|b| b as Arc<dyn ModelPort>);
                let observer = observer.map(|o| o as Arc<dyn RunObserver>);
                let ports = RunPorts { tools, models, observer };
                on_run_thread(template.clone(), input, limits, token, ports).await
            }
            end => {
                if let (Some(observer), Some(held)) = (&observer, &held) {
                    observer.take(held);
                }
                end
            }
        };
        let ran = match end {
            Some(RunEnd::Returned(value)) => Ran::Returned(value),
            Some(RunEnd::NotConvertible) => Ran::NotConvertible,
            Some(RunEnd::Failed { detail, cause, error }) => {
                // execution.md §12.9: the class, and an uncaught error's message and traceback (each one
                // escaped line, bounded); never a `fail` detail, which is the script's answer to the client.
                match &error {
                    Some(e) => tracing::debug!(
                        cause = %cause.as_str(),
                        error = ?e.message,
                        traceback = ?e.traceback.as_deref().unwrap_or(""),
                        "run failed"
                    ),
                    None => tracing::debug!(cause = %cause.as_str(), "run failed"),
                }
                Ran::Failed { detail, why: Some(Why { cause, error }) }
            }
            Some(RunEnd::Cancelled) => Ran::Cancelled,
            Some(RunEnd::Unfinished) | None => Ran::Lost,
        };
        end_borrow(borrow, ran).await
    })
}

/// The run on a run thread of the blocking pool. Its answer goes out before the thread tidies its Luau
/// state, so the collection is off the call's path. A thread that dies before answering drops `answer`:
/// `None`, a lost run (execution.md §6.2).
async fn on_run_thread(
    template: ServedTool,
    input: Value,
    limits: CallLimits,
    token: CancelToken,
    ports: RunPorts,
) -> Option<RunEnd> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    drop(tokio::task::spawn_blocking(move || {
        let end = run_workflow_with(&template.luau, &input, limits, &token, ports);
        let _ = answer.send(end);
        tidy_after_run();
    }));
    answered.await.ok()
}

/// A forward application's one call (execution.md §13) and the trace that records it.
struct Forward {
    mission: String,
    alias: String,
    input: Value,
    observer: Option<Arc<RunTrace>>,
}

/// execution.md §13: one upstream call with the decoded arguments; no Luau. Its trace has one `tool_call`
/// record (traces.md §5.4) for it.
fn forward_run(borrow: Option<Arc<Borrow>>, token: CancelToken, forward: Forward) -> Settled {
    Box::pin(async move {
        let Forward { mission, alias, input, observer } = forward;
        let Some(port) = borrow.clone() else { return Ran::Failed { detail: None, why: None } };
        let (started_at, started) = (SystemTime::now(), std::time::Instant::now());
        let sent = observer.as_ref().map(|_| input.clone());
        let answer = port.call_async(&mission, &alias, Some(input)).await;
        if let Some(observer) = &observer {
            observer.tool_returned(ToolReturned {
                mission: mission.clone(),
                alias: alias.clone(),
                request_id: answer.request_id,
                started_at,
                duration: started.elapsed(),
                arguments: sent,
                reply: answer.reply.clone(),
            });
        }
        let reply = answer.reply;
        let ran = if token.is_cancelled() {
            // A deadline or disconnect gives `cancelled` (execution.md §13).
            Ran::Cancelled
        } else {
            match reply {
                ToolReply::Ok { value: Some(value), .. } => Ran::Returned(value),
                // No structured value could be derived: `invalid_result`.
                ToolReply::Ok { value: None, .. } => Ran::NotConvertible,
                ToolReply::Failed { .. } => Ran::Failed { detail: None, why: None },
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
