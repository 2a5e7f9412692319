//! The event log's counter slots (audit-events.md §3.7): fixed at startup, incremented by emitters
//! without allocation or locks, reported and decremented by the writer.
//!
//! Owns: the slot table and its report order (kind as listed in audit-events.md §3.5, then tool with `null`
//! first; the provider is always `null` in this version), saturating increments, and "subtract exactly what
//! was emitted". Does not own: writing the reports (`sink.rs`).
//!
//! Slots (audit-events.md §3.7): one gateway-wide (`null`, `null`) slot for every kind but
//! `publication_failed`, which instead has one slot per served tool; and, registered once per acquisition at
//! stage 9 (never per call), one (tool, provider) slot for each of `busy`, `provider_busy`, `detached` and
//! `settlement_timeout` ([`PairSlots`]). Every drop is counted in the gateway-wide `dropped_events` slot.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::record::{CounterKind, MAX_COUNT};

/// One slot: its kind, its tool (an index into the served tools, `None` for the gateway-wide slot).
#[derive(Debug)]
struct Slot {
    kind: CounterKind,
    tool: Option<usize>,
    value: AtomicU64,
}

/// The per-acquisition slots of one (tool, provider) pair (audit-events.md §3.7): the four of a transport and
/// the three of a model site (models.md §9), fixed for every pair. Emitters hold an `Arc` and bump without
/// locks.
#[derive(Debug)]
pub struct PairSlots {
    tool: String,
    provider: String,
    /// In [`PAIR_KINDS`] order.
    values: [AtomicU64; 7],
}

/// The kinds that have per-acquisition slots.
pub const PAIR_KINDS: [CounterKind; 7] = [
    CounterKind::Busy,
    CounterKind::ProviderBusy,
    CounterKind::Detached,
    CounterKind::SettlementTimeout,
    CounterKind::ModelRequests,
    CounterKind::ModelFailed,
    CounterKind::ModelTokens,
];

impl PairSlots {
    /// Slots for a pair that no log reports (a gateway without `artifacts.events`).
    pub fn detached(tool: &str, provider: &str) -> Arc<PairSlots> {
        Arc::new(PairSlots {
            tool: tool.to_owned(),
            provider: provider.to_owned(),
            values: Default::default(),
        })
    }

    /// One more event of `kind` for this pair; other kinds are ignored.
    pub fn bump(&self, kind: CounterKind) {
        self.add(kind, 1);
    }

    /// `n` more of `kind` for this pair (the `model_tokens` of one answer); other kinds are ignored.
    pub fn add(&self, kind: CounterKind, n: u64) {
        if let Some(i) = PAIR_KINDS.iter().position(|k| *k == kind) {
            let _ = self.values[i]
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(v.saturating_add(n)));
        }
    }

    /// The current value of `kind` (tests and reports).
    pub fn value(&self, kind: CounterKind) -> u64 {
        PAIR_KINDS.iter().position(|k| *k == kind).map_or(0, |i| self.values[i].load(Ordering::Acquire))
    }
}

/// Where a reading came from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    Slot(usize),
    Pair(usize, usize),
}

/// A nonzero slot read for a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Where to subtract, for [`Counters::subtract`].
    source: Source,
    pub kind: CounterKind,
    pub tool: Option<String>,
    pub provider: Option<String>,
    pub count: u64,
}

/// The fixed slot table.
#[derive(Debug)]
pub struct Counters {
    tools: Vec<String>,
    slots: Vec<Slot>,
    /// Registered at stage 9, one entry per acquisition; read once per report.
    pairs: Mutex<Vec<Arc<PairSlots>>>,
    /// Everything reported so far, per (kind, tool, provider): the cumulative counters of the metrics
    /// file (audit-events.md §3.12), which equal the sum of the log's counter records.
    totals: Mutex<BTreeMap<TotalKey, u64>>,
}

/// The key of one cumulative total: kind, tool, provider.
pub type TotalKey = (CounterKind, Option<String>, Option<String>);

impl Counters {
    /// The slots for `tools` (the served tools' names, in tool order: the index a call carries).
    pub fn new(tools: Vec<String>) -> Counters {
        let mut slots = Vec::new();
        for kind in CounterKind::ALL {
            if kind.per_tool() {
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
        Counters { tools, slots, pairs: Mutex::new(Vec::new()), totals: Mutex::new(BTreeMap::new()) }
    }

    /// Registers the slots of one acquisition's (tool, provider) pair (stage 9, once per site).
    pub fn register_pair(&self, tool: &str, provider: &str) -> Arc<PairSlots> {
        let slots = PairSlots::detached(tool, provider);
        if let Ok(mut pairs) = self.pairs.lock() {
            pairs.push(slots.clone());
        }
        slots
    }

    fn find(&self, kind: CounterKind, tool: Option<usize>) -> Option<&Slot> {
        self.slots.iter().find(|s| s.kind == kind && s.tool == tool)
    }

    fn bump(slot: &Slot) {
        // Saturating: a count never wraps (audit-events.md §3.4 bounds it at 2^53−1 anyway).
        let _ = slot.value.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(v.saturating_add(1)));
    }

    /// One record dropped (full queue, invalid, oversized, write or open failure), gateway-wide.
    pub fn dropped(&self) {
        if let Some(slot) = self.find(CounterKind::DroppedEvents, None) {
            Counters::bump(slot);
        }
    }

    /// A call of served tool `tool` whose publication failed (execution.md §9). An unknown
    /// index is ignored: the slot table is fixed (audit-events.md §3.7).
    pub fn publication_failed(&self, tool: usize) {
        if let Some(slot) = self.find(CounterKind::PublicationFailed, Some(tool)) {
            Counters::bump(slot);
        }
    }

    /// A run of served tool `tool` whose trace failed (traces.md §7). An unknown index is ignored.
    pub fn artifact_failed(&self, tool: usize) {
        if let Some(slot) = self.find(CounterKind::ArtifactFailed, Some(tool)) {
            Counters::bump(slot);
        }
    }

    /// Every nonzero slot, in report order (audit-events.md §3.7: kind, then tool with `null` first, then
    /// provider). Counts are capped at [`MAX_COUNT`]; the rest stays.
    pub fn readings(&self) -> Vec<Reading> {
        let mut readings: Vec<Reading> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, s)| {
                let count = s.value.load(Ordering::Acquire).min(MAX_COUNT);
                (count > 0).then(|| Reading {
                    source: Source::Slot(slot),
                    kind: s.kind,
                    tool: s.tool.and_then(|t| self.tools.get(t).cloned()),
                    provider: None,
                    count,
                })
            })
            .collect();
        if let Ok(pairs) = self.pairs.lock() {
            for (p, pair) in pairs.iter().enumerate() {
                for (k, kind) in PAIR_KINDS.iter().enumerate() {
                    let count = pair.values[k].load(Ordering::Acquire).min(MAX_COUNT);
                    if count > 0 {
                        readings.push(Reading {
                            source: Source::Pair(p, k),
                            kind: *kind,
                            tool: Some(pair.tool.clone()),
                            provider: Some(pair.provider.clone()),
                            count,
                        });
                    }
                }
            }
        }
        // Stable: equal keys keep slot order. Tool names compare by bytes, as the log orders them.
        readings.sort_by(|a, b| (a.kind, &a.tool, &a.provider).cmp(&(b.kind, &b.tool, &b.provider)));
        readings
    }

    /// The cumulative totals of every reported reading, in report order.
    pub fn totals(&self) -> Vec<(TotalKey, u64)> {
        self.totals.lock().map(|t| t.iter().map(|(k, v)| (k.clone(), *v)).collect()).unwrap_or_default()
    }

    /// After a report was written: subtract exactly what it emitted (increments made meanwhile stay), and
    /// add it to the cumulative totals.
    pub fn subtract(&self, reading: &Reading) {
        if let Ok(mut totals) = self.totals.lock() {
            let key = (reading.kind, reading.tool.clone(), reading.provider.clone());
            let total = totals.entry(key).or_insert(0);
            *total = total.saturating_add(reading.count);
        }
        let sub = |value: &AtomicU64| {
            let _ = value
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| Some(v.saturating_sub(reading.count)));
        };
        match reading.source {
            Source::Slot(slot) => {
                if let Some(slot) = self.slots.get(slot) {
                    sub(&slot.value);
                }
            }
            Source::Pair(p, k) => {
                let pair = self.pairs.lock().ok().and_then(|pairs| pairs.get(p).cloned());
                if let Some(value) = pair.as_ref().and_then(|pair| pair.values.get(k)) {
                    sub(value);
                }
            }
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

    #[test]
    fn pair_slots_report_by_kind_then_tool_then_provider() {
        let counters = Counters::new(vec!["alpha".into()]);
        let b_y = counters.register_pair("beta", "y");
        let a_z = counters.register_pair("alpha", "z");
        let a_x = counters.register_pair("alpha", "x");
        b_y.bump(CounterKind::Busy);
        a_z.bump(CounterKind::Busy);
        a_x.bump(CounterKind::Detached);
        a_x.bump(CounterKind::Busy);
        a_x.bump(CounterKind::Busy);
        a_x.bump(CounterKind::PublicationFailed); // not a pair kind: ignored
        counters.dropped();
        let readings = counters.readings();
        let view: Vec<(CounterKind, Option<&str>, Option<&str>, u64)> =
            readings.iter().map(|r| (r.kind, r.tool.as_deref(), r.provider.as_deref(), r.count)).collect();
        assert_eq!(
            view,
            vec![
                (CounterKind::Busy, Some("alpha"), Some("x"), 2),
                (CounterKind::Busy, Some("alpha"), Some("z"), 1),
                (CounterKind::Busy, Some("beta"), Some("y"), 1),
                (CounterKind::Detached, Some("alpha"), Some("x"), 1),
                (CounterKind::DroppedEvents, None, None, 1),
            ]
        );
        a_x.bump(CounterKind::Busy);
        for r in &readings {
            counters.subtract(r);
        }
        assert_eq!(a_x.value(CounterKind::Busy), 1, "an increment after the reading stays");
        assert_eq!(counters.readings().len(), 1);
    }
}
