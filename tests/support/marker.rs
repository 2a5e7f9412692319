//! The fault fixtures' marker file (providers.md §16.1): one JSON line per event the upstream observed
//! (spawn, each received message, cancellations, signals, exit), so tests assert upstream-side facts
//! without timing. Shared by the library-level tests of both transports.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

/// A fixture that writes a marker file; the reading helpers come with it.
pub trait MarkerFile {
    fn marker_path(&self) -> &Path;

    /// Every event so far, in order.
    fn events(&self) -> Vec<Json> {
        let text = std::fs::read_to_string(self.marker_path()).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// The events of one kind (`"spawn"`, `"recv"`, …).
    fn of(&self, kind: &str) -> Vec<Json> {
        self.events().into_iter().filter(|e| e["event"] == kind).collect()
    }

    /// The methods of every message the upstream received, in order.
    fn methods(&self) -> Vec<String> {
        self.of("recv").iter().map(|e| e["method"].as_str().unwrap().to_owned()).collect()
    }

    /// Waits, with a deadline, until the events satisfy `cond`.
    async fn wait_for(&self, what: &str, cond: impl Fn(&[Json]) -> bool) -> Vec<Json> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let events = self.events();
            if cond(&events) {
                return events;
            }
            assert!(Instant::now() < deadline, "marker never showed {what}: {events:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
