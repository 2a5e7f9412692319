//! The PCC rows of the main table (issue 27, scope 7): the Luau echo of the main table over the PCC tool
//! gateway's gRPC stream (pcc.md), beside the same call on `/mcp`; no goal yet, the figure first.
//!
//! Each stream is opened with the client the tests use (`support::pcc_client`, the generated tonic client
//! of `schemas/pcc_tool_gateway.proto`), one HTTP/2 connection per stream: `connect` to the deployment's
//! server `briefs` (which lists `echo`), the `initialize` handshake and a `ping`; then `tools/call echo
//! {"text":"hi"}` one after another on the stream, through the plan's warm-up (unmeasured) and its measured
//! span (`rounds::plan`), each answer checked to be the echo's result. At c=1 one stream, at c=16 sixteen at once. A
//! failure is returned as the reason the row prints as `not measured`; nothing here asserts a threshold.

use std::time::{Duration, Instant};

use super::rounds::plan;
use super::{Measured, STUCK};
use crate::support::pcc_client::{body, call, h, open, Conv, In, Out};

/// The concurrencies of the main table that get a PCC row: one stream, and 16 streams.
pub const CONCURRENCY: [usize; 2] = [1, 16];

/// One round: `concurrency` streams driven for the plan's warm-up then its measured span.
pub async fn drive(port: u16, concurrency: usize) -> Result<Measured, String> {
    let mut streams = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        streams.push(ready(port).await?);
    }
    let start = Instant::now();
    let warm_end = start + plan().warm_up;
    let end = warm_end + plan().measure;
    let mut tasks = Vec::with_capacity(concurrency);
    for mut conv in streams {
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut id = 1u64;
            loop {
                let sent = Instant::now();
                if sent >= end {
                    break;
                }
                id += 1;
                echo(&mut conv, id).await?;
                if sent >= warm_end {
                    latencies.push(sent.elapsed());
                }
            }
            Ok::<_, String>(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        match tokio::time::timeout_at((end + STUCK).into(), t).await {
            Ok(Ok(Ok(l))) => latencies.extend(l),
            Ok(Ok(Err(reason))) => return Err(reason),
            Ok(Err(e)) => return Err(format!("PCC stream task: {e}")),
            Err(_) => return Err("a PCC stream is stuck".to_owned()),
        }
    }
    Ok(Measured { requests: latencies.len() as u64, elapsed: plan().measure, latencies })
}

/// A stream past `connect` and `initialize`.
async fn ready(port: u16) -> Result<Conv, String> {
    let bearer = crate::support::pcc_client::bearer();
    let metadata: Vec<(&str, &str)> = bearer.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut conv = open(port, &metadata).await.map_err(|s| format!("PCC stream refused: {s}"))?;
    conv.send(&In::Connect("briefs", "bench")).await;
    expect(&mut conv, |o| matches!(o, Out::Connected), "connected").await?;
    let handshake = h();
    conv.send(&handshake[0]).await;
    expect(&mut conv, |o| matches!(o, Out::Json(j) if j.contains(r#""protocolVersion""#)), "initialize")
        .await?;
    conv.send(&handshake[1]).await;
    // A ping answered proves the notification was taken before the calls start.
    conv.send(&body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)).await;
    expect(&mut conv, |o| matches!(o, Out::Json(j) if j.contains(r#""id":1"#)), "ping").await?;
    Ok(conv)
}

/// One `tools/call echo` with `id`, answered with the echo's result.
async fn echo(conv: &mut Conv, id: u64) -> Result<(), String> {
    conv.send(&call(&id.to_string(), "echo", r#"{"text":"hi"}"#)).await;
    let want = format!(r#""id":{id},"#);
    expect(conv, |o| matches!(o, Out::Json(j) if j.contains(&want) && j.contains(r#""result""#)), "echo")
        .await
}

async fn expect(conv: &mut Conv, ok: impl Fn(&Out) -> bool, what: &str) -> Result<(), String> {
    let got = tokio::time::timeout(Duration::from_secs(20), conv.next_unbounded())
        .await
        .map_err(|_| format!("no {what} answer on the PCC stream within 20 s"))?;
    if ok(&got) {
        Ok(())
    } else {
        Err(format!("PCC {what}: unexpected {}", format!("{got:?}").replace('|', "/")))
    }
}
