//! Serve mode: stages 4–12 of lifecycle.md §3.2 after the shared stages 1–3 and 5, then serving, then
//! the staged shutdown of lifecycle.md §7.
//!
//! Everything a stage creates goes into [`Held`] at once, so that a later failure, or a stop request
//! that abandons startup (lifecycle.md §8.3), releases exactly what exists, in reverse stage order
//! (lifecycle.md §5.2). Once stage 12 has run, the same resources become the [`RunningGateway`], which the
//! library's callers (the binary and in-process tests) drive to its exit status.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ptc_actors::{AdmissionOwnerRef, AdmissionPool, CommitLoss, RefusalOrder};

use crate::apps::Built;
use crate::audit::Audit;
use crate::cli::GatewayArgs;
use crate::codes::domain::{DomainContext, DomainHandle, Readiness};
use crate::codes::{AbnormalCause, NotReadyCause};
use crate::config::credentials::{self, CapturedCredentials};
use crate::events::{EventLog, ReasonClass, StartupOutcome, StartupStage};
use crate::exec::luau_runner::LuauRunner;
use crate::exec::Executor;
use crate::mcp::{BearerDigest, FrontSettings, McpFront};
use crate::providers::admission::CallAdmission;
use crate::providers::runtime::ProviderRuntime;
use crate::startup::budget::{self, BudgetInputs, ListenerPolicy};
use crate::startup::documents::{self, Documents};
use crate::startup::fault::{self, FaultPoint};
use crate::startup::providers::{self, Purpose};
use crate::startup::templates;
use crate::startup::{credentials_owner, listeners, StartupCode};
use crate::storage::artifact_root::ArtifactRoot;
use crate::storage::start_ref::start_ref;

/// The bound on stopping one domain child during a release.
pub(crate) const CHILD_STOP_BOUND: Duration = Duration::from_secs(2);

/// What the completed stages created, in stage order. Each member is released in reverse order.
#[derive(Default)]
pub struct Held {
    pub(crate) artifact_root: Option<ArtifactRoot>,
    /// The event log from stage 4 on (disabled before it, and without `artifacts.events`).
    pub(crate) events: EventLog,
    /// A finer reason class than the public code for `startup_failed` (audit-events.md §4.1).
    pub(crate) reason: Option<ReasonClass>,
    pub(crate) audit: Option<Audit>,
    pub(crate) domain: Option<DomainHandle>,
    pub(crate) run_owner: Option<AdmissionOwnerRef>,
    pub(crate) provider_owner: Option<AdmissionOwnerRef>,
    pub(crate) request_owner: Option<AdmissionOwnerRef>,
    pub(crate) credentials: Option<Arc<CapturedCredentials>>,
    /// Stage 9d's acquisitions (providers.md §7.5), closed before `startup_failed` is recorded.
    pub(crate) providers: Option<Arc<ProviderRuntime>>,
    pub(crate) listeners: Option<listeners::Bound>,
}

impl Held {
    /// lifecycle.md §5.2: releases everything in reverse stage order; after a failure with `code`, the
    /// event log records `startup_failed` before it closes (a stop during startup, lifecycle.md §8.3, is no
    /// failure and records none). Returns true iff every release was clean (the exit status of a stop during
    /// startup depends on it, lifecycle.md §8.3).
    pub async fn release(mut self, failure: Option<StartupCode>) -> bool {
        let mut clean = true;
        drop(self.listeners.take());
        if let Some(providers) = self.providers.take() {
            // providers.md §13.3: every acquisition is closed (with its records) before the exit.
            clean &= providers.close_all().await;
        }
        drop(self.credentials.take());
        if let Some(domain) = self.domain.take() {
            // Stops the request, provider-call and run admission owners in reverse start order.
            let stopped = domain.shutdown(CHILD_STOP_BOUND).await;
            clean &= stopped.iter().all(|(_, how)| !matches!(how, ptc_actors::ChildStop::Killed));
        }
        if let Some(audit) = self.audit.take() {
            // audit-events.md §2.5: a start that fails after the audit stage leaves no new file behind.
            clean &= audit.abandon().await;
        }
        if let Some(code) = failure {
            self.events.startup_failed(code, self.reason.unwrap_or(ReasonClass::Code(code)));
        }
        // The log closes before its lock is released (audit-events.md §3.10); its loss is no unclean
        // release (logging never changes an outcome, audit-events.md §3.7).
        let _ = self.events.close_async().await;
        if let Some(root) = self.artifact_root.take() {
            clean &= root.release().is_ok();
        }
        clean
    }
}

/// Runs stages 1–12 into `held`. On success the gateway is ready and serving.
pub async fn start(args: &GatewayArgs, held: &mut Held) -> Result<RunningGateway, StartupCode> {
    let docs = documents::load(args)?;
    stage_artifact_root(&docs, held)?;
    let events = held.events.clone();
    // lifecycle.md §3.2 "Event emission": `templates` is started at stage 5 and ready after stage 6.
    events.stage(StartupStage::Templates, StartupOutcome::Started);
    // Shared with the MCP front (the listing, C2 and C3) for the life of the gateway.
    let built = Arc::new(templates::build(&docs, args.mode)?);
    if fault::injected(FaultPoint::PanicInStage) {
        panic!("injected fault: a panic inside a stage");
    }
    let policy = stage_listener_capacity(&docs, &built)?;
    tracing::info!(listener_policy = %crate::json::to_deterministic_string(&policy.to_value()), "stage 6");
    events.stage(StartupStage::Templates, StartupOutcome::Ready);
    // The observer turns readiness and shutdown transitions into records (audit-events.md §3.6). The
    // context exists before the audit stage: an audit write failure stops the domain (lifecycle.md §7.5).
    let ctx = DomainContext::new(Arc::new(events.clone()));
    if docs.gateway.private_audit.is_some() {
        events.stage(StartupStage::Audit, StartupOutcome::Started);
        stage_audit(&docs, &ctx, held)?;
        // audit-events.md §2.5 step 8: repairs and removals are reported before the stage is ready (at least
        // one count is positive, or nothing is emitted).
        if let Some(recovered) = held.audit.as_ref().map(Audit::recovered) {
            events.audit_recovered(recovered.removed_bytes, recovered.removed_empty_files);
        }
        events.stage(StartupStage::Audit, StartupOutcome::Ready);
    }
    events.stage(StartupStage::RunAdmission, StartupOutcome::Started);
    let runs = stage_run_admission(&docs, &ctx, held).await?;
    events.stage(StartupStage::RunAdmission, StartupOutcome::Ready);
    events.stage(StartupStage::WarmProviders, StartupOutcome::Started);
    stage_warm_providers(args, &docs, &built, &ctx, held).await?;
    events.stage(StartupStage::WarmProviders, StartupOutcome::Ready);
    events.stage(StartupStage::RequestAdmission, StartupOutcome::Started);
    let (requests, pcc_streams) = stage_request_admission(&docs, held).await?;
    events.stage(StartupStage::RequestAdmission, StartupOutcome::Ready);
    events.stage(StartupStage::Listener, StartupOutcome::Started);
    stage_listeners(&docs, &ctx, [&requests, &pcc_streams, &runs], &built, held).await?;
    events.stage(StartupStage::Listener, StartupOutcome::Ready);
    // Stage 12: the listeners subtree starts the accept loops; readiness becomes true. Nothing leaves
    // `held` until every step succeeded, so a failure here releases everything (lifecycle.md §5.2).
    let domain = held.domain.clone().ok_or(StartupCode::InternalError)?;
    let bound = held.listeners.take().ok_or(StartupCode::InternalError)?;
    let serving = listeners::serve(bound, &domain).await.map_err(|_| StartupCode::InternalError)?;
    if !ctx.mark_ready() {
        // An owner was lost between its start and now (its watching began when it started): the domain
        // was fenced during startup. A lost transport is the provider runtime's unavailability.
        let stopper = serving.stopper();
        stopper.stop_accepting();
        stopper.close_all();
        return Err(match ctx.readiness().cause() {
            Some(NotReadyCause::ProviderRuntimeLost) => StartupCode::ProviderRuntimeUnavailable,
            _ => StartupCode::InternalError,
        });
    }
    tracing::info!("ready");
    fault::mark_serving();
    inject_owner_panic(&domain).await;
    let taken = (
        held.run_owner.take(),
        held.request_owner.take(),
        held.provider_owner.take(),
        held.credentials.take(),
        held.providers.take(),
    );
    let (Some(run_owner), Some(request_owner), Some(provider_owner), Some(credentials), Some(providers)) =
        taken
    else {
        return Err(StartupCode::InternalError);
    };
    held.domain = None;
    Ok(RunningGateway {
        ctx,
        domain,
        run_owner,
        request_owner,
        provider_owner,
        runs,
        requests,
        pcc_streams,
        listeners: serving,
        artifact_root: held.artifact_root.take(),
        events,
        audit: held.audit.take(),
        credentials,
        templates: built,
        policy,
        providers,
    })
}

/// The fault tests' `PTC_FAULT=panic_owner:<path>`: once serving, the tree node at `<path>` (or, for
/// `domain`, the domain supervisor itself) panics in its own logic.
async fn inject_owner_panic(domain: &DomainHandle) {
    match fault::target("panic_owner").as_deref() {
        None => {}
        Some("domain") => domain.inject_own_panic(),
        Some(path) => {
            if let Err(error) = domain.inject_panic(path).await {
                tracing::error!(%error, "fault injection: no such owner");
            }
        }
    }
}

/// Stage 4: the artifact root and, with `artifacts.events`, the locked events directory.
fn stage_artifact_root(docs: &Documents, held: &mut Held) -> Result<(), StartupCode> {
    let Some(artifacts) = &docs.gateway.artifacts else { return Ok(()) };
    let start_ref = start_ref().map_err(|_| StartupCode::ArtifactRootUnavailable)?;
    let root = ArtifactRoot::open(artifacts, &start_ref).map_err(|e| {
        tracing::debug!(step = e.step.as_str(), "artifact root refused");
        e.code()
    })?;
    // The log exists from here on (audit-events.md §3.1); earlier failures reach only stderr.
    if let (Some(store), Some(cfg)) = (root.events(), &artifacts.events) {
        let tools = docs.gateway.tools.iter().map(|t| t.name.clone()).collect();
        held.events = EventLog::start(store, cfg, &start_ref, tools);
    }
    held.artifact_root = Some(root);
    Ok(())
}

/// Stage 6: the descriptor budget (lifecycle.md §10).
fn stage_listener_capacity(docs: &Documents, built: &Built) -> Result<ListenerPolicy, StartupCode> {
    let admission = &docs.gateway.admission;
    let inputs = BudgetInputs {
        max_inflight_requests: u64::from(admission.max_inflight_requests),
        max_concurrent_runs: u64::from(admission.max_concurrent_runs),
        max_active_provider_calls: u64::from(admission.max_active_provider_calls),
        installations: docs.host.install.len() as u64,
        declarations: templates::declaration_count(built),
        artifacts: docs.gateway.artifacts.is_some(),
        pcc: docs.gateway.pcc.is_some(),
    };
    let soft_limit = if fault::injected(FaultPoint::Getrlimit) { None } else { budget::read_soft_limit() };
    inputs.check(soft_limit)
}

/// Stage 7: the audit directory, its lock, inventory, recovery, new file, probe and retention
/// (audit-events.md §2.4–§2.5), then the committer. A write or sync failure later stops the domain with
/// cause `audit_unavailable` and exit 70 (audit-events.md §2.8).
fn stage_audit(docs: &Documents, ctx: &DomainContext, held: &mut Held) -> Result<(), StartupCode> {
    let Some(audit) = &docs.gateway.private_audit else { return Ok(()) };
    let start_ref = start_ref().map_err(|_| StartupCode::AuditUnavailable)?;
    let loss_ctx = ctx.clone();
    let on_loss = Box::new(move |loss: CommitLoss| {
        let cause = match loss {
            CommitLoss::WriteFailed => AbnormalCause::AuditWriteFailed,
            CommitLoss::OwnerLost => AbnormalCause::AuditOwnerLost,
        };
        tracing::error!(cause = cause.as_str(), "audit unavailable; stopping");
        loss_ctx.stop_abnormally(cause);
    });
    let audit = Audit::start(audit, &start_ref, on_loss).map_err(|e| {
        tracing::debug!(reason = e.reason.as_str(), "audit refused");
        held.reason = Some(ReasonClass::Audit(e.reason));
        e.code()
    })?;
    held.audit = Some(audit);
    Ok(())
}

/// Stage 8: the domain supervisor and run admission with `max_concurrent_runs` slots.
async fn stage_run_admission(
    docs: &Documents,
    ctx: &DomainContext,
    held: &mut Held,
) -> Result<AdmissionPool, StartupCode> {
    if fault::injected(FaultPoint::RunAdmission) {
        return Err(StartupCode::RunAdmissionUnavailable);
    }
    let domain = DomainHandle::start(ctx.clone()).await.map_err(|_| StartupCode::RunAdmissionUnavailable)?;
    held.domain = Some(domain.clone());
    let runs = AdmissionPool::new(
        "runs",
        docs.gateway.admission.max_concurrent_runs,
        RefusalOrder::UnavailableFirst,
    );
    let owner =
        AdmissionOwnerRef::start(&domain, "run_admission", vec![runs.clone()], NotReadyCause::AdmissionLost)
            .await
            .map_err(|_| StartupCode::RunAdmissionUnavailable)?;
    held.run_owner = Some(owner);
    Ok(runs)
}

/// Stage 9: the environment file, credential capture, provider-call admission, and the pin rules with
/// the acquisition of every site (`startup::providers`).
async fn stage_warm_providers(
    args: &GatewayArgs,
    docs: &Documents,
    built: &Built,
    ctx: &DomainContext,
    held: &mut Held,
) -> Result<(), StartupCode> {
    // 9a–9b: read once, capture once; the overlay is a lookup layer that never touches the process
    // environment, so 9e (discarding it) happens when `capture` returns (config.md §7.3).
    let provider_bindings = credentials::selected_bindings(&docs.host, &templates::selected_aliases(built));
    let captured = credentials::capture(
        &docs.host,
        args.env_file.as_deref(),
        Some(docs.gateway.bearer_binding.as_str()),
        &provider_bindings,
    )
    .map_err(|e| {
        tracing::debug!(kind = e.kind.as_str(), "credential capture refused");
        StartupCode::from(e)
    })?;
    let captured = Arc::new(captured);
    held.credentials = Some(captured.clone());
    let domain = held.domain.clone().ok_or(StartupCode::InternalError)?;
    // lifecycle.md §6.2: from here on the credentials have a supervised owner whose loss fences.
    credentials_owner::start(&domain, captured.clone()).await.map_err(|_| StartupCode::InternalError)?;
    if fault::injected(FaultPoint::ProviderAdmission) {
        return Err(StartupCode::ProviderAdmissionUnavailable);
    }
    // 9c: provider-call admission: the supervised owner (its loss fences, cause `owner_lost`) and the
    // strict-FIFO admission in front of it (providers.md §9).
    let admission = &docs.gateway.admission;
    let calls = AdmissionPool::new(
        "provider_calls",
        admission.max_active_provider_calls,
        RefusalOrder::UnavailableFirst,
    );
    let owner = AdmissionOwnerRef::start(
        &domain,
        "provider_admission",
        vec![calls.clone()],
        NotReadyCause::OwnerLost,
    )
    .await
    .map_err(|_| StartupCode::ProviderAdmissionUnavailable)?;
    held.provider_owner = Some(owner);
    let fifo =
        CallAdmission::new(admission.max_active_provider_calls, admission.max_waiting_provider_calls, calls);
    // 9d, first pass (pins.md §9.2, §9.3 step 1): every tool's installation pins before anything spawns.
    providers::check_installation_pins(docs, built)?;
    // 9d, second pass: the sites, one at a time; a failure has closed what was opened.
    let acquired = providers::acquire_sites(docs, built, &captured, &held.events, Purpose::Serve)
        .await
        .map_err(|refused| {
            held.reason = refused.reason;
            refused.code
        })?;
    let version = env!("CARGO_PKG_VERSION").to_owned();
    let runtime = ProviderRuntime::new(acquired.sites, fifo, ctx.clone(), held.events.clone(), version);
    let runtime = Arc::new(runtime);
    held.providers = Some(runtime.clone());
    // providers.md §12.1: every transport gets its owner now, before readiness; a loss since its
    // acquisition is delivered to the owner at once.
    crate::providers::owner::start_tree(&domain, runtime.sites(), &held.events)
        .await
        .map_err(|_| StartupCode::InternalError)?;
    Ok(())
}

/// Stage 10: request admission for `/mcp` and, with `pcc`, the separate PCC stream pool (pcc.md §10).
async fn stage_request_admission(
    docs: &Documents,
    held: &mut Held,
) -> Result<(AdmissionPool, AdmissionPool), StartupCode> {
    let domain = held.domain.clone().ok_or(StartupCode::InternalError)?;
    let size = docs.gateway.admission.max_inflight_requests;
    let requests = AdmissionPool::new("requests", size, RefusalOrder::UnavailableFirst);
    let streams = AdmissionPool::new("pcc_streams", size, RefusalOrder::ExhaustedFirst);
    let owner = AdmissionOwnerRef::start(
        &domain,
        "request_admission",
        vec![requests.clone(), streams.clone()],
        NotReadyCause::AdmissionLost,
    )
    .await
    .map_err(|_| StartupCode::RunAdmissionUnavailable)?;
    held.request_owner = Some(owner);
    Ok((requests, streams))
}

/// Stages 11a and 11b: bind the HTTP listener, then the PCC listener. The MCP front is built here, when
/// every input it needs exists: the captured bearer (stage 9, hashed once now), readiness, the request
/// pool (stage 10) and the templates (stage 5).
async fn stage_listeners(
    docs: &Documents,
    ctx: &DomainContext,
    [requests, pcc_streams, runs]: [&AdmissionPool; 3],
    built: &Arc<Built>,
    held: &mut Held,
) -> Result<(), StartupCode> {
    let bearer = held.credentials.as_ref().and_then(|c| c.bearer()).ok_or(StartupCode::InternalError)?;
    let settings = FrontSettings {
        authority: docs.gateway.listen.authority(),
        allowed_origins: docs.gateway.listen.allowed_origins.clone(),
        bearer: BearerDigest::of(bearer.expose().as_bytes()),
        readiness: ctx.readiness().clone(),
        requests: requests.clone(),
        built: built.clone(),
    };
    let audit = held.audit.as_ref().map(Audit::log);
    let runner = LuauRunner { providers: held.providers.clone() };
    let run_owner = held.run_owner.clone().ok_or(StartupCode::InternalError)?;
    let executor =
        Executor::new(built.clone(), runs.clone(), run_owner, Box::new(runner), audit, held.events.clone());
    // pcc.md: the PCC front shares the bearer digest and the execution state of `/mcp`.
    let pcc = docs.gateway.pcc.as_ref().map(|pcc| {
        let bearer = settings.bearer.clone();
        let servers = Arc::new(crate::pcc::methods::servers(&pcc.servers, built));
        let (readiness, streams, exec) = (ctx.readiness().clone(), pcc_streams.clone(), executor.shared());
        Box::new(move |drain| crate::pcc::service::PccService {
            bearer,
            servers,
            readiness,
            streams,
            exec,
            drain,
        }) as Box<dyn FnOnce(_) -> crate::pcc::service::PccService>
    });
    let front = Arc::new(McpFront::new(settings, Arc::new(executor)));
    let readiness = ctx.readiness().clone();
    let bound = listeners::bind(&docs.gateway, readiness, requests.clone(), runs.clone(), front, pcc)
        .map_err(|_| StartupCode::ListenerUnavailable)?;
    held.listeners = Some(bound);
    Ok(())
}

/// A gateway that passed stage 12: serving until a stop request or an abnormal stop.
pub struct RunningGateway {
    ctx: DomainContext,
    domain: DomainHandle,
    run_owner: AdmissionOwnerRef,
    request_owner: AdmissionOwnerRef,
    provider_owner: AdmissionOwnerRef,
    runs: AdmissionPool,
    requests: AdmissionPool,
    pcc_streams: AdmissionPool,
    listeners: listeners::Serving,
    artifact_root: Option<ArtifactRoot>,
    events: EventLog,
    audit: Option<Audit>,
    credentials: Arc<CapturedCredentials>,
    templates: Arc<Built>,
    policy: ListenerPolicy,
    providers: Arc<ProviderRuntime>,
}

impl RunningGateway {
    /// The domain's readiness snapshot.
    pub fn readiness(&self) -> &Readiness {
        self.ctx.readiness()
    }

    /// The bound HTTP address.
    pub fn http_addr(&self) -> SocketAddr {
        self.listeners.http_addr()
    }

    /// The bound PCC address, when `pcc` is configured.
    pub fn pcc_addr(&self) -> Option<SocketAddr> {
        self.listeners.pcc_addr()
    }

    /// The `listener_policy` report of stage 6 (lifecycle.md §10.2).
    pub fn listener_policy(&self) -> &ListenerPolicy {
        &self.policy
    }

    /// The owners of run admission, request admission and provider-call admission, in that order (for
    /// in-process fault tests that stop one).
    pub fn owners(&self) -> [&AdmissionOwnerRef; 3] {
        [&self.run_owner, &self.request_owner, &self.provider_owner]
    }

    /// The event log (disabled without `artifacts.events`).
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The domain context (readiness, the shutdown trigger).
    pub fn context(&self) -> &DomainContext {
        &self.ctx
    }

    /// The pools: runs, `/mcp` requests, PCC streams.
    pub fn pools(&self) -> [&AdmissionPool; 3] {
        [&self.runs, &self.requests, &self.pcc_streams]
    }

    /// The private audit's handle (its counters), when configured.
    pub fn audit_log(&self) -> Option<crate::audit::AuditLog> {
        self.audit.as_ref().map(Audit::log)
    }

    /// The built templates, in tool-name order.
    pub fn templates(&self) -> &Built {
        &self.templates
    }

    /// The built templates, shared (the MCP front holds the same `Arc`).
    pub fn shared_templates(&self) -> Arc<Built> {
        self.templates.clone()
    }

    /// The domain supervisor's handle (the watchdog probes it, lifecycle.md §9.1).
    pub fn domain(&self) -> &DomainHandle {
        &self.domain
    }

    /// Serves until the domain's shutdown trigger fires, then runs S1–S8 and returns the exit status.
    pub async fn serve_until_stopped(self) -> u8 {
        self.serve_until_stopped_with(crate::notify::Notifier::disabled()).await
    }

    /// As [`RunningGateway::serve_until_stopped`], sending `STOPPING=1` through `notifier` at S1.
    pub async fn serve_until_stopped_with(self, notifier: crate::notify::Notifier) -> u8 {
        self.ctx.trigger().triggered().await;
        if fault::injected(FaultPoint::PanicInOrchestration) {
            panic!("injected fault: a panic in the shutdown orchestration");
        }
        crate::startup::shutdown::run(self, notifier).await
    }

    pub(crate) fn into_parts(self) -> ShutdownParts {
        let _ = &self.credentials;
        ShutdownParts {
            ctx: self.ctx,
            domain: self.domain,
            run_owner: self.run_owner,
            listeners: self.listeners,
            pcc_streams: self.pcc_streams,
            artifact_root: self.artifact_root,
            events: self.events,
            audit: self.audit,
            providers: self.providers,
        }
    }

    /// The provider runtime (its sites, for in-process tests).
    pub fn providers(&self) -> &Arc<ProviderRuntime> {
        &self.providers
    }
}

/// What the shutdown needs of a running gateway.
pub(crate) struct ShutdownParts {
    pub ctx: DomainContext,
    pub domain: DomainHandle,
    pub run_owner: AdmissionOwnerRef,
    pub listeners: listeners::Serving,
    /// The PCC stream slots: S6 waits for them until the cutoff (lifecycle.md §7.3 S1).
    pub pcc_streams: AdmissionPool,
    pub artifact_root: Option<ArtifactRoot>,
    pub events: EventLog,
    pub audit: Option<Audit>,
    pub providers: Arc<ProviderRuntime>,
}
