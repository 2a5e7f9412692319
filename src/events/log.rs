//! [`EventLog`]: the handle every emitter holds, and the domain observer that turns readiness and
//! shutdown transitions into records (audit-events.md §3.6).
//!
//! Owns: starting the logger over the locked events store at stage 4 (with `events_lock_recovered` as the
//! first record after a takeover, then `startup_stage` `artifact_root` `ready`), the emit helpers (which
//! never block and never fail: a refused record is counted in `dropped_events`), the `publication_failed`
//! counter, shutdown mode (checkpoint events, S4: no `readiness` record from then on), and the bounded close
//! (event log close, S8, or the release after a failed start). A gateway without `artifacts.events` holds a
//! disabled handle on which every call does nothing.
//!
//! Does not own: the events lock (released by its `storage` owner after [`EventLog::close`]), the
//! queue or thread (`ptc_actors::event_logger`), files, encoding or counters (sibling modules).
//!
//! Logging never changes readiness (lifecycle.md §6.3): if the writer cannot be started the gateway
//! serves without a log, and every emit only enqueues.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ptc_actors::{DomainObserver, EventLogger, StageOutcome};

use super::counters::{Counters, PairSlots};
use super::files::EventFiles;
use super::record::{
    stderr_text, Event, ReasonClass, Record, ShutdownOutcome, StartupOutcome, StartupStage, Transition,
};
use super::sink::Sink;
use crate::codes::model::ModelFailure;
use crate::codes::provider::Dispatch;
use crate::codes::stage::EVENT_LOG_CLOSE_BOUND;
use crate::codes::transport::TransportFault;
use crate::codes::StartupCode;
use crate::codes::{GatewayDomain, NotReadyCause, StageId};
use crate::config::gateway::EventsConfig;
use crate::storage::{EventsStore, StartRef};

/// How long past the close bound the closer waits for the writer's final report and sync. Not in the spec: it
/// keeps the event log close stage (S8, bounded at 1,000 ms plus the orchestrator's 1,000 ms grace) able to
/// release the lock after a writer stuck in the kernel.
const CLOSE_GRACE: Duration = Duration::from_millis(500);

struct Inner {
    logger: EventLogger<Event>,
    counters: Arc<Counters>,
    shutdown_mode: AtomicBool,
    /// `artifacts.events.stderr` (audit-events.md §3.8).
    stderr: bool,
    /// `artifacts.events.max_file_bytes`, which sizes a stderr tail (audit-events.md §3.8).
    max_file_bytes: u64,
}

/// The event log of this process, or a disabled one. Cheap to clone.
#[derive(Clone, Default)]
pub struct EventLog {
    inner: Option<Arc<Inner>>,
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLog").field("enabled", &self.inner.is_some()).finish()
    }
}

impl EventLog {
    /// No event log (`artifacts.events` absent, `--print-pins`, or a writer that could not start).
    pub fn disabled() -> EventLog {
        EventLog { inner: None }
    }

    /// Stage 4 (lifecycle.md §3.2): starts the logger over the validated, locked store. `tools` are the
    /// served tools' names in tool order (the `publication_failed` slots, audit-events.md §3.7).
    pub fn start(
        store: &EventsStore,
        cfg: &EventsConfig,
        start_ref: &StartRef,
        tools: Vec<String>,
    ) -> EventLog {
        let Ok(dir) = store.dir().try_clone() else {
            tracing::warn!("event log unavailable; serving without it");
            return EventLog::disabled();
        };
        let counters = Arc::new(Counters::new(tools));
        let files = EventFiles::new(
            dir,
            start_ref.as_str(),
            cfg.max_file_bytes,
            cfg.max_retained_files,
            store.inventory(),
        );
        let Ok(logger) = EventLogger::start(Sink::new(files, counters.clone())) else {
            tracing::warn!("event logger did not start; serving without it");
            return EventLog::disabled();
        };
        let log = EventLog {
            inner: Some(Arc::new(Inner {
                logger,
                counters,
                shutdown_mode: AtomicBool::new(false),
                stderr: cfg.stderr,
                max_file_bytes: cfg.max_file_bytes,
            })),
        };
        if store.lock_recovered() {
            // audit-events.md §1.4: the first record after a takeover.
            log.emit(Record::EventsLockRecovered);
        }
        log.stage(StartupStage::ArtifactRoot, StartupOutcome::Ready);
        log
    }

    /// Resolves once the writer thread has ended; never for a disabled log (there is no thread).
    pub async fn writer_ended(&self) {
        match &self.inner {
            Some(inner) => inner.logger.ended().await,
            None => std::future::pending().await,
        }
    }

    /// Whether records are being logged.
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Enqueues `record`, timestamped now; a refused record is counted (audit-events.md §3.7).
    pub fn emit(&self, record: Record) {
        if let Some(inner) = &self.inner {
            if !inner.logger.try_emit(Event::now(record)) {
                inner.counters.dropped();
            }
        }
    }

    /// `startup_stage` (audit-events.md §3.6).
    pub fn stage(&self, stage: StartupStage, outcome: StartupOutcome) {
        self.emit(Record::StartupStage { stage, outcome });
    }

    /// `startup_failed` with the code the process exits with (audit-events.md §3.6; lifecycle.md §5.2).
    /// The cumulative counters reported so far (audit-events.md §3.12); empty without a log.
    pub fn counter_totals(&self) -> Vec<(super::counters::TotalKey, u64)> {
        self.inner.as_ref().map(|inner| inner.counters.totals()).unwrap_or_default()
    }

    pub fn startup_failed(&self, code: StartupCode, reason_class: ReasonClass) {
        self.emit(Record::StartupFailed { code, reason_class });
    }

    /// `audit_recovered`, for the audit stage (audit-events.md §2.5 step 8); nothing when neither count is
    /// positive.
    pub fn audit_recovered(&self, removed_bytes: u64, removed_empty_files: u64) {
        if removed_bytes > 0 || removed_empty_files > 0 {
            self.emit(Record::AuditRecovered { removed_bytes, removed_empty_files });
        }
    }

    /// One call of served tool `tool` (its index in tool order) whose publication failed
    /// (audit-events.md §3.5).
    pub fn publication_failed(&self, tool: usize) {
        if let Some(inner) = &self.inner {
            inner.counters.publication_failed(tool);
        }
    }

    /// A run of `tool` whose trace failed (traces.md §7).
    pub fn artifact_failed(&self, tool: usize) {
        if let Some(inner) = &self.inner {
            inner.counters.artifact_failed(tool);
        }
    }

    /// The per-acquisition counter slots of (tool, provider), registered once at stage 9
    /// (audit-events.md §3.7).
    pub fn pair(&self, tool: &str, provider: &str) -> Arc<PairSlots> {
        match &self.inner {
            Some(inner) => inner.counters.register_pair(tool, provider),
            None => PairSlots::detached(tool, provider),
        }
    }

    /// Whether `stderr_tail` records are written (`artifacts.events.stderr`, audit-events.md §3.8).
    pub fn stderr_enabled(&self) -> bool {
        self.inner.as_ref().is_some_and(|inner| inner.stderr)
    }

    /// One failed model call (models.md §9).
    pub fn model_failure(&self, tool: &str, provider: &str, class: ModelFailure, dispatch: Dispatch) {
        self.emit(Record::ModelFailure {
            tool: tool.to_owned(),
            provider: provider.to_owned(),
            class,
            dispatch,
        });
    }

    /// One transport's end (providers.md §12.2).
    pub fn transport(&self, tool: &str, provider: &str, fault: TransportFault, exit_status: Option<i32>) {
        self.emit(Record::Transport {
            tool: tool.to_owned(),
            provider: provider.to_owned(),
            fault,
            exit_status,
        });
    }

    /// `stderr_tail` for a ring's content (audit-events.md §3.8); nothing unless enabled.
    pub fn stderr_tail(&self, tool: &str, provider: &str, bytes: &[u8], ring_truncated: bool) {
        let Some(inner) = self.inner.as_ref().filter(|inner| inner.stderr) else { return };
        let (text, truncated) = stderr_text(bytes, ring_truncated, inner.max_file_bytes);
        self.emit(Record::StderrTail {
            tool: tool.to_owned(),
            provider: provider.to_owned(),
            text,
            truncated,
        });
    }

    /// `readiness` `not_ready` with the acquisition's pair, for the fence that one acquisition caused
    /// (providers.md §12.1 step 4); nothing in shutdown mode.
    pub fn pair_not_ready(&self, cause: NotReadyCause, tool: &str, provider: &str) {
        if !self.in_shutdown_mode() {
            self.emit(Record::PairNotReady { cause, tool: tool.to_owned(), provider: provider.to_owned() });
        }
    }

    /// Shutdown stage S4, checkpoint events (lifecycle.md §7.3): from now on no `readiness` record is written
    /// (the stderr tails of the checkpoint are written by the provider runtime just before).
    pub fn enter_shutdown_mode(&self) {
        if let Some(inner) = &self.inner {
            inner.shutdown_mode.store(true, Ordering::Release);
        }
    }

    /// audit-events.md §3.10: stop taking records, write what is queued for at most 1,000 ms, the final
    /// counters, sync and close. Blocks the calling thread (use a blocking task). Returns false if the writer
    /// did not finish in time; the caller releases the lock either way.
    pub fn close(&self) -> bool {
        match &self.inner {
            Some(inner) => inner.logger.close(EVENT_LOG_CLOSE_BOUND, CLOSE_GRACE),
            None => true,
        }
    }

    /// [`EventLog::close`] from async code.
    pub async fn close_async(&self) -> bool {
        let log = self.clone();
        tokio::task::spawn_blocking(move || log.close()).await.unwrap_or(false)
    }

    /// Test hook of the event-log vector EV5 (audit-events.md §6.2): park the writer; see
    /// `ptc_actors::EventLogger::hold`.
    pub fn hold(&self, bound: Duration) -> bool {
        self.inner.as_ref().is_some_and(|inner| inner.logger.hold(bound))
    }

    /// Releases a writer parked by [`EventLog::hold`].
    pub fn release_hold(&self) {
        if let Some(inner) = &self.inner {
            inner.logger.release_hold();
        }
    }

    fn in_shutdown_mode(&self) -> bool {
        self.inner.as_ref().is_some_and(|inner| inner.shutdown_mode.load(Ordering::Acquire))
    }
}

/// The domain's transitions as records (audit-events.md §3.6). Only enqueues, never blocks or panics.
impl DomainObserver<GatewayDomain> for EventLog {
    fn ready(&self) {
        self.emit(Record::Readiness(Transition::Ready));
    }

    fn not_ready(&self, cause: NotReadyCause) {
        if !self.in_shutdown_mode() {
            self.emit(Record::Readiness(Transition::NotReady(cause)));
        }
    }

    fn shutdown_stage_started(&self, stage: StageId) {
        if let Some(record) = Record::shutdown_stage(stage, ShutdownOutcome::Started) {
            self.emit(record);
        }
    }

    fn shutdown_stage(&self, stage: StageId, outcome: StageOutcome) {
        if let Some(record) = ShutdownOutcome::of(outcome).and_then(|o| Record::shutdown_stage(stage, o)) {
            self.emit(record);
        }
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
