//! The deployment of pcc.md §17 without providers, and the helpers every PCC test shares.
//!
//! Tools: `alpha` (read, returns its input), `gamma` (read), `hang` (read, runs until cancelled), `beta`
//! (write, runs until cancelled: the *held* call of §17, since no upstream can hold it) and `delta`
//! (write, computes for a while, then returns `{"done":true}`: the *released* call of §17, which ends on
//! its own instead of on an upstream's answer). `pcc.servers`: srv-1 = {alpha, beta, delta, hang},
//! srv-2 = {gamma}. A private audit records the write calls.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::pcc_client::{c, call, h, initialized, open, In, Out};
use crate::support::{self, content_pin, Deployment, Gateway};

pub const TEXT: &str = r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;
const ANY: &str = r#"{"type":"object","properties":{"text":{"type":"string"}}}"#;
const DONE: &str = r#"{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}"#;
const RETURN_INPUT: &str = "local M = {}\nfunction M.run(input) return input end\nreturn M\n";
const HANG: &str =
    "local M = {}\nfunction M.run(input) while true do local s = string.rep('x', 1000) end end\nreturn M\n";
/// Work that takes a few seconds on the test machine (well inside the 10 s drain deadline, well past
/// the few milliseconds a drain needs to turn readiness false).
pub const DELTA_ITERATIONS: u64 = 2_500_000;

fn delta_luau() -> String {
    format!(
        "local M = {{}}\nfunction M.run(input)\n  local n = 0\n  for i = 1, {DELTA_ITERATIONS} do n = n + i % 7 end\n  return {{ done = n > 0 }}\nend\nreturn M\n"
    )
}

/// The fixture with `admission.max_inflight_requests` and `max_concurrent_runs` as given.
pub fn deployment(max_requests: u32, max_runs: u32) -> Deployment {
    deployment_with(max_requests, max_runs, |_| {})
}

/// As [`deployment`], with `edit` applied before the documents are written.
pub fn deployment_with(max_requests: u32, max_runs: u32, edit: impl FnOnce(&mut Deployment)) -> Deployment {
    let mut d = Deployment::baseline();
    let delta = delta_luau();
    let apps: [(&str, &str, &str, &str, &str, u64); 5] = [
        ("alpha", "read", RETURN_INPUT, TEXT, TEXT, 30_000),
        ("beta", "write", HANG, ANY, DONE, 120_000),
        ("delta", "write", &delta, ANY, DONE, 120_000),
        ("gamma", "read", RETURN_INPUT, ANY, ANY, 30_000),
        ("hang", "read", HANG, ANY, ANY, 30_000),
    ];
    let mut tools = Vec::new();
    for (name, effect, luau, input, result, run_ms) in apps {
        let manifest = json!({
            "version": 1,
            "effect": effect,
            "contracts": {"input_schema": {"path": "input.json"}, "result_schema": {"path": "result.json"}},
            "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
            "limits": {"run_duration_ms": run_ms},
        });
        d.write_file(&format!("{name}/ptc.json"), &serde_json::to_string_pretty(&manifest).unwrap());
        d.write_file(&format!("{name}/app.luau"), luau);
        d.write_file(&format!("{name}/input.json"), input);
        d.write_file(&format!("{name}/result.json"), result);
        let mut tool = json!({
            "name": name, "title": name, "description": "fixture",
            "application": {"manifest": format!("{name}/ptc.json")},
            "expected_application_content_digest": content_pin::of(&d.path(&format!("{name}/ptc.json"))),
            "installation_config_pins": {}, "provider_snapshot_pins": {}
        });
        if effect == "write" {
            tool["allow_write"] = json!(true);
        }
        tools.push(tool);
    }
    d.gateway["tools"] = Value::Array(tools);
    d.gateway["pcc"]["servers"] =
        json!({"srv-1": {"tools": ["hang", "beta", "delta", "alpha"]}, "srv-2": {"tools": ["gamma"]}});
    d.gateway["admission"]["max_inflight_requests"] = json!(max_requests);
    d.gateway["admission"]["max_concurrent_runs"] = json!(max_runs);
    d.gateway["private_audit"] =
        json!({"directory": "audit", "max_file_bytes": 1_048_576, "max_retained_files": 8});
    // The host ceiling allows the 120,000 ms run deadline of §17's `beta`.
    d.host["limits"] = json!({"run_duration_ms": 120_000});
    edit(&mut d);
    d.write_documents();
    d
}

pub fn start(d: &Deployment) -> Gateway {
    Gateway::start(d.command(), http_addr(d))
}

pub fn http_addr(d: &Deployment) -> SocketAddr {
    format!("127.0.0.1:{}", d.port).parse().unwrap()
}

pub fn audit_dir(d: &Deployment) -> PathBuf {
    d.path("audit")
}

/// The audit records (each checked against audit-events.md §2.3) once there are `n`, within 20 s.
pub async fn audit_records(d: &Deployment, n: usize) -> Vec<Value> {
    let dir = audit_dir(d);
    let started = Instant::now();
    loop {
        let records = support::audit::all_records(&dir);
        if records.len() >= n {
            assert_eq!(records.len(), n, "exactly {n} audit record(s): {records:?}");
            return records;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{n} audit record(s) within 20 s: {records:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `(tool_name, outcome_code, disconnected)` of a record.
pub fn summary(record: &Value) -> (&str, &str, bool) {
    (
        record["tool_name"].as_str().unwrap(),
        record["outcome_code"].as_str().unwrap(),
        record["disconnected"].as_bool().unwrap(),
    )
}

/// The bearer metadata of every vector unless stated.
pub fn auth() -> String {
    format!("Bearer {}", support::TOKEN)
}

/// A stream after `C` and `H`, with both answers read.
pub async fn ready_stream(port: u16) -> super::pcc_client::Conv {
    let auth = auth();
    let mut conv = open(port, &[("authorization", auth.as_str())]).await.unwrap();
    for step in std::iter::once(c()).chain(h()) {
        conv.send(&step).await;
    }
    assert_eq!(conv.next().await, Out::Connected);
    assert_eq!(conv.next().await, initialized(0, "2025-11-25"));
    conv
}

pub fn alpha_success(id: &str) -> Out {
    Out::Json(format!(
        r#"{{"id":{id},"jsonrpc":"2.0","result":{{"content":[{{"text":"{{\"text\":\"hi\"}}","type":"text"}}],"isError":false,"structuredContent":{{"text":"hi"}}}}}}"#
    ))
}

/// `delta`'s success result with `id`.
pub fn done(id: &str) -> Out {
    Out::Json(format!(
        r#"{{"id":{id},"jsonrpc":"2.0","result":{{"content":[{{"text":"{{\"done\":true}}","type":"text"}}],"isError":false,"structuredContent":{{"done":true}}}}}}"#
    ))
}

/// A write tool's `cancelled` result (pcc.md §8: the write-effects text).
pub fn write_cancelled(id: &str) -> Out {
    Out::Json(format!(
        r#"{{"id":{id},"jsonrpc":"2.0","result":{{"content":[{{"text":"Operation may have changed data; do not retry automatically","type":"text"}}],"isError":true,"structuredContent":{{"outcome":"cancelled"}}}}}}"#
    ))
}

pub fn alpha(id: &str) -> In {
    call(id, "alpha", r#"{"text":"hi"}"#)
}
