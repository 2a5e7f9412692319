//! The trace rows (issue 15): what `artifacts.trace: true` costs a call, and how long a cold `hist.runs`
//! takes over a large trace directory, all measured in one run.
//!
//! Cost: the same deployment started twice, once without and once with `artifacts.trace: true`, both
//! running at once on their own ports, and driven the same way (keep-alive connections back to back,
//! concurrency 16) in interleaved rounds (untraced, traced, untraced, …) for two workloads: the trivial
//! Luau echo of the main table, and a mission that makes two upstream calls to the stdio fixture
//! (`tests/fixtures/mcp_fixture.py`, through `support::providers::Fx`). The ratio is traced req/s over
//! untraced req/s of the same workload and round; issue 27 aims at 0.85 or more for the echo (goal T1).
//!
//! Cold: a tool whose mission is granted a `ptc_trace_snapshot` installation over a directory of
//! `COLD_FILES` complete trace files, asked `tool("hist.runs", {})` sequentially, `COLD_CALLS` times per
//! round: every call captures the directory anew (traces.md §9.3), so the latency is the capture's (goal
//! T3). Owns only these rows; the HTTP client helpers are the parent module's. Nothing here asserts a
//! threshold.

use std::net::SocketAddr;
use std::process::Stdio;

use serde_json::json;

use super::rounds::{self, plan, Rounds};
use super::{count, drive, mcp_request, ms, wait_listening, Reaped};
use crate::support;

/// The concurrency of the cost rows.
const COST_CONCURRENCY: usize = 16;
/// Trace files in the cold tool's directory.
pub const COLD_FILES: usize = 10_000;
/// Sequential `hist.runs` calls measured per round, after `COLD_WARM_UP` unmeasured ones.
const COLD_CALLS: usize = 40;
const COLD_WARM_UP: usize = 4;

/// One workload measured without and with traces, once each per round.
pub struct Cost {
    pub untraced: Rounds,
    pub traced: Rounds,
}

impl Cost {
    pub fn ratio(&self) -> rounds::Spread {
        rounds::rate_ratio(&self.traced, &self.untraced)
    }
}

pub struct Results {
    pub echo: Cost,
    pub mission: Cost,
    pub cold: Rounds,
}

pub async fn measure() -> Results {
    let echo = {
        let (_u, u_addr, u_call) = echo(false).await;
        let (_t, t_addr, t_call) = echo(true).await;
        cost("traces, echo", (u_addr, u_call), (t_addr, t_call)).await
    };
    let mission = {
        let (_u, u_addr, u_call) = mission(false).await;
        let (_t, t_addr, t_call) = mission(true).await;
        cost("traces, mission", (u_addr, u_call), (t_addr, t_call)).await
    };
    let cold = cold().await;
    Results { echo, mission, cold }
}

/// Interleaved rounds of the untraced and the traced gateway, both running.
async fn cost(what: &str, untraced: (SocketAddr, Vec<u8>), traced: (SocketAddr, Vec<u8>)) -> Cost {
    let mut cost = Cost { untraced: Rounds::new(), traced: Rounds::new() };
    for round in 0..plan().rounds {
        eprintln!("{what}, round {}/{}", round + 1, plan().rounds);
        cost.untraced.push(drive(untraced.0, untraced.1.clone(), COST_CONCURRENCY).await);
        cost.traced.push(drive(traced.0, traced.1.clone(), COST_CONCURRENCY).await);
    }
    cost
}

/// A started gateway (stopped on drop, before its directory goes), its address and the request to drive.
type Started = ((Reaped, Box<dyn std::any::Any>), SocketAddr, Vec<u8>);

/// The Luau echo of the main table, with or without traces.
async fn echo(traced: bool) -> Started {
    let d = super::echo_deployment(|d| {
        if traced {
            d.gateway["artifacts"]["trace"] = json!(true);
        }
    });
    let addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().expect("addr");
    let mut cmd = d.command();
    let gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(addr).await;
    let call = mcp_request(addr, "tools/call", r#""name":"echo","arguments":{"text":"hi"},"#, Some("echo"));
    ((gateway, Box::new(d)), addr, call)
}

/// A mission that calls the fixture's `echo` twice, with or without traces.
async fn mission(traced: bool) -> Started {
    let mut fx = support::providers::Fx::new("modern");
    fx.d.write_file(
        "mission/calls.luau",
        "local M = {}\nfunction M.run(input)\n  tool(input.alias, input.args)\n  return tool(input.alias, input.args)\nend\nreturn M\n",
    );
    fx.d.gateway["admission"] = json!({"max_inflight_requests": 128, "max_concurrent_runs": 128,
        "max_active_provider_calls": 64, "max_waiting_provider_calls": 64});
    if traced {
        fx.d.gateway["artifacts"]["trace"] = json!(true);
    }
    fx.pin();
    let addr = fx.addr();
    let mut cmd = fx.command("none");
    let gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(addr).await;
    let params = r#""name":"mission","arguments":{"alias":"fx.echo","args":{"text":"hi"}},"#;
    ((gateway, Box::new(fx)), addr, mcp_request(addr, "tools/call", params, Some("mission")))
}

/// A complete trace file of the shape the gateway writes (traces.md §5), for run `i`.
fn trace_file(i: usize) -> (String, String) {
    let run_ref = format!("0006400a1b2c3d4e9f8e7d6c5b4a3921-{i:020}");
    let tool = ["echo", "briefs", "notes"][i % 3];
    let start = json!({"at": "2026-09-16T08:03:40.100000Z", "call_id": "6f1c0a4e9b2d4c7f8a0b1c2d3e4f5061",
        "deadline_ms": 30000, "front": "mcp", "input": {"value": {"text": "hi"}}, "kind": "run_start",
        "run_ref": run_ref, "seq": 1, "tool": tool, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"});
    let end = json!({"at": "2026-09-16T08:03:40.106900Z", "disconnected": false, "dispatch": "true",
        "duration_us": 6900, "kind": "run_end", "omitted_records": 0, "outcome": "success", "seq": 2});
    (format!("{run_ref}.jsonl"), format!("{start}\n{end}\n"))
}

/// `hist.runs {}` over `COLD_FILES` trace files, sequentially, `COLD_CALLS` per round.
async fn cold() -> Rounds {
    let mut d = support::Deployment::baseline();
    std::fs::create_dir_all(d.path("snap")).expect("snap");
    for i in 1..=COLD_FILES {
        let (name, text) = trace_file(i);
        d.write_file(&format!("snap/{name}"), &text);
    }
    d.host["install"]["snap"] =
        json!({"source": "ptc_trace_snapshot", "installation_revision": "s1", "directory": "snap"});
    let manifest = json!({
        "version": 1, "effect": "read",
        "contracts": {"input_schema": {"path": "open.json"}, "result_schema": {"path": "open.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
        "missions": {"m": {"providers": ["snap"]}},
        "providers": {"mission": [{"name": "snap"}]}
    });
    d.write_file("look/ptc.json", &manifest.to_string());
    d.write_file("look/open.json", r#"{"type":"object","additionalProperties":true}"#);
    d.write_file(
        "look/app.luau",
        "local M = {}\nfunction M.run(input) return mission('m'):eval(\"return tool('hist.runs', {}).value\") end\nreturn M\n",
    );
    d.gateway["tools"] = json!([{"name": "look", "title": "look", "description": "bench",
        "application": {"manifest": "look/ptc.json"}}]);
    d.gateway["pcc"]["servers"]["briefs"]["tools"] = json!(["look"]);
    d.write_documents();
    let mut discover = d.command();
    discover.arg("--print-pins");
    let out = support::run_with_deadline(discover, std::time::Duration::from_secs(30));
    let pins: serde_json::Value = serde_json::from_slice(&out.stdout).expect("print-pins");
    for (key, value) in pins["look"].as_object().expect("pins") {
        d.gateway["tools"][0][key] = value.clone();
    }
    d.frozen = false;
    d.write_documents();
    let addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().expect("addr");
    let mut cmd = d.command();
    let _gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(addr).await;
    let call = mcp_request(addr, "tools/call", r#""name":"look","arguments":{},"#, Some("look"));
    let mut cold = Rounds::new();
    for round in 0..plan().rounds {
        eprintln!("cold hist.runs, round {}/{}", round + 1, plan().rounds);
        cold.push(super::sequential(addr, call.clone(), COLD_WARM_UP, COLD_CALLS).await);
    }
    cold
}

/// The section of `docs/benchmarks.md`.
pub fn section(r: &Results) -> String {
    let mut out = String::new();
    out.push_str("\n## Traces (issues 15 and 27)\n\n");
    out.push_str(&format!(
        "Cost of `artifacts.trace: true`: the same deployment runs twice at once, without and with traces,\n\
         each on its own port, and each workload is driven at concurrency {COST_CONCURRENCY} (keep-alive connections\n\
         back to back, as the main table) in {} interleaved rounds (untraced, traced, untraced, …); `ratio` is\n",
        plan().rounds
    ));
    out.push_str("traced req/s / untraced req/s of the same round, its median with the min–max across rounds (issue 27\n");
    out.push_str("aims at 0.85 or more for the echo: goal T1). The mission makes two upstream calls to the stdio fixture\n");
    out.push_str(
        "`tests/fixtures/mcp_fixture.py` per call; traced, each call writes one file of four records\n",
    );
    out.push_str("(`run_start`, two `tool_call`, `mission`, `run_end`).\n\n");
    out.push_str("| workload | traces | req/s | p50 ms | p99 ms | ratio, median (min–max) |\n");
    out.push_str("| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (name, cost) in [("tools/call echo (Luau)", &r.echo), ("mission, two upstream calls", &r.mission)] {
        for (label, m) in [("off", &cost.untraced), ("on", &cost.traced)] {
            let ratio = if label == "on" { cost.ratio().ratio() } else { String::new() };
            out.push_str(&format!(
                "| {name} | {label} | {:.0} | {} | {} | {ratio} |\n",
                m.rps(),
                ms(m.p50()),
                ms(m.percentile(0.99))
            ));
        }
    }
    out.push_str(&format!(
        "\nCold `hist.runs` over {} trace files: per round {} sequential calls of a cold tool whose workflow\n",
        count(COLD_FILES),
        count(COLD_CALLS)
    ));
    out.push_str(
        "evaluates `return tool('hist.runs', {}).value` in a mission over a `ptc_trace_snapshot` installation,\n",
    );
    out.push_str(&format!(
        "after {} unmeasured ones, in {} rounds (goal T3 uses the median of the rounds' p50). Each call lists\n",
        count(COLD_WARM_UP),
        plan().rounds
    ));
    out.push_str(
        "the directory and reads the newest 21 complete files (traces.md §9.3), so the latency grows with the\n",
    );
    out.push_str("number of names, not with their content.\n\n");
    out.push_str("| workload | files | p50 ms, median (min–max) | p99 ms |\n| --- | ---: | ---: | ---: |\n");
    out.push_str(&format!(
        "| cold hist.runs | {} | {} | {} |\n",
        count(COLD_FILES),
        r.cold.seconds_at(0.5).show(1e3, 3),
        ms(r.cold.percentile(0.99))
    ));
    out
}
