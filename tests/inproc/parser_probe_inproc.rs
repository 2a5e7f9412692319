//! http-mcp.md §2.4 in-process: what hyper does alone with each parser-limit case (why the head guard
//! exists), and that the guard answers each with the exact empty-body refusal.

use crate::support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_actors::{AdmissionPool, RefusalOrder};
use ptc_gateway::testing::codes::domain::Readiness;
use ptc_gateway::testing::http::guard::HeadGuard;
use ptc_gateway::testing::http::{BoundListener, IoLayer, ListenerSettings, RunningListener};

fn start(layer: Option<Arc<dyn IoLayer>>) -> RunningListener {
    let readiness = Readiness::new();
    readiness.mark_ready();
    let pool = |n| AdmissionPool::new("test", n, RefusalOrder::UnavailableFirst);
    let mut settings =
        ListenerSettings::new(String::new(), 4, readiness, pool(4), pool(1)).with_bound_authority();
    if let Some(layer) = layer {
        settings = settings.with_io_layer(layer);
    }
    BoundListener::bind("127.0.0.1:0".parse().unwrap(), settings).expect("bind").serve()
}

/// Sends `request`, reads until the peer closes (or 5 s pass); returns everything read and whether the
/// peer closed.
fn exchange(addr: SocketAddr, request: &[u8]) -> (Vec<u8>, bool) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let _ = stream.write_all(request);
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let start = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < Duration::from_secs(5) {
        match stream.read(&mut buf) {
            Ok(0) => return (out, true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return (out, true),
        }
    }
    (out, false)
}

/// The status of the first answer to `request`, or `None` when the connection closes without one.
fn first_status(addr: SocketAddr, request: &[u8]) -> Option<u16> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = stream.write_all(request);
    support::read_response(&mut stream, true).ok().map(|r| r.status)
}

/// A request line of 8,192 bytes, `Host`, and 63 field lines of 8,192 bytes each (CRLF included), about
/// 520 KB: more than hyper's default buffer, so this passes only because `MAX_HEAD_BYTES` sizes it; the
/// router answers 404 for the long path.
fn largest_head() -> String {
    let mut head = format!("GET /{} HTTP/1.1\r\nHost: {{H}}\r\n", "x".repeat(8_176));
    for i in 0..63 {
        // "X-F<nn>: " is 9 bytes; 8,181 value bytes and CRLF make 8,192.
        head.push_str(&format!("X-F{i:02}: {}\r\n", "v".repeat(8_181)));
    }
    head.push_str("\r\n");
    head
}

/// (case, request with `{H}` for the authority, hyper's status alone (`None`: closed without an
/// answer), the guarded status).
type Case = (&'static str, String, Option<u16>, u16);

fn cases() -> Vec<Case> {
    let xs = |n| "x".repeat(n);
    let fields = |n| (0..n).map(|i| format!("X-H{i}: 1\r\n")).collect::<String>();
    let health = |extra: &str| format!("GET /health/ready HTTP/1.1\r\nHost: {{H}}\r\n{extra}\r\n");
    let post = |extra: &str| format!("POST /health/ready HTTP/1.1\r\nHost: {{H}}\r\n{extra}\r\n0\r\n\r\n");
    vec![
        // Where hyper is wrong alone: no request-line or field-line bound below its buffer size...
        ("27 request line", format!("GET /{} HTTP/1.1\r\nHost: {{H}}\r\n\r\n", xs(8_177)), Some(404), 414),
        ("29 field line", health(&format!("X-Line: {}\r\n", xs(8_183))), Some(200), 431),
        // ... framing it accepts ...
        ("36 CL with TE", post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"), Some(405), 400),
        ("TE list ending in chunked", post("Transfer-Encoding: gzip, chunked\r\n"), Some(405), 400),
        ("two identical CL", health("Content-Length: 0\r\nContent-Length: 0\r\n"), Some(200), 400),
        // ... bytes it accepts ...
        ("non-ASCII target", "GET /health/r\u{e9} HTTP/1.1\r\nHost: {H}\r\n\r\n".to_owned(), Some(404), 400),
        ("bare LF", "GET /health/ready HTTP/1.1\nHost: {H}\n\n".to_owned(), Some(200), 400),
        // ... and the h2 preface, which it closes without an answer.
        ("h2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_owned(), None, 400),
        // Where hyper is already right (the guard answers first, with the same status).
        ("26 request line", format!("GET /{} HTTP/1.1\r\nHost: {{H}}\r\n\r\n", xs(8_176)), Some(404), 404),
        ("28 field line", health(&format!("X-Line: {}\r\n", xs(8_182))), Some(200), 200),
        ("30 64 lines", health(&fields(63)), Some(200), 200),
        ("near the largest head §2.4 admits", largest_head(), Some(404), 404),
        ("31 65 lines", health(&fields(64)), Some(431), 431),
        ("35 folding", health("X-A: 1\r\n 2\r\n"), Some(400), 400),
        ("37 HTTP/2.0", "GET /health/ready HTTP/2.0\r\nHost: {H}\r\n\r\n".to_owned(), Some(400), 400),
        ("HTTP/1.2", "GET /health/ready HTTP/1.2\r\nHost: {H}\r\n\r\n".to_owned(), Some(400), 400),
        ("space before colon", health("X-A : 1\r\n"), Some(400), 400),
        ("name not a token", health("X(A: 1\r\n"), Some(400), 400),
        ("bare CR", health("X-A: 1\r2\r\n"), Some(400), 400),
        ("method token", "G(T /health/ready HTTP/1.1\r\nHost: {H}\r\n\r\n".to_owned(), Some(400), 400),
        ("DEL in target", "GET /health/r\x7fady HTTP/1.1\r\nHost: {H}\r\n\r\n".to_owned(), Some(400), 400),
        ("TE not chunked", post("Transfer-Encoding: gzip\r\n"), Some(400), 400),
        ("CL not decimal", health("Content-Length: +0\r\n"), Some(400), 400),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_hyper_does_alone_and_what_the_guard_answers() {
    let plain = start(None);
    let guarded = start(Some(Arc::new(HeadGuard)));
    let (pa, ga) = (plain.local_addr(), guarded.local_addr());
    tokio::task::spawn_blocking(move || {
        for (name, request, alone, status) in cases() {
            let plain_request = request.replace("{H}", &support::authority(pa));
            assert_eq!(first_status(pa, plain_request.as_bytes()), alone, "{name}: hyper alone");
            let guarded_request = request.replace("{H}", &support::authority(ga));
            if !matches!(status, 400 | 414 | 431) {
                assert_eq!(first_status(ga, guarded_request.as_bytes()), Some(status), "{name}: guarded");
                continue;
            }
            let (bytes, closed) = exchange(ga, guarded_request.as_bytes());
            let text = String::from_utf8_lossy(&bytes);
            let expected = format!("HTTP/1.1 {status} ");
            let refusal =
                text.strip_prefix(&expected).and_then(|rest| rest.split_once("\r\n")).map(|(_, rest)| rest);
            assert_eq!(refusal, Some("content-length: 0\r\nconnection: close\r\n\r\n"), "{name}: {text}");
            assert!(closed, "{name}: closed after the refusal");
        }
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_38_the_head_timeout_still_runs_through_the_guard() {
    let readiness = Readiness::new();
    readiness.mark_ready();
    let pool = |n| AdmissionPool::new("test", n, RefusalOrder::UnavailableFirst);
    let settings = ListenerSettings::new(String::new(), 4, readiness, pool(4), pool(1))
        .with_bound_authority()
        .with_io_layer(Arc::new(HeadGuard))
        .with_idle_timeout(Duration::from_millis(300));
    let listener = BoundListener::bind("127.0.0.1:0".parse().unwrap(), settings).expect("bind").serve();
    let addr = listener.local_addr();
    tokio::task::spawn_blocking(move || {
        let (bytes, closed) = exchange(addr, b"POST /mcp HTTP/1.1\r\n");
        assert!(closed && bytes.is_empty(), "closed without a response: {bytes:?}");
    })
    .await
    .unwrap();
}
