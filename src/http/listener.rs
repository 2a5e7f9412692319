//! The HTTP/1.1 listener as a whole (lifecycle.md §11, §7.3 stage S1 (stop listeners), lifecycle.md §7.5;
//! http-mcp.md §2): its settings, its states, and the controls the domain holds.
//!
//! The states are explicit types: [`BoundListener`] (stage 11a: the socket listens, nothing is accepted),
//! [`RunningListener`] (stage 12: the accept loop runs), and ended (the loop returned: stopped by the stop
//! listeners stage (S1), or lost). [`ListenerControl`] is the domain's handle: stop, abort, observe slots,
//! wait for the last connection, and learn why the loop ended. It does not own the accept loop itself
//! ([`crate::http::acceptor`]), a connection's life ([`crate::http::connection`]) or routing.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ptc_actors::AdmissionPool;
use tokio::sync::watch;

use crate::codes::domain::Readiness;
use crate::http::acceptor::{self, LoopEnd};
use crate::http::connection::{self, ConnectionConfig, Signals};
use crate::http::fields::authority_of;
use crate::http::io::{IoLayer, PlainIo};
use crate::http::mcp::{McpEndpoint, MethodOnly};
use crate::http::router::Router;
use crate::http::slots::{SlotSnapshot, Slots};
use crate::http::socket::{bind_socket, BindError};

pub use crate::http::connection::{IDLE_TIMEOUT, MAX_HEADER_LINES};

/// Connection slots above `max_inflight_requests`, shared by idle keep-alive and health sockets
/// (lifecycle.md §11).
pub const IDLE_HEADROOM: u32 = 8;

/// Where the configured authority comes from.
enum Authority {
    /// Given by the configuration (`listen.authority()`, config.md).
    Configured(String),
    /// Computed from the bound address by the rule of http-mcp.md §1 (tests bind port 0).
    FromBoundAddress,
}

/// Everything a listener needs besides its socket.
pub struct ListenerSettings {
    authority: Authority,
    handler_ceiling: u32,
    connection: ConnectionConfig,
    readiness: Readiness,
    mcp: Arc<dyn McpEndpoint>,
    io_layer: Arc<dyn IoLayer>,
    /// The `/mcp` request leases, for the MCP endpoint (the listener itself never takes one).
    pub requests: AdmissionPool,
    /// The run slots, for the MCP endpoint.
    pub runs: AdmissionPool,
}

impl ListenerSettings {
    /// Settings for a listener whose configured authority is `authority`, with the handler ceiling
    /// `max_inflight_requests + 8` (lifecycle.md §10.1) and the provisional `/mcp` endpoint.
    pub fn new(
        authority: String,
        max_inflight_requests: u32,
        readiness: Readiness,
        requests: AdmissionPool,
        runs: AdmissionPool,
    ) -> ListenerSettings {
        ListenerSettings {
            authority: Authority::Configured(authority),
            handler_ceiling: max_inflight_requests.saturating_add(IDLE_HEADROOM),
            connection: ConnectionConfig::default(),
            readiness,
            mcp: Arc::new(MethodOnly),
            io_layer: Arc::new(PlainIo),
            requests,
            runs,
        }
    }

    /// Uses the bound address's authority instead of the configured one (for listeners on port 0).
    pub fn with_bound_authority(mut self) -> Self {
        self.authority = Authority::FromBoundAddress;
        self
    }

    /// Replaces the idle and head timeout (tests use a short one; the gateway never does).
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.connection.idle_timeout = timeout;
        self
    }

    /// Replaces the lingering-close bounds (tests only).
    pub fn with_linger(mut self, time: Duration, bytes: usize) -> Self {
        self.connection.linger_time = time;
        self.connection.linger_bytes = bytes;
        self
    }

    /// Replaces the `/mcp` endpoint.
    pub fn with_mcp(mut self, mcp: Arc<dyn McpEndpoint>) -> Self {
        self.mcp = mcp;
        self
    }

    /// Inserts an IO layer (the head guard of http-mcp.md §2.4) between each socket and hyper.
    pub fn with_io_layer(mut self, layer: Arc<dyn IoLayer>) -> Self {
        self.io_layer = layer;
        self
    }

    /// The connection ceiling.
    pub fn handler_ceiling(&self) -> u32 {
        self.handler_ceiling
    }
}

/// Stage 11a: a bound, listening socket that accepts nothing yet.
pub struct BoundListener {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    authority: String,
    settings: ListenerSettings,
}

impl BoundListener {
    /// Binds `addr` (lifecycle.md §11). Every error is `listener_unavailable` for the caller
    /// ([`BindError::code`]); it converts into `std::io::Error` for callers that only propagate it.
    pub fn bind(addr: SocketAddr, settings: ListenerSettings) -> Result<BoundListener, BindError> {
        let listener = bind_socket(addr)?;
        let addr =
            listener.local_addr().map_err(|e| BindError::of(crate::http::socket::BindStep::Register, &e))?;
        let authority = match &settings.authority {
            Authority::Configured(authority) => authority.clone(),
            Authority::FromBoundAddress => authority_of(addr),
        };
        Ok(BoundListener { listener, addr, authority, settings })
    }

    /// The bound address (the real port when the configured one was 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The configured authority that `Host` is compared with.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// Stage 12: starts the accept loop on a task of its own. Must be called inside a tokio runtime.
    pub fn serve(self) -> RunningListener {
        let (running, accept) = self.start();
        tokio::spawn(accept);
        running
    }

    /// Stage 12: the running listener and its accept loop, for an owner that runs the loop on a task it
    /// watches (the HTTP listener actor of `startup::listeners`): the loop's end is that owner's.
    pub fn start(self) -> (RunningListener, impl std::future::Future<Output = ()> + Send + 'static) {
        let BoundListener { listener, addr, authority, settings } = self;
        let (stop, _) = watch::channel(false);
        let (abort, _) = watch::channel(false);
        let (ended_tx, ended) = watch::channel(false);
        let shared = Arc::new(Shared {
            slots: Slots::new(settings.handler_ceiling as usize),
            stop,
            abort,
            end: OnceLock::new(),
            ended: ended_tx,
        });
        let router = Arc::new(Router::new(authority, settings.readiness.clone(), settings.mcp.clone()));
        let config = settings.connection;
        let layer = settings.io_layer.clone();
        let loop_shared = shared.clone();
        let accept = async move {
            let reporter = EndReporter { shared: loop_shared.clone() };
            let for_connections = loop_shared.clone();
            let end = acceptor::run(listener, loop_shared.slots.clone(), loop_shared.stop.subscribe(), {
                move |stream, slot| {
                    let signals = Signals {
                        stop: for_connections.stop.subscribe(),
                        abort: for_connections.abort.subscribe(),
                    };
                    let serving =
                        connection::serve(stream, slot, router.clone(), layer.clone(), config, signals);
                    tokio::spawn(serving);
                }
            })
            .await;
            reporter.report(end);
        };
        (RunningListener { control: ListenerControl { shared }, ended, addr }, accept)
    }
}

/// State shared by the accept loop, its connections and the controls.
struct Shared {
    slots: Arc<Slots>,
    /// Graceful stop: no more accepts; idle connections close; exchanges in progress finish.
    stop: watch::Sender<bool>,
    /// Hard close of every connection still open (admission clean, S6, at the cleanup deadline).
    abort: watch::Sender<bool>,
    /// Why the accept loop ended, once it has.
    end: OnceLock<LoopEnd>,
    /// Turns true when the accept loop has ended and its socket is closed.
    ended: watch::Sender<bool>,
}

/// Records why the loop ended and signals `ended`; if the loop unwinds, the end is [`LoopEnd::Lost`], so
/// a lost loop is always observed.
struct EndReporter {
    shared: Arc<Shared>,
}

impl EndReporter {
    fn report(self, end: LoopEnd) {
        let _ = self.shared.end.set(end);
        if end.is_loss() {
            tracing::error!(?end, "HTTP accept loop lost");
        }
    }
}

impl Drop for EndReporter {
    fn drop(&mut self) {
        let _ = self.shared.end.set(LoopEnd::Lost);
        self.shared.ended.send_replace(true);
    }
}

/// Stage 12 onward: the accept loop runs.
pub struct RunningListener {
    control: ListenerControl,
    ended: watch::Receiver<bool>,
    addr: SocketAddr,
}

impl RunningListener {
    /// A receiver that turns true when the accept loop has ended (stopped or lost) and the listening
    /// socket is closed; [`ListenerControl::end`] says which.
    pub fn ended(&self) -> watch::Receiver<bool> {
        self.ended.clone()
    }

    /// A cloneable control of this listener.
    pub fn control(&self) -> ListenerControl {
        self.control.clone()
    }

    /// The bound address.
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
    /// Shutdown stage S1, stop listeners: stop accepting and close the listening socket; idle keep-alive
    /// connections (and connections whose head is incomplete) close at once; an exchange whose head was
    /// received completes and its connection then closes (`connection: close`).
    pub fn stop_accepting(&self) {
        self.shared.stop.send_replace(true);
    }

    /// Closes every connection still open, at once, whatever it is doing (admission clean, S6, at the cleanup
    /// deadline).
    pub fn close_all(&self) {
        self.shared.stop.send_replace(true);
        self.shared.abort.send_replace(true);
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.shared.slots.snapshot().open
    }

    /// The most connections ever open at once.
    pub fn peak_connections(&self) -> usize {
        self.shared.slots.snapshot().peak
    }

    /// The slot counters (ceiling, open, peak).
    pub fn slots(&self) -> SlotSnapshot {
        self.shared.slots.snapshot()
    }

    /// Why the accept loop ended, or `None` while it runs. Anything but [`LoopEnd::Stopped`] is a
    /// listener loss (lifecycle.md §7.5: the domain stops).
    pub fn end(&self) -> Option<LoopEnd> {
        self.shared.end.get().copied()
    }

    /// Waits until no connection is open, or until `deadline`; true iff none is open.
    pub async fn wait_closed(&self, deadline: tokio::time::Instant) -> bool {
        self.shared.slots.wait_closed(deadline).await
    }
}
