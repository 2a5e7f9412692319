//! `cargo bench --bench gateway`: throughput and latency of `tools/list` and `tools/call` (a trivial Luau
//! tool) at concurrency 1, 16 and 64 over keep-alive connections, next to a bare hyper server that
//! answers a fixed body, all measured in one run on this machine (issue 3, scope item 7); the same Luau
//! call over PCC streams (`pcc`, issue 27); audited writes next to the same gateway's echo and to one
//! write plus fsync per record; the forward tool next to the same stdio upstream called directly and behind the
//! relays users run today, `mcp-proxy` and `supergateway` (`forward`, `relay`); the quickstart's memory,
//! descriptors and threads over 10,000 calls (`residue`); the time a fresh sandbox takes to be ready
//! (in-process, through the library's doc-hidden `bench_hooks`); what `artifacts.trace: true` costs and a
//! cold `hist.runs` over 10,000 trace files (`traces`, issue 15); a model call through the gateway next to
//! the same request sent directly (`models`, issue 16). The goals of issues 14 and 27 are computed from
//! these figures (`goals`). Writes everything to `docs/benchmarks.md` and prints it.
//!
//! Every comparison runs as interleaved rounds (baseline, subject, baseline, subject, …); rows report
//! medians over rounds and ratios as their median with min–max across rounds (`rounds`, issue 27 scope 1).
//! The plan comes from the environment: `PTC_BENCH_ROUNDS` (default 5), `PTC_BENCH_SECONDS` (measured span
//! of one drive, default 2), `PTC_BENCH_WARMUP` (default 0.3 s), `PTC_BENCH_CALLS` (sequential calls per
//! round, default 500). The full run takes about 7 minutes on a 2-core machine; a quick check that it
//! completes and renders: `PTC_BENCH_ROUNDS=2 PTC_BENCH_SECONDS=0.5 PTC_BENCH_CALLS=100 cargo bench --bench
//! gateway`. `PTC_BENCH_PROFILE=<dir>` selects the profile mode instead (`profile`, run by
//! `benches/profile.sh`: a flame graph and the system calls per request).
//!
//! Both HTTP servers run as their own processes (the gateway is the real release `ptc`; the baseline is
//! this binary re-executed with `PTC_BENCH_BASELINE=<port>`), and both are driven by the same client code,
//! so the ratios compare servers, not clients. Nothing here asserts a threshold: a goal that is not met is
//! reported as such. Every loop is bounded in count or time and every wait has a deadline; every spawned
//! process is killed and reaped on drop; every port is picked free.

#[path = "../tests/support/mod.rs"]
#[allow(unused_imports)]
mod support;

#[path = "gateway/forward.rs"]
mod forward;
#[path = "gateway/goals.rs"]
mod goals;
#[path = "gateway/models.rs"]
mod models;
#[path = "gateway/pcc.rs"]
mod pcc;
#[path = "gateway/profile.rs"]
mod profile;
#[path = "gateway/relay.rs"]
mod relay;
#[path = "gateway/render.rs"]
mod render;
#[path = "gateway/replay.rs"]
mod replay;
#[path = "gateway/residue.rs"]
mod residue;
#[path = "gateway/rounds.rs"]
mod rounds;
#[path = "gateway/traces.rs"]
mod traces;

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

use rounds::{plan, Rounds};

const BASELINE_ENV: &str = "PTC_BENCH_BASELINE";
/// A client connection that has not finished this long after its measurement ended is stuck.
const STUCK: Duration = Duration::from_secs(30);
const CONCURRENCY: [usize; 3] = [1, 16, 64];
/// Sandbox-ready samples (G7), after unmeasured warm-up runs.
const SANDBOX_SAMPLES: usize = 2_000;
const SANDBOX_WARM_UP: usize = 200;

fn main() {
    if let Ok(port) = std::env::var(BASELINE_ENV) {
        baseline_server(port.parse().expect("port"));
        return;
    }
    if let Ok(port) = std::env::var(models::MODEL_ENV) {
        models::model_server(port.parse().expect("port"));
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        // `cargo test --benches` lists benches; there is nothing to list.
        return;
    }
    let _ = plan();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    if let Ok(dir) = std::env::var(profile::PROFILE_ENV) {
        runtime.block_on(profile::run(dir.into()));
        return;
    }
    let results = runtime.block_on(run_all());
    let doc = render::render(&results);
    print!("{doc}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/benchmarks.md");
    std::fs::write(&path, doc).expect("write docs/benchmarks.md");
    eprintln!("wrote {}", path.display());
}

/// The bare hyper server: one fixed JSON body, HTTP/1.1 keep-alive, the same runtime flavour as the gateway.
fn baseline_server(port: u16) {
    fixed_answer_server(port, br#"{"status":"ready"}"#, None);
}

/// A server answering every request on `port` with `body` (and `content_type`, when given): the baseline,
/// and the model server of the model rows (`models`).
fn fixed_answer_server(port: u16, body: &'static [u8], content_type: Option<&'static str>) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = service_fn(move |_req: Request<hyper::body::Incoming>| async move {
                    let mut response = Response::new(Full::new(Bytes::from_static(body)));
                    if let Some(value) = content_type {
                        response
                            .headers_mut()
                            .insert("content-type", hyper::header::HeaderValue::from_static(value));
                    }
                    Ok::<_, Infallible>(response)
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

/// The latencies of one measurement, and the rate they make.
pub struct Measured {
    requests: u64,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Measured {
    /// Sequential samples: the elapsed time is their sum.
    fn sequential(latencies: Vec<Duration>) -> Measured {
        Measured { requests: latencies.len() as u64, elapsed: latencies.iter().sum(), latencies }
    }
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }
    fn percentile(&self, p: f64) -> Duration {
        let mut l = self.latencies.clone();
        l.sort();
        let i = ((l.len() as f64 - 1.0) * p).round() as usize;
        l.get(i).copied().unwrap_or_default()
    }
    fn p50(&self) -> Duration {
        self.percentile(0.5)
    }
}

/// Drives `concurrency` keep-alive connections sending `request` back to back for the plan's span after
/// its warm-up (`rounds::plan`); every response must have status 200 and a complete body.
async fn drive(addr: SocketAddr, request: Vec<u8>, concurrency: usize) -> Measured {
    let request = std::sync::Arc::new(request);
    let start = Instant::now();
    let warm_end = start + plan().warm_up;
    let end = warm_end + plan().measure;
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
        let done = tokio::time::timeout_at((end + STUCK).into(), t).await;
        latencies.extend(done.expect("a client connection is stuck").expect("client task"));
    }
    Measured { requests: latencies.len() as u64, elapsed: plan().measure, latencies }
}

/// `rounds` sequential requests on one keep-alive connection after `warm_up` unmeasured ones; the whole
/// loop ends within `SEQUENTIAL_DEADLINE` or the measurement fails.
async fn sequential(addr: SocketAddr, request: Vec<u8>, warm_up: usize, rounds: usize) -> Measured {
    let run = async {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let mut buf = Vec::with_capacity(16 * 1024);
        let mut latencies = Vec::with_capacity(rounds);
        for round in 0..warm_up + rounds {
            let sent = Instant::now();
            stream.write_all(&request).await.expect("write");
            read_response(&mut stream, &mut buf).await;
            if round >= warm_up {
                latencies.push(sent.elapsed());
            }
        }
        Measured::sequential(latencies)
    };
    tokio::time::timeout(SEQUENTIAL_DEADLINE, run).await.expect("sequential rounds within their deadline")
}

/// The bound of one [`sequential`] measurement.
const SEQUENTIAL_DEADLINE: Duration = Duration::from_secs(300);

/// Reads one response (content-length or chunked) and checks its status is 200.
async fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) {
    let status = try_read_response(stream, buf).await.expect("response");
    assert_eq!(status, 200, "status: {}", String::from_utf8_lossy(&buf[..buf.len().min(40)]));
}

/// Reads one response (content-length or chunked) into `buf`: its status, or why it could not be read.
async fn try_read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<u16, String> {
    buf.clear();
    let head_end = loop {
        if let Some(p) = find(buf, b"\r\n\r\n") {
            break p + 4;
        }
        read_more(stream, buf).await?;
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or("no status line")?;
    if let Some(len) = head.lines().find_map(|l| l.strip_prefix("content-length:")) {
        let len: usize = len.trim().parse().map_err(|_| "bad content-length")?;
        while buf.len() < head_end + len {
            read_more(stream, buf).await?;
        }
    } else if head.contains("transfer-encoding: chunked") {
        // Chunked: read until the terminator chunk.
        while find(&buf[head_end..], b"\r\n0\r\n\r\n").is_none() && !buf[head_end..].starts_with(b"0\r\n\r\n")
        {
            read_more(stream, buf).await?;
        }
    }
    Ok(status)
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<(), String> {
    let mut chunk = [0u8; 16 * 1024];
    let n = stream.read(&mut chunk).await.map_err(|e| format!("read: {e}"))?;
    if n == 0 {
        return Err("connection closed mid-response".to_owned());
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A `POST /mcp` of `method` with the fixtures' bearer token.
fn mcp_request(addr: SocketAddr, method: &str, params: &str, name: Option<&str>) -> Vec<u8> {
    mcp_request_as(addr, support::TOKEN, method, params, name)
}

/// A `POST /mcp` of `method` with `params` (members, each followed by a comma) and every header
/// http-mcp.md requires, authenticated by `token`.
fn mcp_request_as(addr: SocketAddr, token: &str, method: &str, params: &str, name: Option<&str>) -> Vec<u8> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let name = name.map(|n| format!("Mcp-Name: {n}\r\n")).unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{body}",
        support::authority(addr),
        body.len()
    )
    .into_bytes()
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1_000.0)
}

/// `n` with thousands separators: 10,000.
fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn us(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1_000_000.0)
}

fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
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
    format!("{cpu}, {cores} cores available, Linux {kernel}")
}

/// One concurrency level of the main table, each side measured once per round.
pub struct HttpRows {
    concurrency: usize,
    baseline: Rounds,
    list: Rounds,
    echo: Rounds,
    /// The same Luau echo over PCC streams (`pcc`), at the concurrencies of [`pcc::CONCURRENCY`].
    pcc: Option<Result<Rounds, String>>,
}

/// One concurrency level of the audited writes, each side measured once per round.
pub struct WriteRows {
    concurrency: usize,
    fsync: Rounds,
    /// The unaudited Luau echo of the same gateway, the baseline of G4.
    echo: Rounds,
    note: Rounds,
}

/// Everything one run measured.
pub struct Results {
    machine: String,
    /// 1-, 5- and 15-minute load averages when the run began and when it ended: other work on the machine
    /// skews every row alike, and the ratios less than the rates.
    load_before: String,
    load_after: String,
    http: Vec<HttpRows>,
    writes: Vec<WriteRows>,
    forward: forward::Results,
    residue: residue::Results,
    /// The cost of traces and the cold `hist.runs` (issue 15).
    traces: traces::Results,
    /// A model call through the gateway next to the direct request (issue 16).
    models: models::Results,
    /// Recorded mission runs replayed offline next to the same runs served live (issue 26).
    replay: replay::Results,
    /// G7: activation to the entry's first instruction, or why it could not be measured.
    sandbox: Result<Measured, String>,
}

impl Results {
    fn http(&self, concurrency: usize) -> &HttpRows {
        self.http.iter().find(|r| r.concurrency == concurrency).expect("measured concurrency")
    }
    fn writes(&self, concurrency: usize) -> &WriteRows {
        self.writes.iter().find(|r| r.concurrency == concurrency).expect("measured concurrency")
    }
}

async fn run_all() -> Results {
    let load_before = load_average();
    let http = http_rows().await;
    let writes = write_rows().await;
    let forward = forward::measure().await;
    let residue = residue::measure().await;
    let traces = traces::measure().await;
    let models = models::measure().await;
    let replay = replay::measure().await;
    // In-process and last, when no server of this run is left to compete for the cores.
    let sandbox = tokio::task::spawn_blocking(sandbox_ready).await.expect("sandbox samples");
    Results {
        machine: machine(),
        load_before,
        load_after: load_average(),
        http,
        writes,
        forward,
        residue,
        traces,
        models,
        replay,
        sandbox,
    }
}

/// `tools/list` and the Luau echo against the bare hyper baseline, at each concurrency.
/// The Luau echo deployment of the main table: the baseline test deployment, sized so that 64
/// connections are admitted; `edit` is applied before the documents are written.
fn echo_deployment(edit: impl FnOnce(&mut support::Deployment)) -> support::Deployment {
    let mut d = support::Deployment::baseline();
    d.write_file("echo/schema.json", r#"{"type":"object","properties":{"text":{"type":"string"}}}"#);
    d.gateway["tools"][0]["expected_application_content_digest"] =
        json!(support::content_pin::of(&d.path("echo/ptc.json")));
    d.gateway["admission"] = json!({"max_inflight_requests": 128, "max_concurrent_runs": 128,
        "max_active_provider_calls": 4, "max_waiting_provider_calls": 0});
    edit(&mut d);
    d.write_documents();
    d
}

/// `tools/list`, the Luau echo and the same echo over PCC streams, against the bare hyper baseline, at
/// each concurrency: `plan().rounds` interleaved rounds of baseline, `tools/list`, echo (and PCC).
async fn http_rows() -> Vec<HttpRows> {
    let d = echo_deployment(|_| {});
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
    let mut rows = Vec::new();
    for concurrency in CONCURRENCY {
        let with_pcc = pcc::CONCURRENCY.contains(&concurrency);
        let (mut baseline, mut list_rounds, mut echo) = (Rounds::new(), Rounds::new(), Rounds::new());
        let mut on_pcc: Option<Result<Rounds, String>> = with_pcc.then(|| Ok(Rounds::new()));
        for round in 0..plan().rounds {
            eprintln!("main table, c={concurrency}, round {}/{}", round + 1, plan().rounds);
            baseline.push(drive(baseline_addr, baseline_request.clone(), concurrency).await);
            list_rounds.push(drive(gateway_addr, list.clone(), concurrency).await);
            echo.push(drive(gateway_addr, call.clone(), concurrency).await);
            if let Some(Ok(rounds)) = &mut on_pcc {
                match pcc::drive(d.pcc_port, concurrency).await {
                    Ok(m) => rounds.push(m),
                    Err(reason) => {
                        eprintln!("PCC row not measured: {reason}");
                        on_pcc = Some(Err(reason));
                    }
                }
            }
        }
        rows.push(HttpRows { concurrency, baseline, list: list_rounds, echo, pcc: on_pcc });
    }
    rows
}

/// Write calls of a trivial write tool, next to one write + fsync per record and to the same gateway's
/// unaudited Luau echo: `plan().rounds` interleaved rounds of the three at each concurrency.
async fn write_rows() -> Vec<WriteRows> {
    let mut d = support::audit::deployment(128, 128, 67_108_864, 8);
    d.write_file("note/app.luau", "local M = {}\nfunction M.run(input) return { ok = true } end\nreturn M\n");
    d.gateway["tools"][2]["expected_application_content_digest"] =
        json!(support::content_pin::of(&d.path("note/ptc.json")));
    d.write_file("echo/schema.json", r#"{"type":"object","properties":{"text":{"type":"string"}}}"#);
    d.gateway["tools"][0]["expected_application_content_digest"] =
        json!(support::content_pin::of(&d.path("echo/ptc.json")));
    d.write_documents();
    let addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().expect("addr");
    let mut cmd = d.command();
    let _gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(addr).await;
    let call = mcp_request(addr, "tools/call", r#""name":"note","arguments":{"text":"x"},"#, Some("note"));
    let echo_call =
        mcp_request(addr, "tools/call", r#""name":"echo","arguments":{"text":"hi"},"#, Some("echo"));
    let mut rows = Vec::new();
    for concurrency in CONCURRENCY {
        let (mut fsync, mut echo, mut note) = (Rounds::new(), Rounds::new(), Rounds::new());
        for round in 0..plan().rounds {
            eprintln!("writes, c={concurrency}, round {}/{}", round + 1, plan().rounds);
            fsync.push(fsync_baseline(&d.path("fsync-baseline"), concurrency).await);
            echo.push(drive(addr, echo_call.clone(), concurrency).await);
            note.push(drive(addr, call.clone(), concurrency).await);
        }
        rows.push(WriteRows { concurrency, fsync, echo, note });
    }
    rows
}

/// `concurrency` threads append a 256-byte line to one file and fsync it, back to back.
async fn fsync_baseline(path: &std::path::Path, concurrency: usize) -> Measured {
    use std::io::Write as _;
    let file =
        std::sync::Arc::new(std::fs::OpenOptions::new().create(true).append(true).open(path).expect("open"));
    let start = Instant::now();
    let warm_end = start + plan().warm_up;
    let end = warm_end + plan().measure;
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
    Measured { requests: latencies.len() as u64, elapsed: plan().measure, latencies }
}

/// G7: `SANDBOX_SAMPLES` runs of a trivial application, each in a fresh sandbox, after `SANDBOX_WARM_UP`
/// unmeasured ones; each sample is the span from the runtime's activation to the entry's first
/// instruction, taken inside the library (`bench_hooks`), since no request shows it.
fn sandbox_ready() -> Result<Measured, String> {
    let samples = ptc_gateway::bench_hooks::sandbox_ready_samples(SANDBOX_WARM_UP + SANDBOX_SAMPLES)?;
    Ok(Measured::sequential(samples.into_iter().skip(SANDBOX_WARM_UP).collect()))
}
