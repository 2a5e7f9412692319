//! One run's borrow of the provider runtime (providers.md §8.1 step 1, providers.md §10.3;
//! execution.md §12.5, §13): the grant check against the mission's reachable aliases, the bridge from the
//! blocking Luau thread to the async provider call, and the borrow end that waits for every detached request
//! to settle.
//!
//! The bridge runs each call as a task of the gateway's runtime and parks the Luau thread until the task's
//! answer (`on_runtime`): the call's every step (admission, the transport's or the pooled connection's
//! tasks, the I/O) then runs among the runtime's workers, which hand work to each other without waking a
//! thread, and the run's thread is woken once, for the answer. Driving the call on the run thread itself
//! (`Handle::block_on` of the call) woke it, and a worker, at every step of the exchange.
//!
//! Owns [`Borrow`], the gateway's [`ToolPort`], with the grant set's listing facts that `handle:api()`
//! shows. Does not own the provider call's steps (the runtime's) or Luau (`apps::runtime`).

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::apps::runtime::{ApiTool, CancelToken, ModelPort, ModelReply, ToolAnswer, ToolPort, ToolReply};
use crate::apps::ServedTool;
use crate::codes::model::ModelFailure;
use crate::providers::runtime::ProviderRuntime;
use crate::providers::trace::TraceId;
use crate::providers::{Dispatch, FailureClass};
use crate::traces::hist::{self, HistFailure, HistTool};
use crate::traces::RunInspection;

/// What identifies the run a borrow serves.
pub struct Borrowed {
    pub tool: ServedTool,
    pub trace: TraceId,
    pub run_deadline: Instant,
    /// The run's inspection file (traces.md §8), when inspection is configured.
    pub inspection: Option<Arc<RunInspection>>,
}

/// The provider work of one run.
pub struct Borrow {
    runtime: Arc<ProviderRuntime>,
    tool: ServedTool,
    trace: TraceId,
    run_deadline: Instant,
    inspection: Option<Arc<RunInspection>>,
    cancel: CancelToken,
    handle: Handle,
    settling: Mutex<Vec<JoinHandle<bool>>>,
    /// This borrow, for the tasks its blocking ports spawn (`on_runtime`).
    me: Weak<Borrow>,
}

impl Borrow {
    /// A borrow for one activation, on the runtime it is made on (the calls run there; the Luau thread
    /// waits for them).
    pub fn new(runtime: Arc<ProviderRuntime>, call: Borrowed, cancel: CancelToken) -> Option<Arc<Borrow>> {
        let handle = Handle::try_current().ok()?;
        let Borrowed { tool, trace, run_deadline, inspection } = call;
        Some(Arc::new_cyclic(|me| Borrow {
            runtime,
            tool,
            trace,
            run_deadline,
            inspection,
            cancel,
            handle,
            settling: Mutex::new(Vec::new()),
            me: me.clone(),
        }))
    }

    /// Runs `work` on this borrow as a task of the gateway's runtime and parks the calling (run) thread
    /// until it ends. `None` when the task was cancelled (the runtime is shutting down) or the borrow is
    /// gone; a panic of the task goes on in the caller, as it did when the call ran on the run thread.
    fn on_runtime<T, F>(&self, work: impl FnOnce(Arc<Borrow>) -> F) -> Option<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let me = self.me.upgrade()?;
        let task = self.handle.spawn(work(me));
        match self.handle.block_on(task) {
            Ok(value) => Some(value),
            Err(error) => match error.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(_) => None,
            },
        }
    }

    /// One `tool(alias, arguments)` of `mission` (providers.md §8.1), with the upstream request's id when
    /// one was sent.
    pub async fn call_async(&self, mission: &str, alias: &str, arguments: Option<Value>) -> ToolAnswer {
        let unsent = |reply| ToolAnswer { reply, request_id: None };
        // Step 1: only the mission's reachable aliases (config.md §6.5 rule S7), before anything else.
        let grant = self.tool.selections.missions.get(mission).and_then(|grants| grants.get(alias));
        let Some(grant) = grant else {
            return unsent(ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False));
        };
        let Some(arguments) = arguments else {
            return unsent(ToolReply::failed(FailureClass::McpRequestInvalid, Dispatch::False));
        };
        let snapshot = self.tool.selections.snapshots.get(&grant.declaration);
        if let Some(directory) = snapshot {
            return unsent(self.hist(directory.clone(), &grant.upstream_tool, arguments).await);
        }
        let Some(site) = self.runtime.site(self.tool.index(), &grant.declaration) else {
            return unsent(ToolReply::failed(FailureClass::ProviderUnavailable, Dispatch::False));
        };
        let cancel = || {
            let token = self.cancel.clone();
            async move { token.cancelled().await }
        };
        let inspection = self.inspection.as_deref().map(|file| (file, alias));
        let run = (self.run_deadline, self.trace, inspection);
        let called = self.runtime.call(site, &grant.upstream_tool, arguments, run, cancel).await;
        if let Some(settling) = called.settling {
            self.settling.lock().unwrap_or_else(|p| p.into_inner()).push(settling);
        }
        let reply = match called.result {
            Ok(success) => ToolReply::Ok { value: success.value, content: Value::Array(success.content) },
            Err(error) => ToolReply::Failed {
                class: error.failure.class,
                dispatch: error.failure.dispatch,
                content: error.tool_content.map(Value::Array),
            },
        };
        ToolAnswer { reply, request_id: called.request_id }
    }

    /// A `hist` tool of a cold tool (traces.md §9.3–§9.4): a capture of its own on a blocking thread. The
    /// call owns the thread: it awaits its end, or, when the run is cancelled first, hands it to the borrow
    /// end, which awaits it like a detached request (the capture is bounded by traces.md §9.3).
    async fn hist(&self, directory: PathBuf, name: &str, input: Value) -> ToolReply {
        let Some(tool) = HistTool::from_name(name) else {
            return ToolReply::failed(FailureClass::ProviderUnavailable, Dispatch::False);
        };
        let mut capture = tokio::task::spawn_blocking(move || hist::call(&directory, tool, &input));
        let joined = tokio::select! {
            joined = &mut capture => joined,
            () = self.cancel.cancelled() => {
                let settles = tokio::spawn(async move { capture.await.is_ok() });
                self.settling.lock().unwrap_or_else(|p| p.into_inner()).push(settles);
                return ToolReply::failed(FailureClass::McpCancelled, Dispatch::False);
            }
        };
        match joined {
            Ok(Ok(value)) => ToolReply::Ok { value: Some(value), content: Value::Array(Vec::new()) },
            // traces.md §9.4: an unknown run is answered like an upstream tool error, with its text.
            Ok(Err(failure @ HistFailure::UnknownRun)) => ToolReply::Failed {
                class: failure.class(),
                dispatch: Dispatch::True,
                content: Some(unknown_run()),
            },
            Ok(Err(failure)) => ToolReply::failed(failure.class(), Dispatch::False),
            // The capture thread panicked: nothing of it reached the script.
            Err(_) => ToolReply::failed(FailureClass::ProviderUnavailable, Dispatch::Unknown),
        }
    }

    /// providers.md §10.3: the run has ended; wait until every detached request settled or missed its
    /// settlement deadline. True iff all settled (false is the outcome `cleanup_failed`).
    pub async fn end(&self) -> bool {
        let pending: Vec<_> = self.settling.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
        let mut settled = true;
        for task in pending {
            settled &= task.await.unwrap_or(false);
        }
        settled
    }
}

/// traces.md §9.4: the content of `mcp_tool_error` for a run reference the capture does not hold.
fn unknown_run() -> Value {
    let mut block = serde_json::Map::new();
    block.insert("text".to_owned(), Value::String(hist::UNKNOWN_RUN_TEXT.to_owned()));
    block.insert("type".to_owned(), Value::String("text".to_owned()));
    Value::Array(vec![Value::Object(block)])
}

impl ModelPort for Borrow {
    fn declared(&self, name: &str) -> bool {
        self.tool.selections.models.iter().any(|m| m == name)
    }

    /// models.md §5.1: one model request of this run, a task on the gateway's runtime; the run's blocking
    /// thread waits here.
    fn chat(&self, name: &str, request: Option<Value>) -> ModelReply {
        let Some(site) = self.runtime.model(self.tool.index(), name).cloned() else {
            return ModelReply::Failed { class: ModelFailure::Unavailable, dispatch: Dispatch::False };
        };
        let Some(request) = request else {
            return ModelReply::Failed { class: ModelFailure::RequestInvalid, dispatch: Dispatch::False };
        };
        let called = self.on_runtime(|me| async move {
            let cancel = || {
                let token = me.cancel.clone();
                async move { token.cancelled().await }
            };
            me.runtime.chat(&site, &request, me.run_deadline, cancel).await
        });
        // A task the shutting-down runtime dropped: the request may have left.
        let called = called.unwrap_or(Err((ModelFailure::Unavailable, Dispatch::Unknown)));
        match called {
            Ok(answer) => ModelReply::Ok {
                message: answer.message,
                finish_reason: answer.finish_reason,
                usage: answer.usage.to_value(),
            },
            Err((class, dispatch)) => ModelReply::Failed { class, dispatch },
        }
    }
}

impl ToolPort for Borrow {
    fn call(&self, mission: &str, alias: &str, arguments: Option<Value>) -> ToolAnswer {
        // The run's blocking thread waits here; the call itself is a task on the gateway's runtime.
        let (mission, alias) = (mission.to_owned(), alias.to_owned());
        let answer = self.on_runtime(|me| async move { me.call_async(&mission, &alias, arguments).await });
        // A task the shutting-down runtime dropped: the request may have left.
        answer.unwrap_or(ToolAnswer {
            reply: ToolReply::failed(FailureClass::ProviderUnavailable, Dispatch::Unknown),
            request_id: None,
        })
    }

    /// execution.md §12.5: the mission's grant set (config.md §6.5 rule S7), each alias with the facts its
    /// site kept from acquisition; no upstream request.
    fn granted_tools(&self, mission: &str) -> Vec<ApiTool> {
        let template = &self.tool;
        let Some(grants) = template.selections.missions.get(mission) else { return Vec::new() };
        grants
            .iter()
            .filter_map(|(alias, grant)| {
                // traces.md §9.4: a cold tool's `hist` tools have fixed descriptions and schemas.
                if template.selections.snapshots.contains_key(&grant.declaration) {
                    let tool = HistTool::from_name(&grant.upstream_tool)?;
                    return Some(ApiTool {
                        alias: alias.clone(),
                        description: Some(tool.description().to_owned()),
                        input_schema: Arc::new(tool.input_schema()),
                        output_schema: None,
                        effect: grant.effect,
                    });
                }
                let site = self.runtime.site(self.tool.index(), &grant.declaration)?;
                let listed = site.listed.get(&grant.upstream_tool)?;
                Some(ApiTool {
                    alias: alias.clone(),
                    description: listed.description.clone(),
                    input_schema: listed.input_schema.clone(),
                    output_schema: listed.output_schema.clone(),
                    effect: grant.effect,
                })
            })
            .collect()
    }
}
