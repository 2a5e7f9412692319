//! The staged shutdown orchestrator: S1–S8 of lifecycle.md §7.3 with the deadlines of lifecycle.md §7.2, for
//! both a signal and an abnormal stop (lifecycle.md §7.5), and the exit status of lifecycle.md §7.4.
//!
//! Owns: the order of the stages, their deadlines and bounds, the built-in parts that act on run
//! admission (S2 quiesce, S3 drain and cancel-all, S6 wait until idle), the readiness step of S1, and the
//! final report. Every other part of a stage is a gateway hook ([`Stage`]): closing listeners, quiescing
//! provider runtimes, checkpointing and closing the event log, closing transports, flushing the audit.
//!
//! Does not own: signal handling (the gateway calls [`crate::ShutdownTrigger::signal`]), what hooks do,
//! or process-group kills (the gateway's safety net when the stages cannot run at all, lifecycle.md §7.5).
//!
//! Hooks run on their own task, so a panicking hook makes its stage unclean instead of unwinding the
//! orchestrator, and a hook that overruns its bound is aborted and makes its stage unclean.

use std::time::Duration;

use tokio::time::Instant;

use crate::admission_owner::AdmissionOwnerRef;
use crate::context::DomainContext;
use crate::exit::{exit_status, ExitStatus, Incidents};
use crate::stage::{Amendments, Stage, StageContext, StageId, StageOutcome, Unclean};
use crate::supervisor::{ChildStop, DomainHandle};

/// The cleanup deadline is the start of S5 + 10,000 ms (lifecycle.md §7.2).
pub const CLEANUP_WINDOW: Duration = Duration::from_millis(10_000);
/// Transport closes after the cleanup deadline take at most 9,000 ms more (providers.md §13.1).
pub const TRANSPORT_CLOSE_WINDOW: Duration = Duration::from_millis(9_000);
/// The audit close bound: 5,000 ms from the start of S7 (lifecycle.md §7.2).
pub const AUDIT_CLOSE_BOUND: Duration = Duration::from_millis(5_000);
/// The event-log close bound: queued records are written for at most 1,000 ms (audit-events.md §3.10).
pub const EVENT_LOG_CLOSE_BOUND: Duration = Duration::from_millis(1_000);
/// The bound on stages that only act and never wait for work (S1, S2, S4, and a hook of S3), and on the
/// run-admission owner's acknowledgements. Not in the spec: an implementation bound (see the crate docs).
pub const ACTION_BOUND: Duration = Duration::from_millis(2_000);
/// Slack given to a hook after a spec deadline it must act at (S5, S6, S8), so that a hook enforcing the
/// spec's own bound is never cut off by the orchestrator first.
pub const HOOK_GRACE: Duration = Duration::from_millis(1_000);

/// What the gateway wires into its shutdown.
pub struct ShutdownPlan {
    run_admission: AdmissionOwnerRef,
    hooks: Vec<(StageId, Box<dyn Stage>)>,
    private_audit: bool,
    domain: Option<(DomainHandle, Duration)>,
}

impl std::fmt::Debug for ShutdownPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hooks: Vec<StageId> = self.hooks.iter().map(|(s, _)| *s).collect();
        f.debug_struct("ShutdownPlan")
            .field("hooks", &hooks)
            .field("private_audit", &self.private_audit)
            .finish()
    }
}

impl ShutdownPlan {
    /// A plan around the run-admission owner, with no hooks and no `private_audit` (S7 skipped).
    pub fn new(run_admission: AdmissionOwnerRef) -> Self {
        ShutdownPlan { run_admission, hooks: Vec::new(), private_audit: false, domain: None }
    }

    /// Adds the gateway's part of `stage`; it runs after the stage's built-in part. A second hook for
    /// the same stage runs after the first.
    pub fn with_stage(mut self, stage: StageId, hook: impl Stage) -> Self {
        self.hooks.push((stage, Box::new(hook)));
        self
    }

    /// With `private_audit`, S7 runs (and is recorded); without, it is skipped.
    pub fn with_private_audit(mut self, private_audit: bool) -> Self {
        self.private_audit = private_audit;
        self
    }

    /// After S8, stop every still-running child of `domain` in reverse start order (each bounded by
    /// `bound_per_child`), then the supervisor.
    pub fn with_domain(mut self, domain: DomainHandle, bound_per_child: Duration) -> Self {
        self.domain = Some((domain, bound_per_child));
        self
    }
}

/// What the shutdown did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Every stage in order with its final outcome (amendments included).
    pub stages: Vec<(StageId, StageOutcome)>,
    pub incidents: Incidents,
    pub exit: ExitStatus,
    /// How each child stopped at the end (empty without [`ShutdownPlan::with_domain`]).
    pub children: Vec<(String, ChildStop)>,
}

impl ShutdownReport {
    /// The outcome of one stage.
    pub fn outcome(&self, stage: StageId) -> Option<StageOutcome> {
        self.stages.iter().find(|(s, _)| *s == stage).map(|(_, o)| *o)
    }
}

/// Runs S1–S8 and returns the report with the exit status. If nothing triggered the shutdown yet, this
/// call counts as the first signal. An abnormal stop reported before or during the shutdown sets the
/// drain deadline to its instant (S3 cancels at once) and makes the exit status 70 (lifecycle.md §7.5).
pub async fn run_shutdown(ctx: &DomainContext, plan: ShutdownPlan) -> ShutdownReport {
    if !ctx.trigger().is_triggered() {
        ctx.trigger().signal();
    }
    let ShutdownPlan { run_admission, hooks, private_audit, domain } = plan;
    let mut run = Orchestrator {
        ctx: ctx.clone(),
        run_admission,
        hooks,
        amendments: Amendments::default(),
        cleanup_deadline: None,
        stages: Vec::with_capacity(StageId::ALL.len()),
    };
    run.stop_listeners().await;
    run.quiesce().await;
    run.drain_runs().await;
    run.simple(StageId::CheckpointEvents, ACTION_BOUND).await;
    run.provider_cleanup().await;
    run.admission_clean().await;
    run.audit_flush(private_audit).await;
    run.simple(StageId::EventLogClose, EVENT_LOG_CLOSE_BOUND + HOOK_GRACE).await;
    let report = run.finish();
    let children = match domain {
        Some((domain, bound)) => domain.shutdown(bound).await,
        None => Vec::new(),
    };
    ShutdownReport { children, ..report }
}

struct Orchestrator {
    ctx: DomainContext,
    run_admission: AdmissionOwnerRef,
    hooks: Vec<(StageId, Box<dyn Stage>)>,
    amendments: Amendments,
    cleanup_deadline: Option<Instant>,
    stages: Vec<(StageId, StageOutcome)>,
}

impl Orchestrator {
    fn drain_deadline(&self) -> Instant {
        self.ctx.trigger().state().drain_deadline().unwrap_or_else(Instant::now)
    }

    fn context(&self, stage: StageId, started: Instant, bound: Instant) -> StageContext {
        StageContext {
            stage,
            started,
            drain_deadline: self.drain_deadline(),
            cleanup_deadline: self.cleanup_deadline,
            bound,
            abnormal: self.ctx.trigger().abnormal(),
            amendments: self.amendments.clone(),
        }
    }

    /// Runs every hook registered for `stage`, each on its own task, abandoning it at `bound`.
    async fn hooks(&mut self, stage: StageId, started: Instant, bound: Instant) -> StageOutcome {
        let mut outcome = StageOutcome::Clean;
        let mut remaining = Vec::with_capacity(self.hooks.len());
        let mut mine = Vec::new();
        for (id, hook) in std::mem::take(&mut self.hooks) {
            if id == stage {
                mine.push(hook);
            } else {
                remaining.push((id, hook));
            }
        }
        self.hooks = remaining;
        for hook in mine {
            let task = tokio::spawn(hook.run(self.context(stage, started, bound)));
            let abort = task.abort_handle();
            let result = match tokio::time::timeout_at(bound, task).await {
                Ok(Ok(result)) => result,
                Ok(Err(_panicked_or_aborted)) => StageOutcome::Unclean(Unclean::Failed),
                Err(_elapsed) => {
                    abort.abort();
                    StageOutcome::Unclean(Unclean::DeadlineExceeded)
                }
            };
            outcome = outcome.and(result);
        }
        outcome
    }

    fn record(&mut self, stage: StageId, outcome: StageOutcome) {
        tracing::info!(stage = %stage, ?outcome, "shutdown stage ended");
        self.ctx.observer().shutdown_stage(stage, outcome);
        self.stages.push((stage, outcome));
    }

    /// The start of a stage: the observer hears it (audit-events.md §3.6), then its clock starts.
    fn begin(&self, stage: StageId) -> Instant {
        self.ctx.observer().shutdown_stage_started(stage);
        Instant::now()
    }

    /// A stage made only of its hooks (S4, S8).
    async fn simple(&mut self, stage: StageId, bound: Duration) {
        let started = self.begin(stage);
        let outcome = self.hooks(stage, started, started + bound).await;
        self.record(stage, outcome);
    }

    /// S1: readiness false (recorded once as `shutdown` if it was ready), then the listeners' hook.
    async fn stop_listeners(&mut self) {
        // Readiness first: the `not_ready` `shutdown` record precedes S1's `started` (audit-events.md §3.6).
        self.ctx.begin_drain();
        let started = self.begin(StageId::StopListeners);
        let outcome = self.hooks(StageId::StopListeners, started, started + ACTION_BOUND).await;
        self.record(StageId::StopListeners, outcome);
    }

    /// S2: run admission refuses new reservations; clean iff every owner acknowledged.
    async fn quiesce(&mut self) {
        let started = self.begin(StageId::Quiesce);
        let acked = self.run_admission.quiesce(ACTION_BOUND).await.is_ok();
        let own = StageOutcome::from_bool(acked, Unclean::NotAcknowledged);
        let hooks = self.hooks(StageId::Quiesce, started, started + ACTION_BOUND).await;
        self.record(StageId::Quiesce, own.and(hooks));
    }

    /// S3: wait for admitted runs until the drain deadline (which an abnormal stop may bring forward
    /// while we wait), then cancel every remaining run; clean iff none had to be cancelled.
    async fn drain_runs(&mut self) {
        let started = self.begin(StageId::DrainRuns);
        let mut changes = self.ctx.trigger().subscribe();
        let drained = loop {
            let deadline = self.drain_deadline();
            tokio::select! {
                drained = wait_all_idle(&self.run_admission, deadline) => break drained,
                changed = changes.changed() => {
                    if changed.is_err() {
                        break wait_all_idle(&self.run_admission, deadline).await;
                    }
                }
            }
        };
        if !drained {
            let _ = self.run_admission.cancel_all(ACTION_BOUND).await;
        }
        let own = StageOutcome::from_bool(drained, Unclean::RunsCancelled);
        let hooks = self.hooks(StageId::DrainRuns, started, Instant::now() + ACTION_BOUND).await;
        self.record(StageId::DrainRuns, own.and(hooks));
    }

    /// S5: the cleanup deadline starts now; the hook seals, waits for borrows until it, then closes
    /// every transport (at most 9,000 ms more).
    async fn provider_cleanup(&mut self) {
        let started = self.begin(StageId::ProviderCleanup);
        let cleanup_deadline = started + CLEANUP_WINDOW;
        self.cleanup_deadline = Some(cleanup_deadline);
        let bound = cleanup_deadline + TRANSPORT_CLOSE_WINDOW + HOOK_GRACE;
        let outcome = self.hooks(StageId::ProviderCleanup, started, bound).await;
        self.record(StageId::ProviderCleanup, outcome);
    }

    /// S6: wait until run admission has no run in use, up to the cleanup deadline; then the hook closes
    /// whatever connection or stream is still open. Clean iff zero was reached in time and run admission
    /// was never fenced.
    async fn admission_clean(&mut self) {
        let started = self.begin(StageId::AdmissionClean);
        let cleanup_deadline = self.cleanup_deadline.unwrap_or(started + CLEANUP_WINDOW);
        let idle = wait_all_idle(&self.run_admission, cleanup_deadline).await;
        let own = if self.run_admission.any_fenced() {
            StageOutcome::Unclean(Unclean::AdmissionFenced)
        } else {
            StageOutcome::from_bool(idle, Unclean::RunsRemaining)
        };
        let bound = cleanup_deadline.max(Instant::now()) + HOOK_GRACE;
        let hooks = self.hooks(StageId::AdmissionClean, started, bound).await;
        self.record(StageId::AdmissionClean, own.and(hooks));
    }

    /// S7: only with `private_audit`, and skipped when the audit caused an abnormal stop (lifecycle.md §7.5).
    async fn audit_flush(&mut self, private_audit: bool) {
        let audit_is_cause = self.ctx.trigger().abnormal().is_some_and(|c| c.is_audit());
        if !private_audit || audit_is_cause {
            self.hooks.retain(|(s, _)| *s != StageId::AuditFlush);
            self.record(StageId::AuditFlush, StageOutcome::Skipped);
            return;
        }
        self.simple(StageId::AuditFlush, AUDIT_CLOSE_BOUND).await;
    }

    fn finish(self) -> ShutdownReport {
        let stages: Vec<(StageId, StageOutcome)> = self
            .stages
            .into_iter()
            .map(|(stage, outcome)| match outcome {
                StageOutcome::Clean if self.amendments.contains(stage) => {
                    (stage, StageOutcome::Unclean(Unclean::Amended))
                }
                other => (stage, other),
            })
            .collect();
        let incidents = Incidents {
            run_admission_fenced: self.run_admission.any_fenced(),
            provider_cleanup_failed: self.ctx.provider_cleanup_failed(),
            abnormal_stop: self.ctx.trigger().abnormal().is_some(),
        };
        let exit = exit_status(&stages, incidents);
        tracing::info!(exit = exit.code(), "shutdown finished");
        ShutdownReport { stages, incidents, exit, children: Vec::new() }
    }
}

/// True iff every pool of the owner reached zero in use by `deadline`.
async fn wait_all_idle(owner: &AdmissionOwnerRef, deadline: Instant) -> bool {
    for pool in owner.pools() {
        if pool.wait_until_idle(deadline).await.is_err() {
            return false;
        }
    }
    true
}
