//! Human diagnostics (lifecycle.md §2.1): off unless `PTC_LOG` holds a filter, always on stderr, and
//! never carrying credentials, arguments, results or upstream stderr (callers log names and classes).

use std::sync::atomic::{AtomicBool, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Installs the `tracing` subscriber when `PTC_LOG` is set and non-empty, and the panic hook, which is
/// silent unless logging is on (a panic during startup is reported as `internal_error` instead).
pub fn install() {
    let filter = std::env::var("PTC_LOG").ok().filter(|f| !f.trim().is_empty());
    if let Some(filter) = filter {
        let filter = tracing_subscriber::EnvFilter::try_new(filter)
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        let installed = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            // Colour codes only on a terminal: under systemd or launchd stderr is a journal or a file.
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_target(true)
            .try_init()
            .is_ok();
        ENABLED.store(installed, Ordering::Release);
    }
    std::panic::set_hook(Box::new(|info| {
        if ENABLED.load(Ordering::Acquire) {
            // The location only: a payload could carry input.
            let location = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
            tracing::error!(location = location.as_deref().unwrap_or("unknown"), "panic");
        }
    }));
}

/// True when diagnostics go to stderr.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}
