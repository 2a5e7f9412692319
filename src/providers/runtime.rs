//! The provider runtime of the serving gateway (providers.md §8–§10, §12): every site of every served
//! tool, provider-call admission, the deadline of one provider call, the counters, settlement of detached
//! requests, and the fence that a transport loss or a settlement expiry puts on the whole domain.
//!
//! Owns one provider call from "the alias resolved to a site" to its reply (steps 2–8 of providers.md §8.1)
//! and the background work it leaves (a detached request's settlement holds its admission slot), and the
//! provider cleanup stage's orderly close of every site. A transport's loss is its owner's (`owner.rs`): the
//! owner fails, and its supervisor fences and closes. Does not own grants or Luau (the borrow,
//! `exec::borrow`), acquisition (`startup::providers`) or the transports themselves.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ptc_actors::Phase;
use serde_json::Value;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::admission::{ActiveSlot, CallAdmission};
use super::failure::{CallFailure, Dispatch, FailureClass};
use super::model::body;
use super::model::chat::ChatAnswer;
use super::model::client::{Failed, ModelError};
use super::model::ModelSite;
use super::provider_call::{CallRequest, Inspect};
use super::result::{CallError, CallSuccess};
use super::sites::{finish_all, Site};
use super::trace::TraceId;
use super::transport::{LossFault, Settlement};
use crate::codes::domain::DomainContext;
use crate::codes::model::ModelFailure;
use crate::codes::NotReadyCause;
use crate::events::record::CounterKind;
use crate::events::EventLog;
use crate::http::timer_floor;
use crate::traces::RunInspection;

/// What one provider call answered, and the settlement the run's borrow end must await (providers.md §10.3).
pub struct Called {
    pub result: Result<CallSuccess, CallError>,
    /// Resolves true once the detached request settled, false at the settlement deadline.
    pub settling: Option<JoinHandle<bool>>,
    /// The upstream request's JSON-RPC id, when one was sent (traces.md §5.4).
    pub request_id: Option<u64>,
}

fn refused(class: FailureClass) -> Called {
    let failure = CallFailure::new(class, Dispatch::False);
    Called { result: Err(CallError { failure, tool_content: None }), settling: None, request_id: None }
}

/// Every site and the gateway-wide admission.
pub struct ProviderRuntime {
    /// All sites in (tool name, declaration name) byte order.
    sites: Vec<Arc<Site>>,
    /// All model sites in (tool name, declaration name) byte order (models.md §3).
    models: Vec<Arc<ModelSite>>,
    admission: CallAdmission,
    domain: DomainContext,
    events: EventLog,
    version: String,
    sealed: AtomicBool,
    /// Provider calls past the seal check that have neither ended nor, once detached, settled: what the
    /// provider cleanup stage (S5) waits for (lifecycle.md §7.3 "outstanding provider borrows"). A call
    /// cancelled by the drain runs stage's cancel-all is still counted until its cancellation has been
    /// written, so the provider cleanup stage (S5) never closes a transport under a request that is about to
    /// be abandoned.
    outstanding: Arc<(AtomicUsize, Notify)>,
}

impl ProviderRuntime {
    pub fn new(
        (sites, models): (Vec<Arc<Site>>, Vec<Arc<ModelSite>>),
        admission: CallAdmission,
        domain: DomainContext,
        events: EventLog,
        version: String,
    ) -> ProviderRuntime {
        ProviderRuntime {
            sites,
            models,
            admission,
            domain,
            events,
            version,
            sealed: AtomicBool::new(false),
            outstanding: Arc::new((AtomicUsize::new(0), Notify::new())),
        }
    }

    /// The site of `(tool index, declaration)`.
    pub fn site(&self, tool: usize, declaration: &str) -> Option<&Arc<Site>> {
        self.sites.iter().find(|s| s.tool_index == tool && s.provider == declaration)
    }

    /// Provider-call admission's `(max_active, active, waiting)` (audit-events.md §3.12).
    pub fn call_occupancy(&self) -> (u64, u64, u64) {
        self.admission.occupancy()
    }

    pub fn sites(&self) -> &[Arc<Site>] {
        &self.sites
    }

    /// The model site of `(tool index, declaration)`.
    pub fn model(&self, tool: usize, declaration: &str) -> Option<&Arc<ModelSite>> {
        self.models.iter().find(|s| s.tool_index == tool && s.provider == declaration)
    }

    pub fn models(&self) -> &[Arc<ModelSite>] {
        &self.models
    }

    /// One model call on `site` (models.md §5.1): the seal and fence check, provider-call admission (its
    /// wait counts against the deadline), the request, and its counters and failure record. `request` is
    /// the `m:chat` table as JSON; `cancel` makes the run's cancellation future.
    pub async fn chat<C, F>(
        &self,
        site: &ModelSite,
        request: &Value,
        run_deadline: Instant,
        cancel: C,
    ) -> ModelCalled
    where
        C: Fn() -> F,
        F: Future<Output = ()>,
    {
        let called = self.chat_steps(site, request, run_deadline, cancel).await;
        match &called {
            Ok(answer) => site.counters.add(CounterKind::ModelTokens, answer.usage.total_tokens),
            Err(Failed { error: (class, dispatch), mismatch }) => {
                site.counters.bump(CounterKind::ModelFailed);
                self.events.model_failure(&site.tool, &site.provider, *class, *dispatch);
                // models.md §9 "Diagnostics": the record keeps its closed keys; the rule the answer broke
                // goes to the debug log, without any of the body's text.
                if let Some(mismatch) = mismatch {
                    tracing::debug!(
                        tool = %site.tool,
                        provider = %site.provider,
                        class = class.as_str(),
                        %mismatch,
                        "model answer refused"
                    );
                }
            }
        }
        if !matches!(called, Err(Failed { error: (_, Dispatch::False), .. })) {
            site.counters.bump(CounterKind::ModelRequests);
        }
        called.map_err(|failed| failed.error)
    }

    async fn chat_steps<C, F>(
        &self,
        site: &ModelSite,
        request: &Value,
        run_deadline: Instant,
        cancel: C,
    ) -> Result<ChatAnswer, Failed>
    where
        C: Fn() -> F,
        F: Future<Output = ()>,
    {
        // Step 1: the request is formed before anything else; a bad one costs no slot.
        let body = body::request_body(&site.defaults, request)
            .map_err(|class| Failed::from((class, Dispatch::False)))?;
        let own = Instant::now() + site.timeout;
        let deadline = run_deadline.min(own);
        // The call's deadline timer is armed without unparking the time driver while calls come.
        timer_floor::hold();
        let _outstanding = Outstanding::enter(&self.outstanding);
        // Step 2: sealed, closed or a fenced domain.
        if self.sealed.load(Ordering::SeqCst)
            || site.is_closed()
            || self.domain.readiness().phase() == Phase::Fenced
        {
            return Err(Failed::from((ModelFailure::Unavailable, Dispatch::False)));
        }
        // Step 3: provider-call admission (strict FIFO, providers.md §9), shared with tool calls.
        let _active = match self.admission.admit(deadline, cancel()).await {
            Ok(active) => active,
            Err(failure) => {
                if failure.class == FailureClass::ProviderCapacityExhausted {
                    site.counters.bump(CounterKind::ProviderBusy);
                }
                return Err(Failed::from((model_class(failure.class, own < run_deadline), Dispatch::False)));
            }
        };
        // Step 4: the request; a timeout or cancellation closes its connection (models.md §5.2).
        site.client().chat(body, deadline, own < run_deadline, cancel()).await
    }

    /// One provider call on `site` (providers.md §8.1 steps 2–8). `cancel` makes the run's cancellation
    /// future; it is polled while waiting for admission and for the answer. `inspection` is the run's
    /// inspection file and the alias the script called (traces.md §8), when inspection is configured.
    pub async fn call<C, F>(
        &self,
        site: &Site,
        upstream_name: &str,
        arguments: Value,
        run: (Instant, TraceId, Option<(&RunInspection, &str)>),
        cancel: C,
    ) -> Called
    where
        C: Fn() -> F,
        F: Future<Output = ()>,
    {
        let (run_deadline, trace, inspection) = run;
        // Step 2: the deadline covers the admission wait too.
        let own = Instant::now() + Duration::from_millis(site.ceilings.timeout_ms);
        let deadline = run_deadline.min(own);
        timer_floor::hold();
        // Counted before the seal is read, and the provider cleanup stage (S5) seals before it reads the
        // count (both SeqCst): either this call sees the seal, or the provider cleanup stage (S5) waits for
        // it.
        let outstanding = Outstanding::enter(&self.outstanding);
        // Step 3: sealed, lost, or a fenced domain (a draining one still lets admitted runs finish; the
        // provider cleanup stage (S5) seals the acquisitions).
        if self.sealed.load(Ordering::SeqCst) || self.domain.readiness().phase() == Phase::Fenced {
            return refused(FailureClass::ProviderUnavailable);
        }
        // Step 4: the in-flight slot, held from here until the request settles.
        let slot = match site.upstream.reserve() {
            Ok(slot) => slot,
            Err(failure) => {
                if failure.class == FailureClass::McpTransportBusy {
                    site.counters.bump(CounterKind::Busy);
                }
                return refused(failure.class);
            }
        };
        // Step 5: provider-call admission (strict FIFO, providers.md §9).
        let active = match self.admission.admit(deadline, cancel()).await {
            Ok(active) => active,
            Err(failure) => {
                if failure.class == FailureClass::ProviderCapacityExhausted {
                    site.counters.bump(CounterKind::ProviderBusy);
                }
                return refused(failure.class);
            }
        };
        // providers.md §12.1 step 1: a request that waited while its transport was lost fails as the loss
        // did, unsent.
        if let Some(fault) = site.upstream.life().fault() {
            return refused(match fault {
                LossFault::ProtocolError => FailureClass::McpProtocolError,
                _ => FailureClass::McpTransportError,
            });
        }
        let traceparent = trace.traceparent();
        let request = CallRequest {
            era: site.era,
            version: &self.version,
            name: upstream_name,
            arguments,
            traceparent: &traceparent,
            deadline,
            max_result_bytes: site.ceilings.max_result_bytes,
            inspect: inspection.map(|(file, alias)| Inspect {
                file,
                provider: &site.provider,
                alias,
                traceparent: &traceparent,
            }),
        };
        let outcome = site.upstream.call(slot, request, cancel()).await;
        let Some(settlement) = outcome.settlement else {
            return Called { result: outcome.result, settling: None, request_id: outcome.request_id };
        };
        let settling = self.watch_detached(site, settlement, active, outstanding);
        Called { result: outcome.result, settling: Some(settling), request_id: outcome.request_id }
    }

    /// providers.md §10.2: a detached request keeps its admission slot, and counts as outstanding for the
    /// provider cleanup stage (S5), until it settles; one that never settles within the settlement deadline
    /// fences the domain (`provider_cleanup_failed`), while its transport stays open. The caller owns the
    /// task through the returned handle (`Called::settling`).
    fn watch_detached(
        &self,
        site: &Site,
        settlement: Settlement,
        active: ActiveSlot,
        outstanding: Outstanding,
    ) -> JoinHandle<bool> {
        site.counters.bump(CounterKind::Detached);
        let (domain, events, counters) = (self.domain.clone(), self.events.clone(), site.counters.clone());
        let (tool, provider) = (site.tool.clone(), site.provider.clone());
        tokio::spawn(async move {
            let settled = settlement.settled().await.is_ok();
            drop(active);
            if !settled {
                counters.bump(CounterKind::SettlementTimeout);
                if domain.fence_unreported(NotReadyCause::ProviderCleanupFailed) {
                    events.pair_not_ready(NotReadyCause::ProviderCleanupFailed, &tool, &provider);
                }
            }
            drop(outstanding);
            settled
        })
    }

    /// Shutdown stage S4, checkpoint events (audit-events.md §3.6): the stderr tail of every transport that
    /// has none yet.
    pub fn checkpoint(&self) {
        for site in &self.sites {
            site.stderr_once(&self.events);
        }
    }

    /// Shutdown stage S5, provider cleanup (lifecycle.md §7.3, providers.md §13.3): seal, wait for
    /// outstanding calls (in flight, or detached and not yet settled) until `cutoff`, close every transport
    /// concurrently. Clean iff every leader was reaped, nothing was outstanding at the close, and admission
    /// is idle.
    pub async fn shut_down(&self, cutoff: Instant) -> bool {
        self.sealed.store(true, Ordering::SeqCst);
        self.admission.close();
        let settled = self.wait_settled(cutoff).await;
        self.close_models();
        let reaped = finish_all(&self.sites, &self.events).await;
        settled && reaped && self.admission.is_idle()
    }

    /// Startup failure and discovery: close everything at once (providers.md §13.3).
    pub async fn close_all(&self) -> bool {
        self.sealed.store(true, Ordering::SeqCst);
        self.close_models();
        finish_all(&self.sites, &self.events).await
    }

    fn close_models(&self) {
        for site in &self.models {
            site.close();
        }
    }

    async fn wait_settled(&self, cutoff: Instant) -> bool {
        loop {
            let notified = self.outstanding.1.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.outstanding.0.load(Ordering::SeqCst) == 0 {
                return true;
            }
            if tokio::time::timeout_at(cutoff, notified).await.is_err() {
                return self.outstanding.0.load(Ordering::SeqCst) == 0;
            }
        }
    }
}

/// What one model call answered: the Luau-form answer, or the class with its dispatch state.
pub type ModelCalled = Result<ChatAnswer, ModelError>;

/// The model class of an admission refusal: capacity, or the deadline or cancellation that ended the wait.
fn model_class(class: FailureClass, timeout_first: bool) -> ModelFailure {
    match class {
        FailureClass::ProviderCapacityExhausted => ModelFailure::CapacityExhausted,
        FailureClass::McpTimeout if timeout_first => ModelFailure::Timeout,
        FailureClass::McpTimeout | FailureClass::McpCancelled => ModelFailure::Cancelled,
        _ => ModelFailure::Unavailable,
    }
}

/// One outstanding provider call in [`ProviderRuntime::outstanding`]; dropping it (the call ended, its
/// detached request settled, or the issuing future was dropped) takes it out and wakes the provider cleanup
/// stage's wait.
struct Outstanding(Arc<(AtomicUsize, Notify)>);

impl Outstanding {
    fn enter(count: &Arc<(AtomicUsize, Notify)>) -> Outstanding {
        count.0.fetch_add(1, Ordering::SeqCst);
        Outstanding(count.clone())
    }
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        if self.0 .0.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0 .1.notify_waiters();
        }
    }
}
