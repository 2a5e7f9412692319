//! The HTTP/1.1 listener (lifecycle.md §11, http-mcp.md §2): one acceptor, a fixed number of connection
//! slots taken *before* `accept`, a 30 s idle and head timeout, and a graceful stop.
//!
//! The states of one listener are explicit: [`BoundListener`] (stage 11a: the socket exists, nothing is
//! accepted), [`RunningListener`] (stage 12: the accept loop runs), and stopped (S1: the socket is
//! closed, idle connections close, exchanges in progress finish with `connection: close`). A connection
//! holds its slot until it closes, so at the ceiling the kernel's backlog holds new clients without any
//! refusal, and an idle socket never holds a request lease.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use ptc_actors::{AdmissionPool, Readiness};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};

use crate::http::mcp::{McpEndpoint, MethodOnly};
use crate::http::router::Router;
use crate::http::socket::bind_socket;

/// Connection slots above `max_inflight_requests`, shared by idle keep-alive and health sockets (§11).
pub const IDLE_HEADROOM: u32 = 8;
/// A connection with no request in progress is closed after this long (http-mcp.md §2.3).
pub const IDLE_TIMEOUT: Duration = Duration::from_millis(30_000);
/// At most this many header field lines (http-mcp.md §2.4).
pub const MAX_HEADER_LINES: usize = 64;

/// Everything a listener needs besides its socket.
pub struct ListenerSettings {
    authority: String,
    handler_ceiling: u32,
    idle_timeout: Duration,
    readiness: Readiness,
    mcp: Arc<dyn McpEndpoint>,
    /// The `/mcp` request leases and the run slots, for the MCP endpoint.
    pub requests: AdmissionPool,
    pub runs: AdmissionPool,
}

impl ListenerSettings {
    /// Settings for a listener whose configured authority is `authority`, with the handler ceiling
    /// `max_inflight_requests + 8`.
    pub fn new(
        authority: String,
        max_inflight_requests: u32,
        readiness: Readiness,
        requests: AdmissionPool,
        runs: AdmissionPool,
    ) -> ListenerSettings {
        ListenerSettings {
            authority,
            handler_ceiling: max_inflight_requests.saturating_add(IDLE_HEADROOM),
            idle_timeout: IDLE_TIMEOUT,
            readiness,
            mcp: Arc::new(MethodOnly),
            requests,
            runs,
        }
    }

    /// Replaces the idle and head timeout (tests use a short one; the gateway never does).
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Replaces the `/mcp` endpoint.
    pub fn with_mcp(mut self, mcp: Arc<dyn McpEndpoint>) -> Self {
        self.mcp = mcp;
        self
    }

    /// The connection ceiling.
    pub fn handler_ceiling(&self) -> u32 {
        self.handler_ceiling
    }
}

/// Stage 11a: a bound socket that accepts nothing yet.
pub struct BoundListener {
    listener: TcpListener,
    addr: SocketAddr,
    settings: ListenerSettings,
}

impl BoundListener {
    /// Binds `addr` (lifecycle.md §11). An error is `listener_unavailable` for the caller.
    pub fn bind(addr: SocketAddr, settings: ListenerSettings) -> std::io::Result<BoundListener> {
        let listener = bind_socket(addr)?;
        let addr = listener.local_addr()?;
        Ok(BoundListener { listener, addr, settings })
    }

    /// The bound address (the real port when the configured one was 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stage 12: starts the accept loop.
    pub fn serve(self) -> RunningListener {
        let ceiling = self.settings.handler_ceiling as usize;
        let (stop, _) = watch::channel(false);
        let (abort, _) = watch::channel(false);
        let (ended_tx, ended) = watch::channel(false);
        let shared = Arc::new(Shared {
            slots: Arc::new(Semaphore::new(ceiling)),
            ceiling,
            peak: AtomicUsize::new(0),
            stop,
            abort,
            closed: Notify::new(),
        });
        let router = Arc::new(Router::new(
            self.settings.authority.clone(),
            self.settings.readiness.clone(),
            self.settings.mcp.clone(),
        ));
        let idle_timeout = self.settings.idle_timeout;
        tokio::spawn(accept_loop(self.listener, router, shared.clone(), idle_timeout, EndedGuard(ended_tx)));
        RunningListener { control: ListenerControl { shared }, ended, addr: self.addr }
    }
}

/// State shared by the accept loop, its connections and the controls.
struct Shared {
    slots: Arc<Semaphore>,
    ceiling: usize,
    peak: AtomicUsize,
    /// Graceful stop: no more accepts; idle connections close; exchanges in progress finish.
    stop: watch::Sender<bool>,
    /// Hard close of every connection still open (S6 at the cleanup deadline).
    abort: watch::Sender<bool>,
    /// Notified whenever a connection closes.
    closed: Notify,
}

impl Shared {
    fn open_connections(&self) -> usize {
        self.ceiling.saturating_sub(self.slots.available_permits())
    }
}

/// Stage 12 onward: the accept loop runs.
pub struct RunningListener {
    control: ListenerControl,
    ended: watch::Receiver<bool>,
    addr: SocketAddr,
}

impl RunningListener {
    /// A receiver that turns true when the accept loop has ended (stopped or lost).
    pub fn ended(&self) -> watch::Receiver<bool> {
        self.ended.clone()
    }

    /// A cloneable control of this listener.
    pub fn control(&self) -> ListenerControl {
        self.control.clone()
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Stops the listener and observes its connections.
#[derive(Clone)]
pub struct ListenerControl {
    shared: Arc<Shared>,
}

impl ListenerControl {
    /// S1: stop accepting and close the listening socket; idle keep-alive connections close and an
    /// exchange in progress completes with `connection: close`.
    pub fn stop_accepting(&self) {
        self.shared.stop.send_replace(true);
    }

    /// Closes every connection still open, at once.
    pub fn close_all(&self) {
        self.shared.stop.send_replace(true);
        self.shared.abort.send_replace(true);
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.shared.open_connections()
    }

    /// The most connections ever open at once.
    pub fn peak_connections(&self) -> usize {
        self.shared.peak.load(Ordering::Acquire)
    }

    /// Waits until no connection is open, or until `deadline`; true iff none is open.
    pub async fn wait_closed(&self, deadline: tokio::time::Instant) -> bool {
        loop {
            let notified = self.shared.closed.notified();
            if self.shared.open_connections() == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.shared.open_connections() == 0;
            }
        }
    }
}

/// Sets `ended` when the accept loop returns or unwinds, so a lost loop is always observed.
struct EndedGuard(watch::Sender<bool>);

impl Drop for EndedGuard {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

async fn accept_loop(
    listener: TcpListener,
    router: Arc<Router>,
    shared: Arc<Shared>,
    idle_timeout: Duration,
    _ended: EndedGuard,
) {
    let mut stop = shared.stop.subscribe();
    loop {
        // The slot is taken before `accept` (lifecycle.md §11 "One acceptor").
        let permit = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => break,
            permit = shared.slots.clone().acquire_owned() => permit,
        };
        let Ok(permit) = permit else { break };
        let accepted = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _peer)) => {
                shared.peak.fetch_max(shared.open_connections(), Ordering::AcqRel);
                tokio::spawn(serve_connection(stream, permit, router.clone(), shared.clone(), idle_timeout));
            }
            Err(error) => {
                // Transient (EMFILE, ECONNABORTED): the slot returns; pause briefly so a descriptor
                // shortage does not spin the acceptor.
                tracing::debug!(kind = ?error.kind(), "accept failed");
                drop(permit);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    // Dropping the listener closes the socket (S1).
}

async fn serve_connection(
    stream: TcpStream,
    permit: OwnedSemaphorePermit,
    router: Arc<Router>,
    shared: Arc<Shared>,
    idle_timeout: Duration,
) {
    let _ = stream.set_nodelay(true);
    let mut stop = shared.stop.subscribe();
    let mut abort = shared.abort.subscribe();
    let service = service_fn(move |request| {
        let router = router.clone();
        async move { Ok::<_, Infallible>(router.route(request).await) }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        // hyper starts this timer whenever it waits for a request head: from acceptance and again after
        // every response, and never while a body is read or a response written (http-mcp.md §2.3).
        .header_read_timeout(idle_timeout)
        .keep_alive(true)
        .max_headers(MAX_HEADER_LINES);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let graceful = tokio::select! {
        _ = connection.as_mut() => false,
        _ = abort.wait_for(|a| *a) => false,
        _ = stop.wait_for(|s| *s) => true,
    };
    if graceful {
        connection.as_mut().graceful_shutdown();
        tokio::select! {
            _ = connection.as_mut() => {}
            _ = abort.wait_for(|a| *a) => {}
        }
    }
    drop(permit);
    shared.closed.notify_waiters();
}
