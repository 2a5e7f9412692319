//! The gateway's [`EventSink`]: encodes each record, writes it through [`EventFiles`], counts every
//! drop, and writes the counter reports (audit-events.md §3.7, §3.10).
//!
//! Owns: "a record that does not validate, is oversized or fails to write is dropped and counted", the
//! periodic report every tick (`interval_ms` 1000) and the final one at close (the elapsed milliseconds),
//! and "a report that cannot be written keeps its count; for kinds other than `dropped_events` the
//! gateway-wide `dropped_events` slot is also incremented". Runs on the logger's thread only.

use std::sync::Arc;

use ptc_actors::EventSink;

use super::counters::Counters;
use super::files::EventFiles;
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
        event.to_line().is_some_and(|line| self.files.write_line(line.as_bytes()).is_ok())
    }

    /// Every nonzero slot in report order; subtracts exactly what was written.
    fn report(&mut self, interval_ms: u64) {
        for reading in self.counters.readings() {
            let event = Event::now(Record::Counter {
                kind: reading.kind,
                tool: reading.tool.clone(),
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
