//! How far a connection's writes have got (execution.md §4.2, §9).
//!
//! execution.md makes two promises that depend on bytes having left the gateway, not merely on hyper
//! having taken them: the run is activated only once the commit (`200` head and `: accepted`) "has been
//! written to the connection without error", and the run slot is released only once the message event was
//! written. hyper does not report when a body frame reaches the socket, so every connection's IO is
//! observed, and its completed flushes are counted. hyper copies a body frame into its write
//! buffer in the same poll in which it takes the frame, and a flush completes only after everything
//! buffered before it was handed to the operating system; so "a flush completed after the frame was taken"
//! is exactly "the frame was written". The connection's IO ([`crate::http::observed::ObservedIo`])
//! counts, and the counter reaches the request handler as a request extension (`Arc<WriteProgress>`).
//!
//! Owns the counter. It does not own what is written (the event stream does) or when a
//! connection closes (the connection layer does).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::sync::Notify;

/// The number of completed flushes of one connection, and whether it can flush again.
#[derive(Debug, Default)]
pub struct WriteProgress {
    flushes: AtomicU64,
    /// A write or flush failed, or the connection's IO was dropped: no flush will complete any more.
    closed: AtomicBool,
    changed: Notify,
}

impl WriteProgress {
    /// The flushes completed so far.
    pub fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::Acquire)
    }

    /// Completes once a flush completed after `epoch` (a value of [`WriteProgress::flushes`] read
    /// earlier). Never completes if the connection stops flushing; callers bound the wait.
    pub async fn flushed_after(&self, epoch: u64) {
        loop {
            let changed = self.changed.notified();
            if self.flushes() > epoch {
                return;
            }
            changed.await;
        }
    }

    /// Completes once no flush can complete any more (the connection failed or ended).
    pub async fn closed(&self) {
        loop {
            let changed = self.changed.notified();
            if self.closed.load(Ordering::Acquire) {
                return;
            }
            changed.await;
        }
    }

    /// Records a completed flush.
    pub(crate) fn record_flush(&self) {
        self.flushes.fetch_add(1, Ordering::AcqRel);
        self.changed.notify_waiters();
    }

    /// Records that the connection can write no more (a write error, or its IO dropped).
    pub(crate) fn record_closed(&self) {
        self.closed.store(true, Ordering::Release);
        self.changed.notify_waiters();
    }
}
