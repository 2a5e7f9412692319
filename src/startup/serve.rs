//! Serve mode: stages 4–12 of lifecycle.md §3.2 after the shared stages 1–3 and 5, then serving, then
//! the staged shutdown of lifecycle.md §7.
//!
//! Everything a stage creates that must be undone goes onto the release stack of [`Startup`] at once, so
//! that a later failure, or a stop request that abandons startup (lifecycle.md §8.3), undoes exactly what
//! exists, in reverse stage order (lifecycle.md §5.2). Once stage 12 has run, the stack and the serving
//! handles become the [`Gateway`], which the library's callers (the binary and in-process tests) drive to
//! its exit status.

use std::sync::Arc;
use std::time::Duration;

use ptc_actors::{AdmissionOwnerRef, AdmissionPool, RefusalOrder};

use crate::apps::Built;
use crate::audit::owner::{self as audit_owner, AuditLossGroup};
use crate::audit::startup::Recovered;
use crate::audit::{Audit, AuditLog};
use crate::cli::GatewayArgs;
use crate::codes::domain::{DomainContext, DomainHandle};
use crate::codes::NotReadyCause;
use crate::config::credentials::{self, CapturedCredentials};
use crate::events::{EventLog, ReasonClass, StartupOutcome, StartupStage};
use crate::exec::luau_runner::LuauRunner;
use crate::exec::Executor;
use crate::explain::Refusal;
use crate::mcp::{BearerDigest, FrontSettings, McpFront};
use crate::metrics;
use crate::providers::admission::CallAdmission;
use crate::providers::runtime::ProviderRuntime;
use crate::startup::budget;
use crate::startup::documents::{self, Documents};
use crate::startup::fault::{self, FaultPoint};
use crate::startup::gateway::Gateway;
use crate::startup::pools::Pools;
use crate::startup::providers::{self, Purpose};
use crate::startup::release::{Part, ReleaseStack};
use crate::startup::templates;
use crate::startup::{credentials_owner, listeners, refusal_facts, StartupCode};
use crate::storage::artifact_root::ArtifactRoot;
use crate::storage::start_ref::start_ref;
use crate::traces::RunArtifacts;

/// What startup has created so far: the release stack (lifecycle.md §5.2), the event log (disabled before
/// stage 4 and without `artifacts.events`) and the finer reason class of a failure. A failure, or a stop
/// request that abandons startup (lifecycle.md §8.3), releases it; success moves its stack into the
/// [`Gateway`].
#[derive(Default)]
pub struct Startup {
    pub(crate) stack: ReleaseStack,
    pub(crate) events: EventLog,
    /// A finer reason class than the public code for `startup_failed` (audit-events.md §4.1).
    pub(crate) reason: Option<ReasonClass>,
    /// The run artifacts (traces.md), from stage 4, when `artifacts.trace` is configured.
    pub(crate) run_artifacts: Option<Arc<RunArtifacts>>,
    /// The metrics directory (audit-events.md §3.12), from stage 4, for the writer started after stage 12.
    pub(crate) metrics_dir: Option<crate::storage::PrivateDir>,
}

impl Startup {
    /// lifecycle.md §5.2: undoes every completed stage in reverse order; after a failure with `code`, the
    /// event log records `startup_failed` before it closes (a stop during startup, lifecycle.md §8.3, is
    /// no failure and records none). True iff every undo was clean (the exit status of lifecycle.md §8.3
    /// depends on it).
    pub async fn release(self, failure: Option<StartupCode>) -> bool {
        let Startup { stack, reason, .. } = self;
        stack.release(failure.map(|code| (code, reason))).await
    }
}

/// Runs stages 1–12 into `held`. On success the gateway is ready and serving, and owns the release stack.
pub async fn start(args: &GatewayArgs, held: &mut Startup) -> Result<Gateway, Refusal> {
    let docs = documents::load(args)?;
    stage_artifact_root(&docs, held)?;
    let events = held.events.clone();
    let (ctx, domain) = stage_domain(held).await?;
    // lifecycle.md §3.2 "Event emission": `templates` is started at stage 5 and ready after stage 6.
    events.stage(StartupStage::Templates, StartupOutcome::Started);
    // Shared with the MCP front (the listing, the tool lookup and the `Mcp-Param-*` check) for the life of
    // the gateway.
    let built = Arc::new(templates::build(&docs, args.mode)?);
    if fault::injected(FaultPoint::PanicInStage) {
        panic!("injected fault: a panic inside a stage");
    }
    let policy = budget::stage(&docs, &built)?;
    tracing::info!(listener_policy = %crate::json::to_deterministic_string(&policy.to_value()), "stage 6");
    events.stage(StartupStage::Templates, StartupOutcome::Ready);
    let audit_log = stage_audit(&docs, &domain, held).await?;
    events.stage(StartupStage::RunAdmission, StartupOutcome::Started);
    let (run_owner, runs) = stage_run_admission(&docs, &domain).await?;
    events.stage(StartupStage::RunAdmission, StartupOutcome::Ready);
    events.stage(StartupStage::WarmProviders, StartupOutcome::Started);
    let warm = stage_warm_providers(args, &docs, &built, &domain, held).await?;
    events.stage(StartupStage::WarmProviders, StartupOutcome::Ready);
    events.stage(StartupStage::RequestAdmission, StartupOutcome::Started);
    let (request_owner, requests, pcc_streams) = stage_request_admission(&docs, &domain).await?;
    events.stage(StartupStage::RequestAdmission, StartupOutcome::Ready);
    events.stage(StartupStage::Listener, StartupOutcome::Started);
    let pools = Pools { runs, requests, pcc_streams };
    let front = FrontParts {
        ctx: &ctx,
        pools: &pools,
        run_owner: &run_owner,
        built: &built,
        audit: audit_log.clone(),
        warm: &warm,
        run_artifacts: held.run_artifacts.clone(),
    };
    let bound = stage_listeners(&docs, front, &events)?;
    held.stack.push(Part::Listeners(bound));
    events.stage(StartupStage::Listener, StartupOutcome::Ready);
    let serving = stage_serve(held, &ctx, &domain).await?;
    tracing::info!("ready");
    let metrics = start_metrics(&docs, held, &domain, &ctx, &pools, &warm).await;
    fault::mark_serving();
    inject_owner_panic(&domain).await;
    Ok(Gateway {
        stack: std::mem::take(&mut held.stack),
        ctx,
        domain,
        run_owner,
        request_owner,
        provider_owner: warm.owner,
        pools,
        listeners: serving,
        events,
        metrics,
        audit: audit_log,
        templates: built,
        policy,
        providers: warm.runtime,
    })
}

/// The domain supervisor, the root of the tree, starts with the event log (stage 4), so that the log's
/// writer has an owner in the tree; its readiness and shutdown transitions become records
/// (audit-events.md §3.6).
async fn stage_domain(held: &mut Startup) -> Result<(DomainContext, DomainHandle), Refusal> {
    let events = held.events.clone();
    let ctx = DomainContext::new(Arc::new(events.clone()));
    let domain = DomainHandle::start(ctx.clone())
        .await
        .map_err(|e| Refusal::because(StartupCode::InternalError, &e))?;
    held.stack.push(Part::Domain(domain.clone()));
    crate::events::owner::start(&domain, events)
        .await
        .map_err(|e| Refusal::because(StartupCode::InternalError, &e))?;
    Ok((ctx, domain))
}

/// Stage 12: the listeners subtree starts its owners; readiness becomes true; then the accept loops take
/// their first connection, so nothing is accepted before the domain is ready (lifecycle.md §3.2, §6.5). The
/// stack keeps everything until every step succeeded, so a failure here releases everything
/// (lifecycle.md §5.2).
async fn stage_serve(
    held: &mut Startup,
    ctx: &DomainContext,
    domain: &DomainHandle,
) -> Result<listeners::Serving, Refusal> {
    let bound = held.stack.take_listeners().ok_or(StartupCode::InternalError)?;
    let serving = listeners::serve(bound, domain)
        .await
        .map_err(|e| Refusal::because(StartupCode::InternalError, &e))?;
    if fault::injected(FaultPoint::SlowReadiness) {
        tokio::time::sleep(fault::SLOW_READINESS).await;
    }
    if !ctx.mark_ready() {
        // An owner was lost between its start and now (its watching began when it started): the domain
        // was fenced during startup. A lost transport is the provider runtime's unavailability.
        let stopper = serving.stopper();
        stopper.stop_accepting();
        stopper.close_all();
        return Err(match ctx.readiness().cause() {
            Some(NotReadyCause::ProviderRuntimeLost) => StartupCode::ProviderRuntimeUnavailable,
            _ => StartupCode::InternalError,
        }
        .into());
    }
    serving.open();
    Ok(serving)
}

/// The fault tests' `PTC_FAULT=panic_owner:<path>`: once serving, the tree node at `<path>` (or, for
/// `domain`, the domain supervisor itself) panics in its own logic.
#[cfg(feature = "fault-injection")]
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

/// Without the `fault-injection` feature nothing can be made to panic.
#[cfg(not(feature = "fault-injection"))]
async fn inject_owner_panic(_domain: &DomainHandle) {}

/// Stage 4: the artifact root and, with `artifacts.events`, the locked events directory.
fn stage_artifact_root(docs: &Documents, held: &mut Startup) -> Result<(), Refusal> {
    let Some(artifacts) = &docs.gateway.artifacts else { return Ok(()) };
    let start_ref = start_ref().map_err(|e| Refusal::because(StartupCode::ArtifactRootUnavailable, &e))?;
    let mut root = ArtifactRoot::open(artifacts, &start_ref).map_err(|e| {
        tracing::debug!(step = e.step.as_str(), "artifact root refused");
        refusal_facts::store(e.code(), &refusal_facts::artifact_store(&artifacts.root, e.step), &e.cause)
    })?;
    // The log exists from here on (audit-events.md §3.1); earlier failures reach only stderr.
    if let (Some(store), Some(cfg)) = (root.events(), &artifacts.events) {
        let tools = docs.gateway.tools.iter().map(|t| t.name.clone()).collect();
        held.events = EventLog::start(store, cfg, &start_ref, tools);
    }
    // traces.md §3: the stores are validated and locked; the root keeps the locks until shutdown.
    let run_artifacts = RunArtifacts::new(artifacts, &root, &start_ref);
    let run_artifacts = match run_artifacts {
        Ok(run_artifacts) => run_artifacts,
        Err(e) => {
            let _ = root.release();
            return Err(Refusal::because(StartupCode::ArtifactRootUnavailable, &e));
        }
    };
    held.run_artifacts = run_artifacts.map(Arc::new);
    held.metrics_dir = root.take_metrics();
    held.stack.push(Part::ArtifactRoot(root));
    held.stack.push(Part::EventLog(held.events.clone()));
    Ok(())
}

/// audit-events.md §3.12: the metrics writer, once readiness is true, so its first file reads ready. Its
/// failure to start loses the file, never the gateway (like the event log's).
async fn start_metrics(
    docs: &Documents,
    held: &mut Startup,
    domain: &DomainHandle,
    ctx: &DomainContext,
    pools: &Pools,
    warm: &Warm,
) -> Option<metrics::Writer> {
    let interval = docs.gateway.artifacts.as_ref()?.metrics?.interval_ms;
    let dir = held.metrics_dir.take()?;
    let sources = metrics::Sources {
        ctx: ctx.clone(),
        requests: pools.requests.clone(),
        runs: pools.runs.clone(),
        pcc_streams: docs.gateway.pcc.as_ref().map(|_| pools.pcc_streams.clone()),
        providers: warm.runtime.clone(),
        events: held.events.clone(),
    };
    match metrics::start(domain, dir, Duration::from_millis(interval), sources).await {
        Ok(writer) => Some(writer),
        Err(_) => {
            tracing::warn!("metrics writer did not start; serving without the metrics file");
            None
        }
    }
}

/// Stage 7: the audit directory, its lock, inventory, recovery, new file, probe and retention
/// (audit-events.md §2.4–§2.5), then the committer and its owner in the tree, `audit_committer`: a write
/// or sync failure, or the committer thread's loss, reaches that owner, whose loss stops the domain with
/// exit 70 (audit-events.md §2.8, lifecycle.md §7.5).
async fn stage_audit(
    docs: &Documents,
    domain: &DomainHandle,
    held: &mut Startup,
) -> Result<Option<AuditLog>, Refusal> {
    if docs.gateway.private_audit.is_none() {
        return Ok(None);
    }
    let events = held.events.clone();
    events.stage(StartupStage::Audit, StartupOutcome::Started);
    let (log, recovered) = start_audit(docs, domain, held).await?;
    // audit-events.md §2.5 step 8: repairs and removals are reported before the stage is ready (at least
    // one count is positive, or nothing is emitted).
    events.audit_recovered(recovered.removed_bytes, recovered.removed_empty_files);
    events.stage(StartupStage::Audit, StartupOutcome::Ready);
    Ok(Some(log))
}

/// Stage 7's work proper: the audit, pushed onto the release stack, and its owner.
async fn start_audit(
    docs: &Documents,
    domain: &DomainHandle,
    held: &mut Startup,
) -> Result<(AuditLog, Recovered), Refusal> {
    let Some(audit) = &docs.gateway.private_audit else { return Err(StartupCode::InternalError.into()) };
    let start_ref = start_ref().map_err(|e| Refusal::because(StartupCode::AuditUnavailable, &e))?;
    let losses = AuditLossGroup::new();
    let audit = Audit::start(audit, &start_ref, audit_owner::loss_callback(&losses)).map_err(|e| {
        tracing::debug!(reason = e.reason.as_str(), "audit refused");
        held.reason = Some(ReasonClass::Audit(e.reason));
        refusal_facts::store(e.code(), &audit.directory, &e.cause)
    })?;
    let (log, recovered) = (audit.log(), audit.recovered());
    held.stack.push(Part::Audit { audit, domain: domain.clone() });
    audit_owner::start(domain, losses)
        .await
        .map_err(|e| Refusal::because(StartupCode::AuditUnavailable, &e))?;
    Ok((log, recovered))
}

/// Stage 8: run admission with `max_concurrent_runs` slots.
async fn stage_run_admission(
    docs: &Documents,
    domain: &DomainHandle,
) -> Result<(AdmissionOwnerRef, AdmissionPool), Refusal> {
    if fault::injected(FaultPoint::RunAdmission) {
        return Err(StartupCode::RunAdmissionUnavailable.into());
    }
    let runs = AdmissionPool::new(
        "runs",
        docs.gateway.admission.max_concurrent_runs,
        RefusalOrder::UnavailableFirst,
    );
    let owner =
        AdmissionOwnerRef::start(domain, "run_admission", vec![runs.clone()], NotReadyCause::AdmissionLost)
            .await
            .map_err(|e| Refusal::because(StartupCode::RunAdmissionUnavailable, &e))?;
    Ok((owner, runs))
}

/// Stage 9: the environment file, credential capture, provider-call admission, and the pin rules with
/// the acquisition of every site (`startup::providers`).
async fn stage_warm_providers(
    args: &GatewayArgs,
    docs: &Documents,
    built: &Built,
    domain: &DomainHandle,
    held: &mut Startup,
) -> Result<Warm, Refusal> {
    // 9a–9b: read once, capture once; the overlay is a lookup layer that never touches the process
    // environment, so 9e (discarding it) happens when `capture` returns (config.md §7.3).
    let provider_bindings =
        credentials::selected_bindings(&docs.host, &templates::selected_aliases(built, true));
    let captured = credentials::capture(
        &docs.host,
        args.env_file.as_deref(),
        Some(docs.gateway.bearer_binding.as_str()),
        &provider_bindings,
    )
    .map_err(|e| {
        tracing::debug!(kind = e.kind.as_str(), "credential capture refused");
        refusal_facts::credential(&docs.host, e)
    })?;
    let captured = Arc::new(captured);
    // lifecycle.md §6.2: from here on the credentials have a supervised owner whose loss fences.
    credentials_owner::start(domain, captured.clone())
        .await
        .map_err(|e| Refusal::because(StartupCode::InternalError, &e))?;
    if fault::injected(FaultPoint::ProviderAdmission) {
        return Err(StartupCode::ProviderAdmissionUnavailable.into());
    }
    // 9c: provider-call admission: the supervised owner (its loss fences, cause `owner_lost`) and the
    // strict-FIFO admission in front of it (providers.md §9).
    let admission = &docs.gateway.admission;
    let calls = AdmissionPool::new(
        "provider_calls",
        admission.max_active_provider_calls,
        RefusalOrder::UnavailableFirst,
    );
    let owner =
        AdmissionOwnerRef::start(domain, "provider_admission", vec![calls.clone()], NotReadyCause::OwnerLost)
            .await
            .map_err(|e| Refusal::because(StartupCode::ProviderAdmissionUnavailable, &e))?;
    let fifo =
        CallAdmission::new(admission.max_active_provider_calls, admission.max_waiting_provider_calls, calls);
    // 9d, first pass (pins.md §9.2, §9.3 step 1): every tool's installation pins before anything spawns.
    providers::check_installation_pins(docs, built)?;
    // 9d, second pass: the sites, one at a time; a failure has closed what was opened.
    let acquired = providers::acquire_sites(docs, built, &captured, &held.events, Purpose::Serve)
        .await
        .map_err(|refused| {
            held.reason = refused.reason;
            refused.refusal
        })?;
    let version = env!("CARGO_PKG_VERSION").to_owned();
    let ctx = domain.context().clone();
    let sites = (acquired.sites, acquired.models);
    let runtime = Arc::new(ProviderRuntime::new(sites, fifo, ctx, held.events.clone(), version));
    held.stack.push(Part::Providers { runtime: runtime.clone(), domain: domain.clone() });
    // providers.md §12.1: every transport gets its owner now, before readiness; a loss since its
    // acquisition is delivered to the owner at once.
    crate::providers::owner::start_tree(domain, (runtime.sites(), runtime.models()), &held.events)
        .await
        .map_err(|e| Refusal::because(StartupCode::InternalError, &e))?;
    Ok(Warm { credentials: captured, owner, runtime })
}

/// What stage 9 hands on: the captured credentials, the provider-call admission owner, the providers.
struct Warm {
    /// Startup's reference, dropped when `start` returns; the credentials owner keeps the other.
    credentials: Arc<CapturedCredentials>,
    owner: AdmissionOwnerRef,
    runtime: Arc<ProviderRuntime>,
}

/// Stage 10: request admission for `/mcp` and, with `pcc`, the separate PCC stream pool (pcc.md §10).
async fn stage_request_admission(
    docs: &Documents,
    domain: &DomainHandle,
) -> Result<(AdmissionOwnerRef, AdmissionPool, AdmissionPool), Refusal> {
    let size = docs.gateway.admission.max_inflight_requests;
    let requests = AdmissionPool::new("requests", size, RefusalOrder::UnavailableFirst);
    let streams = AdmissionPool::new("pcc_streams", size, RefusalOrder::ExhaustedFirst);
    let owner = AdmissionOwnerRef::start(
        domain,
        "request_admission",
        vec![requests.clone(), streams.clone()],
        NotReadyCause::AdmissionLost,
    )
    .await
    .map_err(|e| Refusal::because(StartupCode::RunAdmissionUnavailable, &e))?;
    Ok((owner, requests, streams))
}

/// Stages 11a and 11b: bind the HTTP listener, then the PCC listener. The MCP front is built here, when
/// every input it needs exists: the captured bearer (stage 9, hashed once now), readiness, the request
/// pool (stage 10) and the templates (stage 5).
fn stage_listeners(
    docs: &Documents,
    parts: FrontParts<'_>,
    events: &EventLog,
) -> Result<listeners::Bound, Refusal> {
    let FrontParts { ctx, pools, run_owner, built, audit, warm, run_artifacts } = parts;
    let bearer = warm.credentials.bearer().ok_or(StartupCode::InternalError)?;
    let settings = FrontSettings {
        authority: docs.gateway.listen.authority(),
        allowed_origins: docs.gateway.listen.allowed_origins.clone(),
        bearer: BearerDigest::of(bearer.expose().as_bytes()),
        readiness: ctx.readiness().clone(),
        requests: pools.requests.clone(),
        built: built.clone(),
    };
    let runner = LuauRunner { providers: Some(warm.runtime.clone()) };
    let executor = Executor::new(
        built.clone(),
        pools.runs.clone(),
        run_owner.clone(),
        Box::new(runner),
        audit,
        events.clone(),
        run_artifacts,
    );
    // pcc.md: the PCC front shares the bearer digest and the execution state of `/mcp`.
    let pcc = docs.gateway.pcc.as_ref().map(|pcc| {
        let bearer = settings.bearer.clone();
        let servers = Arc::new(crate::pcc::methods::servers(&pcc.servers, built));
        let (readiness, streams, exec) =
            (ctx.readiness().clone(), pools.pcc_streams.clone(), executor.shared());
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
    listeners::bind(&docs.gateway, readiness, pools, front, pcc)
        .map_err(|e| refusal_facts::bind(e.address, &e.error))
}

/// What the fronts are built from at stage 11.
struct FrontParts<'a> {
    ctx: &'a DomainContext,
    pools: &'a Pools,
    run_owner: &'a AdmissionOwnerRef,
    built: &'a Arc<Built>,
    audit: Option<AuditLog>,
    warm: &'a Warm,
    run_artifacts: Option<Arc<RunArtifacts>>,
}
