//! Admission under load, read from inside the gateway (issue 3 acceptance; http-mcp.md §6.8, §8.6,
//! §4.4): 64 concurrent `tools/call`s against `max_inflight_requests` 8 and `max_concurrent_runs` 2 get
//! only 200 and 429 with the right reasons, the peak leases and runs never exceed their bounds, every slot
//! returns, and `/health/ready` stays 200 throughout.

use crate::support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{content_pin, http_get, Deployment, TOKEN};

/// A tool that computes for a while (a few tens of milliseconds) and returns its input.
const BUSY_LUAU: &str = "local M = {}\nfunction M.run(input)\n  local n = 0\n  for i = 1, 300000 do n = n + i end\n  return input\nend\nreturn M\n";

fn deployment() -> Deployment {
    let mut d = Deployment::baseline();
    d.host["credentials"]["gateway"] = json!({"file": "token"});
    d.write_file("token", TOKEN);
    d.write_file("echo/app.luau", BUSY_LUAU);
    d.write_file("echo/schema.json", r#"{"type":"object","properties":{"text":{"type":"string"}}}"#);
    d.gateway["tools"][0]["expected_application_content_digest"] =
        json!(content_pin::of(&d.path("echo/ptc.json")));
    d.gateway["admission"]["max_inflight_requests"] = json!(8);
    d.gateway["admission"]["max_concurrent_runs"] = json!(2);
    d.write_documents();
    d
}

fn call_bytes(addr: SocketAddr, id: usize) -> Vec<u8> {
    support::tools_call_request(addr, "echo", id, r#"{"text":"hi"}"#, true)
}

/// What one client saw: status and the whole rest of the response (read to EOF: `Connection: close`).
fn exchange(addr: SocketAddr, id: usize) -> (u16, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    s.write_all(&call_bytes(addr, id)).expect("write");
    let mut all = Vec::new();
    let _ = s.read_to_end(&mut all);
    let text = String::from_utf8_lossy(&all).into_owned();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_64_calls_stays_within_its_bounds() {
    let d = deployment();
    let gateway = support::start_inproc(&d).await;
    let addr = gateway.http_addr();
    let (runs, requests) = (gateway.pools().runs.clone(), gateway.pools().requests.clone());

    // /health/ready is polled from its own thread for the whole storm.
    let storming = Arc::new(AtomicBool::new(true));
    let health = {
        let storming = storming.clone();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while storming.load(Ordering::Acquire) {
                seen.push(http_get(addr, "/health/ready").map(|r| r.status).unwrap_or(0));
            }
            seen
        })
    };
    let clients: Vec<_> = (0..64).map(|id| std::thread::spawn(move || exchange(addr, id))).collect();
    let results: Vec<(u16, String)> =
        tokio::task::spawn_blocking(move || clients.into_iter().map(|c| c.join().expect("client")).collect())
            .await
            .expect("join");
    storming.store(false, Ordering::Release);
    let health = tokio::task::spawn_blocking(move || health.join().expect("health")).await.expect("join");

    let busy_requests = r#"{"error":{"code":-31999,"data":{"reason":"request_capacity_exhausted"},"message":"Server busy"},"jsonrpc":"2.0"}"#;
    let (mut ok, mut busy_req, mut busy_run) = (0, 0, 0);
    for (id, (status, text)) in results.iter().enumerate() {
        match status {
            200 => {
                assert!(text.contains(&format!(r#"data: {{"id":{id},"jsonrpc":"2.0","result":"#)), "{text}");
                assert!(text.contains(r#""isError":false"#), "{text}");
                ok += 1;
            }
            429 if text.ends_with(busy_requests) => busy_req += 1,
            429 if text.ends_with(&format!(
                r#"{{"error":{{"code":-31999,"data":{{"reason":"run_capacity_exhausted"}},"message":"Server busy"}},"id":{id},"jsonrpc":"2.0"}}"#
            )) => busy_run += 1,
            _ => panic!("unexpected answer to call {id}: {text}"),
        }
    }
    assert_eq!(ok + busy_req + busy_run, 64);
    assert!(ok >= 2, "some calls ran ({ok} ok, {busy_req} request-busy, {busy_run} run-busy)");
    assert!(!health.is_empty() && health.iter().all(|s| *s == 200), "readiness stayed 200: {health:?}");

    // Bounds from inside, and every slot returned.
    assert!(requests.peak() <= 8, "peak request leases {}", requests.peak());
    assert!(runs.peak() <= 2, "peak runs {}", runs.peak());
    assert!(runs.peak() >= 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while requests.in_use() != 0 || runs.in_use() != 0 {
        assert!(
            Instant::now() < deadline,
            "slots still held: {} leases, {} runs",
            requests.in_use(),
            runs.in_use()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    gateway.context().trigger().signal();
    assert_eq!(gateway.serve_until_stopped().await, 0);
}
