//! The sites of the serving gateway (providers.md §3, pins.md §8.1): one live acquisition per (served
//! tool, declaration), its names, era, ceilings, listed tools and counter slots, and the one end of its
//! transport.
//!
//! Owns "each transport ends exactly once, with exactly one `transport` record, and at most one
//! `stderr_tail`" (audit-events.md §3.6), whichever path gets there first (a loss, shutdown, a startup
//! failure), and closing many sites concurrently (providers.md §13.1). Does not own calls or fencing
//! (`runtime.rs`) or the order of acquisition (`startup::providers`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::OnceCell;

use super::listing::{Era, ListedTool};
use super::upstream::Upstream;
use crate::config::host::Ceilings;
use crate::events::counters::PairSlots;
use crate::events::EventLog;

/// One acquired site.
pub struct Site {
    /// The served tool's name and index (in tool-name order).
    pub tool: String,
    pub tool_index: usize,
    /// The declaration name (the `provider` of event records).
    pub provider: String,
    pub upstream: Upstream,
    pub era: Era,
    pub ceilings: Ceilings,
    /// The listed description and input schema of each mapped upstream tool, by upstream name, as
    /// acquisition found them (execution.md §12.5 `handle:api()`).
    pub listed: BTreeMap<String, ListedTool>,
    /// The (tool, provider) counter slots (audit-events.md §3.7).
    pub counters: Arc<PairSlots>,
    /// Whether the close confirmed the leader reaped (`None` until closed).
    closed: OnceCell<bool>,
    stderr_written: AtomicBool,
}

impl Site {
    pub fn new(
        tool: (&str, usize),
        provider: &str,
        upstream: Upstream,
        era: Era,
        ceilings: Ceilings,
        listed: BTreeMap<String, ListedTool>,
        counters: Arc<PairSlots>,
    ) -> Site {
        Site {
            tool: tool.0.to_owned(),
            tool_index: tool.1,
            provider: provider.to_owned(),
            upstream,
            era,
            ceilings,
            listed,
            counters,
            closed: OnceCell::new(),
            stderr_written: AtomicBool::new(false),
        }
    }

    /// Closes the transport once and writes its `transport` record (providers.md §12.2). Concurrent and
    /// later callers wait for the first and get its result: true iff the leader was reaped.
    pub async fn finish(&self, events: &EventLog) -> bool {
        *self
            .closed
            .get_or_init(|| async {
                let end = self.upstream.close().await;
                events.transport(&self.tool, &self.provider, end.fault, end.exit_status);
                end.reaped
            })
            .await
    }

    /// The site's `stderr_tail`, at most once and only when enabled (audit-events.md §3.6, §3.8).
    pub fn stderr_once(&self, events: &EventLog) {
        if !events.stderr_enabled() || self.stderr_written.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some((bytes, truncated)) = self.upstream.stderr_tail() {
            events.stderr_tail(&self.tool, &self.provider, &bytes, truncated);
        }
    }
}

/// Closes every site concurrently (providers.md §13.1 "Transports are closed concurrently"), each with its
/// records and then its stderr tail. True iff every leader was reaped.
pub async fn finish_all(sites: &[Arc<Site>], events: &EventLog) -> bool {
    let closes = sites.iter().map(|site| async move {
        let reaped = site.finish(events).await;
        site.stderr_once(events);
        reaped
    });
    futures::future::join_all(closes).await.into_iter().all(|reaped| reaped)
}
