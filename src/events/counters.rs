//! The event log's counter slots (audit-events.md §3.7): fixed at startup, incremented by emitters
//! without allocation or locks, reported and decremented by the writer.
//!
//! Owns: the slot table and its report order (kind as listed in §3.5, then tool with `null` first; the
//! provider is always `null` in this version), saturating increments, and "subtract exactly what was
//! emitted". Does not own: writing the reports (`sink.rs`).
//!
//! Slots (§3.7): one gateway-wide (`null`, `null`) slot for every kind but `publication_failed`, which
//! instead has one slot per served tool. Per-acquisition (tool, provider) slots arrive with the
//! providers; until then every drop is counted in the gateway-wide `dropped_events` slot, because no
//! record this version writes names a provider.

use std::sync::atomic::{AtomicU64, Ordering};

use super::record::{CounterKind, MAX_COUNT};

/// One slot: its kind, its tool (an index into the served tools, `None` for the gateway-wide slot).
#[derive(Debug)]
struct Slot {
    kind: CounterKind,
    tool: Option<usize>,
    value: AtomicU64,
}

/// A nonzero slot read for a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Index into the slot table, for [`Counters::subtract`].
    slot: usize,
    pub kind: CounterKind,
    pub tool: Option<String>,
    pub count: u64,
}

/// The fixed slot table.
#[derive(Debug)]
pub struct Counters {
    tools: Vec<String>,
    slots: Vec<Slot>,
}

impl Counters {
    /// The slots for `tools` (the served tools' names, in tool order: the index a call carries).
    pub fn new(tools: Vec<String>) -> Counters {
        let mut slots = Vec::new();
        for kind in CounterKind::ALL {
            if kind == CounterKind::PublicationFailed {
                // Report order within a kind is by tool name; tools are already in name byte order.
                slots.extend((0..tools.len()).map(|t| Slot {
                    kind,
                    tool: Some(t),
                    value: AtomicU64::new(0),
                }));
            } else {
                slots.push(Slot { kind, tool: None, value: AtomicU64::new(0) });
            }
        }
        Counters { tools, slots }
    }

    fn find(&self, kind: CounterKind, tool: Option<usize>) -> Option<&Slot> {
        self.slots.iter().find(|s| s.kind == kind && s.tool == tool)
    }

    fn bump(slot: &Slot) {
        // Saturating: a count never wraps (§3.4 bounds it at 2^53−1 anyway).
        let _ = slot.value.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(v.saturating_add(1)));
    }

    /// One record dropped (full queue, invalid, oversized, write or open failure), gateway-wide.
    pub fn dropped(&self) {
        if let Some(slot) = self.find(CounterKind::DroppedEvents, None) {
            Counters::bump(slot);
        }
    }

    /// A call of served tool `tool` whose publication failed (`execution.md` §9). An unknown index is
    /// ignored: the slot table is fixed (§3.7).
    pub fn publication_failed(&self, tool: usize) {
        if let Some(slot) = self.find(CounterKind::PublicationFailed, Some(tool)) {
            Counters::bump(slot);
        }
    }

    /// Every nonzero slot, in report order (§3.7). Counts are capped at [`MAX_COUNT`]; the rest stays.
    pub fn readings(&self) -> Vec<Reading> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(slot, s)| {
                let count = s.value.load(Ordering::Acquire).min(MAX_COUNT);
                (count > 0).then(|| Reading {
                    slot,
                    kind: s.kind,
                    tool: s.tool.and_then(|t| self.tools.get(t).cloned()),
                    count,
                })
            })
            .collect()
    }

    /// After a report was written: subtract exactly what it emitted; increments made meanwhile stay.
    pub fn subtract(&self, reading: &Reading) {
        if let Some(slot) = self.slots.get(reading.slot) {
            let _ = slot
                .value
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(v.saturating_sub(reading.count)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_order_and_exact_subtraction() {
        let counters = Counters::new(vec!["alpha".into(), "beta".into()]);
        assert!(counters.readings().is_empty());
        counters.dropped();
        counters.publication_failed(1);
        counters.publication_failed(1);
        counters.publication_failed(0);
        counters.publication_failed(7); // no such tool: ignored
        let readings = counters.readings();
        let view: Vec<(CounterKind, Option<&str>, u64)> =
            readings.iter().map(|r| (r.kind, r.tool.as_deref(), r.count)).collect();
        assert_eq!(
            view,
            vec![
                (CounterKind::PublicationFailed, Some("alpha"), 1),
                (CounterKind::PublicationFailed, Some("beta"), 2),
                (CounterKind::DroppedEvents, None, 1),
            ]
        );
        // An increment between reading and subtracting is kept for the next interval.
        counters.publication_failed(1);
        for r in &readings {
            counters.subtract(r);
        }
        let left: Vec<(CounterKind, Option<String>, u64)> =
            counters.readings().into_iter().map(|r| (r.kind, r.tool, r.count)).collect();
        assert_eq!(left, vec![(CounterKind::PublicationFailed, Some("beta".into()), 1)]);
    }
}
