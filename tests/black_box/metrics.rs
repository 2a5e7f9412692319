//! The metrics file (audit-events.md §3.12), vectors MT3–MT5, against the real binary. Every file is read by
//! an independent parser, `prometheus_client`'s text-format parser (tests/fixtures/parse_metrics.py, in the
//! venv of tests/python/requirements.txt that tests/third_party/install.sh installs), and compared whole.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use support::providers::{admission_held_by_a_holder, call, mission_args, mission_error, wait, Fx};
use support::{Deployment, Gateway};

const HELP_READY: &str = "1 when the gateway is ready (GET /health/ready answers 200), else 0.";
const HELP_CAPACITY: &str = "Slots of an admission pool.";
const HELP_IN_USE: &str = "Slots of an admission pool in use.";
const HELP_WAITING: &str = "Provider calls waiting for a provider-call slot.";
const HELP_EVENTS: &str =
    "The event log's counter records summed since the gateway started, by kind, tool and provider.";

/// `<root>/metrics/ptc-gateway.prom` of a deployment whose artifact root is `artifacts/`.
fn metrics_file(d: &Deployment) -> PathBuf {
    d.path("artifacts/metrics/ptc-gateway.prom")
}

/// What `prometheus_client` reads from `path`; `None` while the file does not exist yet.
fn parse(path: &Path) -> Option<Value> {
    if !path.exists() {
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join("tests/python/.venv/bin/python");
    assert!(
        python.exists(),
        "run `bash tests/third_party/install.sh` first ({} is missing)",
        python.display()
    );
    let out = Command::new(python)
        .arg(root.join("tests/fixtures/parse_metrics.py"))
        .arg(path)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run the parser");
    assert!(
        out.status.success(),
        "prometheus_client refused the file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("the parser prints JSON"))
}

/// The parsed form the file must have: `pools` as (name, capacity, in use), counters as (kind, tool,
/// provider, count) with `""` for a `null`.
fn families(
    ready: bool,
    pools: &[(&str, u64, u64)],
    waiting: u64,
    counters: &[(&str, &str, &str, u64)],
) -> Value {
    let gauge = |help: &str, samples: Vec<Value>| json!({"type": "gauge", "help": help, "samples": samples});
    let per_pool = |name: &str, pick: fn(&(&str, u64, u64)) -> u64| -> Vec<Value> {
        pools.iter().map(|p| json!([name, {"pool": p.0}, pick(p) as f64])).collect()
    };
    json!({
        "ptc_gateway_ready": gauge(HELP_READY, vec![json!(["ptc_gateway_ready", {}, if ready { 1.0 } else { 0.0 }])]),
        "ptc_gateway_admission_capacity": gauge(HELP_CAPACITY, per_pool("ptc_gateway_admission_capacity", |p| p.1)),
        "ptc_gateway_admission_in_use": gauge(HELP_IN_USE, per_pool("ptc_gateway_admission_in_use", |p| p.2)),
        "ptc_gateway_provider_calls_waiting":
            gauge(HELP_WAITING, vec![json!(["ptc_gateway_provider_calls_waiting", {}, waiting as f64])]),
        // The parser names a counter family without its `_total` suffix; the samples keep it.
        "ptc_gateway_events": {"type": "counter", "help": HELP_EVENTS, "samples": counters.iter().map(|c| {
            json!(["ptc_gateway_events_total", {"kind": c.0, "tool": c.1, "provider": c.2}, c.3 as f64])
        }).collect::<Vec<_>>()},
    })
}

/// Waits until the file parses to something `accept`s, and returns it.
fn wait_for_file(path: &Path, what: &str, accept: impl Fn(&Value) -> bool) -> Value {
    wait(what, Duration::from_secs(15), || parse(path).filter(|v| accept(v)))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("metadata").permissions().mode() & 0o7777
}

/// MT3: an idle gateway's file, with the directory and file modes and no temporary file left.
#[test]
fn mt3_an_idle_gateway_reports_ready_and_its_pools() {
    let mut d = Deployment::baseline();
    d.gateway["artifacts"]["metrics"] = json!({"interval_ms": 1000});
    d.write_documents();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], d.port));
    let gateway = Gateway::start(d.command(), addr);
    let pools = [("mcp_requests", 16, 0), ("pcc_streams", 16, 0), ("runs", 4, 0), ("provider_calls", 4, 0)];
    let want = families(true, &pools, 0, &[]);
    let got = wait_for_file(&metrics_file(&d), "the first metrics file", |_| true);
    assert_eq!(got, want, "MT3");
    assert_eq!(mode(&d.path("artifacts/metrics")), 0o700);
    assert_eq!(mode(&metrics_file(&d)), 0o600);
    let names: Vec<String> = std::fs::read_dir(d.path("artifacts/metrics"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["ptc-gateway.prom"], "MT3: no temporary file left");
    let (code, _, _, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(20));
    assert_eq!(code, Some(0));
    assert_eq!(parse(&metrics_file(&d)), Some(families(false, &pools, 0, &[])), "MT3: the last file");
}

/// The `holder` installation's fixture pid, from its marker (`support::providers::Fx::add_holder`).
fn holder_pid(fx: &Fx) -> i32 {
    let text = std::fs::read_to_string(fx.d.path("holder.jsonl")).expect("holder marker");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "spawn")
        .and_then(|e| e["pid"].as_i64())
        .expect("the holder's spawn record") as i32
}

/// Releases the holder's `slow` call (the fixture answers it on SIGUSR1).
fn release_holder(fx: &Fx) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(holder_pid(fx)), Signal::SIGUSR1);
}

fn with_metrics(fx: &mut Fx) {
    fx.d.gateway["artifacts"]["metrics"] = json!({"interval_ms": 1000});
}

/// MT4: one provider call holds the only slot and a second waits: the file shows both, and two runs.
#[test]
fn mt4_held_and_waiting_provider_calls() {
    let (fx, gateway, holder) = admission_held_by_a_holder(1, None, with_metrics);
    let addr = fx.addr();
    let waiter =
        std::thread::spawn(move || call(addr, "mission", 2, &mission_args("fx.echo", json!({"k": 1}))));
    let pools = [("mcp_requests", 16, 2), ("pcc_streams", 16, 0), ("runs", 4, 2), ("provider_calls", 1, 1)];
    let want = families(true, &pools, 1, &[]);
    let got = wait_for_file(&metrics_file(&fx.d), "a file with the waiting call", |v| {
        v["ptc_gateway_provider_calls_waiting"]["samples"][0][2] == json!(1.0)
    });
    assert_eq!(got, want, "MT4");
    release_holder(&fx);
    assert_eq!(waiter.join().expect("waiter").0, 200);
    assert_eq!(holder.join().expect("holder").0, 200);
    let (code, _, _, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(30));
    assert_eq!(code, Some(0));
    fx.assert_all_gone();
}

/// The counter kinds in the order of audit-events.md §3.5, which is the report order (§3.7).
const KINDS: [&str; 10] = [
    "busy",
    "provider_busy",
    "detached",
    "settlement_timeout",
    "model_requests",
    "model_failed",
    "model_tokens",
    "publication_failed",
    "artifact_failed",
    "dropped_events",
];

/// The sum of the log's `counter` records per (kind, tool, provider), `null` as `""`, in report order.
fn logged_counters(fx: &Fx) -> Vec<(String, String, String, u64)> {
    let mut sums: std::collections::BTreeMap<(usize, String, String), u64> = Default::default();
    // A counter record is the one kind with `count` and `interval_ms` (audit-events.md §3.5).
    for e in fx.events().into_iter().filter(|e| e.get("count").is_some() && e.get("interval_ms").is_some()) {
        let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
        let kind = KINDS.iter().position(|k| e["kind"] == *k).expect("a counter kind");
        let key = (kind, text(&e["tool"]), text(&e["provider"]));
        *sums.entry(key).or_default() += e["count"].as_u64().expect("count");
    }
    sums.into_iter().map(|((k, t, p), n)| (KINDS[k].to_owned(), t, p, n)).collect()
}

/// MT5: a provider call refused with `provider_capacity_exhausted` is a `provider_busy` count; after
/// SIGTERM the last file reads not ready and holds exactly the sums of the log's counter records.
#[test]
fn mt5_the_last_file_holds_every_count_the_log_reported() {
    let (fx, gateway, holder) = admission_held_by_a_holder(0, None, with_metrics);
    let (_, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
    assert_eq!(mission_error(&text), ("provider_capacity_exhausted".into(), "false".into(), true));
    release_holder(&fx);
    assert_eq!(holder.join().expect("holder").0, 200);
    let (code, _, _, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(30));
    assert_eq!(code, Some(0));
    fx.assert_all_gone();
    let logged = logged_counters(&fx);
    assert!(
        logged.contains(&("provider_busy".into(), "mission".into(), "fx".into(), 1)),
        "the log counted the refusal: {logged:?}"
    );
    let counters: Vec<(&str, &str, &str, u64)> =
        logged.iter().map(|(k, t, p, n)| (k.as_str(), t.as_str(), p.as_str(), *n)).collect();
    let pools = [("mcp_requests", 16, 0), ("pcc_streams", 16, 0), ("runs", 4, 0), ("provider_calls", 1, 0)];
    assert_eq!(parse(&metrics_file(&fx.d)), Some(families(false, &pools, 0, &counters)), "MT5");
}
