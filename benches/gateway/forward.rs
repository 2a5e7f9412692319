//! The forward-tool rows (issue 5; issue 14, goal G5): the latency a forward tool adds over calling the
//! same stdio upstream directly, and the same upstream behind a widely used relay, all measured in one run.
//!
//! Baseline: the stdio fault fixture (`tests/fixtures/mcp_fixture.py`, mode `modern`) spoken to by a
//! minimal client of this file (one JSON-RPC line out, one line back, the same `tools/call` line the
//! gateway sends, providers.md §4.2, §8.1), `ROUNDS` sequential `tools/call echo` round trips: the
//! upstream's own cost, with no gateway code in the loop. Gateway: the same fixture behind the forward
//! tool `fwd` (→ `fx.echo`) of `support::providers::Fx`, pins from `--print-pins`, `ROUNDS` sequential
//! `POST /mcp` tools/call over one keep-alive connection. Relay: the same fixture behind `mcp-proxy`
//! (`relay`), the same count over its Streamable HTTP endpoint. All sides share the fixture's per-request
//! marker write, so each difference is the front's own path. Owns only these rows; the HTTP client
//! helpers are the parent module's. Nothing here asserts a threshold.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::{count, mcp_request, ms, read_response, relay, wait_listening, Measured, Reaped};
use crate::support;

/// Round trips measured per side, after `WARM_UP_ROUNDS` unmeasured ones.
pub const ROUNDS: usize = 2_000;
pub const WARM_UP_ROUNDS: usize = 200;
/// One side's whole loop ends within this, or the side failed.
pub const SIDE_DEADLINE: Duration = Duration::from_secs(180);
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The three sides of one run.
pub struct Results {
    pub direct: Measured,
    pub forward: Measured,
    /// The relay side, or why it was not measured.
    pub relay: Result<Measured, String>,
}

pub async fn measure() -> Results {
    let direct =
        tokio::time::timeout(SIDE_DEADLINE, direct()).await.expect("direct side within its deadline");
    let forward = tokio::time::timeout(SIDE_DEADLINE, through_gateway())
        .await
        .expect("forward side within its deadline");
    let relay = relay::measure().await;
    if let Err(reason) = &relay {
        eprintln!("relay row not measured: {reason}");
    }
    Results { direct, forward, relay }
}

/// The section of `docs/benchmarks.md`.
pub fn section(r: &Results) -> String {
    let mut out = String::new();
    out.push_str(
        "\n## Forward tool against the same stdio upstream called directly and behind a relay (G5)\n\n",
    );
    out.push_str(&format!(
        "{} sequential `tools/call echo` round trips per side after {} unmeasured ones, one\n",
        count(ROUNDS),
        count(WARM_UP_ROUNDS)
    ));
    out.push_str("client, concurrency 1, all on the stdio fixture `tests/fixtures/mcp_fixture.py`. `direct` is a minimal\n");
    out.push_str(
        "line client (benches/gateway/forward.rs) on the fixture's pipes; `forward` is `POST /mcp` (one\n",
    );
    out.push_str("keep-alive connection) to the gateway's forward tool `fwd` → `fx.echo`; `relay` is the same fixture\n");
    out.push_str(&format!(
        "behind `mcp-proxy` {} (PyPI), the widely used stdio-to-HTTP relay, driven over its Streamable HTTP\n",
        relay::version()
    ));
    out.push_str("endpoint on loopback by a minimal client (benches/gateway/relay.rs: `initialize`, then one session,\n");
    out.push_str(
        "one keep-alive connection, JSON responses). `added` is the side − direct at the same percentile;\n",
    );
    out.push_str("`ratio` is the side / direct.\n\n");
    out.push_str(
        "The relay is installed by the bench itself when missing: `bash benches/relay/install.sh` creates\n",
    );
    out.push_str("`target/bench-relay/venv` and runs `pip install --require-hashes --no-deps` of\n");
    out.push_str("`benches/relay/requirements.txt`, which pins `mcp-proxy` and its whole closure by exact version and\n");
    out.push_str("hash (generated from `benches/relay/requirements.in` by `pip-compile --generate-hashes`). Nothing is\n");
    out.push_str(
        "cached outside the repository's `target/`; a stamp makes the next run reach no registry. If the\n",
    );
    out.push_str("install or the relay fails, the relay row says `not measured` with the reason, and the bench goes on.\n");
    out.push_str("The fixture runs with its `tools_cap` flag there (it then advertises the `tools` capability, without\n");
    out.push_str("which an SDK-based relay serves no `tools/call`); the other sides ignore the flag.\n\n");
    out.push_str(
        "At concurrency 1 the p99 is dominated by scheduling noise from other work on the machine, so an\n",
    );
    out.push_str("added p99 near or below zero is noise, not a speed-up.\n\n");
    out.push_str("| percentile | direct ms | forward ms | forward added ms | forward ratio | relay ms | relay added ms | relay ratio |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (name, p) in [("p50", 0.5), ("p99", 0.99)] {
        let (d, f) = (r.direct.percentile(p), r.forward.percentile(p));
        let relay = match &r.relay {
            Ok(relay) => {
                let x = relay.percentile(p);
                format!("{} | {} | {:.3}", ms(x), signed_ms(x, d), ratio(x, d))
            }
            Err(_) => "not measured | | ".to_owned(),
        };
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {:.3} | {relay} |\n",
            ms(d),
            ms(f),
            signed_ms(f, d),
            ratio(f, d)
        ));
    }
    if let Err(reason) = &r.relay {
        out.push_str(&format!("\nRelay not measured: {reason}.\n"));
    }
    out
}

/// `a − b` in milliseconds, signed.
fn signed_ms(a: Duration, b: Duration) -> String {
    format!("{:.3}", (a.as_secs_f64() - b.as_secs_f64()) * 1_000.0)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(f64::MIN_POSITIVE)
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
async fn direct() -> Measured {
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
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut latencies = Vec::with_capacity(ROUNDS);
    for round in 0..WARM_UP_ROUNDS + ROUNDS {
        let request = call_line(round + 1);
        let sent = Instant::now();
        stdin.write_all(request.as_bytes()).await.expect("write");
        stdin.flush().await.expect("flush");
        line.clear();
        stdout.read_line(&mut line).await.expect("read");
        let elapsed = sent.elapsed();
        assert!(
            line.contains(&format!(r#""id":{}"#, round + 1)) && line.contains(r#""text":"hi""#),
            "direct echo failed: {line}"
        );
        if round >= WARM_UP_ROUNDS {
            latencies.push(elapsed);
        }
    }
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    let _ = child.kill().await;
    Measured::sequential(latencies)
}

/// The forward tool over the same fixture, through the real `ptc` gateway.
async fn through_gateway() -> Measured {
    let mut fx = support::providers::Fx::new("modern");
    fx.pin();
    let addr: SocketAddr = fx.addr();
    let mut cmd = fx.command("none");
    let _gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(addr).await;
    let request = mcp_request(addr, "tools/call", r#""name":"fwd","arguments":{"text":"hi"},"#, Some("fwd"));
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut latencies = Vec::with_capacity(ROUNDS);
    for round in 0..WARM_UP_ROUNDS + ROUNDS {
        let sent = Instant::now();
        stream.write_all(&request).await.expect("write");
        read_response(&mut stream, &mut buf).await;
        let elapsed = sent.elapsed();
        if round == 0 {
            // The forward tool really reached the upstream: the echoed argument, no tool error.
            let text = String::from_utf8_lossy(&buf);
            assert!(
                text.contains(r#""text":"hi""#) && !text.contains(r#""isError":true"#),
                "forward: {text}"
            );
        }
        if round >= WARM_UP_ROUNDS {
            latencies.push(elapsed);
        }
    }
    Measured::sequential(latencies)
}
