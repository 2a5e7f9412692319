//! When a call's commit leaves (execution.md §4.2, §4.5): the response head and `: accepted` either go to
//! hyper before the run is activated, or, for a run that can reach no provider, are held back while the
//! run takes its first slice, so that a run that settles in it leaves with its commit in one write.
//!
//! Owns the held head: the signal that hands the response to hyper (the `/mcp` front returns the response
//! only then) and the grouping hold. Does not own the stream's mechanics (`stream`) nor the order of the
//! call (`driver`).

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;

use super::stream::{self, Gone, StreamWriter};

/// execution.md §4.5: how long a settled run's commit may wait for its message event (a write tool's
/// audit record becoming durable, section 10) before it is written alone.
pub const GROUPING_HOLD: Duration = Duration::from_millis(1_000);

/// The commit of one call: queued for hyper already, or held back with the response.
pub(crate) struct Head {
    /// Fired when the response may go to hyper; `None` once it went.
    release: Option<oneshot::Sender<()>>,
    /// Whether queueing the commit succeeded (a client gone before it is `Gone`).
    queued: Result<(), Gone>,
}

impl Head {
    /// The commit queued before the response went to hyper: it leaves with the head, before the run is
    /// activated (execution.md §4.2).
    pub(crate) fn queued(writer: &mut StreamWriter) -> Head {
        Head { release: None, queued: stream::queue_commit(writer) }
    }

    /// The commit of a provider-free run, held back with the response; the receiver completes when the
    /// response may go to hyper (or when the head is dropped).
    pub(crate) fn held() -> (Head, oneshot::Receiver<()>) {
        let (release, released) = oneshot::channel();
        (Head { release: Some(release), queued: Ok(()) }, released)
    }

    /// The response has not gone to hyper yet.
    pub(crate) fn is_held(&self) -> bool {
        self.release.is_some()
    }

    /// Queues the commit, if it is still held, and hands the response to hyper.
    pub(crate) fn release(&mut self, writer: &mut StreamWriter) -> Result<(), Gone> {
        if let Some(release) = self.release.take() {
            self.queued = stream::queue_commit(writer);
            let _ = release.send(());
        }
        self.queued
    }

    /// Queues the commit, `last` and the end of the body, then hands the response to hyper: the head and
    /// every byte of the stream leave in one write (execution.md §4.5). Only for a held head.
    pub(crate) fn release_with_last(&mut self, writer: &mut StreamWriter, last: Bytes) -> Result<(), Gone> {
        let release = self.release.take();
        self.queued = stream::queue_commit(writer).and_then(|()| writer.queue_last(last));
        if let Some(release) = release {
            let _ = release.send(());
        }
        self.queued
    }
}
