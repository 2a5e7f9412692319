//! The connection pool of one HTTP acquisition (providers.md §5.1, §3 A6): direct connections only (no
//! proxy variable is ever read, no redirect is ever followed: hyper's connection API has neither), at most
//! 4 idle connections, each closed after 30,000 ms idle.
//!
//! This file owns connecting (resolution, TCP, TLS, the HTTP/1.1 handshake) and the idle list. A checked
//! out [`Conn`] belongs to one exchange; dropping it closes the connection (its driver task is aborted,
//! which drops the socket), which is how modern cancellation closes a response stream (providers.md §10.1).
//! It does not build requests or read responses (`exchange.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use ptc_actors::TaskGroup;

use super::super::loss::OwnerEvent;
use super::endpoint::Endpoint;
use super::tls;
use crate::support::fault::with_task_panic;

/// The names of the pool's tasks, as the transport's owner hears them (`owner.rs`).
pub(crate) const TASK_POOL_REAPER: &str = "http_pool_reaper";
pub(crate) const TASK_CONNECTION: &str = "http_connection";

/// Idle connections kept per acquisition (providers.md §5.1, §15).
pub const MAX_IDLE: usize = 4;
/// An idle connection is closed after this (providers.md §5.1, §15).
pub const IDLE_TIMEOUT: Duration = Duration::from_millis(30_000);

/// One open HTTP/1.1 connection.
pub struct Conn {
    pub sender: SendRequest<Full<Bytes>>,
    driver: JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Aborting the driver drops the socket: the connection is closed, not left half-used.
        self.driver.abort();
    }
}

struct Idle {
    conn: Conn,
    since: Instant,
}

struct Inner {
    endpoint: Endpoint,
    /// Idle connections kept ([`MAX_IDLE`] for an MCP acquisition; a model site keeps
    /// `max_active_provider_calls`, models.md §3).
    max_idle: usize,
    idle: Mutex<Vec<Idle>>,
    /// The reaper waits with no timer (it saw no idle connection); written and read under `idle`'s lock.
    /// Only then does a check-in wake it: a connection checked in later than every idle one expires
    /// after them, so a reaper with a timer re-reads the list in time anyway, and a wake-up per check-in
    /// re-armed that timer on every call (issue 27).
    untimed: AtomicBool,
    wake: Notify,
    /// The transport's task group (`loss.rs`): the reaper and every connection driver run in it, so that
    /// a panic of any of them reaches the transport's owner (providers.md §12.1).
    tasks: TaskGroup<OwnerEvent>,
}

impl Inner {
    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<Idle>> {
        // No update spans a panic point; a poisoned list is still consistent.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The pool. Dropping it closes every idle connection and stops its reaper.
pub struct Pool {
    inner: Arc<Inner>,
    reaper: JoinHandle<()>,
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.reaper.abort();
        self.inner.idle().clear();
    }
}

impl Pool {
    /// A pool whose tasks run in `tasks`, the group of the transport that will own it.
    pub(crate) fn new(endpoint: Endpoint, tasks: TaskGroup<OwnerEvent>) -> Pool {
        Pool::with_max_idle(endpoint, tasks, MAX_IDLE)
    }

    /// A pool that keeps at most `max_idle` idle connections.
    pub(crate) fn with_max_idle(endpoint: Endpoint, tasks: TaskGroup<OwnerEvent>, max_idle: usize) -> Pool {
        let inner = Arc::new(Inner {
            endpoint,
            max_idle,
            idle: Mutex::new(Vec::new()),
            untimed: AtomicBool::new(false),
            wake: Notify::new(),
            tasks: tasks.clone(),
        });
        let reaper = with_task_panic(TASK_POOL_REAPER, reap(Arc::downgrade(&inner)));
        let reaper = tasks.spawn(TASK_POOL_REAPER, reaper);
        Pool { inner, reaper }
    }

    /// The group the pool's tasks run in (the transport's, `loss.rs`).
    pub(crate) fn tasks(&self) -> &TaskGroup<OwnerEvent> {
        &self.inner.tasks
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.inner.endpoint
    }

    /// Close every idle connection now (the acquisition is closing, providers.md §13.1).
    pub fn close_idle(&self) {
        self.inner.idle().clear();
    }

    /// Idle connections now (for tests of the bound).
    pub fn idle_count(&self) -> usize {
        self.inner.idle().len()
    }

    /// The most recently used live idle connection, or a new one. An error means nothing was written.
    pub async fn checkout(&self) -> std::io::Result<Conn> {
        loop {
            let candidate = self.inner.idle().pop();
            match candidate {
                Some(idle) if idle.since.elapsed() < IDLE_TIMEOUT && idle.conn.sender.is_ready() => {
                    return Ok(idle.conn)
                }
                Some(_) => continue,
                None => break,
            }
        }
        connect(&self.inner.endpoint, &self.inner.tasks).await
    }

    /// Return a connection whose exchange completed; kept only if reusable and fewer than the bound are idle.
    pub fn checkin(&self, conn: Conn) {
        if conn.sender.is_closed() || !conn.sender.is_ready() {
            return;
        }
        let mut idle = self.inner.idle();
        if idle.len() < self.inner.max_idle {
            idle.push(Idle { conn, since: Instant::now() });
            let untimed = self.inner.untimed.swap(false, Ordering::Relaxed);
            drop(idle);
            if untimed {
                self.inner.wake.notify_one();
            }
        }
    }
}

/// Why [`Pool::send`] got no response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendFailure {
    /// No connection could be made: nothing was written.
    Unsent,
    /// The exchange failed after bytes may have left.
    MaybeSent,
}

impl Pool {
    /// Sends `request` on a pooled or new connection and awaits the response head. `written` is told `true`
    /// just before bytes may leave and `false` when hyper hands the request back unwritten (a reused
    /// connection the server had just closed); such a request is sent once more on a fresh connection,
    /// which is not a retry of a request, since none of it left.
    pub async fn send(
        &self,
        mut request: hyper::Request<Full<Bytes>>,
        written: impl Fn(bool),
    ) -> Result<(hyper::Response<hyper::body::Incoming>, Conn), SendFailure> {
        for _ in 0..2 {
            // The class says only that nothing was sent (`*_transport_error`); the OS's or TLS's reason is
            // for the debug log (never the endpoint, whose query may hold a secret).
            let mut conn = self.checkout().await.map_err(|error| {
                tracing::debug!(%error, "upstream connection not opened");
                SendFailure::Unsent
            })?;
            written(true);
            match conn.sender.try_send_request(request).await {
                Ok(response) => return Ok((response, conn)),
                Err(mut error) => match error.take_message() {
                    Some(unsent) => {
                        written(false);
                        request = unsent;
                    }
                    None => return Err(SendFailure::MaybeSent),
                },
            }
        }
        Err(SendFailure::Unsent)
    }
}

async fn connect(endpoint: &Endpoint, tasks: &TaskGroup<OwnerEvent>) -> std::io::Result<Conn> {
    let tcp = open_tcp(endpoint).await?;
    let _ = tcp.set_nodelay(true);
    if endpoint.tls {
        let stream = tls::handshake(tcp, endpoint.bare_host()).await?;
        handshake(TokioIo::new(stream), tasks).await
    } else {
        handshake(TokioIo::new(tcp), tasks).await
    }
}

// Resolution through the system resolver, then the addresses in order; no proxy is consulted
// (providers.md §5.1).
async fn open_tcp(endpoint: &Endpoint) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::other("no address");
    for addr in tokio::net::lookup_host((endpoint.bare_host(), endpoint.port)).await? {
        match TcpStream::connect(addr).await {
            Ok(tcp) => return Ok(tcp),
            Err(e) => last = e,
        }
    }
    Err(last)
}

async fn handshake<T>(io: TokioIo<T>, tasks: &TaskGroup<OwnerEvent>) -> std::io::Result<Conn>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, connection) = http1::handshake(io).await.map_err(std::io::Error::other)?;
    // A connection ends when it closes (its plain end is no loss); its driver's panic is the transport's.
    let driver = tasks.spawn(
        TASK_CONNECTION,
        with_task_panic(TASK_CONNECTION, async move {
            let _ = connection.await;
        }),
    );
    Ok(Conn { sender, driver })
}

// Closes idle connections at their 30 s mark; sleeps until the earliest one or until a check-in.
async fn reap(inner: Weak<Inner>) {
    loop {
        let Some(pool) = inner.upgrade() else { return };
        let next = {
            let mut idle = pool.idle();
            idle.retain(|i| i.since.elapsed() < IDLE_TIMEOUT);
            let next = idle.iter().map(|i| i.since + IDLE_TIMEOUT).min();
            pool.untimed.store(next.is_none(), Ordering::Relaxed);
            next
        };
        match next {
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = pool.wake.notified() => {}
                }
            }
            None => pool.wake.notified().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::service::service_fn;
    use hyper::{Request, Response};

    use std::sync::atomic::{AtomicUsize, Ordering};

    // A loopback HTTP/1.1 server that answers every request with an empty 200; the counter is the number
    // of connections the client has closed.
    async fn server() -> (u16, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let closed = Arc::new(AtomicUsize::new(0));
        let counter = closed.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let counter = counter.clone();
                tokio::spawn(async move {
                    let service = service_fn(|_req: Request<hyper::body::Incoming>| async {
                        Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::new())))
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), service)
                        .await;
                    counter.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        (port, closed)
    }

    async fn exchange(conn: &mut Conn) {
        let request = Request::builder().uri("/").header("host", "x").body(Full::new(Bytes::new())).unwrap();
        let response = conn.sender.send_request(request).await.unwrap();
        http_body_util::BodyExt::collect(response.into_body()).await.unwrap();
        conn.sender.ready().await.unwrap();
    }

    // Yields until `done` holds; a real-clock bound, since the test pauses tokio's clock.
    async fn until(mut done: impl FnMut() -> bool, what: &str) {
        let started = std::time::Instant::now();
        while !done() {
            assert!(started.elapsed() < std::time::Duration::from_secs(5), "{what} within 5 s");
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn at_most_four_connections_stay_idle_and_idle_ones_are_reused() {
        let (port, closed) = server().await;
        let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}/"), true).unwrap();
        let pool = Pool::new(endpoint, TaskGroup::new());
        let mut conns = Vec::new();
        for _ in 0..6 {
            conns.push(pool.checkout().await.unwrap());
        }
        for mut conn in conns {
            exchange(&mut conn).await;
            pool.checkin(conn);
        }
        assert_eq!(pool.idle_count(), MAX_IDLE);
        // The two beyond the bound were closed at check-in, not kept.
        until(|| closed.load(Ordering::SeqCst) == 2, "the two connections beyond the bound closed").await;
        let reused = pool.checkout().await.unwrap();
        assert_eq!(pool.idle_count(), MAX_IDLE - 1);
        drop(reused);
        pool.close_idle();
        assert_eq!(pool.idle_count(), 0);
        until(|| closed.load(Ordering::SeqCst) == 6, "every connection closed").await;
    }

    // providers.md §5.1: an idle connection is closed at its 30,000 ms mark, each by its own clock, and the
    // upstream sees the close; one checked in later stays until its own mark.
    #[tokio::test]
    async fn idle_connections_are_closed_after_30_s_each() {
        let (port, closed) = server().await;
        let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}/"), true).unwrap();
        let pool = Pool::new(endpoint, TaskGroup::new());
        let (mut first, mut second) = (pool.checkout().await.unwrap(), pool.checkout().await.unwrap());
        exchange(&mut first).await;
        exchange(&mut second).await;
        tokio::time::pause();
        pool.checkin(first);
        tokio::time::advance(Duration::from_millis(10_000)).await;
        pool.checkin(second);
        tokio::time::advance(IDLE_TIMEOUT - Duration::from_millis(10_001)).await;
        tokio::task::yield_now().await;
        assert_eq!(pool.idle_count(), 2, "both idle 1 ms before the first one's mark");
        assert_eq!(closed.load(Ordering::SeqCst), 0);
        tokio::time::advance(Duration::from_millis(2)).await;
        until(|| pool.idle_count() == 1, "the first connection reaped at its mark").await;
        until(|| closed.load(Ordering::SeqCst) == 1, "the upstream saw the first close").await;
        tokio::time::advance(Duration::from_millis(10_000)).await;
        until(|| pool.idle_count() == 0, "the second connection reaped at its mark").await;
        until(|| closed.load(Ordering::SeqCst) == 2, "the upstream saw the second close").await;
    }
}
