//! The Luau workflow as a [`Runner`] (execution.md §4.4, §12): each activation runs the tool's workflow
//! in fresh sandboxes on a blocking thread, so a busy Luau program never stalls the gateway's other work
//! (§12.8 "Fairness"), and a cancel reaches it through the runtime's cancel token at the next interrupt
//! point.
//!
//! Owns only the mapping between the runtime's entry point and the runner seam: limits from the
//! template, the blocking task, and `RunEnd` → [`Ran`]. A task that panics is a lost run ([`Ran::Lost`]).

use std::sync::Arc;
use std::time::Instant;

use super::runner::{Activation, Ran, Runner};
use super::trace::TraceId;
use crate::apps::runtime::{run_workflow, CallLimits, CancelToken, RunEnd};
use crate::apps::Built;
use crate::json::Value;

/// Runs Luau workflows.
pub struct LuauRunner;

impl Runner for LuauRunner {
    fn activate(
        &self,
        built: &Arc<Built>,
        tool: usize,
        input: Value,
        deadline: Instant,
        trace: TraceId,
    ) -> Activation {
        // The trace id is for the run's provider calls (providers.md §11); mission calls to upstreams are
        // not wired into the runtime yet, so nothing reads it here so far.
        let _ = trace;
        let token = CancelToken::new();
        let for_run = token.clone();
        let built = built.clone();
        let task = tokio::task::spawn_blocking(move || {
            let template = built.templates.get(tool)?;
            let limits = CallLimits::for_application(template.memory_bytes, deadline);
            Some(run_workflow(&template.luau, &input, limits, &for_run))
        });
        let settled = Box::pin(async move {
            match task.await {
                Ok(Some(RunEnd::Returned(value))) => Ran::Returned(value),
                Ok(Some(RunEnd::NotConvertible)) => Ran::NotConvertible,
                Ok(Some(RunEnd::Failed { detail })) => Ran::Failed { detail },
                Ok(Some(RunEnd::Cancelled)) => Ran::Cancelled,
                Ok(None) | Err(_) => Ran::Lost,
            }
        });
        Activation { settled, cancel: Box::new(move || token.cancel()) }
    }
}
