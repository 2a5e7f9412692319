//! Model sites (models.md): one `llm` installation selected by one tool's `providers.workflow`, with its
//! warm connection pool, its defaults and its counters.
//!
//! Owns the site (`workflow/<declaration>` of one tool), made at startup without contacting the endpoint
//! (models.md §3.1), its Chat Completions codec (`chat`, the request body written by `body`) and its HTTP
//! exchange (`client`), and the owner actor that hears the pool's tasks (`owner`). Does not own admission,
//! deadlines, fencing or counting of a call: the provider runtime runs a model call's steps as it runs a
//! tool call's (models.md §5).

pub(crate) mod body;
pub mod chat;
pub mod client;
pub mod mismatch;
pub(crate) mod owner;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ptc_actors::TaskGroup;

use self::chat::ModelDefaults;
use self::client::ModelClient;
use super::http::endpoint::Endpoint;
use super::http::pool::Pool;
use super::loss::OwnerEvent;
use crate::events::counters::PairSlots;

/// What startup gives one model site.
pub struct ModelSpec<'a> {
    /// (tool name, index among the served tools).
    pub tool: (&'a str, usize),
    pub declaration: &'a str,
    pub endpoint: Endpoint,
    pub credential: &'a str,
    pub defaults: ModelDefaults,
    pub timeout: Duration,
    /// `admission.max_active_provider_calls`: the pool's idle bound (models.md §3.2).
    pub max_idle: usize,
    pub gateway_version: &'a str,
}

/// One model site.
pub struct ModelSite {
    pub tool: String,
    pub tool_index: usize,
    /// The `providers.workflow` declaration name (an `install` alias).
    pub provider: String,
    pub defaults: ModelDefaults,
    /// `ceilings.timeout_ms` of the installation.
    pub timeout: Duration,
    pub counters: Arc<PairSlots>,
    client: ModelClient,
    tasks: TaskGroup<OwnerEvent>,
    closed: AtomicBool,
}

impl ModelSite {
    /// The site; `None` when the credential cannot form a header value.
    pub fn new(spec: ModelSpec<'_>, counters: Arc<PairSlots>) -> Option<ModelSite> {
        let tasks = TaskGroup::new();
        let pool = Pool::with_max_idle(spec.endpoint, tasks.clone(), spec.max_idle);
        let client = ModelClient::new(pool, spec.credential, spec.gateway_version)?;
        Some(ModelSite {
            tool: spec.tool.0.to_owned(),
            tool_index: spec.tool.1,
            provider: spec.declaration.to_owned(),
            defaults: spec.defaults,
            timeout: spec.timeout,
            counters,
            client,
            tasks,
            closed: AtomicBool::new(false),
        })
    }

    pub fn client(&self) -> &ModelClient {
        &self.client
    }

    pub(crate) fn tasks(&self) -> &TaskGroup<OwnerEvent> {
        &self.tasks
    }

    /// Whether the site was closed (shutdown, or its owner was lost): calls are refused unsent.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Closes the site: no new request, idle connections closed now (models.md §3.2).
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.client.pool().close_idle();
    }

    /// Idle connections now (tests of the warm pool).
    pub fn idle_connections(&self) -> usize {
        self.client.pool().idle_count()
    }
}

#[cfg(test)]
mod tests;
