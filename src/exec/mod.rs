//! Execution of an admitted `tools/call` (execution.md §2–§10): what happens after the front's
//! readiness check (http-mcp.md §8.4).
//!
//! Owns the call's life from the input check to the release of its run slot: [`driver`] orders it,
//! `commit` decides when its commit leaves (with the message, for a quick provider-free run),
//! `settle` is the path after the run that the PCC front shares (the outcome table, the audit, the trace's
//! end), [`stream`] writes the committed event stream, [`result`] builds the exact result shapes, [`outcome`]
//! holds the outcomes' precedence and fixed texts (the closed codes are `crate::codes::outcome`), and [`runner`] is the seam to the application
//! runtime ([`luau_runner`] runs Luau workflows). A dispatched write call's record goes through
//! [`Shared::audit`] before publication. It does not own HTTP validation (`crate::mcp`), the runtime's
//! sandbox (`crate::apps`) or the audit's files and durability (`crate::audit`).

pub mod borrow;
pub(crate) mod commit;
pub mod driver;
pub mod luau_runner;
pub mod outcome;
pub mod result;
pub mod runner;
pub(crate) mod settle;
pub mod stream;
pub(crate) mod trace;

use std::sync::Arc;

use ptc_actors::{AdmissionOwnerRef, AdmissionPool};

use crate::apps::Built;
use crate::audit::AuditLog;
use crate::events::EventLog;
use crate::http::mcp::ResponseFuture;
use crate::mcp::call::{AdmittedCall, CallExecutor};
use crate::traces::RunArtifacts;
use runner::Runner;

/// What every call of the domain shares.
pub struct Shared {
    pub built: Arc<Built>,
    /// The run slots (`admission.max_concurrent_runs`), shared with the PCC front.
    pub runs: AdmissionPool,
    /// The run-admission owner: every call's task is linked to it, and a run lost before it settled
    /// is reported to it, which fences run admission and then readiness through its supervisor
    /// (lifecycle.md §6.3, execution.md §6.2 step 4).
    pub run_owner: AdmissionOwnerRef,
    pub runner: Box<dyn Runner>,
    /// The private audit, present iff `private_audit` is configured (audit-events.md §2.1).
    pub audit: Option<AuditLog>,
    /// The `publication_failed` and `artifact_failed` counters (audit-events.md §3.5).
    pub events: EventLog,
    /// The run artifacts, present iff `artifacts.trace` is configured (traces.md).
    pub(crate) artifacts: Option<Arc<RunArtifacts>>,
}

/// The domain's call executor, plugged into the `/mcp` front.
pub struct Executor {
    shared: Arc<Shared>,
}

impl Executor {
    /// An executor over the built templates, the run pool and its owner, running applications
    /// with `runner`, recording write calls through `audit` and counting into `events`.
    pub fn new(
        built: Arc<Built>,
        runs: AdmissionPool,
        run_owner: AdmissionOwnerRef,
        runner: Box<dyn Runner>,
        audit: Option<AuditLog>,
        events: EventLog,
        artifacts: Option<Arc<RunArtifacts>>,
    ) -> Executor {
        Executor { shared: Arc::new(Shared { built, runs, run_owner, runner, audit, events, artifacts }) }
    }

    /// What every call shares; the PCC front runs its calls over the same (`pcc::call`).
    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }
}

impl CallExecutor for Executor {
    fn execute(&self, call: AdmittedCall) -> ResponseFuture<'_> {
        Box::pin(driver::answer(&self.shared, call))
    }
}
