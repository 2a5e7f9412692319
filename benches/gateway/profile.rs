//! The bench's profile mode (issue 27, scope 8: where the time goes), run by `bash benches/profile.sh`
//! as `PTC_BENCH_PROFILE=<dir> cargo bench --bench gateway`: instead of the tables, it serves the main
//! table's workloads from the release `ptc` and records, into `<dir>`,
//!
//! - `perf.data`: `perf record -F 999 --call-graph MODE -p PID` of the gateway serving the Luau echo to 16
//!   keep-alive connections back to back for the plan's span (`PTC_BENCH_SECONDS`), after its warm-up;
//!   MODE is `PTC_BENCH_CALL_GRAPH` (default `dwarf`: the release build keeps no frame pointers, so `fp`,
//!   which `-g` means, sees one frame or two); the script turns it into `docs/perf/luau-echo-c16.svg`;
//! - `syscalls.md`: the system calls per request of `tools/list`, the Luau echo, the audited write and the
//!   forward tool, each `strace -c -f -p PID` of the gateway during `SYSCALL_REQUESTS` requests at
//!   concurrency 16 (after as many unmeasured ones), every count divided by the requests; the script
//!   copies it to `docs/perf/syscalls.md`.
//!
//! `perf` and `strace` are found on PATH. Each tracer is attached only once the gateway is warm, and is
//! stopped with SIGINT (both then write what they gathered) and reaped with a deadline; a tool that fails
//! stops the mode with its stderr. Owns only this mode; the deployments are the ones of the tables.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::rounds::plan;
use super::{drive, mcp_request, read_response, wait_listening, Reaped};
use crate::support;

/// The environment variable that selects this mode: the directory to write into.
pub const PROFILE_ENV: &str = "PTC_BENCH_PROFILE";
/// Requests per workload under `strace`, at [`CONCURRENCY`].
const SYSCALL_REQUESTS: usize = 2_000;
const CONCURRENCY: usize = 16;
/// A tracer attaches within this, and ends within it once interrupted.
const TRACER_DEADLINE: Duration = Duration::from_secs(30);

/// One gateway under a workload: its process id, address and request.
struct Workload {
    name: &'static str,
    pid: u32,
    addr: SocketAddr,
    request: Vec<u8>,
}

pub async fn run(dir: PathBuf) {
    std::fs::create_dir_all(&dir).expect("profile directory");
    // The echo deployment of the main table: tools/list and the Luau echo.
    let d = super::echo_deployment(|_| {});
    let echo_addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().expect("addr");
    let mut cmd = d.command();
    let echo_gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(echo_addr).await;
    let echo_call =
        mcp_request(echo_addr, "tools/call", r#""name":"echo","arguments":{"text":"hi"},"#, Some("echo"));

    // The flame graph of the echo at c=16.
    let _ = drive(echo_addr, echo_call.clone(), CONCURRENCY).await;
    let data = dir.join("perf.data");
    let pid = echo_gateway.0.id();
    let call_graph = std::env::var("PTC_BENCH_CALL_GRAPH").unwrap_or_else(|_| "dwarf".to_owned());
    let mut perf = Tracer::start(
        "perf",
        Command::new("perf")
            .args(["record", "-F", "999", "--call-graph", &call_graph, "-p", &pid.to_string(), "-o"])
            .arg(&data),
        &dir,
    );
    perf.wait_attached(|| data.exists()).await;
    let m = drive(echo_addr, echo_call.clone(), CONCURRENCY).await;
    perf.stop();
    eprintln!(
        "perf: {} Luau echo calls in {:.1} s at c={CONCURRENCY}",
        m.requests,
        plan().measure.as_secs_f64()
    );

    // The system calls per request.
    let mut audit = support::audit::deployment(128, 128, 67_108_864, 8);
    audit.write_file(
        "note/app.luau",
        "local M = {}\nfunction M.run(input) return { ok = true } end\nreturn M\n",
    );
    audit.gateway["tools"][2]["expected_application_content_digest"] =
        serde_json::json!(support::content_pin::of(&audit.path("note/ptc.json")));
    audit.write_documents();
    let audit_addr: SocketAddr = format!("127.0.0.1:{}", audit.port).parse().expect("addr");
    let mut cmd = audit.command();
    let audit_gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(audit_addr).await;
    let mut fx = support::providers::Fx::new("modern");
    fx.d.gateway["admission"] = serde_json::json!({"max_inflight_requests": 128, "max_concurrent_runs": 128,
        "max_active_provider_calls": 64, "max_waiting_provider_calls": 64});
    fx.pin();
    let fx_addr = fx.addr();
    let mut cmd = fx.command("none");
    let fx_gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(fx_addr).await;
    let workloads = [
        Workload {
            name: "`tools/list`",
            pid,
            addr: echo_addr,
            request: mcp_request(echo_addr, "tools/list", "", None),
        },
        Workload { name: "Luau echo `tools/call`", pid, addr: echo_addr, request: echo_call },
        Workload {
            name: "audited write `tools/call note`",
            pid: audit_gateway.0.id(),
            addr: audit_addr,
            request: mcp_request(
                audit_addr,
                "tools/call",
                r#""name":"note","arguments":{"text":"x"},"#,
                Some("note"),
            ),
        },
        Workload {
            name: "forward `tools/call fwd` (stdio)",
            pid: fx_gateway.0.id(),
            addr: fx_addr,
            request: mcp_request(
                fx_addr,
                "tools/call",
                r#""name":"fwd","arguments":{"text":"hi"},"#,
                Some("fwd"),
            ),
        },
    ];
    let mut tables = Vec::new();
    for (i, w) in workloads.iter().enumerate() {
        count_requests(w.addr, &w.request, SYSCALL_REQUESTS).await;
        let out = dir.join(format!("strace-{i}.txt"));
        let mut strace = Tracer::start(
            "strace",
            Command::new("strace").args(["-c", "-f", "-p", &w.pid.to_string(), "-o"]).arg(&out),
            &dir,
        );
        let log = strace.log.clone();
        strace.wait_attached(|| attached(&log)).await;
        count_requests(w.addr, &w.request, SYSCALL_REQUESTS).await;
        strace.stop();
        let text = std::fs::read_to_string(&out).expect("strace summary");
        tables.push((w.name, summary(&text)));
        eprintln!("strace: {} done", w.name);
    }
    let doc = syscalls_md(&tables);
    std::fs::write(dir.join("syscalls.md"), doc).expect("write syscalls.md");
    drop((echo_gateway, audit_gateway, fx_gateway));
}

/// A tracer process, its stderr in a file, interrupted and reaped by [`Tracer::stop`] or on drop.
struct Tracer {
    name: &'static str,
    child: Option<Child>,
    log: PathBuf,
}

impl Tracer {
    fn start(name: &'static str, command: &mut Command, dir: &Path) -> Tracer {
        let log = dir.join(format!("{name}.stderr"));
        let err = std::fs::File::create(&log).expect("tracer log");
        let child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(err).spawn();
        let child =
            child.unwrap_or_else(|e| panic!("cannot run {name} (apt-get install linux-perf strace): {e}"));
        Tracer { name, child: Some(child), log }
    }

    /// Waits until `ready` holds, or fails with the tracer's stderr.
    async fn wait_attached(&mut self, ready: impl Fn() -> bool) {
        let deadline = Instant::now() + TRACER_DEADLINE;
        while !ready() {
            let exited = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() >= deadline {
                let text = std::fs::read_to_string(&self.log).unwrap_or_default();
                panic!("{} did not attach ({exited:?}): {text}", self.name);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A tracer that has attached may still be setting up its buffers.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGINT);
        let deadline = Instant::now() + TRACER_DEADLINE;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("{} did not end after SIGINT", self.name);
                }
            }
        }
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether `strace` has reported attaching (with `-f -p`, one line for the process and its threads).
fn attached(log: &Path) -> bool {
    std::fs::read_to_string(log).is_ok_and(|t| t.contains(" attached"))
}

/// `total` requests over [`CONCURRENCY`] keep-alive connections, each connection its share back to back.
async fn count_requests(addr: SocketAddr, request: &[u8], total: usize) {
    let request = std::sync::Arc::new(request.to_vec());
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let request = request.clone();
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            let mut buf = Vec::with_capacity(16 * 1024);
            for _ in 0..total / CONCURRENCY {
                stream.write_all(&request).await.expect("write");
                read_response(&mut stream, &mut buf).await;
            }
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(300), t)
            .await
            .expect("requests within 300 s")
            .expect("client");
    }
}

/// The calls per system call of a `strace -c` summary.
fn summary(text: &str) -> BTreeMap<String, u64> {
    let mut calls = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // `% time  seconds  usecs/call  calls  [errors]  syscall`; the header, rules and total are skipped.
        if fields.len() < 5 || fields[0].starts_with('-') || fields[0] == "%" {
            continue;
        }
        let name = fields[fields.len() - 1];
        if name == "total" {
            continue;
        }
        if let Ok(n) = fields[3].parse::<u64>() {
            calls.insert(name.to_owned(), n);
        }
    }
    calls
}

fn syscalls_md(tables: &[(&str, BTreeMap<String, u64>)]) -> String {
    let per = SYSCALL_REQUESTS as f64 - (SYSCALL_REQUESTS % CONCURRENCY) as f64;
    let mut names: Vec<&String> = tables.iter().flat_map(|(_, t)| t.keys()).collect();
    names.sort();
    names.dedup();
    // The most frequent first, over all workloads.
    names.sort_by_key(|n| {
        std::cmp::Reverse(tables.iter().map(|(_, t)| t.get(*n).copied().unwrap_or(0)).sum::<u64>())
    });
    let mut out = String::new();
    out.push_str("# System calls per request\n\n");
    out.push_str("Made by `bash benches/profile.sh` (the bench's profile mode, benches/gateway/profile.rs) on a release\n");
    out.push_str(&format!(
        "build: for each workload, {} requests at concurrency {CONCURRENCY} warm the gateway, then\n\
         `strace -c -f -p PID -o FILE` is attached to the gateway process (every thread) during {} more requests\n\
         (keep-alive connections back to back), interrupted, and each count divided by the requests. The\n\
         figures are the gateway's only (the stdio upstream of the forward tool was spawned before `strace`\n\
         attached, so it is not traced). Under `strace` every call is slower, so the counts of calls that\n\
         wait (`futex`, `epoll_wait`) lean high; the counts of calls that move bytes do not.\n\n",
        SYSCALL_REQUESTS, SYSCALL_REQUESTS
    ));
    out.push_str("| system call |");
    for (name, _) in tables {
        out.push_str(&format!(" {name} |"));
    }
    out.push_str("\n| --- |");
    for _ in tables {
        out.push_str(" ---: |");
    }
    out.push('\n');
    let mut totals = vec![0u64; tables.len()];
    for name in names {
        let row: Vec<u64> = tables.iter().map(|(_, t)| t.get(name).copied().unwrap_or(0)).collect();
        if row.iter().all(|n| (*n as f64) / per < 0.01) {
            for (i, n) in row.iter().enumerate() {
                totals[i] += n;
            }
            continue;
        }
        out.push_str(&format!("| `{name}` |"));
        for (i, n) in row.iter().enumerate() {
            totals[i] += n;
            out.push_str(&format!(" {:.2} |", *n as f64 / per));
        }
        out.push('\n');
    }
    out.push_str("| all (including calls under 0.01 per request) |");
    for t in totals {
        out.push_str(&format!(" {:.2} |", t as f64 / per));
    }
    out.push('\n');
    out
}
