//! The metrics writer (audit-events.md §3.12) and its owner in the supervision tree, `metrics_writer`: a
//! [`TaskOwner`] whose one task replaces the file at readiness and then every `interval_ms`. Its loss is
//! tolerated: like the event log, metrics never change readiness. The event log close stage (S8) stops it and
//! writes the file one last time (readiness then reads 0), so a stopped gateway does not leave a file that
//! says it is ready.
//!
//! Owns: reading a [`Snapshot`] from its sources and the atomic replacement (a temporary file in the same
//! directory, renamed over the file). Does not own the text (`render.rs`) or the directory's validation
//! (stage 4, `storage::artifact_root`).

use std::ffi::OsStr;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use ptc_actors::{AdmissionPool, DomainError, TaskGroup, TaskOwner};

use super::{render, PoolReading, Snapshot};
use crate::codes::domain::{ChildPolicy, DomainContext, SupervisorHandle};
use crate::events::EventLog;
use crate::providers::runtime::ProviderRuntime;
use crate::storage::{PrivateDir, StorageError};

/// The owner's name under the domain.
pub(crate) const METRICS_WRITER: &str = "metrics_writer";
/// The file node_exporter's textfile collector reads (it reads `*.prom` only, so the temporary file is
/// never collected half-written).
const METRICS_FILE: &str = "ptc-gateway.prom";
const TEMPORARY_FILE: &str = "ptc-gateway.prom.tmp";

/// What a snapshot is read from.
#[derive(Clone)]
pub(crate) struct Sources {
    pub ctx: DomainContext,
    pub requests: AdmissionPool,
    pub runs: AdmissionPool,
    /// With `pcc`.
    pub pcc_streams: Option<AdmissionPool>,
    pub providers: Arc<ProviderRuntime>,
    pub events: EventLog,
}

impl Sources {
    fn snapshot(&self) -> Snapshot {
        let pool = |name, p: &AdmissionPool| PoolReading {
            name,
            capacity: p.capacity() as u64,
            in_use: p.in_use() as u64,
        };
        let mut pools = vec![pool("mcp_requests", &self.requests)];
        if let Some(pcc) = &self.pcc_streams {
            pools.push(pool("pcc_streams", pcc));
        }
        pools.push(pool("runs", &self.runs));
        let (capacity, in_use, waiting) = self.providers.call_occupancy();
        pools.push(PoolReading { name: "provider_calls", capacity, in_use });
        Snapshot {
            ready: self.ctx.readiness().is_ready(),
            pools,
            provider_calls_waiting: waiting,
            counters: self.events.counter_totals(),
        }
    }
}

/// The directory and the sources; the event log close stage (S8) writes the last file through it.
#[derive(Clone)]
pub(crate) struct Writer {
    dir: Arc<PrivateDir>,
    sources: Sources,
}

impl Writer {
    /// Replaces the file with the current snapshot. Blocking (a few small syscalls).
    pub(crate) fn write_now(&self) -> Result<(), StorageError> {
        let text = render(&self.sources.snapshot());
        let (temporary, file) = (OsStr::new(TEMPORARY_FILE), OsStr::new(METRICS_FILE));
        // A temporary file left by a killed gateway is this writer's own; it is replaced.
        let _ = self.dir.remove_file(temporary);
        let mut out = self.dir.create_file(temporary)?;
        if let Err(e) = out.write_all(text.as_bytes()) {
            let _ = self.dir.remove_file(temporary);
            return Err(StorageError::io(
                crate::storage::Op::Write,
                nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(0)),
            ));
        }
        drop(out);
        // No fsync: the file is a view of the present, rewritten every interval; after a crash a stale or
        // missing file is what a collector should see anyway. The rename is what makes it whole.
        self.dir.rename(temporary, file)
    }

    async fn write_blocking(&self) {
        let writer = self.clone();
        match tokio::task::spawn_blocking(move || writer.write_now()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::debug!(%error, "metrics file not written"),
            Err(_) => tracing::debug!("metrics write task ended abnormally"),
        }
    }
}

/// Starts the writer's owner under `domain` (after stage 12): the file is written at once, then every
/// `interval`. Returns the writer for the event log close stage's last write.
pub(crate) async fn start(
    domain: &SupervisorHandle,
    dir: PrivateDir,
    interval: Duration,
    sources: Sources,
) -> Result<Writer, DomainError> {
    let writer = Writer { dir: Arc::new(dir), sources };
    let looping = writer.clone();
    let task = Box::pin(async move {
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            looping.write_blocking().await;
        }
    });
    let args = (TaskGroup::new(), vec![("metrics_file", task as _)]);
    let spec = TaskOwner::spec(METRICS_WRITER, ChildPolicy::Tolerate, args);
    domain.start_child(spec).await.map(|_| writer)
}

/// The event log close stage's part: the last file, written after the owner stopped (readiness is then
/// false).
pub(crate) async fn write_last(writer: &Writer) {
    writer.write_blocking().await;
}
