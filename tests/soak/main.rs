//! The soak and the kill-and-restart repetition (issue 18, docs/reliability.md), run by `scripts/soak`;
//! both are `#[ignore]`d in the suite because they run for minutes.
//!
//! The deployment (`soak_deployment`) has every kind of tool: `echo` (a Luau tool), `fwd` (a forward tool
//! over the stdio fixture), `mission` (a mission over the stdio fixture) and `web` (a write tool: a mission
//! over the HTTP fixture, which answers as event streams, audited), with `private_audit`, the event log,
//! the metrics file and PCC. Traffic (`traffic.rs`) mixes valid calls, invalid requests, clients that vanish, stalled bodies,
//! PCC streams and a periodic `tools/list`; every loop is bounded by a deadline and a count. The sampler
//! (`sampler.rs`) reads the gateway's RSS, descriptors, threads and child processes from `/proc`.

mod sampler;
#[path = "../support/mod.rs"]
mod support;
mod traffic;

use support::pcc_client as client;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::json;
use support::audit::audit_files;
use support::http_fixture::HttpFixture;
use support::providers::{wait, Fx};
use support::Gateway;

/// A number from the environment, or `default`.
fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Where the reports go: `PTC_SOAK_DIR`, or `target/soak`.
fn report_dir() -> PathBuf {
    let dir = std::env::var_os("PTC_SOAK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/soak"));
    std::fs::create_dir_all(&dir).expect("report dir");
    dir
}

/// The soak deployment over `up` (the HTTP fixture, `auth` and `sse`), pinned: `echo` (Luau), `fwd`
/// (forward over the stdio fixture), `mission` (a mission over the stdio fixture) and `web` (a write
/// mission over the HTTP fixture, audited).
fn soak_deployment(up: &HttpFixture) -> Fx {
    let mut fx = Fx::new("modern");
    // `web`: the mission tool's manifest over installation `web`, whose `echo` is a write alias reachable
    // only through `config.allow` (config.md §6.8).
    let manifest = std::fs::read_to_string(fx.d.path("mission/ptc.json")).expect("manifest");
    let mut web: serde_json::Value =
        serde_json::from_str(&manifest.replace("\"fx\"", "\"web\"")).expect("json");
    web["effect"] = json!("write");
    web["providers"]["mission"] = json!([{"name": "web", "config": {"allow": ["web.echo"]}}]);
    fx.d.write_file("web/ptc.json", &serde_json::to_string_pretty(&web).expect("json"));
    for file in ["open.json", "app.luau", "calls.luau"] {
        let text = std::fs::read_to_string(fx.d.path(&format!("mission/{file}"))).expect("mission file");
        fx.d.write_file(&format!("web/{file}"), &text);
    }
    fx.d.host["install"]["web"] = json!({
        "source": "mcp", "installation_revision": "http-fixture-1",
        "transport": {"type": "streamable_http", "endpoint": up.endpoint(""),
                      "allow_insecure_loopback": true,
                      "headers": [{"name": "Authorization", "binding": "upstream", "scheme": "bearer"}]},
        "tools": {"echo": {"as": "web.echo", "effect": "write"}}
    });
    fx.d.host["credentials"]["upstream"] = json!({"env": "FX_UPSTREAM_TOKEN"});
    let mut tool = fx.d.gateway["tools"][1].clone();
    tool["name"] = json!("web");
    tool["allow_write"] = json!(true);
    tool["application"]["manifest"] = json!("web/ptc.json");
    let mut echo = tool.clone();
    echo["name"] = json!("echo");
    echo["allow_write"] = json!(false);
    echo["application"]["manifest"] = json!("echo/ptc.json");
    let tools = fx.d.gateway["tools"].as_array_mut().expect("tools");
    tools.push(tool);
    tools.push(echo);
    // The largest files and the most of them (config.md §4.2), so that retention deletes no record the
    // soak counts.
    fx.d.gateway["private_audit"] =
        json!({"directory": "audit", "max_file_bytes": 67108864, "max_retained_files": 128});
    fx.d.gateway["pcc"]["servers"] = json!({"srv-1": {"tools": ["echo", "fwd"]}});
    fx.d.gateway["artifacts"]["metrics"] = json!({"interval_ms": 5000});
    fx.d.gateway["admission"] = json!({"max_inflight_requests": 64, "max_concurrent_runs": 32,
                                       "max_active_provider_calls": 16, "max_waiting_provider_calls": 16});
    fx.pin();
    fx
}

fn start(fx: &Fx) -> Gateway {
    Gateway::start(fx.command("none"), fx.addr())
}

/// Every record of the private audit whose call acknowledged a write: all of them, since a write tool's
/// call is acknowledged only after its record is durable (audit-events.md §2).
fn audited_writes(fx: &Fx) -> usize {
    fx.audit_records().len()
}

/// No upstream process of any recorded spawn is still running: each is gone or a zombie, killed by the
/// parent-death signal and waiting for the init process to reap it (which this machine's init does late,
/// so "gone from /proc" is not the measure of "outlived").
fn assert_no_upstream_running(fx: &Fx, round: u64) {
    for event in fx.marker().iter().filter(|e| e["event"] == "spawn") {
        let pid = event["pid"].as_i64().expect("pid");
        wait(&format!("round {round}: process {pid} ended"), Duration::from_secs(30), || {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next());
            matches!(state, None | Some('Z') | Some('X')).then_some(())
        });
    }
}

/// The event files, ascending (each start writes files of its own, named by its start reference,
/// audit-events.md §3.3).
fn event_files(fx: &Fx) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fx.d.path("artifacts/events"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    files.sort();
    files
}

/// After a start that followed a kill, the event log continues: the start's first record is
/// `events_lock_recovered` (audit-events.md §1.4, §3.11), in a file that was not there before.
fn assert_log_continued(fx: &Fx, before: &[PathBuf], round: u64) {
    wait(&format!("round {round}: events_lock_recovered"), Duration::from_secs(10), || {
        let file = event_files(fx).into_iter().find(|f| !before.contains(f))?;
        let text = std::fs::read_to_string(file).ok()?;
        let first: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
        (first["kind"] == "events_lock_recovered").then_some(())
    });
}

/// The records in the audit files that are not in `before`: a start always opens a new numbered file
/// (audit-events.md §2.5), so these are exactly the records of the runs since; retention may delete old
/// files at a start but never the new one.
fn new_records(fx: &Fx, before: &[PathBuf]) -> usize {
    audit_files(&fx.d.path("audit"))
        .iter()
        .filter(|f| !before.contains(f))
        .map(|f| {
            std::fs::read_to_string(f).map(|t| t.lines().filter(|l| l.ends_with('}')).count()).unwrap_or(0)
        })
        .sum()
}

#[test]
#[ignore = "minutes long: scripts/soak runs it"]
fn soak() {
    let seconds = setting("PTC_SOAK_SECONDS", 120);
    let sample_every = Duration::from_secs(setting("PTC_SOAK_SAMPLE_SECONDS", 60));
    let up = HttpFixture::start("modern,sse,auth");
    let fx = soak_deployment(&up);
    let gateway = start(&fx);
    let pid = gateway.child.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let stop = Arc::new(AtomicBool::new(false));
    let workers = traffic::start(&fx, deadline, stop.clone(), traffic::Mix::Soak);
    let samples = sampler::run(pid, deadline, sample_every);
    stop.store(true, Ordering::Release);
    let counts = traffic::join(workers);
    let (code, _, _, stderr) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(60));
    assert_eq!(code, Some(0), "clean exit; stderr {}", String::from_utf8_lossy(&stderr));
    fx.assert_all_gone();
    let audited = audited_writes(&fx);
    let report = json!({
        "seconds": seconds,
        "requests": counts.to_value(),
        "acknowledged_writes": counts.acknowledged_writes,
        "audit_records": audited,
        "samples": samples.iter().map(sampler::Sample::to_value).collect::<Vec<_>>(),
        "orphans": 0,
    });
    let dir = report_dir();
    std::fs::write(dir.join("soak.json"), serde_json::to_string_pretty(&report).expect("json"))
        .expect("report");
    std::fs::write(dir.join("soak.svg"), sampler::svg(&samples)).expect("svg");
    println!("{}", serde_json::to_string(&report["requests"]).expect("json"));
    assert_eq!(counts.unexpected, 0, "every answer was the expected one: {:?}", counts.to_value());
    assert_eq!(audited, counts.acknowledged_writes, "audit records equal acknowledged writes");
    sampler::assert_nothing_grew(&samples);
}

#[test]
#[ignore = "minutes long: scripts/soak runs it"]
fn kill_and_restart() {
    let rounds = setting("PTC_KILL_ROUNDS", 20);
    let up = HttpFixture::start("modern,sse,auth");
    let fx = soak_deployment(&up);
    let (mut acknowledged, mut audited) = (0usize, 0usize);
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let started = Instant::now();
    for round in 0..rounds {
        let before = audit_files(&fx.d.path("audit"));
        let events_before = event_files(&fx);
        let mut gateway = start(&fx);
        if round > 0 {
            assert_log_continued(&fx, &events_before, round);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let far = Instant::now() + Duration::from_secs(60);
        let clients = traffic::start(&fx, far, stop.clone(), traffic::Mix::Kill);
        // A pseudo-random instant within the traffic: the kill point is the variable.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(60 + seed % 200));
        gateway.child.kill().expect("SIGKILL");
        gateway.child.wait().expect("reap");
        stop.store(true, Ordering::Release);
        let acked = traffic::join_after_kill(clients);
        acknowledged += acked;
        // providers.md §4.1: the parent-death signal takes every upstream child with the gateway.
        assert_no_upstream_running(&fx, round);
        // Every write acknowledged in this round has its record; a write whose answer the kill cut off may
        // have one too (audit-events.md §2: the record is durable before the answer).
        let new = new_records(&fx, &before);
        audited += new;
        assert!(new >= acked, "round {round}: {new} new records for {acked} acknowledged");
        // audit-events.md §1.4: a stale audit lock waits for the operator; the events lock is taken over.
        std::fs::remove_dir_all(fx.d.path("audit/.gateway-lock")).expect("the stale audit lock");
    }
    let events_before = event_files(&fx);
    let gateway = start(&fx);
    assert_log_continued(&fx, &events_before, rounds);
    let (code, _, _, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(60));
    assert_eq!(code, Some(0));
    fx.assert_all_gone();
    let report = json!({
        "rounds": rounds,
        "seconds": started.elapsed().as_secs(),
        "acknowledged_writes": acknowledged,
        "audit_records_written": audited,
        "audit_records_retained": audited_writes(&fx),
        "events_lock_recovered": rounds,
        "orphans": 0,
    });
    std::fs::write(report_dir().join("kill.json"), serde_json::to_string_pretty(&report).expect("json"))
        .expect("report");
    println!("{report}");
}
