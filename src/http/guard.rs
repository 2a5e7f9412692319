//! The head guard: the [`IoLayer`] that enforces the parser limits of http-mcp.md §2.4 on the raw bytes
//! before hyper reads them.
//!
//! hyper alone gets several http-mcp.md §2.4 rules wrong or answers them differently (no request-line or
//! field-line length bound below its buffer size, `Content-Length` with `Transfer-Encoding` and duplicate
//! identical `Content-Length` lines accepted, `HTTP/2.0` answered 505, the h2 preface closed without an
//! answer; `tests/black_box/parser_limits.rs` pins what it does alone). The wrapper passes every byte through as it
//! arrives (so hyper's head timeout of http-mcp.md §2.3 keeps running on a slow head) and feeds a copy-free
//! view of it to the [`HeadScanner`]. When a byte breaks a rule, the bytes before it still reach hyper, the
//! offending byte and everything after it never do, and the next read fails; hyper then ends the
//! connection without writing, and the connection layer writes [`ConnIo::refusal`] and closes.
//!
//! It does not own the rules themselves ([`head_scan`](crate::http::head_scan)) nor the refusal bytes
//! ([`EmptyBodyStatus::wire_bytes`]).

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use crate::http::head_scan::{HeadScanner, Scan};
use crate::http::io::{ConnIo, IoLayer};
use crate::http::response::EmptyBodyStatus;

/// The layer the real listener uses: every accepted stream is wrapped in a [`Guarded`].
pub struct HeadGuard;

impl IoLayer for HeadGuard {
    fn wrap(&self, stream: TcpStream) -> Box<dyn ConnIo> {
        Box::new(Guarded::new(stream))
    }
}

/// One guarded connection.
pub struct Guarded<S> {
    inner: S,
    scanner: HeadScanner,
    /// The refusal decided, once a byte broke a rule.
    refusal: Option<EmptyBodyStatus>,
    /// Set once the connection layer took the refusal: reads pass straight through again, so the
    /// lingering close can discard what the client still sends.
    handed_over: bool,
}

impl<S> Guarded<S> {
    /// Wraps `inner`; nothing has been read yet, so the first byte starts a request head.
    pub fn new(inner: S) -> Guarded<S> {
        Guarded { inner, scanner: HeadScanner::default(), refusal: None, handed_over: false }
    }
}

/// The error hyper's read sees after a refusal. It carries no request bytes (they may hold the token).
fn refused() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "request head refused by the parser limits (http-mcp.md §2.4)")
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.handed_over {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        if this.refusal.is_some() {
            return Poll::Ready(Err(refused()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let verdict = match buf.filled().get(before..) {
            Some(fresh) => this.scanner.scan(fresh),
            None => Scan::Pass,
        };
        match verdict {
            Scan::Pass => Poll::Ready(Ok(())),
            Scan::Refuse { at, status } => {
                this.refusal = Some(status);
                if at == 0 {
                    return Poll::Ready(Err(refused()));
                }
                // Only the bytes before the offending one reach hyper; the rest is dropped.
                buf.set_filled(before + at);
                Poll::Ready(Ok(()))
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Send + Unpin + 'static> ConnIo for Guarded<S> {
    fn refusal(&mut self) -> Option<EmptyBodyStatus> {
        self.handed_over = true;
        self.refusal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// What hyper would read through the guard when the client sends `pieces`, and the refusal.
    async fn through(pieces: &[&[u8]]) -> (Vec<u8>, Option<EmptyBodyStatus>) {
        let (ours, mut theirs) = tokio::io::duplex(1 << 16);
        let mut guarded = Guarded::new(ours);
        for piece in pieces {
            theirs.write_all(piece).await.unwrap();
        }
        drop(theirs);
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match guarded.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        (seen, guarded.refusal())
    }

    #[tokio::test]
    async fn bytes_before_the_offending_one_reach_hyper_and_none_after() {
        let good: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        type Case<'a> = (&'a [&'a [u8]], &'a [u8], Option<EmptyBodyStatus>);
        let cases: &[Case] = &[
            (&[good], good, None),
            (
                &[good, b"GET / HTTP/2.0\r\n"],
                b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/",
                Some(EmptyBodyStatus::BadRequest),
            ),
            (
                &[b"GET / HTTP/1.1\r\nA : b\r\n\r\n"],
                b"GET / HTTP/1.1\r\nA",
                Some(EmptyBodyStatus::BadRequest),
            ),
            (&[b"\x00GET"], b"", Some(EmptyBodyStatus::BadRequest)),
        ];
        for (pieces, expected, refusal) in cases {
            let (seen, got) = through(pieces).await;
            assert_eq!((seen.as_slice(), got), (*expected, *refusal), "{pieces:?}");
        }
    }

    #[tokio::test]
    async fn after_the_hand_over_reads_pass_through_for_the_lingering_close() {
        let (ours, mut theirs) = tokio::io::duplex(1 << 16);
        let mut guarded = Guarded::new(ours);
        theirs.write_all(b"\x01").await.unwrap();
        let mut buf = [0u8; 64];
        assert!(guarded.read(&mut buf).await.is_err());
        assert_eq!(guarded.refusal(), Some(EmptyBodyStatus::BadRequest));
        theirs.write_all(b"rest").await.unwrap();
        let n = guarded.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"rest");
    }
}
