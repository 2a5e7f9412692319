//! `cargo bench --bench gateway`: throughput and latency of `tools/list` and `tools/call` (a trivial Luau
//! tool) at concurrency 1, 16 and 64 over keep-alive connections, next to a bare hyper server that
//! answers a fixed body, all measured in one run on this machine (issue 3, scope item 7). Writes the table
//! to `docs/benchmarks.md` and prints it. The forward-tool row (issue 5) is `forward`.
//!
//! Both servers run as their own processes (the gateway is the real release `ptc`; the baseline is this
//! binary re-executed with `PTC_BENCH_BASELINE=<port>`), and both are driven by the same client code, so
//! the ratios compare servers, not clients. Nothing here asserts a threshold.

#[path = "../tests/support/mod.rs"]
#[allow(unused_imports)]
mod support;

#[path = "gateway/forward.rs"]
mod forward;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const BASELINE_ENV: &str = "PTC_BENCH_BASELINE";
/// How long each measurement drives load, after a short warm-up.
const MEASURE: Duration = Duration::from_secs(3);
const WARM_UP: Duration = Duration::from_millis(500);
const CONCURRENCY: [usize; 3] = [1, 16, 64];

fn main() {
    if let Ok(port) = std::env::var(BASELINE_ENV) {
        baseline_server(port.parse().expect("port"));
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        // `cargo test --benches` lists benches; there is nothing to list.
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let table = runtime.block_on(run_all());
    print!("{table}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmarks.md");
    std::fs::write(&path, table).expect("write docs/benchmarks.md");
    eprintln!("wrote {}", path.display());
}

/// The bare hyper server: one fixed JSON body, HTTP/1.1 keep-alive, the same runtime flavour as the gateway.
fn baseline_server(port: u16) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = service_fn(|_req: Request<hyper::body::Incoming>| async {
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(
                        br#"{"status":"ready"}"#,
                    ))))
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
}

/// A child process killed and reaped on drop.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn wait_listening(addr: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).await.is_err() {
        assert!(Instant::now() < deadline, "server on {addr} did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

struct Measured {
    requests: u64,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Measured {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
    fn percentile(&self, p: f64) -> Duration {
        let mut l = self.latencies.clone();
        l.sort();
        let i = ((l.len() as f64 - 1.0) * p).round() as usize;
        l.get(i).copied().unwrap_or_default()
    }
}

/// Drives `concurrency` keep-alive connections sending `request` back to back; every response must
/// have status 200 and a complete body.
async fn drive(addr: SocketAddr, request: Vec<u8>, concurrency: usize) -> Measured {
    let request = std::sync::Arc::new(request);
    let start = Instant::now();
    let warm_end = start + WARM_UP;
    let end = warm_end + MEASURE;
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let request = request.clone();
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            let mut latencies = Vec::new();
            let mut buf = Vec::with_capacity(16 * 1024);
            loop {
                let sent = Instant::now();
                if sent >= end {
                    break;
                }
                stream.write_all(&request).await.expect("write");
                read_response(&mut stream, &mut buf).await;
                if sent >= warm_end {
                    latencies.push(sent.elapsed());
                }
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.expect("client task"));
    }
    Measured { requests: latencies.len() as u64, elapsed: MEASURE, latencies }
}

/// Reads one response (content-length or chunked) and checks its status is 200.
async fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) {
    buf.clear();
    let head_end = loop {
        if let Some(p) = find(buf, b"\r\n\r\n") {
            break p + 4;
        }
        read_more(stream, buf).await;
    };
    assert!(
        buf.starts_with(b"HTTP/1.1 200"),
        "status: {}",
        String::from_utf8_lossy(&buf[..head_end.min(40)])
    );
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    if let Some(len) = head.lines().find_map(|l| l.strip_prefix("content-length:")) {
        let len: usize = len.trim().parse().expect("length");
        while buf.len() < head_end + len {
            read_more(stream, buf).await;
        }
    } else {
        // Chunked: read until the terminator chunk.
        while find(&buf[head_end..], b"\r\n0\r\n\r\n").is_none() && !buf[head_end..].starts_with(b"0\r\n\r\n")
        {
            read_more(stream, buf).await;
        }
    }
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) {
    let mut chunk = [0u8; 16 * 1024];
    let n = stream.read(&mut chunk).await.expect("read");
    assert!(n > 0, "connection closed mid-response");
    buf.extend_from_slice(&chunk[..n]);
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn mcp_request(addr: SocketAddr, method: &str, params: &str, name: Option<&str>) -> Vec<u8> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let name = name.map(|n| format!("Mcp-Name: {n}\r\n")).unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{body}",
        support::authority(addr),
        support::TOKEN,
        body.len()
    )
    .into_bytes()
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1_000.0)
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_owned();
    // Other work on the machine skews every row alike, and the ratios less than the rates; say how busy it was.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().next().unwrap_or("unknown");
    format!("{cpu}, {cores} cores available, Linux {kernel}; 1-minute load average {load} when the run began")
}

async fn run_all() -> String {
    // The gateway: the baseline test deployment, sized so that 64 connections are admitted.
    let mut d = support::Deployment::baseline();
    d.write_file("echo/schema.json", r#"{"type":"object","properties":{"text":{"type":"string"}}}"#);
    d.gateway["tools"][0]["expected_application_content_digest"] =
        json!(support::content_pin::of(&d.path("echo/ptc.json")));
    d.gateway["admission"] = json!({"max_inflight_requests": 128, "max_concurrent_runs": 128,
        "max_active_provider_calls": 4, "max_waiting_provider_calls": 0});
    d.write_documents();
    let gateway_addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().expect("addr");
    let mut cmd = d.command();
    let _gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(gateway_addr).await;

    let baseline_port = support::free_port("127.0.0.1");
    let baseline_addr: SocketAddr = format!("127.0.0.1:{baseline_port}").parse().expect("addr");
    let exe = std::env::current_exe().expect("current exe");
    let _baseline = Reaped(
        Command::new(exe)
            .env(BASELINE_ENV, baseline_port.to_string())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn baseline"),
    );
    wait_listening(baseline_addr).await;

    let baseline_request =
        format!("GET / HTTP/1.1\r\nHost: {}\r\n\r\n", support::authority(baseline_addr)).into_bytes();
    let list = mcp_request(gateway_addr, "tools/list", "", None);
    let call =
        mcp_request(gateway_addr, "tools/call", r#""name":"echo","arguments":{"text":"hi"},"#, Some("echo"));

    let mut out = String::new();
    out.push_str("# Benchmarks\n\n");
    out.push_str("Produced by `cargo bench --bench gateway` (benches/gateway.rs); every number below comes from one run.\n");
    out.push_str("Each row drives keep-alive connections back to back for 3 s after a 0.5 s warm-up. `baseline` is a\n");
    out.push_str(
        "bare hyper 1 HTTP/1.1 server answering a fixed 18-byte body, run as its own process beside the\n",
    );
    out.push_str(
        "gateway; `ratio` is the row's req/s divided by the baseline's req/s at the same concurrency.\n\n",
    );
    out.push_str(
        "Write calls go through the private audit: each record is made durable (group commit: one write\n",
    );
    out.push_str(
        "and one fsync per batch) before the result is published. Their baseline is one `write` plus one\n",
    );
    out.push_str("`fsync` per 256-byte record on a file in the same directory tree, by as many threads as connections.\n\n");
    out.push_str(&format!("Machine: {}.\n\n", machine()));
    out.push_str("| workload | concurrency | req/s | p50 ms | p99 ms | ratio to baseline |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for concurrency in CONCURRENCY {
        let base = drive(baseline_addr, baseline_request.clone(), concurrency).await;
        let rows = [
            ("baseline (bare hyper)", &base),
            ("tools/list", &drive(gateway_addr, list.clone(), concurrency).await),
            ("tools/call echo (Luau)", &drive(gateway_addr, call.clone(), concurrency).await),
        ];
        for (name, m) in rows {
            out.push_str(&format!(
                "| {name} | {concurrency} | {:.0} | {} | {} | {:.3} |\n",
                m.rps(),
                ms(m.percentile(0.5)),
                ms(m.percentile(0.99)),
                m.rps() / base.rps()
            ));
        }
    }
    out.push_str(&write_rows().await);
    out.push_str(&forward::rows().await);
    out
}

/// Write calls of a trivial write tool, next to one write + fsync per record in the same run.
async fn write_rows() -> String {
    let mut d = support::audit::deployment(128, 128, 67_108_864, 8);
    d.write_file("note/app.luau", "local M = {}\nfunction M.run(input) return { ok = true } end\nreturn M\n");
    d.gateway["tools"][2]["expected_application_content_digest"] =
        json!(support::content_pin::of(&d.path("note/ptc.json")));
    d.write_documents();
    let addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().expect("addr");
    let mut cmd = d.command();
    let _gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(addr).await;
    let call = mcp_request(addr, "tools/call", r#""name":"note","arguments":{"text":"x"},"#, Some("note"));
    let mut out = String::new();
    for concurrency in CONCURRENCY {
        let base = fsync_baseline(&d.path("fsync-baseline"), concurrency).await;
        let m = drive(addr, call.clone(), concurrency).await;
        out.push_str(&format!(
            "| baseline (write + fsync per record) | {concurrency} | {:.0} | {} | {} | 1.000 |\n",
            base.rps(),
            ms(base.percentile(0.5)),
            ms(base.percentile(0.99))
        ));
        out.push_str(&format!(
            "| tools/call note (write, audited) | {concurrency} | {:.0} | {} | {} | {:.3} |\n",
            m.rps(),
            ms(m.percentile(0.5)),
            ms(m.percentile(0.99)),
            m.rps() / base.rps()
        ));
    }
    out
}

/// `concurrency` threads append a 256-byte line to one file and fsync it, back to back.
async fn fsync_baseline(path: &std::path::Path, concurrency: usize) -> Measured {
    use std::io::Write as _;
    let file =
        std::sync::Arc::new(std::fs::OpenOptions::new().create(true).append(true).open(path).expect("open"));
    let start = Instant::now();
    let warm_end = start + WARM_UP;
    let end = warm_end + MEASURE;
    let line = [b'x'; 256];
    let threads: Vec<_> = (0..concurrency)
        .map(|_| {
            let file = file.clone();
            std::thread::spawn(move || {
                let mut latencies = Vec::new();
                loop {
                    let sent = Instant::now();
                    if sent >= end {
                        break;
                    }
                    (&*file).write_all(&line).expect("write");
                    file.sync_data().expect("fsync");
                    if sent >= warm_end {
                        latencies.push(sent.elapsed());
                    }
                }
                latencies
            })
        })
        .collect();
    let latencies = tokio::task::spawn_blocking(move || {
        threads.into_iter().flat_map(|t| t.join().expect("thread")).collect::<Vec<_>>()
    })
    .await
    .expect("join");
    Measured { requests: latencies.len() as u64, elapsed: MEASURE, latencies }
}
