//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/conformance/package-lock.json) against the gateway, through the authenticating proxy.
//!
//! Owns: running the suite's server scenarios one CLI invocation each (its results under a temporary
//! directory), reading every `checks.json`, and asserting that the failing checks are exactly the
//! entries of tests/conformance/expected-failures.yml — no more (a regression) and no fewer (a stale
//! entry). The suite also applies the baseline itself (`--expected-failures`), so its exit status must
//! be 0 as well. Does not own: the proxy (proxy.rs) or the deployment (fixture.rs).

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::proxy::Proxy;
use crate::support::TOKEN;
use crate::{child, fixture, install};

/// The scenarios of issue 3 scope item 6, all applicable at 2026-07-28.
pub const SCENARIOS: [&str; 6] = [
    "server-stateless",
    "tools-list",
    "dns-rebinding-protection",
    "caching",
    "http-header-validation",
    "http-custom-header-server-validation",
];

/// Per scenario; the suite's own per-scenario timeout is 30 s.
const DEADLINE: Duration = Duration::from_secs(120);

/// One entry of the baseline: `scenario:check-id`, with the reason it may fail.
#[derive(Debug, PartialEq, Eq)]
pub struct Expected {
    pub check: String,
    pub reason: String,
}

/// Reads the baseline: a `server:` list whose items are `- scenario:check-id # reason`. Every entry must
/// name a single check of one of [`SCENARIOS`] and carry a reason; anything else is an error.
pub fn parse_baseline(text: &str) -> Result<Vec<Expected>, String> {
    let mut entries = Vec::new();
    let mut in_server = false;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            in_server = line == "server:";
            if !in_server {
                return Err(format!("line {}: only a `server:` list is expected, got {line:?}", n + 1));
            }
            continue;
        }
        let item = line.trim_start().strip_prefix("- ").ok_or(format!("line {}: not a list item", n + 1))?;
        let (check, reason) =
            item.split_once(" # ").ok_or(format!("line {}: entry without a reason", n + 1))?;
        let check = check.trim();
        let (scenario, id) = check.split_once(':').ok_or(format!("line {}: not scenario:check", n + 1))?;
        if check.contains(char::is_whitespace)
            || !in_server
            || !SCENARIOS.contains(&scenario)
            || id.is_empty()
            || reason.trim().is_empty()
        {
            return Err(format!("line {}: {item:?} is not a reasoned check of a scenario run here", n + 1));
        }
        entries.push(Expected { check: check.to_string(), reason: reason.trim().to_string() });
    }
    Ok(entries)
}

/// `scenario:check-id` → error message of every check with status `FAILURE` in one scenario's
/// `checks.json` (WARNING, INFO and SKIPPED do not fail a run, in the suite's own accounting either).
pub fn failures(scenario: &str, checks: &Value) -> Result<BTreeMap<String, String>, String> {
    let list = checks.as_array().ok_or(format!("{scenario}: checks.json is not an array"))?;
    let mut out = BTreeMap::new();
    for check in list {
        let id = check["id"].as_str().ok_or(format!("{scenario}: a check without id"))?;
        match check["status"].as_str() {
            Some("FAILURE") => {
                // An id can occur several times (the suite collapses them to one verdict); keep every
                // message for the report.
                let message = check["errorMessage"].as_str().unwrap_or_default();
                let entry: &mut String = out.entry(format!("{scenario}:{id}")).or_default();
                if !message.is_empty() && !entry.contains(message) {
                    if !entry.is_empty() {
                        entry.push_str(" | ");
                    }
                    entry.push_str(message);
                }
            }
            Some("SUCCESS" | "WARNING" | "INFO" | "SKIPPED") => {}
            other => return Err(format!("{scenario}:{id}: unknown status {other:?}")),
        }
    }
    Ok(out)
}

/// The one `checks.json` below `dir` (the suite writes `server-<scenario>-<timestamp>/checks.json`).
fn find_checks(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(find_checks(&path));
        } else if path.file_name().is_some_and(|n| n == "checks.json") {
            found.push(path);
        }
    }
    found
}

/// One scenario's outcome: its failing checks, whether the suite's own baseline verdict passed, and
/// what the CLI printed.
struct Outcome {
    failed: BTreeMap<String, String>,
    suite_ok: bool,
    transcript: String,
}

fn run_scenario(scenario: &str, url: &str, out: &Path) -> Outcome {
    let (node, cli) = install::conformance_cli();
    let dir = out.join(scenario);
    let mut cmd = Command::new(node);
    cmd.arg(cli)
        .args(["server", "--url", url, "--scenario", scenario, "--spec-version", "2026-07-28"])
        .arg("--expected-failures")
        .arg(install::baseline_path())
        .arg("--output-dir")
        .arg(&dir)
        .current_dir(out)
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0");
    let run = child::run(&format!("conformance scenario {scenario}"), cmd, DEADLINE);
    let transcript = run.transcript();
    let files = find_checks(&dir);
    assert_eq!(files.len(), 1, "{scenario}: expected one checks.json under {}\n{transcript}", dir.display());
    let checks: Value = serde_json::from_slice(&std::fs::read(&files[0]).expect("read checks.json"))
        .unwrap_or_else(|e| panic!("{scenario}: checks.json is not JSON ({e})\n{transcript}"));
    let failed = failures(scenario, &checks).unwrap_or_else(|e| panic!("{e}\n{transcript}"));
    Outcome { failed, suite_ok: run.status.success(), transcript }
}

#[test]
fn conformance_failures_equal_the_baseline() {
    install::conformance_cli();
    let text = std::fs::read_to_string(install::baseline_path()).expect("read the baseline");
    let expected: BTreeSet<String> = parse_baseline(&text)
        .unwrap_or_else(|e| panic!("baseline: {e}"))
        .into_iter()
        .map(|e| e.check)
        .collect();
    // The proxy's port is held from here on, so the deployment can allow its origin: the suite's
    // "valid localhost" DNS-rebinding probe sends `Origin: http://<the URL's authority>`.
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind proxy");
    let origin = format!("http://{}", crate::support::authority(listener.local_addr().expect("addr")));
    let (_deployment, gateway) = fixture::start(Some(&origin));
    let proxy = Proxy::start(listener, gateway.addr, TOKEN);
    let url = format!("{origin}/mcp");
    let out = tempfile::Builder::new().prefix("ptc-conformance-").tempdir().expect("tempdir");
    let outcomes: Vec<(&str, Outcome)> =
        SCENARIOS.iter().map(|s| (*s, run_scenario(s, &url, out.path()))).collect();
    assert!(proxy.forwarded() > 0, "no request went through the proxy");
    let failed: BTreeMap<&String, &String> = outcomes.iter().flat_map(|(_, o)| o.failed.iter()).collect();
    let unexpected: Vec<String> =
        failed.iter().filter(|(c, _)| !expected.contains(**c)).map(|(c, m)| format!("{c}: {m}")).collect();
    let stale: Vec<&String> = expected.iter().filter(|c| !failed.contains_key(c)).collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "conformance failures differ from the baseline\nunexpected failures:\n  {}\n\
         baseline entries that did not fail (stale): {stale:?}",
        unexpected.join("\n  ")
    );
    // The suite applied the same baseline itself; with the sets equal it must agree.
    for (scenario, outcome) in &outcomes {
        assert!(
            outcome.suite_ok,
            "{scenario}: the suite's own baseline verdict failed\n{}",
            outcome.transcript
        );
    }
}
