//! When a connection last received bytes (http-mcp.md §6.9 "Idle budget").
//!
//! Owns one fact per connection: the instant of the last read that returned bytes. The body reader
//! (http-mcp.md §6.9) restarts its 2,000 ms budget whenever bytes arrive, and hyper hands over body *frames*,
//! not bytes: chunk-size lines, chunk extensions and trailers arrive without a frame. Observing the socket's
//! reads makes "bytes arrived" exact. The connection layer wraps the accepted IO in [`ActivityIo`] and puts
//! the [`ReadActivity`] into every request's extensions. It does not own any timer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::time::Instant;

/// The instant of the last read with bytes, shared between the IO and the requests of one connection.
#[derive(Clone, Debug)]
pub struct ReadActivity {
    base: Instant,
    /// Microseconds after `base`.
    last: Arc<AtomicU64>,
}

impl ReadActivity {
    /// A fresh record, as if bytes had just arrived.
    pub fn new() -> ReadActivity {
        ReadActivity { base: Instant::now(), last: Arc::new(AtomicU64::new(0)) }
    }

    /// Records that bytes arrived now.
    pub(crate) fn touch(&self) {
        let micros = u64::try_from(self.base.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.last.fetch_max(micros, Ordering::AcqRel);
    }

    /// When bytes last arrived.
    pub fn last(&self) -> Instant {
        self.base + std::time::Duration::from_micros(self.last.load(Ordering::Acquire))
    }
}

impl Default for ReadActivity {
    fn default() -> Self {
        ReadActivity::new()
    }
}
