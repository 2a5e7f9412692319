//! The debug log as an operator reads it, for unit tests: `tracing`'s text format (the one
//! `os::logging` installs), without time or colour, captured on the calling thread. The in-process tests
//! reach it as `ptc_gateway::testing::log_capture`.
//!
//! Used by the tests that assert which cause a failure leaves in the log (issue 25's rule, second pass in
//! issue 27), so they compare whole lines.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::subscriber::DefaultGuard;

/// The captured lines; capture lasts while the value lives.
pub struct Captured {
    bytes: Arc<Mutex<Vec<u8>>>,
    _guard: DefaultGuard,
}

/// Starts capturing every `debug` and higher event of this thread.
pub fn capture() -> Captured {
    // With one scoped subscriber registered, tracing computes the interest of a callsite another test's
    // thread reaches first from that thread's own subscriber (none), and caches "never" for every thread
    // (`tracing-core`'s `has_just_one`); a second dispatch registered for the whole run makes every
    // callsite's interest count each capture (an inproc vector failed two runs in three without it).
    static SECOND: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
    SECOND.get_or_init(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
    let bytes = Arc::new(Mutex::new(Vec::new()));
    let sink = bytes.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .without_time()
        .with_target(false)
        .with_writer(move || Sink(sink.clone()))
        .finish();
    Captured { bytes, _guard: tracing::subscriber::set_default(subscriber) }
}

impl Captured {
    /// The lines so far that contain `needle`.
    pub fn lines_with(&self, needle: &str) -> Vec<String> {
        let bytes = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).lines().filter(|l| l.contains(needle)).map(str::to_owned).collect()
    }
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
