//! Stages 11a, 11b and 12 (lifecycle.md §3.2, §11): binding the HTTP and PCC listeners, and at stage 12
//! the `listeners` supervisor with one owner per socket (a `ptc_actors::TaskOwner`), each running its
//! accept loop on a task it owns, so that the end or panic of a loop is that owner's loss, and the loss of
//! a listener stops the domain (lifecycle.md §6.3, §7.5: exit 70).
//!
//! With `pcc`, the PCC listener serves the gRPC front of `crate::pcc` (pcc.md §3); its stopper follows the
//! drain of pcc.md §15 (stop listeners, S1: stop accepting, idle streams end; admission clean, S6: every
//! stream ends).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use ptc_actors::{TaskGroup, TaskOwner};
use tokio::sync::watch;

use crate::codes::domain::{ChildPolicy, DomainHandle, Readiness, SupervisorHandle};
use crate::codes::AbnormalCause;
use crate::config::gateway::GatewayConfig;
use crate::http;
use crate::http::mcp::McpEndpoint;
use crate::pcc::drain::Drain;
use crate::pcc::service::PccService;
use crate::startup::pools::Pools;

/// The name of the listeners supervisor under the domain; the stop listeners stage (S1) stops it as a
/// subtree.
pub const LISTENERS: &str = "listeners";
/// The names of the listener actors, in start order; also the names of their accept-loop tasks.
pub const CHILD_NAMES: [&str; 2] = ["http_listener", "pcc_listener"];

/// A listener that could not be bound (`listener_unavailable`, lifecycle.md §3.2 stage 11): the address
/// and the failed step with the operating system's reason, for the person reading the refusal.
#[derive(Debug)]
pub struct Unbound {
    pub address: SocketAddr,
    pub error: http::BindError,
}

/// Both listeners bound, not yet accepting.
pub struct Bound {
    http: http::BoundListener,
    pcc: Option<(tokio::net::TcpListener, PccService, watch::Sender<Drain>)>,
}

/// Binds `listen` (11a), then `pcc` (11b); `/mcp` is answered by `mcp` (the MCP front of
/// `crate::mcp::McpFront`).
pub fn bind(
    config: &GatewayConfig,
    readiness: Readiness,
    pools: &Pools,
    mcp: Arc<dyn McpEndpoint>,
    pcc: Option<Box<dyn FnOnce(watch::Receiver<Drain>) -> PccService>>,
) -> Result<Bound, Unbound> {
    let addr = SocketAddr::new(config.listen.address.ip(), config.listen.port);
    let settings = http::ListenerSettings::new(
        config.listen.authority(),
        config.admission.max_inflight_requests,
        readiness,
        pools.requests.clone(),
        pools.runs.clone(),
    )
    // http-mcp.md §2.4: every head is checked against the parser limits before hyper reads it.
    .with_io_layer(std::sync::Arc::new(http::guard::HeadGuard))
    .with_mcp(mcp);
    let http = http::BoundListener::bind(addr, settings).map_err(|error| Unbound { address: addr, error })?;
    let pcc = match (&config.pcc, pcc) {
        (Some(config), Some(service)) => {
            let address = SocketAddr::new(config.address.ip(), config.port);
            let listener = http::bind_socket(address).map_err(|error| Unbound { address, error })?;
            let (drain_tx, drain_rx) = watch::channel(Drain::Serving);
            Some((listener, service(drain_rx), drain_tx))
        }
        _ => None,
    };
    Ok(Bound { http, pcc })
}

/// The listeners while they accept.
pub struct Serving {
    http: http::RunningListener,
    http_addr: SocketAddr,
    pcc_addr: Option<SocketAddr>,
    pcc_stop: Option<watch::Sender<Drain>>,
    /// Opens the accept loops once readiness is true ([`Serving::open`]).
    gate: watch::Sender<bool>,
}

/// A cloneable handle that stops the accept loops and closes connections.
#[derive(Clone)]
pub struct Stopper {
    http: http::ListenerControl,
    pcc_stop: Option<watch::Sender<Drain>>,
}

impl Stopper {
    /// Shutdown stage S1, stop listeners: stop accepting and close the listening sockets; idle connections
    /// close.
    pub fn stop_accepting(&self) {
        self.http.stop_accepting();
        if let Some(stop) = &self.pcc_stop {
            // pcc.md §15 steps 1–2: GOAWAY, new streams refused, idle streams end.
            stop.send_if_modified(|d| (*d == Drain::Serving).then(|| *d = Drain::Draining).is_some());
        }
    }

    /// Shutdown stage S6, admission clean: close every connection still open; every PCC stream still open
    /// ends (pcc.md §15 step 5).
    pub fn close_all(&self) {
        self.http.close_all();
        if let Some(stop) = &self.pcc_stop {
            stop.send_replace(Drain::Cutoff);
        }
    }
}

impl Serving {
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    pub fn pcc_addr(&self) -> Option<SocketAddr> {
        self.pcc_addr
    }

    pub fn stopper(&self) -> Stopper {
        Stopper { http: self.http.control(), pcc_stop: self.pcc_stop.clone() }
    }

    /// Lets the accept loops take their first connection; called once readiness is true (stage 12).
    /// Until then a client that connected after the bind (stage 11) waits in the kernel's backlog rather
    /// than being answered `503` by a domain that was about to be ready (docs/decisions.md "Nothing is
    /// accepted before readiness").
    pub fn open(&self) {
        self.gate.send_replace(true);
    }
}

/// Stage 12: the `listeners` supervisor and its listener actors, each with its accept loop, which takes
/// its first connection once [`Serving::open`] is called (or, if the `Serving` is dropped unopened, goes
/// on to see the stop that a failed start sends).
pub async fn serve(bound: Bound, domain: &DomainHandle) -> Result<Serving, ptc_actors::DomainError> {
    // The supervisor's own loss stops the domain like a listener's (lifecycle.md §7.5).
    let listeners =
        domain.start_supervisor(LISTENERS, ChildPolicy::StopDomain(AbnormalCause::ListenerLost)).await?;
    let (gate, _) = watch::channel(false);
    let http_addr = bound.http.local_addr();
    let (running, accept) = bound.http.start();
    let policy = ChildPolicy::StopDomain(AbnormalCause::ListenerLost);
    start_listener(&listeners, CHILD_NAMES[0], policy, after_open(&gate, accept)).await?;
    let mut pcc_addr = None;
    let mut pcc_stop = None;
    if let Some((listener, service, stop_tx)) = bound.pcc {
        pcc_addr = listener.local_addr().ok();
        let accept = crate::pcc::listener::serve(listener, service, stop_tx.subscribe());
        let policy = ChildPolicy::StopDomain(AbnormalCause::PccListenerLost);
        start_listener(&listeners, CHILD_NAMES[1], policy, after_open(&gate, accept)).await?;
        pcc_stop = Some(stop_tx);
    }
    Ok(Serving { http: running, http_addr, pcc_addr, pcc_stop, gate })
}

/// `accept`, once the gate is open or its sender gone.
fn after_open(gate: &watch::Sender<bool>, accept: impl Future<Output = ()> + Send + 'static) -> AcceptLoop {
    let mut open = gate.subscribe();
    Box::pin(async move {
        // Err: the `Serving` was dropped unopened (a failed start, which stopped the loops first).
        let _ = open.wait_for(|o| *o).await;
        accept.await;
    })
}

async fn start_listener(
    listeners: &SupervisorHandle,
    name: &'static str,
    policy: ChildPolicy,
    accept: AcceptLoop,
) -> Result<(), ptc_actors::DomainError> {
    // The owner fails as soon as its loop ends or panics; the stop listeners stage (S1) retires the subtree
    // before stopping the loops, so an orderly stop is no loss.
    let accept: AcceptLoop = Box::pin(crate::startup::fault::with_task_panic(name, accept));
    let spec = TaskOwner::spec(name, policy, (TaskGroup::new(), vec![(name, accept)]));
    listeners.start_child(spec).await.map(|_| ())
}

/// An accept loop: it returns when its listener was told to stop, or when it was lost.
type AcceptLoop = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
