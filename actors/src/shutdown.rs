//! The staged shutdown orchestrator: it runs the domain's stage table ([`Domain::stages`]) in order, the
//! same way after a signal and after an abnormal stop, and derives the exit status (`exit.rs`).
//!
//! Owns: the mechanics: running each stage's built-in part ([`Builtin`]: the readiness step, the parts
//! that act on the drained admission, the cleanup deadline), then its hooks, each on its own task and
//! bounded ([`Bound`]); skipping optional stages and the stages an abnormal cause skips; late
//! amendments; and the final report. Every other part of a stage is a hook of the embedding program
//! ([`Stage`]).
//!
//! Does not own: the stages, their order, their deadlines or which count for the exit status (the
//! domain's table), signal handling (the program calls the trigger's `signal`), what hooks do, or a
//! safety net for a shutdown that cannot run at all.
//!
//! Hooks run on their own task, so a panicking hook makes its stage unclean instead of unwinding the
//! orchestrator, and a hook that overruns its bound is aborted and makes its stage unclean.

use std::time::Duration;

use tokio::time::Instant;

use crate::admission_owner::AdmissionOwnerRef;
use crate::context::DomainContext;
use crate::domain::{Bound, Builtin, Domain, StageSpec};
use crate::exit::{exit_status, ExitStatus, Incidents};
use crate::stage::{Amendments, Stage, StageContext, StageOutcome, Unclean};
use crate::supervisor::{ChildStop, DomainHandle};

/// The bound on stages that only act and never wait for work, and on the drained admission owner's
/// acknowledgements (see the crate docs).
pub const ACTION_BOUND: Duration = Duration::from_millis(2_000);
/// Slack given to a hook after a deadline it must act at, so that a hook enforcing its own bound is
/// never cut off by the orchestrator first.
pub const HOOK_GRACE: Duration = Duration::from_millis(1_000);

/// What the embedding program wires into its shutdown.
pub struct ShutdownPlan<D: Domain> {
    /// The admission owner whose leases the drain waits for (the built-in parts act on it).
    admission: AdmissionOwnerRef,
    stages: Vec<StageSpec<D>>,
    hooks: Vec<(D::Stage, Box<dyn Stage<D>>)>,
    enabled: Vec<D::Stage>,
    domain: Option<(DomainHandle<D>, Duration)>,
}

impl<D: Domain> std::fmt::Debug for ShutdownPlan<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hooks: Vec<D::Stage> = self.hooks.iter().map(|(s, _)| *s).collect();
        f.debug_struct("ShutdownPlan").field("hooks", &hooks).field("enabled", &self.enabled).finish()
    }
}

impl<D: Domain> ShutdownPlan<D> {
    /// A plan over the domain's stage table that drains `admission` (the owner of the pools whose leases
    /// the drain waits for and cancels), with no hooks and no optional stage enabled.
    pub fn new(admission: AdmissionOwnerRef) -> Self {
        ShutdownPlan { admission, stages: D::stages(), hooks: Vec::new(), enabled: Vec::new(), domain: None }
    }

    /// Adds the program's part of `stage`; it runs after the stage's built-in part. A second hook for
    /// the same stage runs after the first.
    pub fn with_stage(mut self, stage: D::Stage, hook: impl Stage<D>) -> Self {
        self.hooks.push((stage, Box::new(hook)));
        self
    }

    /// Enables (or disables) an optional stage: a disabled one is recorded as skipped and never starts.
    pub fn with_enabled(mut self, stage: D::Stage, enabled: bool) -> Self {
        self.enabled.retain(|s| *s != stage);
        if enabled {
            self.enabled.push(stage);
        }
        self
    }

    /// After the last stage, stop every still-running child of `domain` in reverse start order (each
    /// bounded by `bound_per_child`), then the supervisor.
    pub fn with_domain(mut self, domain: DomainHandle<D>, bound_per_child: Duration) -> Self {
        self.domain = Some((domain, bound_per_child));
        self
    }
}

/// What the shutdown did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShutdownReport<D: Domain> {
    /// Every stage in order with its final outcome (amendments included).
    pub stages: Vec<(D::Stage, StageOutcome)>,
    pub incidents: Incidents,
    pub exit: ExitStatus,
    /// How each child stopped at the end (empty without [`ShutdownPlan::with_domain`]).
    pub children: Vec<(String, ChildStop)>,
}

impl<D: Domain> ShutdownReport<D> {
    /// The outcome of one stage.
    pub fn outcome(&self, stage: D::Stage) -> Option<StageOutcome> {
        self.stages.iter().find(|(s, _)| *s == stage).map(|(_, o)| *o)
    }

    /// The numeric exit status: 0, or the domain's [`Domain::UNCLEAN_EXIT`].
    pub fn exit_code(&self) -> u8 {
        self.exit.code::<D>()
    }
}

/// Runs the stage table in order and returns the report with the exit status. If nothing triggered the
/// shutdown yet, this call counts as the first signal. An abnormal stop reported before or during the
/// shutdown sets the drain deadline to its instant (the draining stage cancels at once) and makes the exit
/// unclean.
pub async fn run_shutdown<D: Domain>(ctx: &DomainContext<D>, plan: ShutdownPlan<D>) -> ShutdownReport<D> {
    if !ctx.trigger().is_triggered() {
        ctx.trigger().signal();
    }
    let ShutdownPlan { admission, stages, hooks, enabled, domain } = plan;
    let mut run = Orchestrator {
        ctx: ctx.clone(),
        admission,
        hooks,
        amendments: Amendments::new(stages.iter().map(|s| s.id)),
        cleanup_deadline: None,
        stages: Vec::with_capacity(stages.len()),
    };
    for spec in &stages {
        run.stage(spec, enabled.contains(&spec.id)).await;
    }
    let report = run.finish(&stages);
    let children = match domain {
        Some((domain, bound)) => domain.shutdown(bound).await,
        None => Vec::new(),
    };
    ShutdownReport { children, ..report }
}

struct Orchestrator<D: Domain> {
    ctx: DomainContext<D>,
    admission: AdmissionOwnerRef,
    hooks: Vec<(D::Stage, Box<dyn Stage<D>>)>,
    amendments: Amendments<D>,
    cleanup_deadline: Option<Instant>,
    stages: Vec<(D::Stage, StageOutcome)>,
}

impl<D: Domain> Orchestrator<D> {
    fn drain_deadline(&self) -> Instant {
        self.ctx.trigger().state().drain_deadline().unwrap_or_else(Instant::now)
    }

    fn context(&self, stage: D::Stage, started: Instant, bound: Instant) -> StageContext<D> {
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

    /// Takes every hook registered for `stage` out of the plan.
    fn take_hooks(&mut self, stage: D::Stage) -> Vec<Box<dyn Stage<D>>> {
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
        mine
    }

    /// Runs every hook registered for `stage`, each on its own task, abandoning it at `bound`.
    async fn hooks(&mut self, stage: D::Stage, started: Instant, bound: Instant) -> StageOutcome {
        let mut outcome = StageOutcome::Clean;
        for hook in self.take_hooks(stage) {
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

    fn record(&mut self, stage: D::Stage, outcome: StageOutcome) {
        tracing::info!(?stage, ?outcome, "shutdown stage ended");
        self.ctx.observer().shutdown_stage(stage, outcome);
        self.stages.push((stage, outcome));
    }

    /// The start of a stage: the observer hears it before anything of the stage happens, then its clock
    /// starts.
    fn begin(&self, stage: D::Stage) -> Instant {
        self.ctx.observer().shutdown_stage_started(stage);
        Instant::now()
    }

    /// One stage: skipped (recorded, never started) if optional and not enabled or if its abnormal cause
    /// skips it; otherwise its built-in part, then its hooks within its bound.
    async fn stage(&mut self, spec: &StageSpec<D>, enabled: bool) {
        let skipped_by_cause = match (spec.skip_on_abnormal, self.ctx.trigger().abnormal()) {
            (Some(rule), Some(cause)) => rule(cause),
            _ => false,
        };
        if (spec.optional && !enabled) || skipped_by_cause {
            let _ = self.take_hooks(spec.id);
            self.record(spec.id, StageOutcome::Skipped);
            return;
        }
        if spec.builtin == Builtin::BeginDrain {
            // Readiness first: the observer hears the drain's readiness transition before the stage's
            // start.
            self.ctx.begin_drain();
        }
        let started = self.begin(spec.id);
        let own = self.builtin(spec.builtin, started).await;
        let bound = match spec.bound {
            Bound::FromStart(after) => started + after,
            Bound::FromBuiltin(after) => Instant::now() + after,
            Bound::FromCleanupDeadline(after) => {
                self.cleanup_deadline.unwrap_or(started).max(Instant::now()) + after
            }
        };
        let hooks = self.hooks(spec.id, started, bound).await;
        // A stage without a built-in part is exactly its hooks (a hook may report `Skipped`).
        self.record(spec.id, own.map_or(hooks, |own| own.and(hooks)));
    }

    /// A stage's built-in part and its own outcome (`None` when it has none that can fail).
    async fn builtin(&mut self, builtin: Builtin, started: Instant) -> Option<StageOutcome> {
        let own = match builtin {
            Builtin::Hooks | Builtin::BeginDrain => return None,
            Builtin::StopAdmitting => {
                let acked = self.admission.quiesce(ACTION_BOUND).await.is_ok();
                StageOutcome::from_bool(acked, Unclean::NotAcknowledged)
            }
            Builtin::DrainAdmitted => {
                let drained = self.drain_admitted().await;
                StageOutcome::from_bool(drained, Unclean::LeasesCancelled)
            }
            Builtin::StartCleanup(window) => {
                self.cleanup_deadline = Some(started + window);
                return None;
            }
            Builtin::AwaitAdmissionIdle => {
                let cleanup_deadline = self.cleanup_deadline.unwrap_or(started);
                let idle = wait_all_idle(&self.admission, cleanup_deadline).await;
                if self.admission.any_fenced() {
                    StageOutcome::Unclean(Unclean::AdmissionFenced)
                } else {
                    StageOutcome::from_bool(idle, Unclean::LeasesRemaining)
                }
            }
        };
        Some(own)
    }

    /// Waits for the admitted leases until the drain deadline (which an abnormal stop may bring forward
    /// while we wait), then cancels the work of every remaining one. True iff none had to be cancelled.
    async fn drain_admitted(&mut self) -> bool {
        let mut changes = self.ctx.trigger().subscribe();
        let drained = loop {
            let deadline = self.drain_deadline();
            tokio::select! {
                drained = wait_all_idle(&self.admission, deadline) => break drained,
                changed = changes.changed() => {
                    if changed.is_err() {
                        break wait_all_idle(&self.admission, deadline).await;
                    }
                }
            }
        };
        if !drained {
            let _ = self.admission.cancel_all(ACTION_BOUND).await;
        }
        drained
    }

    fn finish(self, specs: &[StageSpec<D>]) -> ShutdownReport<D> {
        let stages: Vec<(D::Stage, StageOutcome)> = self
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
            admission_fenced: self.admission.any_fenced(),
            exit_fence: self.ctx.exit_fence(),
            abnormal_stop: self.ctx.trigger().abnormal().is_some(),
        };
        let counted = stages.iter().filter_map(|(stage, outcome)| {
            let counts = specs.iter().find(|s| s.id == *stage).is_some_and(|s| s.counts_for_exit);
            counts.then_some(*outcome)
        });
        let exit = exit_status(counted, incidents);
        tracing::info!(exit = exit.code::<D>(), "shutdown finished");
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
