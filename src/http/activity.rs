//! When a connection last received bytes (http-mcp.md §6.9 "Idle budget").
//!
//! Owns one fact per connection: the instant of the last read that returned bytes. The body reader of
//! step M9 restarts its 2,000 ms budget whenever bytes arrive, and hyper hands over body *frames*, not
//! bytes: chunk-size lines, chunk extensions and trailers arrive without a frame. Observing the socket's
//! reads makes "bytes arrived" exact. The connection layer wraps the accepted IO in [`ActivityIo`] and
//! puts the [`ReadActivity`] into every request's extensions. It does not own any timer.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

use crate::http::connection::ConnIo;
use crate::http::response::EmptyBodyStatus;

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

    fn touch(&self) {
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

/// IO that records [`ReadActivity`] on every read that returns bytes.
pub struct ActivityIo {
    inner: Box<dyn ConnIo>,
    activity: ReadActivity,
}

impl ActivityIo {
    pub fn new(inner: Box<dyn ConnIo>, activity: ReadActivity) -> ActivityIo {
        ActivityIo { inner, activity }
    }
}

impl AsyncRead for ActivityIo {
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

impl AsyncWrite for ActivityIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
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
}

impl ConnIo for ActivityIo {
    fn refusal(&mut self) -> Option<EmptyBodyStatus> {
        self.inner.refusal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn reads_with_bytes_are_recorded() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let activity = ReadActivity::new();
        let start = activity.last();
        // Accepting, writing and reading take far more than the record's microsecond resolution.
        let mut io = ActivityIo::new(Box::new(listener.accept().await.unwrap().0), activity.clone());
        client.write_all(b"x").await.unwrap();
        let mut buf = [0u8; 1];
        io.read_exact(&mut buf).await.unwrap();
        assert!(activity.last() > start, "a read with bytes moves the record");
    }
}
