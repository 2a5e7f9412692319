//! lifecycle.md §11 and §7.3 S1, http-mcp.md §2.2–§2.5 in-process: the connection ceiling, the idle and
//! head timeout, the graceful stop and the hard close, the lingering close, and the head-guard seam.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use ptc_gateway::testing::http::connection::{ConnIo, IoLayer};
use ptc_gateway::testing::http::mcp::{McpEndpoint, ResponseFuture};
use ptc_gateway::testing::http::response::{fixed_json, EmptyBodyStatus};
use ptc_gateway::testing::http::LoopEnd;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::wire::{start, Client, Options, DEADLINE};
use crate::support::wait_until;

fn live(host: &str) -> Vec<u8> {
    format!("GET /health/live HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ceiling_holds_the_next_connection_until_a_slot_frees() {
    let fixture = start(Options { max_inflight: 1, ..Options::default() }).expect("bind");
    let control = fixture.listener.control();
    let ceiling = 1 + 8;
    assert_eq!(control.slots().ceiling, ceiling);
    let mut idle = Vec::new();
    for _ in 0..ceiling {
        idle.push(Client::connect(fixture.addr).await);
    }
    wait_until("every slot taken", DEADLINE, || control.open_connections() == ceiling).await;
    // One more: the kernel completes the handshake into the backlog, but no slot is free, so nothing is
    // accepted and the exchange waits without any response (no 429, no 503: §2.2).
    let mut waiting = Client::connect(fixture.addr).await;
    waiting.send(&live(&fixture.authority)).await;
    assert!(waiting.stays_silent_for(Duration::from_millis(300)).await, "no answer while every slot is held");
    assert_eq!(control.slots().open, ceiling);
    assert_eq!(control.peak_connections(), ceiling, "never above the ceiling");
    // An idle slot is usable at the ceiling too: the headroom is shared, not reserved (§11).
    idle[0].send(&live(&fixture.authority)).await;
    assert_eq!(idle[0].response(false).await.status(), 200);
    // Closing one idle socket lets the waiting exchange proceed.
    drop(idle.pop());
    let answer = waiting.response(false).await;
    assert_eq!(answer.status_line, "HTTP/1.1 200 OK");
    assert_eq!(control.peak_connections(), ceiling);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_incomplete_heads_close_after_the_timeout_without_a_response() {
    let idle = Duration::from_millis(400);
    let slack = Duration::from_secs(2);
    let fixture = start(Options { idle_timeout: idle, ..Options::default() }).expect("bind");
    // From acceptance: a connection that sends nothing, and one whose head never completes (§12.4 row 38).
    for partial in [&b""[..], b"POST /mcp HTTP/1.1\r\n", b"GET /health/live HTTP/1.1\r\nHost: x"] {
        let began = Instant::now();
        let mut client = Client::connect(fixture.addr).await;
        client.send(partial).await;
        assert!(client.closes_within(idle + slack).await, "closed without a response after {partial:?}");
        let took = began.elapsed();
        assert!(took >= idle, "not before the timeout: {took:?} for {partial:?}");
    }
    // From the end of the previous response.
    let mut client = Client::connect(fixture.addr).await;
    client.send(&live(&fixture.authority)).await;
    assert_eq!(client.response(false).await.status(), 200);
    let answered = Instant::now();
    assert!(client.closes_within(idle + slack).await, "an idle keep-alive connection closes");
    let took = answered.elapsed();
    // The server's timer starts when it flushed the response, a moment before the client read it.
    assert!(took + Duration::from_millis(50) >= idle, "counted from the end of the response: {took:?}");
}

/// An `/mcp` endpoint that answers only when released, to hold an exchange in progress.
#[derive(Default)]
struct Held {
    arrived: Notify,
    release: Notify,
}

impl McpEndpoint for Held {
    fn handle(&self, _request: hyper::Request<hyper::body::Incoming>) -> ResponseFuture<'_> {
        Box::pin(async move {
            self.arrived.notify_one();
            self.release.notified().await;
            fixed_json(hyper::StatusCode::OK, "{}", None, false)
        })
    }
}

fn held_post(host: &str) -> Vec<u8> {
    format!("POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n").into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timer_does_not_run_while_a_request_is_in_progress() {
    let idle = Duration::from_millis(300);
    let held = Arc::new(Held::default());
    let fixture =
        start(Options { idle_timeout: idle, mcp: Some(held.clone()), ..Options::default() }).expect("bind");
    let mut client = Client::connect(fixture.addr).await;
    client.send(&held_post(&fixture.authority)).await;
    tokio::time::timeout(DEADLINE, held.arrived.notified()).await.expect("request arrived");
    assert!(client.stays_silent_for(idle * 3).await, "an exchange in progress is not timed out");
    held.release.notify_one();
    assert_eq!(client.response(false).await.status_line, "HTTP/1.1 200 OK");
    assert!(client.closes_within(idle + Duration::from_secs(2)).await, "then the idle timer runs again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_stop_closes_idle_connections_and_finishes_exchanges() {
    let held = Arc::new(Held::default());
    let fixture = start(Options { mcp: Some(held.clone()), ..Options::default() }).expect("bind");
    let host = fixture.authority.clone();
    let control = fixture.listener.control();
    let mut ended = fixture.listener.ended();
    let mut fresh = Client::connect(fixture.addr).await;
    let mut partial = Client::connect(fixture.addr).await;
    partial.send(b"GET /health/live HTTP/1.1\r\nHost: ").await;
    let mut kept = Client::connect(fixture.addr).await;
    kept.send(&live(&host)).await;
    assert_eq!(kept.response(false).await.status(), 200);
    let mut busy = Client::connect(fixture.addr).await;
    busy.send(&held_post(&host)).await;
    tokio::time::timeout(DEADLINE, held.arrived.notified()).await.expect("request arrived");
    wait_until("four connections open", DEADLINE, || control.open_connections() == 4).await;

    control.stop_accepting();
    tokio::time::timeout(DEADLINE, ended.wait_for(|e| *e)).await.expect("loop ended").expect("watch");
    assert_eq!(control.end(), Some(LoopEnd::Stopped), "a stop is not a listener loss");
    assert!(TcpStream::connect(fixture.addr).await.is_err(), "the listening socket is closed");
    for (name, client) in
        [("fresh", &mut fresh), ("head incomplete", &mut partial), ("idle keep-alive", &mut kept)]
    {
        assert!(client.closes_within(DEADLINE).await, "{name}: closed without a response");
    }
    assert!(busy.stays_silent_for(Duration::from_millis(50)).await, "the exchange in progress is still open");

    held.release.notify_one();
    let answer = busy.response(false).await;
    assert_eq!(answer.status_line, "HTTP/1.1 200 OK", "the exchange completes");
    assert_eq!(answer.header("connection"), Some("close"), "and announces the close");
    assert!(busy.closes_within(DEADLINE).await, "then its connection closes");
    assert!(control.wait_closed(Instant::now() + DEADLINE).await, "every connection ended");
    assert_eq!(control.open_connections(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_all_ends_exchanges_in_progress() {
    let held = Arc::new(Held::default());
    let fixture = start(Options { mcp: Some(held.clone()), ..Options::default() }).expect("bind");
    let control = fixture.listener.control();
    let mut busy = Client::connect(fixture.addr).await;
    busy.send(&held_post(&fixture.authority)).await;
    tokio::time::timeout(DEADLINE, held.arrived.notified()).await.expect("request arrived");
    control.stop_accepting();
    assert!(
        !control.wait_closed(Instant::now() + Duration::from_millis(50)).await,
        "held open by the exchange"
    );
    control.close_all();
    assert!(busy.closes_within(DEADLINE).await, "closed without a response");
    assert!(control.wait_closed(Instant::now() + DEADLINE).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unread_body_is_answered_and_never_drained() {
    // The client declares a large body and keeps sending it while the gateway answers without reading
    // it (§2.5): the answer arrives with `connection: close`, and the connection ends long before the
    // declared body could have been drained (the lingering close discards at most 1 MiB for 1 s).
    let fixture = start(Options::default()).expect("bind");
    let mut client = Client::connect(fixture.addr).await;
    let head = format!(
        "POST /health/live HTTP/1.1\r\nHost: {}\r\nContent-Length: 10000000\r\n\r\n",
        fixture.authority
    );
    client.send(head.as_bytes()).await;
    let chunk = vec![b'x'; 256 * 1024];
    client.send(&chunk).await;
    let answer = client.response(false).await;
    assert_eq!(answer.status_line, "HTTP/1.1 405 Method Not Allowed");
    assert_eq!(answer.header("connection"), Some("close"));
    assert_eq!(answer.body, br#"{"status":"method_not_allowed"}"#);
    // The rest of the body is never read to keep the connection alive: the server ends it.
    let mut written = 0usize;
    let ended = tokio::time::timeout(DEADLINE, async {
        while client.stream.write_all(&chunk).await.is_ok() {
            written += chunk.len();
        }
    })
    .await;
    assert!(ended.is_ok(), "the connection ended within the deadline");
    assert!(written < 10_000_000, "the body was not drained: {written} more bytes accepted");
}

/// A toy head guard: refuses a connection whose first bytes are `REFUSE` with 414, as the §2.4 guard
/// will refuse a long request line.
struct RefusePrefix;

struct Guarded {
    stream: TcpStream,
    refused: Option<EmptyBodyStatus>,
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.refused.is_some() {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, "refused")));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled()[before..].starts_with(b"REFUSE") {
            self.refused = Some(EmptyBodyStatus::UriTooLong);
            buf.set_filled(before);
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, "refused")));
        }
        polled
    }
}

impl AsyncWrite for Guarded {
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

impl ConnIo for Guarded {
    fn refusal(&mut self) -> Option<EmptyBodyStatus> {
        self.refused
    }
}

impl IoLayer for RefusePrefix {
    fn wrap(&self, stream: TcpStream) -> Box<dyn ConnIo> {
        Box::new(Guarded { stream, refused: None })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_guard_refusal_is_written_as_an_empty_body_response() {
    let fixture = start(Options { layer: Some(Arc::new(RefusePrefix)), ..Options::default() }).expect("bind");
    let mut refused = Client::connect(fixture.addr).await;
    refused.send(b"REFUSE / HTTP/1.1\r\n\r\n").await;
    let answer = refused.response(false).await;
    assert_eq!(answer.status_line, "HTTP/1.1 414 URI Too Long");
    assert_eq!(
        answer.headers,
        vec![("content-length".into(), "0".into()), ("connection".into(), "close".into())]
    );
    assert!(refused.closes_within(DEADLINE).await);
    // Other connections pass through the guard untouched.
    let mut passed = Client::connect(fixture.addr).await;
    passed.send(&live(&fixture.authority)).await;
    assert_eq!(passed.response(false).await.status(), 200);
}
