//! The quickstart's footprint (issue 14, goal G6): idle resident memory, then what 10,000 sequential
//! `tools/call` of its trivial Luau tool leave behind in memory, open descriptors and threads.
//!
//! Owns starting the quickstart exactly as the README does (`ptc gateway ptc-gateway.json --env-file
//! credentials.env`, on a copy of `config-examples/quickstart` whose only change is a free port), reading
//! `/proc/<pid>/status` (`VmRSS`, `Threads`) and `/proc/<pid>/fd`, and the calls (`greet`, one keep-alive
//! connection, each answer checked for status 200). The gateway is killed and reaped on drop; the call
//! loops are bounded in count and time. Nothing here asserts a threshold.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::{count, mcp_request_as, read_response};
use crate::support;

/// Calls measured, after `WARM_UP_CALLS` that fill the gateway's caches and pools first.
pub const CALLS: usize = 10_000;
pub const WARM_UP_CALLS: usize = 1_000;
/// One loop of calls ends by then, even short of its count (the count done is reported).
const LOOP_DEADLINE: Duration = Duration::from_secs(300);
/// Quiet time before each reading, so that no call is in flight and the idle reading is idle.
const SETTLE: Duration = Duration::from_secs(1);

/// One reading of the gateway process.
#[derive(Clone, Copy)]
pub struct Snapshot {
    pub rss_bytes: u64,
    pub fds: usize,
    pub threads: usize,
}

pub struct Residue {
    /// Ready, before any call.
    pub idle: Snapshot,
    /// After the warm-up calls.
    pub warm: Snapshot,
    /// After the measured calls.
    pub after: Snapshot,
    /// Warm-up and measured calls actually made (short of the counts only if a loop hit its deadline).
    pub warm_calls: usize,
    pub calls: usize,
}

impl Residue {
    /// Resident bytes gained per measured call (negative when the process shrank).
    pub fn per_call(&self) -> f64 {
        (self.after.rss_bytes as f64 - self.warm.rss_bytes as f64) / self.calls.max(1) as f64
    }
}

pub type Results = Result<Residue, String>;

pub async fn measure() -> Results {
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples/quickstart");
    support::copy_tree(&quickstart, dir.path());
    let config = dir.path().join("ptc-gateway.json");
    let mut document: Value = serde_json::from_slice(&std::fs::read(&config).map_err(|e| format!("{e}"))?)
        .map_err(|e| format!("quickstart document: {e}"))?;
    let port = support::free_port("127.0.0.1");
    document["listen"]["port"] = json!(port);
    std::fs::write(&config, serde_json::to_string_pretty(&document).expect("json"))
        .map_err(|e| format!("quickstart document: {e}"))?;
    let env = std::fs::read_to_string(dir.path().join("credentials.env")).map_err(|e| format!("{e}"))?;
    let token = env
        .lines()
        .find_map(|l| l.strip_prefix("PTC_QUICKSTART_TOKEN="))
        .ok_or("no PTC_QUICKSTART_TOKEN in the quickstart's credentials.env")?
        .trim()
        .to_owned();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut cmd = support::ptc();
    cmd.current_dir(dir.path()).args(["gateway", "ptc-gateway.json", "--env-file", "credentials.env"]);
    // Waits for /health/ready; killed and reaped on drop.
    let gateway = support::Gateway::start(cmd, addr);
    let pid = gateway.child.id();

    tokio::time::sleep(SETTLE).await;
    let idle = snapshot(pid)?;
    let request = mcp_request_as(
        addr,
        &token,
        "tools/call",
        r#""name":"greet","arguments":{"name":"Ada"},"#,
        Some("greet"),
    );
    let mut stream = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let warm_calls = calls(&mut stream, &mut buf, &request, WARM_UP_CALLS).await;
    tokio::time::sleep(SETTLE).await;
    let warm = snapshot(pid)?;
    let measured = calls(&mut stream, &mut buf, &request, CALLS).await;
    tokio::time::sleep(SETTLE).await;
    let after = snapshot(pid)?;
    drop(stream);
    drop(gateway);
    Ok(Residue { idle, warm, after, warm_calls, calls: measured })
}

/// Up to `n` sequential calls within `LOOP_DEADLINE`; the first answer must carry the greeting.
async fn calls(stream: &mut TcpStream, buf: &mut Vec<u8>, request: &[u8], n: usize) -> usize {
    let deadline = Instant::now() + LOOP_DEADLINE;
    for done in 0..n {
        if Instant::now() >= deadline {
            return done;
        }
        stream.write_all(request).await.expect("write");
        tokio::time::timeout_at(deadline.into(), read_response(stream, buf))
            .await
            .expect("an answer in time");
        if done == 0 {
            let text = String::from_utf8_lossy(buf);
            assert!(text.contains("Hello, Ada!"), "greet: {text}");
        }
    }
    n
}

/// `VmRSS` and `Threads` of `/proc/<pid>/status`, and the entries of `/proc/<pid>/fd`.
fn snapshot(pid: u32) -> Result<Snapshot, String> {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| format!("/proc status: {e}"))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| format!("no {name} in /proc/{pid}/status"))
    };
    let rss_kib = field("VmRSS:")?;
    let threads = field("Threads:")? as usize;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_err(|e| format!("/proc fd: {e}"))?.count();
    Ok(Snapshot { rss_bytes: rss_kib * 1024, fds, threads })
}

fn mib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / (1024.0 * 1024.0))
}

/// The section of `docs/benchmarks.md`.
pub fn section(r: &Results) -> String {
    let mut out = String::new();
    out.push_str("\n## Quickstart memory, descriptors and threads (G6)\n\n");
    out.push_str("The quickstart gateway is started as the README starts it (`ptc gateway ptc-gateway.json --env-file\n");
    out.push_str("credentials.env`, the release binary) on a copy of `config-examples/quickstart` that differs only in\n");
    out.push_str(
        "a free port. Each reading is taken after 1 s without traffic: `VmRSS` and `Threads` from\n",
    );
    out.push_str(
        "`/proc/<pid>/status`, open descriptors as the entries of `/proc/<pid>/fd`. `idle` is read once\n",
    );
    out.push_str(&format!(
        "`/health/ready` answers, before any call; then {} sequential `tools/call greet` warm the gateway up\n",
        count(WARM_UP_CALLS)
    ));
    out.push_str(&format!(
        "(allocator arenas, pools, the blocking thread the runs use) and `warm` is read; then {} more and `after`\n",
        count(CALLS)
    ));
    out.push_str(
        "is read. All calls go over one keep-alive connection, which stays open across `warm` and `after`\n",
    );
    out.push_str("(so both count its descriptor). Residue per call = (RSS after − RSS warm) / measured calls: growth\n");
    out.push_str("that the warm-up does not explain, i.e. what each call leaves behind. RSS is counted in whole 4 KiB\n");
    out.push_str(&format!(
        "pages, so one page more or less over {} calls moves the residue by {:.1} B per call.\n\n",
        count(CALLS),
        4096.0 / CALLS as f64
    ));
    match r {
        Ok(r) => {
            out.push_str("| reading | calls so far | RSS MiB | open descriptors | threads |\n");
            out.push_str("| --- | ---: | ---: | ---: | ---: |\n");
            for (name, calls, s) in [
                ("idle", 0, r.idle),
                ("warm", r.warm_calls, r.warm),
                ("after", r.warm_calls + r.calls, r.after),
            ] {
                out.push_str(&format!(
                    "| {name} | {} | {} | {} | {} |\n",
                    count(calls),
                    mib(s.rss_bytes),
                    s.fds,
                    s.threads
                ));
            }
            out.push_str(&format!(
                "\nResidue: {:+.1} B per call over {} calls ({:+} KiB in all).\n",
                r.per_call(),
                count(r.calls),
                (r.after.rss_bytes as i64 - r.warm.rss_bytes as i64) / 1024
            ));
        }
        Err(reason) => out.push_str(&format!("Not measured: {reason}.\n")),
    }
    out.push_str(&format!("\n{}\n", ordering_names()));
    out
}

/// How many names of the linker's symbol-ordering file the measured binary has (`build.rs`, docs/decisions.md
/// "The code startup runs, ordered (issue 27)"): a stale file leaves the code startup runs scattered again,
/// which shows in the idle figure above; this line says why. Read with binutils' `nm`.
fn ordering_names() -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/symbol-order.txt");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return "The symbol-ordering file `scripts/symbol-order.txt` is missing.".to_owned();
    };
    let listed: std::collections::HashSet<&str> = text.lines().collect();
    let nm = std::process::Command::new("nm").args(["--defined-only", env!("CARGO_BIN_EXE_ptc")]).output();
    let symbols = match nm {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => return "The symbol-ordering file's names were not counted (no `nm`).".to_owned(),
    };
    let found: std::collections::HashSet<&str> =
        symbols.lines().filter_map(|l| l.split_whitespace().last()).filter(|n| listed.contains(n)).collect();
    format!(
        "The binary has {} of the {} names of the symbol-ordering file `scripts/symbol-order.txt`, which puts \
         the code startup and a call run together (`scripts/symbol-order` regenerates it).",
        count(found.len()),
        count(listed.len())
    )
}
