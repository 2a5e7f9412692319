//! Responses are written as HTTP/1.1, also to an HTTP/1.0 request (http-mcp.md §2.1).
//!
//! hyper 1.x answers an HTTP/1.0 request with an `HTTP/1.0` status line and offers no option to change
//! that; everything else it does for such a request is what http-mcp.md §2.1 and execution.md want (no
//! chunked coding, close unless the client asked for keep-alive). This layer owns only the status line: the
//! service marks that the next response answers an HTTP/1.0 request ([`VersionMark`]), and the write side
//! rewrites the one version byte of that response's status line. It is exact because hyper writes nothing
//! on a server connection between handing a request to the service and writing that request's response
//! head (it sends no `100 Continue` to HTTP/1.0 clients), and it reads the next head only after the
//! response is complete. The layer reports itself as non-vectored, so hyper flattens its writes and the
//! status line reaches [`AsyncWrite::poll_write`].

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::http::io::ConnIo;
use crate::http::response::EmptyBodyStatus;

/// The prefix hyper writes for an HTTP/1.0 request, and the byte that becomes `1`.
const HTTP10: &[u8; 8] = b"HTTP/1.0";
const MINOR_AT: usize = 7;

/// Set by the service when the request it was handed is HTTP/1.0.
#[derive(Clone, Default)]
pub struct VersionMark(Arc<AtomicBool>);

impl VersionMark {
    /// The response to the request just handed over must be written as HTTP/1.1.
    pub fn mark(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// The IO hyper writes through: every other call passes to the inner IO unchanged.
pub struct Http11Status {
    inner: Box<dyn ConnIo>,
    mark: VersionMark,
    /// Bytes of the marked response's status line written so far (only while the mark is set).
    written: usize,
}

impl Http11Status {
    /// Wraps `inner`; the service holds a clone of `mark`.
    pub fn new(inner: Box<dyn ConnIo>, mark: VersionMark) -> Http11Status {
        Http11Status { inner, mark, written: 0 }
    }
}

impl AsyncRead for Http11Status {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Http11Status {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if !self.mark.0.load(Ordering::Acquire) {
            return Pin::new(&mut self.inner).poll_write(cx, buf);
        }
        let this = &mut *self;
        // The part of the status-line prefix this write covers: buf[..take] is prefix[written..].
        let take = HTTP10.len().saturating_sub(this.written).min(buf.len());
        let (Some(head), Some(expected)) = (buf.get(..take), HTTP10.get(this.written..this.written + take))
        else {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        };
        if head != expected {
            // Not an HTTP/1.0 status line (cannot happen; pass through untouched).
            this.mark.0.store(false, Ordering::Release);
            this.written = 0;
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        let mut patched = [0u8; 8];
        let Some(slot) = patched.get_mut(..take) else {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        };
        slot.copy_from_slice(head);
        if let Some(minor) = MINOR_AT.checked_sub(this.written).and_then(|i| slot.get_mut(i)) {
            *minor = b'1';
        }
        let polled = Pin::new(&mut this.inner).poll_write(cx, slot);
        if let Poll::Ready(Ok(n)) = polled {
            this.written += n;
            if this.written >= HTTP10.len() {
                this.mark.0.store(false, Ordering::Release);
                this.written = 0;
            }
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl ConnIo for Http11Status {
    fn refusal(&mut self) -> Option<EmptyBodyStatus> {
        self.inner.refusal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A `ConnIo` over one end of an in-memory pipe.
    struct Pipe(tokio::io::DuplexStream);

    impl AsyncRead for Pipe {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_read(cx, buf)
        }
    }

    impl AsyncWrite for Pipe {
        fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            Pin::new(&mut self.0).poll_write(cx, buf)
        }
        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_flush(cx)
        }
        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.0).poll_shutdown(cx)
        }
    }

    impl ConnIo for Pipe {}

    async fn written(marked: bool, writes: &[&[u8]]) -> Vec<u8> {
        let (ours, mut theirs) = tokio::io::duplex(4096);
        let mark = VersionMark::default();
        let mut io = Http11Status::new(Box::new(Pipe(ours)), mark.clone());
        if marked {
            mark.mark();
        }
        for chunk in writes {
            io.write_all(chunk).await.unwrap();
        }
        io.shutdown().await.unwrap();
        let mut out = Vec::new();
        theirs.read_to_end(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn the_marked_status_line_is_written_as_http_1_1() {
        let line: &[u8] = b"HTTP/1.0 200 OK\r\n\r\nHTTP/1.0 body";
        type Writes<'a> = &'a [&'a [u8]];
        let cases: &[(bool, Writes, &[u8])] = &[
            (true, &[line], b"HTTP/1.1 200 OK\r\n\r\nHTTP/1.0 body"),
            (false, &[line], line),
            (true, &[b"HTTP/1", b".0 200 OK\r\n"], b"HTTP/1.1 200 OK\r\n"),
            (true, &[b"H", b"TTP/1.0", b" 404"], b"HTTP/1.1 404"),
            (true, &[b"HTTP/1.1 200 OK\r\n"], b"HTTP/1.1 200 OK\r\n"),
            (true, &[b"junk", b"HTTP/1.0"], b"junkHTTP/1.0"),
        ];
        for (marked, writes, expected) in cases {
            assert_eq!(written(*marked, writes).await, *expected, "{writes:?}");
        }
    }

    #[tokio::test]
    async fn only_the_next_response_is_rewritten() {
        let (ours, mut theirs) = tokio::io::duplex(4096);
        let mark = VersionMark::default();
        let mut io = Http11Status::new(Box::new(Pipe(ours)), mark.clone());
        mark.mark();
        io.write_all(b"HTTP/1.0 200 OK\r\n\r\n").await.unwrap();
        io.write_all(b"HTTP/1.0 200 OK\r\n\r\n").await.unwrap();
        mark.mark();
        io.write_all(b"HTTP/1.0 503 X\r\n\r\n").await.unwrap();
        io.shutdown().await.unwrap();
        let mut out = Vec::new();
        theirs.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"HTTP/1.1 200 OK\r\n\r\nHTTP/1.0 200 OK\r\n\r\nHTTP/1.1 503 X\r\n\r\n");
    }
}
