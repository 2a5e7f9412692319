//! How far a connection's writes have got (execution.md §4.2, §9).
//!
//! execution.md makes two promises that depend on bytes having left the gateway, not merely on hyper
//! having taken them: the run is activated only once the commit (`200` head and `: accepted`) "has been
//! written to the connection without error", and the run slot is released only once the message event was
//! written. hyper does not report when a body frame reaches the socket, so every connection's IO is
//! wrapped in [`ProgressIo`], which counts completed flushes. hyper copies a body frame into its write
//! buffer in the same poll in which it takes the frame, and a flush completes only after everything
//! buffered before it was handed to the operating system; so "a flush completed after the frame was taken"
//! is exactly "the frame was written". The counter reaches the request handler as a request extension
//! (`Arc<WriteProgress>`).
//!
//! Owns the counter and the wrapper. It does not own what is written (the event stream does) or when a
//! connection closes (the connection layer does).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use crate::http::connection::ConnIo;
use crate::http::response::EmptyBodyStatus;

/// The number of completed flushes of one connection.
#[derive(Debug, Default)]
pub struct WriteProgress {
    flushes: AtomicU64,
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

    fn record_flush(&self) {
        self.flushes.fetch_add(1, Ordering::AcqRel);
        self.changed.notify_waiters();
    }
}

/// A connection's IO that counts completed flushes; reads and writes pass through unchanged.
pub struct ProgressIo {
    inner: Box<dyn ConnIo>,
    progress: Arc<WriteProgress>,
}

impl ProgressIo {
    /// Wraps `inner`, counting into `progress`.
    pub fn new(inner: Box<dyn ConnIo>, progress: Arc<WriteProgress>) -> ProgressIo {
        ProgressIo { inner, progress }
    }
}

impl AsyncRead for ProgressIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for ProgressIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = Pin::new(&mut self.inner).poll_flush(cx);
        if let Poll::Ready(Ok(())) = flushed {
            self.progress.record_flush();
        }
        flushed
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl ConnIo for ProgressIo {
    fn refusal(&mut self) -> Option<EmptyBodyStatus> {
        self.inner.refusal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_flush_after_the_epoch_wakes_the_waiter() {
        let (client, _server) = tokio::io::duplex(64);
        struct Duplex(tokio::io::DuplexStream);
        impl AsyncRead for Duplex {
            fn poll_read(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                b: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                Pin::new(&mut self.0).poll_read(cx, b)
            }
        }
        impl AsyncWrite for Duplex {
            fn poll_write(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                b: &[u8],
            ) -> Poll<io::Result<usize>> {
                Pin::new(&mut self.0).poll_write(cx, b)
            }
            fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut self.0).poll_flush(cx)
            }
            fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut self.0).poll_shutdown(cx)
            }
        }
        impl ConnIo for Duplex {}
        let progress = Arc::new(WriteProgress::default());
        let mut io = ProgressIo::new(Box::new(Duplex(client)), progress.clone());
        let epoch = progress.flushes();
        let waiter = tokio::spawn({
            let progress = progress.clone();
            async move { progress.flushed_after(epoch).await }
        });
        io.write_all(b"x").await.unwrap();
        assert!(!waiter.is_finished() || progress.flushes() > epoch);
        io.flush().await.unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter).await.unwrap().unwrap();
        assert_eq!(progress.flushes(), epoch + 1);
    }
}
