//! lifecycle.md §11 and http-mcp.md §2 in-process: the connection ceiling (slots taken before
//! `accept`), the idle and head timeout, and the graceful stop of S1.

use crate::support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_actors::{AdmissionPool, RefusalOrder};
use ptc_gateway::testing::codes::domain::Readiness;
use ptc_gateway::testing::http::mcp::{McpEndpoint, ResponseFuture};
use ptc_gateway::testing::http::response::fixed_json;
use ptc_gateway::testing::http::{BoundListener, ListenerSettings, RunningListener};
use tokio::sync::Notify;

fn settings(max_inflight: u32, idle: Duration) -> ListenerSettings {
    let readiness = Readiness::new();
    readiness.mark_ready();
    let pool = |n| AdmissionPool::new("test", n, RefusalOrder::UnavailableFirst);
    ListenerSettings::new(String::new(), max_inflight, readiness, pool(max_inflight), pool(1))
        .with_idle_timeout(idle)
}

fn start(settings: ListenerSettings) -> RunningListener {
    let bound = BoundListener::bind("127.0.0.1:0".parse().unwrap(), settings).expect("bind");
    bound.serve()
}

fn host_request(addr: SocketAddr) -> Vec<u8> {
    format!("GET /health/live HTTP/1.1\r\nHost: {}\r\n\r\n", support::authority(addr)).into_bytes()
}

/// Reads until the peer closes; returns the bytes and whether it closed before `deadline`.
fn read_to_close(stream: &mut TcpStream, deadline: Duration) -> (Vec<u8>, bool) {
    stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    while start.elapsed() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return (out, true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut => {
            }
            Err(_) => return (out, true),
        }
    }
    (out, false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ceiling_holds_new_connections_in_the_backlog() {
    // The router's authority is "" here, so health answers 400; any answer proves the exchange ran.
    let listener = start(settings(1, Duration::from_secs(30)));
    let addr = listener.local_addr();
    let control = listener.control();
    let ceiling = 1 + 8;
    tokio::task::spawn_blocking(move || {
        let idle: Vec<TcpStream> = (0..ceiling).map(|_| TcpStream::connect(addr).expect("connect")).collect();
        let start = Instant::now();
        while control.open_connections() < ceiling {
            assert!(start.elapsed() < Duration::from_secs(2), "idle connections accepted");
            std::thread::sleep(Duration::from_millis(5));
        }
        // One more: the kernel completes the handshake, but no slot is free, so nothing answers.
        let mut waiting = TcpStream::connect(addr).expect("backlog connect");
        waiting.write_all(&host_request(addr)).unwrap();
        waiting.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        let mut buf = [0u8; 64];
        assert!(waiting.read(&mut buf).is_err(), "no answer while every slot is held");
        assert_eq!(control.peak_connections(), ceiling);
        // Closing one idle socket lets the waiting exchange proceed.
        drop(idle);
        waiting.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let n = waiting.read(&mut buf).expect("answered once a slot frees");
        assert!(buf[..n].starts_with(b"HTTP/1.1 400"), "{:?}", String::from_utf8_lossy(&buf[..n]));
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_incomplete_heads_are_closed_without_a_response() {
    let listener = start(settings(2, Duration::from_millis(300)));
    let addr = listener.local_addr();
    tokio::task::spawn_blocking(move || {
        // No request at all.
        let mut silent = TcpStream::connect(addr).unwrap();
        let (bytes, closed) = read_to_close(&mut silent, Duration::from_secs(3));
        assert!(closed && bytes.is_empty(), "closed without a response: {bytes:?}");
        // A head that never completes.
        let mut partial = TcpStream::connect(addr).unwrap();
        partial.write_all(b"GET /health/live HTTP/1.1\r\nHost: x").unwrap();
        let (bytes, closed) = read_to_close(&mut partial, Duration::from_secs(3));
        assert!(closed && bytes.is_empty(), "closed without a response: {bytes:?}");
        // After a response, the keep-alive connection idles out too.
        let mut kept = TcpStream::connect(addr).unwrap();
        kept.write_all(&host_request(addr)).unwrap();
        let (bytes, closed) = read_to_close(&mut kept, Duration::from_secs(3));
        assert!(closed && bytes.starts_with(b"HTTP/1.1 400"), "one answer, then closed when idle");
    })
    .await
    .unwrap();
}

/// An `/mcp` endpoint that answers only when released, to hold an exchange in progress.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_stop_finishes_exchanges_and_closes_the_socket() {
    let endpoint = Arc::new(Held { arrived: Notify::new(), release: Notify::new() });
    let listener = start(settings(2, Duration::from_secs(30)).with_mcp(endpoint.clone()));
    let addr = listener.local_addr();
    let control = listener.control();
    let mut ended = listener.ended();
    let mut idle = TcpStream::connect(addr).unwrap();
    let mut busy = TcpStream::connect(addr).unwrap();
    busy.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").unwrap();
    tokio::time::timeout(Duration::from_secs(2), endpoint.arrived.notified()).await.expect("request arrived");

    control.stop_accepting();
    tokio::time::timeout(Duration::from_secs(2), ended.wait_for(|e| *e)).await.expect("loop ended").unwrap();
    let refused = tokio::task::spawn_blocking(move || TcpStream::connect(addr).is_err()).await.unwrap();
    assert!(refused, "the listening socket is closed");
    let (bytes, closed) =
        tokio::task::spawn_blocking(move || read_to_close(&mut idle, Duration::from_secs(2))).await.unwrap();
    assert!(closed && bytes.is_empty(), "idle keep-alive connections close");

    endpoint.release.notify_one();
    let (bytes, closed) =
        tokio::task::spawn_blocking(move || read_to_close(&mut busy, Duration::from_secs(2))).await.unwrap();
    let text = String::from_utf8_lossy(&bytes).to_ascii_lowercase();
    assert!(closed && text.starts_with("http/1.1 200"), "the exchange completes: {text}");
    assert!(text.contains("connection: close"), "then its connection closes: {text}");
    assert!(control.wait_closed(tokio::time::Instant::now() + Duration::from_secs(2)).await);
}
