//! The replay row (issue 26, scope 6): `RUNS` mission runs, each making two upstream calls, served live and
//! then replayed offline from their traces, measured in one run.
//!
//! Live: the mission of `traces::mission` (two `tool("fx.echo", …)` calls to the stdio fixture
//! `tests/fixtures/mcp_fixture.py`) with `artifacts.trace: {"replay": true}`, `RUNS` sequential
//! `tools/call` over one keep-alive connection: runs/s is `RUNS` over the sum of their latencies. Replay:
//! the gateway stopped, `ptc replay CONFIG <traces> --json` over the `RUNS` trace files those calls wrote,
//! timed from spawn to exit (process start and loading the documents included, as a person running it
//! meets it); every run must come back `same`. Owns only this row; nothing here asserts a threshold.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{count, mcp_request, wait_listening, Measured, Reaped};
use crate::support;

/// The runs recorded and replayed: the directory's `max_retained_files` keeps them all.
pub const RUNS: usize = 1_000;
/// The bound of the replay command.
const REPLAY_DEADLINE: Duration = Duration::from_secs(300);

pub struct Results {
    pub live: Measured,
    /// The replay's wall time, or why it could not be measured.
    pub replay: Result<Duration, String>,
}

impl Results {
    fn replay_rps(&self) -> Option<f64> {
        let wall = self.replay.as_ref().ok()?;
        Some(RUNS as f64 / wall.as_secs_f64().max(f64::MIN_POSITIVE))
    }
}

pub async fn measure() -> Results {
    let mut fx = support::providers::Fx::new("modern");
    fx.d.write_file(
        "mission/calls.luau",
        "local M = {}\nfunction M.run(input)\n  tool(input.alias, input.args)\n  return tool(input.alias, input.args)\nend\nreturn M\n",
    );
    fx.d.gateway["artifacts"]["trace"] = json!({"replay": true, "max_retained_files": RUNS + 10});
    fx.pin();
    let addr = fx.addr();
    let live = {
        let mut cmd = fx.command("none");
        let _gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
        wait_listening(addr).await;
        let params = r#""name":"mission","arguments":{"alias":"fx.echo","args":{"text":"hi"}},"#;
        super::sequential(addr, mcp_request(addr, "tools/call", params, Some("mission")), 0, RUNS).await
    };
    let replay = replay(&fx.d).await;
    if let Err(reason) = &replay {
        eprintln!("replay row not measured: {reason}");
    }
    Results { live, replay }
}

/// `ptc replay` over the traces the live side wrote; every run must be `same`.
async fn replay(d: &support::Deployment) -> Result<Duration, String> {
    let traces = d.path("artifacts/traces");
    // No credential: a replay reads none (the gateway's token is not even in its environment).
    let mut cmd = support::ptc();
    cmd.current_dir(d.dir.path())
        .args(["replay", "ptc-gateway.json"])
        .arg(&traces)
        .arg("--json")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let child = tokio::process::Command::from(cmd).kill_on_drop(true).spawn().map_err(|e| e.to_string())?;
    let output = tokio::time::timeout(REPLAY_DEADLINE, child.wait_with_output())
        .await
        .map_err(|_| "the replay did not end within its deadline".to_owned())?
        .map_err(|e| e.to_string())?;
    let wall = started.elapsed();
    let report: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("--json output: {e}"))?;
    let (runs, same) = (report["runs"].as_u64(), report["same"].as_u64());
    if output.status.code() != Some(0) || runs != Some(RUNS as u64) || same != runs {
        return Err(format!("exit {:?}, runs {runs:?}, same {same:?}", output.status.code()));
    }
    Ok(wall)
}

/// The section of `docs/benchmarks.md`.
pub fn section(r: &Results) -> String {
    let mut out = String::new();
    out.push_str("\n## Offline replay (issue 26)\n\n");
    out.push_str(&format!(
        "{} mission runs, each making two upstream calls to the stdio fixture `tests/fixtures/mcp_fixture.py`,\n",
        count(RUNS)
    ));
    out.push_str("served live with `artifacts.trace: {\"replay\": true}` (sequential `tools/call` over one keep-alive\n");
    out.push_str(
        "connection; runs/s is the runs over the sum of their latencies), then, with the gateway stopped,\n",
    );
    out.push_str(
        "replayed by `ptc replay CONFIG <traces> --json` (wall time from spawn to exit, process start and\n",
    );
    out.push_str(
        "document loading included; no upstream started; every run `same`). `ratio` is replay / live.\n\n",
    );
    out.push_str("| side | runs | runs/s | ratio |\n| --- | ---: | ---: | ---: |\n");
    out.push_str(&format!("| live | {} | {:.0} | |\n", count(RUNS), r.live.rps()));
    match r.replay_rps() {
        Some(rps) => out.push_str(&format!(
            "| replay | {} | {rps:.0} | {:.3} |\n",
            count(RUNS),
            rps / r.live.rps().max(f64::MIN_POSITIVE)
        )),
        None => out.push_str(&format!("| replay | {} | not measured | |\n", count(RUNS))),
    }
    if let Err(reason) = &r.replay {
        out.push_str(&format!("\nReplay not measured: {reason}.\n"));
    }
    out
}
