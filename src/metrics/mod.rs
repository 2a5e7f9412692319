//! The metrics file (audit-events.md §3.12): the event log's counters, readiness and admission occupancy
//! as a Prometheus text-format file under the artifact root, replaced atomically every interval, for
//! node_exporter's textfile collector. No port, no secret: names and numbers only.
//!
//! Owns: what a snapshot holds ([`Snapshot`]), its exact text (`render.rs`) and the writer with its owner
//! in the supervision tree (`writer.rs`). Does not own the counters (`crate::events`), readiness
//! (`crate::codes::domain`) or the admission pools (`ptc_actors`, `crate::providers`).

mod render;
mod writer;

pub(crate) use render::render;
pub(crate) use writer::{start, write_last, Sources, Writer, METRICS_WRITER};

use crate::events::TotalKey;

/// One admission pool's occupancy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PoolReading {
    /// The pool's name in the file: `mcp_requests`, `pcc_streams`, `runs` or `provider_calls`.
    pub name: &'static str,
    pub capacity: u64,
    pub in_use: u64,
}

/// Everything one metrics file shows, read at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// Readiness as `GET /health/ready` answers it.
    pub ready: bool,
    pub pools: Vec<PoolReading>,
    /// Provider calls waiting for a provider-call slot (providers.md §9).
    pub provider_calls_waiting: u64,
    /// The event log's cumulative counters, in report order (audit-events.md §3.7).
    pub counters: Vec<(TotalKey, u64)>,
}
