//! The gateway's [`EventSink`]: encodes each record, writes it through [`EventFiles`], counts every
//! drop, and writes the counter reports (audit-events.md §3.7, §3.10).
//!
//! Owns: "a record that does not validate, is oversized or fails to write is dropped and counted", the
//! periodic report every tick (`interval_ms` 1000) and the final one at close (the elapsed milliseconds),
//! and "a report that cannot be written keeps its count; for kinds other than `dropped_events` the
//! gateway-wide `dropped_events` slot is also incremented". Runs on the logger's thread only.

use std::sync::Arc;
use std::time::Duration;

use ptc_actors::EventSink;

use super::counters::Counters;
use super::files::{EventFiles, WriteFail};
use super::record::{CounterKind, Event, Record};

/// Files plus the shared counter slots.
pub struct Sink {
    files: EventFiles,
    counters: Arc<Counters>,
}

impl Sink {
    pub fn new(files: EventFiles, counters: Arc<Counters>) -> Sink {
        Sink { files, counters }
    }

    fn write_event(&mut self, event: &Event) -> bool {
        let Some(line) = event.to_line() else { return false };
        match self.files.write_line(line.as_bytes()) {
            Ok(()) => true,
            Err(error) => {
                // The event log cannot hold its own failure: the OS's reason goes to the debug log, once
                // per failure (the drops that follow until the next tick are `Suspended`).
                if matches!(error, WriteFail::Open { .. } | WriteFail::Write(_)) {
                    tracing::debug!(%error, "event record dropped");
                }
                false
            }
        }
    }

    /// Every nonzero slot in report order; subtracts exactly what was written.
    fn report(&mut self, interval_ms: u64) {
        for reading in self.counters.readings() {
            let event = Event::now(Record::Counter {
                kind: reading.kind,
                tool: reading.tool.clone(),
                provider: reading.provider.clone(),
                count: reading.count,
                interval_ms,
            });
            if self.write_event(&event) {
                self.counters.subtract(&reading);
            } else if reading.kind != CounterKind::DroppedEvents {
                self.counters.dropped();
            }
        }
    }
}

impl EventSink for Sink {
    type Record = Event;
    /// audit-events.md §3.7: a bounded queue of 256 records.
    const QUEUE_CAPACITY: usize = 256;
    /// audit-events.md §3.7: the monotonic 1,000 ms interval.
    const INTERVAL: Duration = Duration::from_millis(1_000);

    fn write(&mut self, event: Event) {
        if !self.write_event(&event) {
            self.counters.dropped();
        }
    }

    fn tick(&mut self) {
        self.files.tick();
        self.report(1_000);
    }

    fn dropped(&mut self, _event: Event) {
        self.counters.dropped();
    }

    fn close(&mut self, elapsed_ms: u64) {
        self.report(elapsed_ms);
        self.files.close();
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::config::gateway::{Artifacts, EventsConfig};
    use crate::events::record::{StartupOutcome, StartupStage};
    use crate::storage::testutil::Scratch;
    use crate::storage::{ArtifactRoot, StartRef};

    /// The logic of the event-log vector EV6, an unwritable directory (audit-events.md §6.2; the black-box
    /// form needs a non-root user): a directory that refuses new files drops and counts records; at the next
    /// tick logging resumes and reports the drops.
    #[test]
    fn drops_while_unwritable_are_reported_once_logging_resumes() {
        let s = Scratch::new();
        let root = s.path().join("artifacts");
        let sref = StartRef::from_parts(4, [4; 8]);
        let cfg = EventsConfig { max_file_bytes: 4096, max_retained_files: 4, stderr: false };
        let opened = ArtifactRoot::open(&Artifacts::events_only(&root, Some(cfg)), &sref).unwrap();
        let store = opened.events().unwrap();
        let files =
            EventFiles::new(store.dir().try_clone().unwrap(), sref.as_str(), 4096, 4, store.inventory());
        let counters = Arc::new(Counters::new(vec!["echo".into()]));
        let mut sink = Sink::new(files, counters.clone());
        let log = crate::support::log_capture::capture();
        // The first file cannot be created (an entry of its name appeared; root ignores modes).
        fs::write(root.join(format!("events/{sref}-00000000000000000001.jsonl")), b"").unwrap();
        let record = || {
            Event::now(Record::StartupStage { stage: StartupStage::Listener, outcome: StartupOutcome::Ready })
        };
        for _ in 0..3 {
            sink.write(record());
        }
        sink.tick();
        sink.write(record());
        sink.close(5);
        opened.release().unwrap();
        let text =
            fs::read_to_string(root.join(format!("events/{sref}-00000000000000000002.jsonl"))).unwrap();
        let kinds: Vec<&str> =
            text.lines().map(|l| if l.contains("dropped_events") { "dropped" } else { "stage" }).collect();
        assert_eq!(kinds, ["dropped", "stage"]);
        assert!(text.lines().next().unwrap().contains("\"count\":3,\"interval_ms\":1000"), "{text}");
        assert!(counters.readings().is_empty(), "the reported count was subtracted");
        // The failed open leaves its reason in the debug log, once; the suspended drops after it do not.
        assert_eq!(
            log.lines_with("event record dropped"),
            [
                r#"DEBUG event record dropped error=event file 1 not opened: a filesystem operation failed (open): File exists"#
            ]
        );
    }
}
