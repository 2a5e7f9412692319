//! One HTTP/1.1 connection, from `accept` to close (http-mcp.md §2.1, §2.3, §2.5; lifecycle.md §7.3 stage S1
//! (stop listeners)).
//!
//! Owns the life of a connection: the IO it is served over, hyper's configuration, the graceful stop and
//! the hard abort, and how the socket is closed. The states are explicit:
//!
//! ```text
//! serving ──stop──▶ draining (hyper: idle or head-incomplete → close at once; an exchange whose head was
//!    │                  received completes, with `connection: close`)
//!    ├──────────────▶ ended by hyper ──▶ [refusal written] ──▶ lingering close ──▶ closed
//!    ├──idle/head timeout──────────────────────────────────────────────────────▶ closed (no response)
//!    └──abort (at any state)───────────────────────────────────────────────────▶ closed
//! ```
//!
//! **Idle and head timeout (http-mcp.md §2.3).** hyper 1.x arms `header_read_timeout` whenever it starts
//! waiting for a request head: at the first poll (right after `accept`) and again when a connection goes idle
//! after a response has been flushed; it stops the timer once a head is parsed, and never runs it while a
//! body is read or a response written (hyper reads the next head only when both directions are idle). On
//! expiry hyper returns a timeout error without writing anything, and this layer closes the socket at once.
//!
//! **Head guard seam (http-mcp.md §2.4).** The accepted stream reaches hyper through an [`IoLayer`], which
//! may wrap it in a guard that inspects the raw bytes hyper reads (exact line lengths, duplicate framing
//! headers: what hyper's parser cannot see). A guard that refuses makes hyper's reads fail, and this layer
//! writes the guard's empty-body refusal itself once hyper has ended ([`ConnIo::refusal`]).
//!
//! **Lingering close** (RFC 9112 §9.6). When the connection ends after a response, the write side is shut
//! down first and whatever the client still sends is read and discarded for a bounded time
//! ([`LINGER_TIME`], [`LINGER_BYTES`]), so an unread request body in the kernel's buffer does not turn the
//! close into a reset that can destroy a response the client has not read yet (some stacks discard
//! received data on a reset). This never keeps a connection alive: no further request is parsed
//! (http-mcp.md §2.5).
//!
//! **Close without a response** (http-mcp.md §6.9 "Half-close"). Every request carries a [`CloseSignal`]
//! in its extensions. An endpoint that must write nothing at all (the peer ended its write side before
//! the body was complete) triggers it and leaves its response future pending; the connection layer sees
//! the signal, drops hyper's connection (and with it the pending exchange) and closes the socket at once,
//! without a lingering close.
//!
//! It does not own routing (the [`Router`]) or the accept loop.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::http::activity::ReadActivity;
// Re-exported where the connection's seam was first named (`testing::http::connection`).
pub use crate::http::io::{ConnIo, IoLayer, PlainIo};
use crate::http::observed::ObservedIo;
use crate::http::progress::WriteProgress;
use crate::http::response::ResponseBody;
use crate::http::router::Router;
use crate::http::self_wake::SelfWakes;
use crate::http::slots::ConnectionSlot;
use crate::http::version::{Http11Status, VersionMark};

/// A connection with no request in progress is closed after this long (http-mcp.md §2.3).
pub const IDLE_TIMEOUT: Duration = Duration::from_millis(30_000);
/// At most this many header field lines (http-mcp.md §2.4). The head guard refuses the 65th line before
/// hyper sees it; hyper's own bound (431 too) is the backstop for a listener without the guard.
pub const MAX_HEADER_LINES: usize = 64;
/// The largest request head http-mcp.md §2.4 admits: a request line and 64 field lines of 8,192 bytes each
/// (CRLF included), and the empty line. hyper's read buffer must hold it whole, or hyper would answer 431 to
/// a head within the limits (its default buffer is about 400 KB).
pub const MAX_HEAD_BYTES: usize = 8_192 * (1 + MAX_HEADER_LINES) + 2;
/// How long a closing connection keeps reading (and discarding) what the client still sends.
pub const LINGER_TIME: Duration = Duration::from_millis(1_000);
/// How many bytes a closing connection discards at most before it closes anyway.
pub const LINGER_BYTES: usize = 1 << 20;

/// The per-connection settings (none is configurable in a deployment; tests shorten the timers).
#[derive(Clone, Copy, Debug)]
pub struct ConnectionConfig {
    /// The idle and head timeout (http-mcp.md §2.3).
    pub idle_timeout: Duration,
    /// The lingering close bound in time.
    pub linger_time: Duration,
    /// The lingering close bound in bytes.
    pub linger_bytes: usize,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig { idle_timeout: IDLE_TIMEOUT, linger_time: LINGER_TIME, linger_bytes: LINGER_BYTES }
    }
}

/// The signals a connection watches.
pub struct Signals {
    /// Shutdown stage S1, stop listeners: finish the exchange in progress (if its head was received), then
    /// close; close idle at once.
    pub stop: watch::Receiver<bool>,
    /// Close now, whatever the state (admission clean, S6, at the cleanup deadline).
    pub abort: watch::Receiver<bool>,
}

/// The per-connection handle an endpoint uses to close the connection without writing a response
/// (http-mcp.md §6.9 "Half-close"). Cloned into every request's extensions by [`serve`].
#[derive(Clone, Debug)]
pub struct CloseSignal {
    sender: Arc<watch::Sender<bool>>,
}

impl CloseSignal {
    fn new() -> CloseSignal {
        CloseSignal { sender: Arc::new(watch::Sender::new(false)) }
    }

    /// Asks the connection layer to close the connection at once, writing nothing more. The caller's
    /// response future must then stay pending: it is dropped with the connection.
    pub fn close_now(&self) {
        self.sender.send_replace(true);
    }

    fn subscribe(&self) -> watch::Receiver<bool> {
        self.sender.subscribe()
    }
}

/// How hyper's part of the connection ended.
enum Served {
    /// The client closed, or keep-alive ended after a response, or hyper refused a head itself.
    Ended,
    /// The idle and head timeout expired: close without a response.
    TimedOut,
    /// Aborted, or stopped before any head arrived: close now.
    Aborted,
}

type BoxedResponse = Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

/// Serves one accepted connection until it closes; `slot` is returned when this ends (or unwinds).
pub async fn serve(
    stream: TcpStream,
    slot: ConnectionSlot,
    router: Arc<Router>,
    layer: Arc<dyn IoLayer>,
    config: ConnectionConfig,
    mut signals: Signals,
) {
    // Small fixed answers go out at once instead of waiting for Nagle's timer.
    let _ = stream.set_nodelay(true);
    // Set when hyper hands over the first parsed head: until then a stop closes the connection at once.
    let head_received = Arc::new(AtomicBool::new(false));
    let seen = head_received.clone();
    let mark = VersionMark::default();
    let http10 = mark.clone();
    let close = CloseSignal::new();
    let mut close_requested = close.subscribe();
    let activity = ReadActivity::new();
    let activity_for_requests = activity.clone();
    let progress = Arc::new(WriteProgress::default());
    let progress_for_requests = progress.clone();
    let service = service_fn(move |mut request: Request<Incoming>| -> BoxedResponse {
        seen.store(true, Ordering::Release);
        request.extensions_mut().insert(close.clone());
        request.extensions_mut().insert(activity_for_requests.clone());
        request.extensions_mut().insert(progress_for_requests.clone());
        if request.version() == Version::HTTP_10 {
            http10.mark();
        }
        let router = router.clone();
        Box::pin(async move { Ok(router.route(request).await) })
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.idle_timeout)
        .keep_alive(true)
        .max_headers(MAX_HEADER_LINES)
        .max_buf_size(MAX_HEAD_BYTES);
    // http-mcp.md §2.1: the status line is HTTP/1.1 also for an HTTP/1.0 request (outermost, so a guard sees
    // raw bytes). The observed IO records every byte read (http-mcp.md §6.9: the body's idle budget restarts
    // on any byte) and every completed flush (execution.md §4.2: when the commit was written).
    let observed: Box<dyn ConnIo> = Box::new(ObservedIo::new(layer.wrap(stream), activity, progress));
    let io: Box<dyn ConnIo> = Box::new(Http11Status::new(observed, mark));
    let mut connection = builder.serve_connection(TokioIo::new(io), service);
    let served = drive(&mut connection, &slot, &mut signals, &head_received, &mut close_requested).await;
    let mut io = connection.into_parts().io.into_inner();
    match served {
        Served::Aborted | Served::TimedOut => {}
        Served::Ended => {
            let deadline = Instant::now() + config.linger_time;
            tokio::select! {
                biased;
                _ = signals.abort.wait_for(|a| *a) => {}
                _ = close_after_response(&mut io, deadline, config.linger_bytes) => {}
            }
        }
    }
}

/// Runs hyper until it ends, turning a stop into hyper's graceful shutdown and an abort into an end.
async fn drive<S>(
    connection: &mut http1::Connection<TokioIo<Box<dyn ConnIo>>, S>,
    slot: &ConnectionSlot,
    signals: &mut Signals,
    head_received: &AtomicBool,
    close_requested: &mut watch::Receiver<bool>,
) -> Served
where
    S: hyper::service::HttpService<Incoming, ResBody = ResponseBody> + Unpin,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::Future: Unpin,
{
    enum Event {
        Stop,
        Abort,
        Done(hyper::Result<()>),
    }
    let mut stopping = false;
    // hyper's body channel wakes the connection's task from inside its own poll; for a connection served
    // alone those wakes are taken here, so that they do not wake the other worker (`self_wake`).
    let wakes = SelfWakes::default();
    loop {
        let event = tokio::select! {
            biased;
            _ = signals.abort.wait_for(|a| *a) => Event::Abort,
            _ = signals.stop.wait_for(|s| *s), if !stopping => Event::Stop,
            // An endpoint asked to close without a response (http-mcp.md §6.9 half-close): nothing is
            // written.
            _ = close_requested.wait_for(|c| *c) => Event::Abort,
            result = std::future::poll_fn(|cx| {
                wakes.poll(cx, slot.alone(), |own| connection.poll_without_shutdown(own))
            }) => Event::Done(result),
        };
        match event {
            Event::Abort => return Served::Aborted,
            Event::Stop => {
                // lifecycle.md §7.3 stage S1 (stop listeners). Before its first head, a connection has no
                // request in progress, but hyper's graceful shutdown would wait for a partial first head to
                // complete; close it here. (The service runs in the same poll that parses a head, so this is
                // exact.)
                if !head_received.load(Ordering::Acquire) {
                    return Served::Aborted;
                }
                // Later, hyper closes an idle connection (including one whose next head is incomplete)
                // at once, and lets an exchange whose head it parsed finish, adding
                // `connection: close` to a response whose head is not written yet.
                stopping = true;
                Pin::new(&mut *connection).graceful_shutdown();
            }
            Event::Done(Err(error)) if error.is_timeout() => return Served::TimedOut,
            Event::Done(result) => {
                if let Err(error) = result {
                    // A parse error hyper already answered, an IO error, or a guard refusal.
                    tracing::debug!(%error, "connection ended with an error");
                }
                return Served::Ended;
            }
        }
    }
}

/// Writes a guard's refusal if there is one, then shuts the write side down and discards what the client
/// still sends until it closes, `deadline` passes or `max_bytes` were discarded.
async fn close_after_response(io: &mut Box<dyn ConnIo>, deadline: Instant, max_bytes: usize) {
    if let Some(refusal) = io.refusal() {
        let written = tokio::time::timeout_at(deadline, io.write_all(refusal.wire_bytes())).await;
        if !matches!(written, Ok(Ok(()))) {
            return;
        }
        let _ = tokio::time::timeout_at(deadline, io.flush()).await;
    }
    if !matches!(tokio::time::timeout_at(deadline, io.shutdown()).await, Ok(Ok(()))) {
        return;
    }
    let mut discarded = 0usize;
    let mut buf = vec![0u8; 16 * 1024];
    while discarded < max_bytes {
        match tokio::time::timeout_at(deadline, io.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return,
            Ok(Ok(n)) => discarded = discarded.saturating_add(n),
        }
    }
}
