//! The forward-tool rows (issue 5; issue 14, goal G5): the latency a forward tool adds over calling the
//! same stdio upstream directly, and the same upstream behind a widely used relay, all measured in one run.
//!
//! Baseline: the stdio fault fixture (`tests/fixtures/mcp_fixture.py`, mode `modern`) spoken to by a
//! minimal client of this file (one JSON-RPC line out, one line back, the same `tools/call` line the
//! gateway sends, providers.md §4.2, §8.1), sequential `tools/call echo` round trips: the upstream's own
//! cost, with no gateway code in the loop. Gateway: the same fixture behind the forward tool `fwd` (→
//! `fx.echo`) of `support::providers::Fx`, pins from `--print-pins`, sequential `POST /mcp` tools/call
//! over one keep-alive connection. Relays: the same fixture behind `mcp-proxy` and behind `supergateway`
//! (`relay`), the same count over their Streamable HTTP endpoints. Every side is started once and then
//! measured in interleaved rounds (direct, forward, mcp-proxy, supergateway, direct, …), each round the
//! plan's calls after its unmeasured ones (`rounds::plan`). All sides share the fixture's per-request
//! marker write, so each difference is the front's own path. Owns only these rows; the HTTP client
//! helpers are the parent module's. Nothing here asserts a threshold.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::rounds::{self, plan, Rounds};
use super::{count, mcp_request, ms, read_response, relay, wait_listening, Measured, Reaped};
use crate::support;

/// One side's round ends within this, or the side failed.
pub const SIDE_DEADLINE: Duration = Duration::from_secs(180);
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The four sides of one run, each measured once per round.
pub struct Results {
    pub direct: Rounds,
    pub forward: Rounds,
    /// The `mcp-proxy` side, or why it was not measured.
    pub relay: Result<Rounds, String>,
    /// The `supergateway` side, or why it was not measured.
    pub supergateway: Result<Rounds, String>,
}

pub async fn measure() -> Results {
    let mut direct = Direct::start().await;
    let mut forward = Forward::start().await;
    let mut sides = Vec::new();
    for kind in [relay::Kind::McpProxy, relay::Kind::Supergateway] {
        sides.push(relay::Side::start(kind).await.map(|side| (side, Rounds::new())));
    }
    let (mut direct_rounds, mut forward_rounds) = (Rounds::new(), Rounds::new());
    for round in 0..plan().rounds {
        eprintln!("forward, round {}/{}", round + 1, plan().rounds);
        let d = tokio::time::timeout(SIDE_DEADLINE, direct.round()).await;
        direct_rounds.push(d.expect("direct side within its deadline"));
        let f = tokio::time::timeout(SIDE_DEADLINE, forward.round()).await;
        forward_rounds.push(f.expect("forward side within its deadline"));
        for side in &mut sides {
            if let Ok((relay, measured)) = side {
                match relay.round().await {
                    Ok(m) => measured.push(m),
                    Err(reason) => *side = Err(reason),
                }
            }
        }
    }
    let mut sides = sides.into_iter().map(|side| side.map(|(_, measured)| measured));
    let relay = sides.next().unwrap_or_else(|| Err("not run".to_owned()));
    let supergateway = sides.next().unwrap_or_else(|| Err("not run".to_owned()));
    for (name, side) in [("mcp-proxy", &relay), ("supergateway", &supergateway)] {
        if let Err(reason) = side {
            eprintln!("{name} row not measured: {reason}");
        }
    }
    Results { direct: direct_rounds, forward: forward_rounds, relay, supergateway }
}

/// The section of `docs/benchmarks.md`.
pub fn section(r: &Results) -> String {
    let plan = plan();
    let mut out = String::new();
    out.push_str(
        "\n## Forward tool against the same stdio upstream called directly and behind relays (G5)\n\n",
    );
    out.push_str(&format!(
        "{} interleaved rounds (direct, forward, mcp-proxy, supergateway, direct, …); per round and side {}\n",
        plan.rounds,
        count(plan.calls)
    ));
    out.push_str(&format!(
        "sequential `tools/call echo` round trips after {} unmeasured ones, one client, concurrency 1, all on\n",
        count(plan.warm_calls)
    ));
    out.push_str("the stdio fixture `tests/fixtures/mcp_fixture.py`. `direct` is a minimal line client\n");
    out.push_str(
        "(benches/gateway/forward.rs) on the fixture's pipes; `forward` is `POST /mcp` (one keep-alive\n",
    );
    out.push_str("connection) to the gateway's forward tool `fwd` → `fx.echo`; the relays are the same fixture behind\n");
    out.push_str(&format!(
        "`mcp-proxy` {} (PyPI) and behind `supergateway` {} (npm; `--stdio … --outputTransport streamableHttp\n",
        relay::version(),
        relay::supergateway_version()
    ));
    out.push_str("--stateful`), the stdio-to-HTTP relays users run today, each driven over its Streamable HTTP endpoint\n");
    out.push_str(
        "on loopback by a minimal client (benches/gateway/relay.rs: `initialize`, then one session, one\n",
    );
    out.push_str(
        "keep-alive connection per round; `mcp-proxy` answers JSON, `supergateway` a one-event stream).\n",
    );
    out.push_str(
        "A cell is the median over rounds; `added` is the side − direct at the same percentile in the same\n",
    );
    out.push_str("round, shown as its median with the min–max across rounds.\n\n");
    out.push_str(
        "The relays are installed by the bench itself when missing, into the repository's `target/` only:\n",
    );
    out.push_str("`bash benches/relay/install.sh` creates `target/bench-relay/venv` and runs `pip install\n");
    out.push_str("--require-hashes --no-deps` of `benches/relay/requirements.txt`, which pins `mcp-proxy` and its whole\n");
    out.push_str(
        "closure by exact version and hash (generated from `benches/relay/requirements.in` by `pip-compile\n",
    );
    out.push_str("--generate-hashes`); `bash benches/supergateway/install.sh` runs `npm ci` of\n");
    out.push_str("`benches/supergateway/package-lock.json` (the exact version of `benches/supergateway/package.json`\n");
    out.push_str("and its whole closure, with integrity hashes) in `target/bench-supergateway`, with npm's cache there\n");
    out.push_str("too. A stamp makes the next run reach no registry. If an install or a relay fails, its rows say `not\n");
    out.push_str("measured` with the reason, and the bench goes on. The fixture runs with its `tools_cap` flag there (it\n");
    out.push_str("then advertises the `tools` capability, without which an SDK-based relay serves no `tools/call`); the\n");
    out.push_str("other sides ignore the flag.\n\n");
    out.push_str(
        "At concurrency 1 the p99 is dominated by scheduling noise from other work on the machine, so an\n",
    );
    out.push_str("added p99 near or below zero is noise, not a speed-up.\n\n");
    out.push_str(
        "| side | p50 ms | p99 ms | added p50 µs, median (min–max) | added p99 µs, median (min–max) |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | ---: |\n");
    out.push_str(&format!(
        "| direct (stdio fixture) | {} | {} | — | — |\n",
        ms(r.direct.p50()),
        ms(r.direct.percentile(0.99))
    ));
    let forward_name = "forward tool `fwd` (gateway)".to_owned();
    let mcp_proxy = format!("`mcp-proxy` {}", relay::version());
    let supergateway = format!("`supergateway` {}", relay::supergateway_version());
    for (name, side) in [
        (&forward_name, Ok(&r.forward)),
        (&mcp_proxy, r.relay.as_ref()),
        (&supergateway, r.supergateway.as_ref()),
    ] {
        match side {
            Ok(m) => out.push_str(&format!(
                "| {name} | {} | {} | {} | {} |\n",
                ms(m.p50()),
                ms(m.percentile(0.99)),
                rounds::added_at(m, &r.direct, 0.5).micros(),
                rounds::added_at(m, &r.direct, 0.99).micros()
            )),
            Err(reason) => out.push_str(&format!("| {name} | not measured ({reason}) | | | |\n")),
        }
    }
    out
}

fn python() -> String {
    support::providers::python()
}

/// The stdio fixture's path.
pub fn script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_fixture.py").display().to_string()
}

/// The `tools/call echo` line the gateway itself sends a modern stdio upstream (providers.md §8.1): the
/// era's `_meta`, the traceparent, the arguments.
fn call_line(id: usize) -> String {
    let meta = format!(
        concat!(
            r#"{{"io.modelcontextprotocol/clientCapabilities":{{}},"#,
            r#""io.modelcontextprotocol/clientInfo":{{"name":"ptc-gateway","version":"{}"}},"#,
            r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"{}"}}"#
        ),
        env!("CARGO_PKG_VERSION"),
        TRACEPARENT
    );
    format!(
        r#"{{"id":{id},"jsonrpc":"2.0","method":"tools/call","params":{{"_meta":{meta},"arguments":{{"text":"hi"}},"name":"echo"}}}}"#
    ) + "\n"
}

/// The baseline: the fixture over its pipes, no gateway.
struct Direct {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
    next_id: usize,
    _dir: tempfile::TempDir,
}

impl Direct {
    async fn start() -> Direct {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("marker.jsonl");
        let mut child = tokio::process::Command::new(python())
            .args([script(), "modern".to_owned(), marker.display().to_string()])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("FIXTURE_FLAGS", "none")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the fixture");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Direct { child, stdin, stdout, next_id: 1, _dir: dir }
    }

    /// One round: the plan's calls after its unmeasured ones.
    async fn round(&mut self) -> Measured {
        let plan = plan();
        let mut line = String::new();
        let mut latencies = Vec::with_capacity(plan.calls);
        for round in 0..plan.warm_calls + plan.calls {
            let id = self.next_id;
            self.next_id += 1;
            let request = call_line(id);
            let sent = Instant::now();
            self.stdin.write_all(request.as_bytes()).await.expect("write");
            self.stdin.flush().await.expect("flush");
            line.clear();
            self.stdout.read_line(&mut line).await.expect("read");
            let elapsed = sent.elapsed();
            assert!(
                line.contains(&format!(r#""id":{id}"#)) && line.contains(r#""text":"hi""#),
                "direct echo failed: {line}"
            );
            if round >= plan.warm_calls {
                latencies.push(elapsed);
            }
        }
        Measured::sequential(latencies)
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        // `kill_on_drop` ends the fixture; this reaps it when it has already gone.
        let _ = self.child.start_kill();
        let _ = self.child.try_wait();
    }
}

/// The forward tool over the same fixture, through the real `ptc` gateway.
struct Forward {
    // Stopped before its deployment's directory goes.
    _gateway: Reaped,
    _fx: support::providers::Fx,
    stream: TcpStream,
    request: Vec<u8>,
    checked: bool,
}

impl Forward {
    async fn start() -> Forward {
        let mut fx = support::providers::Fx::new("modern");
        fx.pin();
        let addr: SocketAddr = fx.addr();
        let mut cmd = fx.command("none");
        let gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
        wait_listening(addr).await;
        let request =
            mcp_request(addr, "tools/call", r#""name":"fwd","arguments":{"text":"hi"},"#, Some("fwd"));
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Forward { _fx: fx, _gateway: gateway, stream, request, checked: false }
    }

    /// One round: the plan's calls after its unmeasured ones.
    async fn round(&mut self) -> Measured {
        let plan = plan();
        let mut buf = Vec::with_capacity(16 * 1024);
        let mut latencies = Vec::with_capacity(plan.calls);
        for round in 0..plan.warm_calls + plan.calls {
            let sent = Instant::now();
            self.stream.write_all(&self.request).await.expect("write");
            read_response(&mut self.stream, &mut buf).await;
            let elapsed = sent.elapsed();
            if !self.checked {
                // The forward tool really reached the upstream: the echoed argument, no tool error.
                let text = String::from_utf8_lossy(&buf);
                assert!(
                    text.contains(r#""text":"hi""#) && !text.contains(r#""isError":true"#),
                    "forward: {text}"
                );
                self.checked = true;
            }
            if round >= plan.warm_calls {
                latencies.push(elapsed);
            }
        }
        Measured::sequential(latencies)
    }
}
