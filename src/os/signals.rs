//! Signal dispositions (lifecycle.md §8.1), installed at process start before stage 0.
//!
//! SIGTERM and SIGINT become one `StopRequest` that every stage can wait on; later ones change nothing
//! (lifecycle.md §8.2). SIGHUP is consumed and ignored (there is no reload). SIGPIPE is already ignored by
//! the Rust runtime, so write failures surface as errors where they happen.

use futures::StreamExt;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook_tokio::Signals;
use tokio::sync::watch;

/// A cloneable view of "a stop was requested".
#[derive(Clone, Debug)]
pub struct StopRequest {
    rx: watch::Receiver<bool>,
}

impl StopRequest {
    /// A request that can be triggered by hand (tests, the library entry point).
    pub fn manual() -> (StopTrigger, StopRequest) {
        let (tx, rx) = watch::channel(false);
        (StopTrigger { tx }, StopRequest { rx })
    }

    /// True once a stop was requested.
    pub fn is_requested(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves when a stop is requested (at once if it already was).
    pub async fn requested(&mut self) {
        // An error means every trigger is gone; nothing can request a stop any more, so wait forever.
        if self.rx.wait_for(|stop| *stop).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The sending side of a `StopRequest`.
#[derive(Clone, Debug)]
pub struct StopTrigger {
    tx: watch::Sender<bool>,
}

impl StopTrigger {
    /// Requests the stop; idempotent.
    pub fn trigger(&self) {
        self.tx.send_replace(true);
    }
}

/// Installs the dispositions of lifecycle.md §8.1 and returns the stop request fed by SIGTERM and SIGINT.
/// Must be called inside the tokio runtime.
pub fn install() -> std::io::Result<StopRequest> {
    let mut signals = Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    let (trigger, request) = StopRequest::manual();
    tokio::spawn(async move {
        while let Some(signal) = signals.next().await {
            if signal == SIGTERM || signal == SIGINT {
                tracing::info!(signal, "stop requested");
                trigger.trigger();
            }
        }
    });
    Ok(request)
}
