//! A raw HTTP/1.1 client for exact assertions (status line, every header line, body bytes, whether the
//! connection closed) and the in-process listener fixture.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ptc_actors::{AdmissionPool, RefusalOrder};
use ptc_gateway::testing::codes::domain::Readiness;
use ptc_gateway::testing::http::mcp::McpEndpoint;
use ptc_gateway::testing::http::{BoundListener, ListenerSettings, RunningListener};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{timeout, Instant};

/// How long any single wait of these tests may take before it counts as a failure.
pub const DEADLINE: Duration = Duration::from_secs(5);

/// The B-list body of http-mcp.md §12.2 (170 bytes).
pub use crate::support::mcp::B_LIST_BODY;

/// One listener under test.
pub struct Fixture {
    pub listener: RunningListener,
    pub addr: SocketAddr,
    pub authority: String,
    pub readiness: Readiness,
}

/// Options of a fixture.
pub struct Options {
    pub ip: &'static str,
    pub max_inflight: u32,
    pub idle_timeout: Duration,
    pub mcp: Option<Arc<dyn McpEndpoint>>,
    pub layer: Option<Arc<dyn ptc_gateway::testing::http::IoLayer>>,
    pub linger: Option<(Duration, usize)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ip: "127.0.0.1",
            max_inflight: 2,
            idle_timeout: Duration::from_secs(30),
            mcp: None,
            layer: None,
            linger: None,
        }
    }
}

/// Starts a ready listener on port 0 of `options.ip`; `None` if that address cannot be bound.
pub fn start(options: Options) -> Option<Fixture> {
    let readiness = Readiness::new();
    readiness.mark_ready();
    let pool = |n| AdmissionPool::new("test", n, RefusalOrder::UnavailableFirst);
    let mut settings = ListenerSettings::new(
        String::new(),
        options.max_inflight,
        readiness.clone(),
        pool(options.max_inflight),
        pool(1),
    )
    .with_bound_authority()
    .with_idle_timeout(options.idle_timeout);
    if let Some(mcp) = options.mcp {
        settings = settings.with_mcp(mcp);
    }
    if let Some(layer) = options.layer {
        settings = settings.with_io_layer(layer);
    }
    if let Some((time, bytes)) = options.linger {
        settings = settings.with_linger(time, bytes);
    }
    let addr: SocketAddr = format!(
        "{}:0",
        if options.ip.contains(':') { format!("[{}]", options.ip) } else { options.ip.to_owned() }
    )
    .parse()
    .expect("address");
    let bound = match BoundListener::bind(addr, settings) {
        Ok(bound) => bound,
        Err(error) => {
            eprintln!("skipped: {} cannot be bound here ({error})", options.ip);
            return None;
        }
    };
    let addr = bound.local_addr();
    let authority = bound.authority().to_owned();
    Some(Fixture { listener: bound.serve(), addr, authority, readiness })
}

/// A parsed response, exactly as received.
#[derive(Debug)]
pub struct Wire {
    pub status_line: String,
    /// (lowercase name, value) in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Wire {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn status(&self) -> u16 {
        self.status_line.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0)
    }
}

/// A client connection that keeps the bytes it has read ahead (pipelined responses).
pub struct Client {
    pub stream: TcpStream,
    buffered: Vec<u8>,
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> Client {
        let stream =
            timeout(DEADLINE, TcpStream::connect(addr)).await.expect("connect in time").expect("connect");
        Client { stream, buffered: Vec::new() }
    }

    pub async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write request");
    }

    async fn fill(&mut self, deadline: Instant) -> bool {
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout_at(deadline, self.stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => false,
            Ok(Ok(n)) => {
                self.buffered.extend_from_slice(&chunk[..n]);
                true
            }
            Err(_) => {
                panic!("no response before the deadline; have {:?}", String::from_utf8_lossy(&self.buffered))
            }
        }
    }

    /// Reads one response; `head_only` for the answer to a `HEAD` (no body whatever `content-length`).
    pub async fn response(&mut self, head_only: bool) -> Wire {
        let deadline = Instant::now() + DEADLINE;
        let head_end = loop {
            if let Some(pos) = find(&self.buffered, b"\r\n\r\n") {
                break pos;
            }
            assert!(
                self.fill(deadline).await,
                "closed mid-head: {:?}",
                String::from_utf8_lossy(&self.buffered)
            );
        };
        let head = String::from_utf8(self.buffered[..head_end].to_vec()).expect("ASCII head");
        self.buffered.drain(..head_end + 4);
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default().to_owned();
        let headers: Vec<(String, String)> = lines
            .map(|line| {
                let (name, value) = line.split_once(':').expect("name: value");
                (name.to_owned(), value.trim_start().to_owned())
            })
            .collect();
        for (name, _) in &headers {
            assert_eq!(name, &name.to_ascii_lowercase(), "hyper writes lowercase names");
        }
        let mut wire = Wire { status_line, headers, body: Vec::new() };
        let length: usize = wire.header("content-length").map(|v| v.parse().expect("decimal")).unwrap_or(0);
        if !head_only {
            while self.buffered.len() < length {
                assert!(self.fill(deadline).await, "closed mid-body");
            }
            wire.body = self.buffered.drain(..length).collect();
        }
        wire
    }

    /// True iff the server closes the connection (EOF or reset) before `within`, having sent nothing more.
    pub async fn closes_within(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let mut chunk = [0u8; 1024];
        loop {
            match tokio::time::timeout_at(deadline, self.stream.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return self.buffered.is_empty(),
                Ok(Ok(n)) => self.buffered.extend_from_slice(&chunk[..n]),
                Err(_) => return false,
            }
        }
    }

    /// True iff no byte arrives and the connection stays open for `quiet`.
    pub async fn stays_silent_for(&mut self, quiet: Duration) -> bool {
        let mut chunk = [0u8; 1];
        timeout(quiet, self.stream.read(&mut chunk)).await.is_err() && self.buffered.is_empty()
    }

    /// The bytes read ahead and not yet consumed.
    pub fn leftover(&self) -> &[u8] {
        &self.buffered
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Headers no answer may carry (http-mcp.md §1 "Response headers").
pub fn assert_no_forbidden_headers(wire: &Wire, context: &str) {
    for (name, _) in &wire.headers {
        assert!(
            !["server", "mcp-session-id", "mcp-protocol-version", "retry-after", "set-cookie", "vary"]
                .contains(&name.as_str())
                && !name.starts_with("access-control-"),
            "{context}: forbidden header {name}"
        );
    }
}
