//! The forward-tool row (issue 5): the latency a forward tool adds over calling the same stdio upstream
//! directly, both measured in one run.
//!
//! Baseline: the stdio fault fixture (`tests/fixtures/mcp_fixture.py`, mode `modern`) spoken to by a
//! minimal client of this file (one JSON-RPC line out, one line back, the same `tools/call` line the
//! gateway sends, providers.md §4.2, §8.1), `ROUNDS` sequential `tools/call echo` round trips: the
//! upstream's own cost, with no gateway code in the loop. Gateway: the same fixture behind the forward tool `fwd` (→ `fx.echo`) of
//! `support::providers::Fx`, pins from `--print-pins`, `ROUNDS` sequential `POST /mcp` tools/call over one
//! keep-alive connection. Both sides share the fixture's per-request marker write, so the difference is
//! the gateway's own path (HTTP front, admission, forward dispatch, result shaping). Owns only this row;
//! the HTTP client helpers are the parent module's. Nothing here asserts a threshold.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::{mcp_request, ms, read_response, wait_listening, Measured, Reaped};
use crate::support;

/// Round trips measured per side, after `WARM_UP_ROUNDS` unmeasured ones.
const ROUNDS: usize = 2_000;
const WARM_UP_ROUNDS: usize = 200;
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The row's table, in the same columns as the others plus the added latency.
pub async fn rows() -> String {
    let direct = direct().await;
    let forward = through_gateway().await;
    let mut out = String::new();
    out.push_str("\n## Forward tool against the same stdio upstream called directly\n\n");
    out.push_str(&format!(
        "{ROUNDS} sequential `tools/call echo` round trips per side after {WARM_UP_ROUNDS} unmeasured ones, one\n"
    ));
    out.push_str("client, concurrency 1. `direct` is a minimal line client (benches/gateway/forward.rs) on the stdio\n");
    out.push_str("fixture `tests/fixtures/mcp_fixture.py`; `forward` is `POST /mcp` (one keep-alive connection) to the\n");
    out.push_str(
        "forward tool `fwd` → `fx.echo` over the same fixture. `added` is forward − direct at the same\n",
    );
    out.push_str("percentile; `ratio` is forward / direct.\n\n");
    out.push_str("Numbers from one run on the machine above. At concurrency 1 the p99 is dominated by scheduling noise from\n");
    out.push_str(
        "other work on the machine, so an added p99 near or below zero is noise, not a speed-up.\n\n",
    );
    out.push_str("| percentile | direct ms | forward ms | added ms | ratio |\n");
    out.push_str("| --- | ---: | ---: | ---: | ---: |\n");
    for (name, p) in [("p50", 0.5), ("p99", 0.99)] {
        let (d, f) = (direct.percentile(p), forward.percentile(p));
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {:.3} |\n",
            ms(d),
            ms(f),
            signed_ms(f.as_secs_f64() - d.as_secs_f64()),
            f.as_secs_f64() / d.as_secs_f64().max(f64::MIN_POSITIVE)
        ));
    }
    out
}

fn signed_ms(seconds: f64) -> String {
    format!("{:.3}", seconds * 1_000.0)
}

fn python() -> String {
    support::providers::python()
}

fn script() -> String {
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
    let _ = child.wait().await;
    Measured { requests: ROUNDS as u64, elapsed: latencies.iter().sum(), latencies }
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
    Measured { requests: ROUNDS as u64, elapsed: latencies.iter().sum(), latencies }
}
