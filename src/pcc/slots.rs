//! The PCC acceptor's fixed 64 connection slots (pcc.md §3, lifecycle.md §10–§11), and the close of a
//! connection that has had no open stream for 30,000 ms.
//!
//! Owns the incoming-connection stream handed to tonic: a slot is taken before each `accept`, so while
//! every slot is held no connection is accepted (they wait in the kernel's backlog), and the slot is
//! returned when tonic drops the connection. Each connection carries an [`Activity`] that its streams
//! hold open (through [`ConnectionInfo`], which tonic puts in every request's extensions); once it has
//! been without streams for [`IDLE_CONNECTION`], its reads end, and hyper closes the connection. It does
//! not own HTTP/2 settings or the keepalive of connections with streams (`listener`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::task::AtomicWaker;
use futures::Stream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// pcc.md §3: fixed; does not grow with the stream bound.
pub const CONNECTION_SLOTS: usize = 64;
/// pcc.md §3, lifecycle.md §11: a connection with no open stream for this long is closed.
pub const IDLE_CONNECTION: Duration = Duration::from_millis(30_000);

/// The open streams of one connection, and since when it has had none.
pub struct Activity {
    /// (open streams, the moment the count last became zero).
    state: Mutex<(usize, Instant)>,
    /// The connection's pending read, woken when the count becomes zero (its idle clock starts).
    reader: AtomicWaker,
}

/// Held by a stream for its lifetime (`crate::pcc::service`).
pub struct OpenStream(Arc<Activity>);

impl Activity {
    fn new() -> Arc<Activity> {
        Arc::new(Activity { state: Mutex::new((0, Instant::now())), reader: AtomicWaker::new() })
    }

    /// Counts a stream as open until the guard drops.
    pub fn open_stream(self: &Arc<Activity>) -> OpenStream {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).0 += 1;
        OpenStream(self.clone())
    }

    /// `None` while a stream is open; otherwise the moment the connection became idle.
    fn idle_since(&self) -> Option<Instant> {
        let (open, since) = *self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (open == 0).then_some(since)
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 = state.0.saturating_sub(1);
        if state.0 == 0 {
            state.1 = Instant::now();
            drop(state);
            self.0.reader.wake();
        }
    }
}

/// What tonic attaches to every request of a connection.
#[derive(Clone)]
pub struct ConnectionInfo {
    pub tcp: TcpConnectInfo,
    pub activity: Arc<Activity>,
}

/// One accepted connection holding its slot until dropped.
pub struct Slotted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
    activity: Arc<Activity>,
    idle: Pin<Box<Sleep>>,
    /// The deadline `idle` is set to.
    armed_for: Option<Instant>,
}

impl Slotted {
    /// True once the connection has been without streams for [`IDLE_CONNECTION`]; otherwise the read
    /// is woken when that may change (a stream ends, or the idle deadline passes).
    fn idle_expired(&mut self, cx: &mut Context<'_>) -> bool {
        self.activity.reader.register(cx.waker());
        let Some(since) = self.activity.idle_since() else {
            self.armed_for = None;
            return false;
        };
        let deadline = since + IDLE_CONNECTION;
        if self.armed_for != Some(deadline) {
            self.idle.as_mut().reset(deadline);
            self.armed_for = Some(deadline);
        }
        self.idle.as_mut().poll(cx).is_ready()
    }
}

impl Connected for Slotted {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> ConnectionInfo {
        ConnectionInfo { tcp: self.stream.connect_info(), activity: self.activity.clone() }
    }
}

impl AsyncRead for Slotted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // An idle connection reads as ended: hyper then closes it (pcc.md §3). A connection with open
        // streams is never closed here; the HTTP/2 keepalive watches it.
        if self.idle_expired(cx) {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Slotted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The accepted connections of `listener`, each with a slot. An accept error other than a transient
/// one ends the stream (the listener is lost, pcc.md §3).
pub fn incoming(listener: TcpListener) -> impl Stream<Item = io::Result<Slotted>> {
    let slots = Arc::new(Semaphore::new(CONNECTION_SLOTS));
    futures::stream::unfold((listener, slots), |(listener, slots)| async move {
        let slot = slots.clone().acquire_owned().await.ok()?;
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let activity = Activity::new();
                    let idle = Box::pin(tokio::time::sleep(IDLE_CONNECTION));
                    let slotted = Slotted { stream, _slot: slot, activity, idle, armed_for: None };
                    return Some((Ok(slotted), (listener, slots)));
                }
                // A connection reset before it was accepted, or a descriptor shortage: try again.
                Err(e) if is_transient(&e) => continue,
                Err(_) => return None,
            }
        }
    })
}

fn is_transient(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_clock_runs_only_without_streams() {
        // pcc.md §3: idle from the accept, not while any stream is open, and again from the last end.
        let activity = Activity::new();
        let accepted = activity.idle_since().expect("idle from the accept");
        let first = activity.open_stream();
        let second = activity.open_stream();
        assert_eq!(activity.idle_since(), None);
        drop(first);
        assert_eq!(activity.idle_since(), None, "one stream is still open");
        drop(second);
        let since = activity.idle_since().expect("idle again");
        assert!(since >= accepted);
    }
}
