//! The forward-tool row (issue 5): the latency a forward tool adds over calling the same stdio upstream
//! directly, both measured in one run.
//!
//! Baseline: the stdio fault fixture (`tests/fixtures/mcp_fixture.py`, mode `modern`) acquired through the
//! library client (`providers::acquire`) and called with `provider_call::call`, `ROUNDS` sequential
//! `tools/call echo` round trips. Gateway: the same fixture behind the forward tool `fwd` (→ `fx.echo`) of
//! `support::providers::Fx`, pins from `--print-pins`, `ROUNDS` sequential `POST /mcp` tools/call over one
//! keep-alive connection. Both sides share the fixture's per-request marker write, so the difference is
//! the gateway's own path (HTTP front, admission, forward dispatch, result shaping). Owns only this row;
//! the HTTP client helpers are the parent module's. Nothing here asserts a threshold.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use ptc_gateway::config::host::{ProtocolEra, ToolEffect, ToolMapping};
use ptc_gateway::json::{Map, Value};
use ptc_gateway::providers::acquire::{acquire, AcquireSpec};
use ptc_gateway::providers::child::LaunchSpec;
use ptc_gateway::providers::provider_call::{call, CallRequest};
use tokio::io::AsyncWriteExt;
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
    out.push_str("client, concurrency 1. `direct` is the library client (`providers::provider_call::call`) on the stdio\n");
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

fn echo_args() -> Value {
    let mut m = Map::new();
    m.insert("text".to_owned(), Value::String("hi".to_owned()));
    Value::Object(m)
}

/// The baseline: the fixture through the library client, no gateway.
async fn direct() -> Measured {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("marker.jsonl");
    let mut env = BTreeMap::new();
    env.insert("PATH".to_owned(), std::env::var("PATH").unwrap_or_default());
    let tools = BTreeMap::from([(
        "echo".to_owned(),
        ToolMapping { alias: "fx.echo".to_owned(), effect: ToolEffect::Read, description: None },
    )]);
    let spec = AcquireSpec {
        launch: LaunchSpec {
            command: python(),
            args: vec![script(), "modern".to_owned(), marker.display().to_string()],
            cwd: dir.path().to_path_buf(),
            env,
        },
        protocol: ProtocolEra::Auto,
        start_timeout_ms: 10_000,
        tools,
        version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let acquired = acquire(&spec).await.unwrap_or_else(|e| panic!("acquire the fixture: {e:?}"));
    let mut latencies = Vec::with_capacity(ROUNDS);
    for round in 0..WARM_UP_ROUNDS + ROUNDS {
        let request = CallRequest {
            era: acquired.facts.era,
            version: env!("CARGO_PKG_VERSION"),
            name: "echo",
            arguments: echo_args(),
            traceparent: TRACEPARENT,
            deadline: tokio::time::Instant::now() + Duration::from_secs(10),
            max_result_bytes: 262_144,
        };
        let sent = Instant::now();
        let outcome = call(&acquired.transport, request, std::future::pending()).await;
        let elapsed = sent.elapsed();
        assert!(outcome.result.is_ok(), "direct echo failed");
        if round >= WARM_UP_ROUNDS {
            latencies.push(elapsed);
        }
    }
    acquired.transport.close(false).await;
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
