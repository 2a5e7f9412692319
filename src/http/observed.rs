//! The connection's IO as hyper sees it, observed (http-mcp.md §6.9, execution.md §4.2, §9).
//!
//! Owns the one wrapper between the accepted stream (and its head guard) and hyper that records what two
//! rules need and hyper does not report: every read that returned bytes ([`ReadActivity`], for the body's
//! idle budget) and every completed flush ([`WriteProgress`], for "the commit was written"). Bytes pass
//! through unchanged. It does not own either rule.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::http::activity::ReadActivity;
use crate::http::io::ConnIo;
use crate::http::progress::WriteProgress;
use crate::http::response::EmptyBodyStatus;

/// IO that records read activity and completed flushes.
pub struct ObservedIo {
    inner: Box<dyn ConnIo>,
    activity: ReadActivity,
    progress: Arc<WriteProgress>,
}

impl ObservedIo {
    /// Observes `inner` into `activity` and `progress`.
    pub fn new(inner: Box<dyn ConnIo>, activity: ReadActivity, progress: Arc<WriteProgress>) -> ObservedIo {
        ObservedIo { inner, activity, progress }
    }
}

impl AsyncRead for ObservedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for ObservedIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.closed_on_error(&written);
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.closed_on_error(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = Pin::new(&mut self.inner).poll_flush(cx);
        match flushed {
            Poll::Ready(Ok(())) => self.progress.record_flush(),
            Poll::Ready(Err(_)) => self.progress.record_closed(),
            Poll::Pending => {}
        }
        flushed
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl ObservedIo {
    fn closed_on_error<T>(&self, polled: &Poll<io::Result<T>>) {
        if let Poll::Ready(Err(_)) = polled {
            self.progress.record_closed();
        }
    }
}

impl Drop for ObservedIo {
    // The connection is over: a writer still waiting for a flush waits no longer (execution.md §9).
    fn drop(&mut self) {
        self.progress.record_closed();
    }
}

impl ConnIo for ObservedIo {
    fn refusal(&mut self) -> Option<EmptyBodyStatus> {
        self.inner.refusal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn observed() -> (ObservedIo, tokio::net::TcpStream, ReadActivity, Arc<WriteProgress>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let activity = ReadActivity::new();
        let progress = Arc::new(WriteProgress::default());
        let io =
            ObservedIo::new(Box::new(listener.accept().await.unwrap().0), activity.clone(), progress.clone());
        (io, client, activity, progress)
    }

    #[tokio::test]
    async fn reads_with_bytes_are_recorded() {
        let (mut io, mut client, activity, _) = observed().await;
        let start = activity.last();
        // Accepting, writing and reading take far more than the record's microsecond resolution.
        client.write_all(b"x").await.unwrap();
        let mut buf = [0u8; 1];
        io.read_exact(&mut buf).await.unwrap();
        assert!(activity.last() > start, "a read with bytes moves the record");
    }

    #[tokio::test]
    async fn a_flush_after_the_epoch_wakes_the_waiter() {
        let (mut io, _client, _, progress) = observed().await;
        let epoch = progress.flushes();
        let waiter = tokio::spawn({
            let progress = progress.clone();
            async move { progress.flushed_after(epoch).await }
        });
        io.write_all(b"x").await.unwrap();
        assert_eq!(progress.flushes(), epoch, "a write alone is not a flush");
        io.flush().await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), waiter).await.unwrap().unwrap();
        assert_eq!(progress.flushes(), epoch + 1);
    }

    #[tokio::test]
    async fn a_failed_write_or_the_end_of_the_connection_wakes_a_waiter_for_closed() {
        // The peer resets the connection: writes fail.
        let (mut io, client, _, progress) = observed().await;
        let closed = tokio::spawn({
            let progress = progress.clone();
            async move { progress.closed().await }
        });
        socket2::SockRef::from(&client).set_linger(Some(Duration::ZERO)).unwrap();
        drop(client);
        let chunk = [0u8; 65_536];
        let failed = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                if io.write_all(&chunk).await.is_err() || io.flush().await.is_err() {
                    return;
                }
            }
        });
        failed.await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), closed).await.unwrap().unwrap();
        // A connection whose IO is dropped (hyper's connection ended) can flush no more.
        let (io, _client, _, progress) = observed().await;
        drop(io);
        tokio::time::timeout(Duration::from_secs(5), progress.closed()).await.unwrap();
    }
}
