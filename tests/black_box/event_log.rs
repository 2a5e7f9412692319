//! The operational event log against the real binary (audit-events.md §3, §6.2): the records of a clean
//! start and stop in the order of §3.6 with their exact key sets (EV1), `startup_failed` after the
//! artifact root (EV11), rotation and retention across restarts (EV2), a reduced bound (EV3), the stale
//! lock taken over after `kill -9` (EV10), and a sentinel scan of every file the gateway could write
//! (EV12). The queue overflow (EV5) is the in-process test of `src/events/log_tests.rs`.

use crate::support;

use std::collections::BTreeSet;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use support::sse::read_stream;
use support::{assert_startup_error, run_with_deadline, Deployment, Gateway};

const EXIT_DEADLINE: Duration = Duration::from_secs(30);

fn addr(d: &Deployment) -> SocketAddr {
    format!("127.0.0.1:{}", d.port).parse().unwrap()
}

fn events_dir(d: &Deployment) -> PathBuf {
    d.path("artifacts/events")
}

/// The event files, in name byte order (oldest first).
fn event_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".gateway-lock")
        .collect();
    names.sort();
    names
}

/// Every line of `file` parsed; every line ends with LF.
fn records_of(file: &Path) -> Vec<Value> {
    let bytes = std::fs::read(file).unwrap();
    assert_eq!(bytes.last(), Some(&b'\n'), "{file:?} ends with LF");
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn all_records(dir: &Path) -> Vec<Value> {
    event_files(dir).iter().flat_map(|n| records_of(&dir.join(n))).collect()
}

/// The exact key set of each kind (§3.4–§3.5), `kind` and `timestamp` included.
fn keys_of(kind: &str) -> &'static [&'static str] {
    const C: &[&str] = &["count", "interval_ms", "kind", "provider", "timestamp", "tool"];
    match kind {
        "events_lock_recovered" => &["kind", "timestamp"],
        "startup_stage" | "shutdown_stage" => &["kind", "outcome", "stage", "timestamp"],
        "startup_failed" => &["code", "kind", "reason_class", "timestamp"],
        "readiness" => &["cause", "kind", "provider", "timestamp", "tool", "transition"],
        "busy" | "provider_busy" | "detached" | "settlement_timeout" | "publication_failed"
        | "dropped_events" => C,
        "audit_recovered" => &["kind", "removed_bytes", "removed_empty_files", "timestamp"],
        other => panic!("unknown kind {other}"),
    }
}

/// Validates the key set and the timestamp format, then returns the record without its timestamp as
/// compact JSON (keys sorted), for exact sequence comparisons.
fn shape(record: &Value) -> String {
    let map = record.as_object().unwrap();
    let kind = map["kind"].as_str().unwrap();
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    assert_eq!(keys, keys_of(kind), "{record}");
    let ts = map["timestamp"].as_str().unwrap().as_bytes();
    assert_eq!(ts.len(), 27, "{record}");
    for (i, b) in ts.iter().enumerate() {
        let want_digit = !matches!(i, 4 | 7 | 10 | 13 | 16 | 19 | 26);
        assert_eq!(b.is_ascii_digit(), want_digit, "{record}");
    }
    assert_eq!((ts[4], ts[10], ts[19], ts[26]), (b'-', b'T', b'.', b'Z'), "{record}");
    let mut stripped = map.clone();
    stripped.remove("timestamp");
    Value::Object(stripped).to_string()
}

fn stage(stage: &str, outcome: &str) -> String {
    json!({"kind": "startup_stage", "stage": stage, "outcome": outcome}).to_string()
}

fn shutdown(stage: &str, outcome: &str) -> String {
    json!({"kind": "shutdown_stage", "stage": stage, "outcome": outcome}).to_string()
}

fn readiness(transition: &str, cause: &str) -> String {
    json!({"kind": "readiness", "transition": transition, "cause": cause, "tool": null, "provider": null})
        .to_string()
}

/// The startup records of the baseline (no `private_audit`, so no `audit` stage).
fn startup_shapes() -> Vec<String> {
    let mut out = vec![stage("artifact_root", "ready")];
    for s in ["templates", "run_admission", "warm_providers", "request_admission", "listener"] {
        out.push(stage(s, "started"));
        out.push(stage(s, "ready"));
    }
    out.push(readiness("ready", "startup"));
    out
}

fn shutdown_shapes() -> Vec<String> {
    let mut out = vec![readiness("not_ready", "shutdown")];
    for s in [
        "stop_listeners",
        "quiesce",
        "drain_runs",
        "checkpoint_events",
        "provider_cleanup",
        "admission_clean",
    ] {
        out.push(shutdown(s, "started"));
        out.push(shutdown(s, "clean"));
    }
    out
}

fn is_event_file_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() == 32 + 1 + 20 + 6
        && b[..32].iter().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
        && b[32] == b'-'
        && b[33..53].iter().all(u8::is_ascii_digit)
        && name.ends_with(".jsonl")
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

/// Starts the gateway, then stops it with SIGTERM and asserts exit 0.
fn start_and_stop(d: &Deployment) {
    let gw = Gateway::start(d.command(), addr(d));
    let (code, _, _, stderr) = gw.signal_and_wait(Signal::SIGTERM, EXIT_DEADLINE);
    assert_eq!(code, Some(0), "stderr: {}", String::from_utf8_lossy(&stderr));
}

#[test]
fn ev1_a_clean_start_and_stop_logs_every_stage_in_order() {
    let mut d = Deployment::baseline();
    d.write_documents();
    start_and_stop(&d);
    let dir = events_dir(&d);
    assert_eq!(mode(&dir), 0o700);
    let files = event_files(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(is_event_file_name(&files[0]), "{}", files[0]);
    assert!(files[0].ends_with("-00000000000000000001.jsonl"));
    assert_eq!(mode(&dir.join(&files[0])), 0o600);
    assert!(!dir.join(".gateway-lock").exists(), "the lock is released at exit");
    let shapes: Vec<String> = records_of(&dir.join(&files[0])).iter().map(shape).collect();
    let mut want = startup_shapes();
    want.extend(shutdown_shapes());
    assert_eq!(shapes, want);
}

#[test]
fn ev11_a_stale_content_pin_logs_one_startup_failed() {
    let mut d = Deployment::baseline();
    d.gateway["tools"][0]["expected_application_content_digest"] =
        json!(format!("sha256:{}", "0".repeat(64)));
    d.write_documents();
    let out = run_with_deadline(d.command(), EXIT_DEADLINE);
    assert_startup_error(&out, "application_content_digest_mismatch", "stale pin");
    let dir = events_dir(&d);
    let shapes: Vec<String> = all_records(&dir).iter().map(shape).collect();
    let failed = json!({"kind": "startup_failed", "code": "application_content_digest_mismatch",
                        "reason_class": "application_content_digest_mismatch"})
    .to_string();
    assert_eq!(shapes, [stage("artifact_root", "ready"), stage("templates", "started"), failed]);
    assert!(!dir.join(".gateway-lock").exists());
}

#[test]
fn ev11_a_failure_at_warm_providers_logs_the_stages_so_far_then_startup_failed() {
    // The bearer value is read at stage 9 (config.md §7.3), after the log started.
    let mut d = Deployment::baseline();
    d.write_documents();
    let mut cmd = d.command();
    cmd.env_remove("GATEWAY_TOKEN");
    let out = run_with_deadline(cmd, EXIT_DEADLINE);
    assert_startup_error(&out, "credential_unavailable", "no bearer value");
    let shapes: Vec<String> = all_records(&events_dir(&d)).iter().map(shape).collect();
    let failed = json!({"kind": "startup_failed", "code": "credential_unavailable",
                        "reason_class": "credential_unavailable"})
    .to_string();
    let mut want = vec![stage("artifact_root", "ready")];
    for s in ["templates", "run_admission"] {
        want.push(stage(s, "started"));
        want.push(stage(s, "ready"));
    }
    want.push(stage("warm_providers", "started"));
    want.push(failed);
    assert_eq!(shapes, want);
}

#[test]
fn a_failure_before_the_artifact_root_writes_no_log() {
    let mut d = Deployment::baseline();
    d.write_documents();
    d.write_file("ptc-host.json", "{}");
    let out = run_with_deadline(d.command(), EXIT_DEADLINE);
    assert_startup_error(&out, "host_invalid", "empty host document");
    assert!(!d.path("artifacts").exists(), "nothing exists before stage 4");
}

#[test]
fn ev2_ev3_rotation_and_retention_across_restarts_then_a_reduced_bound() {
    let mut d = Deployment::baseline();
    d.gateway["artifacts"]["events"] = json!({"max_file_bytes": 1024, "max_retained_files": 2});
    d.write_documents();
    let dir = events_dir(&d);
    let mut seen = BTreeSet::new();
    for start in 1..=3 {
        start_and_stop(&d);
        let files = event_files(&dir);
        seen.extend(files.iter().cloned());
        assert_eq!(files.len(), 2, "start {start}: {files:?}");
        // Oldest removed first, across start references: what remains is the newest two ever written.
        let newest: Vec<String> = seen.iter().rev().take(2).rev().cloned().collect();
        assert_eq!(files, newest, "start {start}");
        for f in &files {
            assert!(std::fs::metadata(dir.join(f)).unwrap().len() <= 1024, "start {start}: {f}");
            for r in records_of(&dir.join(f)) {
                shape(&r);
            }
        }
    }
    // One start writes about 2 KiB of records, so each start rotated at least once.
    assert!(seen.len() >= 6, "{seen:?}");
    // EV3: one start with a larger bound leaves a file above 1024 bytes; 1024 then refuses startup.
    d.gateway["artifacts"]["events"]["max_file_bytes"] = json!(65536);
    d.write_documents();
    start_and_stop(&d);
    let largest =
        event_files(&dir).iter().map(|f| std::fs::metadata(dir.join(f)).unwrap().len()).max().unwrap();
    assert!(largest > 1024, "{largest}");
    d.gateway["artifacts"]["events"]["max_file_bytes"] = json!(1024);
    d.write_documents();
    let before = event_files(&dir);
    let out = run_with_deadline(d.command(), EXIT_DEADLINE);
    assert_startup_error(&out, "artifact_root_unavailable", "reduced max_file_bytes");
    assert_eq!(event_files(&dir), before, "a refused start writes nothing");
}

#[test]
fn ev10_kill_9_then_restart_takes_over_the_stale_lock() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let gw = Gateway::start(d.command(), addr(&d));
    let (code, _, _, _) = gw.signal_and_wait(Signal::SIGKILL, EXIT_DEADLINE);
    assert_eq!(code, None, "killed by a signal");
    let dir = events_dir(&d);
    assert!(dir.join(".gateway-lock/owner").exists(), "the lock survives kill -9");
    let old = event_files(&dir);
    assert_eq!(old.len(), 1);
    // §3.11: the file open at the kill may end in a torn line, possibly followed by zero bytes.
    let mut torn = std::fs::OpenOptions::new().append(true).open(dir.join(&old[0])).unwrap();
    torn.write_all(b"{\"kind\":\"startup_st\0\0\0").unwrap();
    drop(torn);
    let old_bytes = std::fs::read(dir.join(&old[0])).unwrap();
    let old_meta = std::fs::metadata(dir.join(&old[0])).unwrap();
    start_and_stop(&d);
    let files = event_files(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0], old[0], "the older start's file sorts first");
    assert_eq!(std::fs::read(dir.join(&old[0])).unwrap(), old_bytes, "the torn file is not changed");
    assert_eq!(std::fs::metadata(dir.join(&old[0])).unwrap().mtime(), old_meta.mtime());
    // Readers ignore the torn final line; every other line of the old file parses.
    let old_lines: Vec<&[u8]> = old_bytes.split(|b| *b == b'\n').collect();
    for line in &old_lines[..old_lines.len() - 1] {
        shape(&serde_json::from_slice(line).unwrap());
    }
    let shapes: Vec<String> = records_of(&dir.join(&files[1])).iter().map(shape).collect();
    let mut want = vec![json!({"kind": "events_lock_recovered"}).to_string()];
    want.extend(startup_shapes());
    want.extend(shutdown_shapes());
    assert_eq!(shapes, want);
}

/// A sentinel bearer (token68, 32..4096 bytes, config.md §8.4).
const SENTINEL_TOKEN: &str = "SentinelBearer-7f3e9a1c5b2d4e6f8a0b";
const SENTINEL_ARG: &str = "sentinel-argument-4d2c";
const SENTINEL_FAIL: &str = "sentinel-failure-text-9e1a";

fn call(a: SocketAddr, tool: &str, arguments: &Value) -> Vec<u8> {
    call_with(a, SENTINEL_TOKEN, tool, arguments)
}

fn call_with(a: SocketAddr, token: &str, tool: &str, arguments: &Value) -> Vec<u8> {
    let request = support::mcp::Req::tools_call(a, tool, "7", &arguments.to_string())
        .set("Authorization", &format!("Bearer {token}"))
        .bytes();
    let mut s = TcpStream::connect_timeout(&a, Duration::from_secs(2)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(&request).unwrap();
    read_stream(&mut s).body()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let ft = entry.file_type().unwrap();
        if ft.is_dir() {
            files_under(&path, out);
        } else if ft.is_file() {
            out.push(path);
        }
    }
}

#[test]
fn ev12_no_sentinel_reaches_any_file() {
    let mut d = Deployment::baseline();
    // `say` returns its input; `refuse` fails with its input text, so a sentinel reaches an error result.
    let text = r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;
    let apps = [
        ("say", "local M = {}\nfunction M.run(input) return input end\nreturn M\n"),
        ("refuse", "local M = {}\nfunction M.run(input) fail(input.text) end\nreturn M\n"),
    ];
    for (name, luau) in apps {
        d.write_file(&format!("{name}/ptc.json"), &serde_json::to_string(&support::echo_manifest()).unwrap());
        d.write_file(&format!("{name}/app.luau"), luau);
        d.write_file(&format!("{name}/schema.json"), text);
        let tool = json!({"name": name, "title": name, "description": "fixture",
            "application": {"manifest": format!("{name}/ptc.json")},
            "expected_application_content_digest": support::content_pin::of(&d.path(&format!("{name}/ptc.json"))),
            "installation_config_pins": {}, "provider_snapshot_pins": {}});
        d.gateway["tools"].as_array_mut().unwrap().push(tool);
    }
    d.write_documents();
    let mut cmd = d.command();
    cmd.env("GATEWAY_TOKEN", SENTINEL_TOKEN);
    // Every diagnostic on, of every crate (lifecycle.md §2.1: never credentials, arguments or results).
    cmd.env("PTC_LOG", "trace");
    let gw = Gateway::start(cmd, addr(&d));
    let echoed = call(gw.addr, "say", &json!({"text": SENTINEL_ARG}));
    let refused = call(gw.addr, "refuse", &json!({"text": SENTINEL_FAIL}));
    let (code, _, _, stderr) = gw.signal_and_wait(Signal::SIGTERM, EXIT_DEADLINE);
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(String::from_utf8_lossy(&echoed).contains(SENTINEL_ARG), "the call echoed; {stderr}");
    assert!(String::from_utf8_lossy(&refused).contains(SENTINEL_FAIL), "the failure text was returned");
    assert_eq!(code, Some(0));
    assert!(stderr.contains("ready"), "the diagnostics were on: {stderr}");
    for sentinel in [SENTINEL_TOKEN, SENTINEL_ARG, SENTINEL_FAIL] {
        assert!(!stderr.contains(sentinel), "{sentinel} found in the diagnostics");
    }
    let mut files = Vec::new();
    files_under(d.dir.path(), &mut files);
    let records = all_records(&events_dir(&d));
    assert!(!records.is_empty());
    let configured = d.dir.path().to_string_lossy().into_owned();
    for file in &files {
        let bytes = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        for sentinel in [SENTINEL_TOKEN, SENTINEL_ARG, SENTINEL_FAIL] {
            assert!(!bytes.contains(sentinel), "{sentinel} found in {file:?}");
        }
        if file.starts_with(events_dir(&d)) {
            // Not the port: its digits may occur in a timestamp by chance.
            for forbidden in [configured.as_str(), "127.0.0.1", "echo/ptc.json", "ptc-host.json"] {
                assert!(!bytes.contains(forbidden), "{forbidden} found in {file:?}");
            }
        }
    }
}

#[test]
fn ev11_an_injected_run_admission_failure_logs_startup_failed_with_its_code() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let mut cmd = d.command();
    cmd.env("PTC_FAULT", "run_admission");
    let out = run_with_deadline(cmd, EXIT_DEADLINE);
    assert_startup_error(&out, "run_admission_unavailable", "injected");
    let shapes: Vec<String> = all_records(&events_dir(&d)).iter().map(shape).collect();
    let failed = json!({"kind": "startup_failed", "code": "run_admission_unavailable",
                        "reason_class": "run_admission_unavailable"})
    .to_string();
    let want = [
        stage("artifact_root", "ready"),
        stage("templates", "started"),
        stage("templates", "ready"),
        stage("run_admission", "started"),
        failed,
    ];
    assert_eq!(shapes, want);
}

#[test]
fn ev15_failed_final_messages_are_counted_as_publication_failed_for_their_tool() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let mut cmd = d.command();
    cmd.env("PTC_FAULT", "publication_write");
    let gw = Gateway::start(cmd, addr(&d));
    for _ in 0..2 {
        let body = call_with(gw.addr, support::TOKEN, "echo", &json!({}));
        assert!(!String::from_utf8_lossy(&body).contains("event: message"), "no message was published");
    }
    // §3.7: the periodic report (interval 1,000 ms) arrives while the gateway runs.
    let counted_now = || -> u64 {
        let dir = events_dir(&d);
        event_files(&dir)
            .iter()
            .flat_map(|n| {
                let bytes = std::fs::read(dir.join(n)).unwrap();
                bytes
                    .split(|b| *b == b'\n')
                    .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
                    .filter(|r| r["kind"] == "publication_failed" && r["interval_ms"] == 1000)
                    .map(|r| r["count"].as_u64().unwrap())
                    .collect::<Vec<_>>()
            })
            .sum()
    };
    let waited = std::time::Instant::now();
    while counted_now() < 2 {
        assert!(waited.elapsed() < Duration::from_secs(10), "no periodic publication_failed report");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, _, _, _) = gw.signal_and_wait(Signal::SIGTERM, EXIT_DEADLINE);
    assert_eq!(code, Some(0));
    let records = all_records(&events_dir(&d));
    let counted: Vec<&Value> = records.iter().filter(|r| r["kind"] == "publication_failed").collect();
    assert!(!counted.is_empty());
    for r in &counted {
        shape(r);
        assert_eq!((&r["tool"], &r["provider"]), (&json!("echo"), &Value::Null), "{r}");
        let interval = r["interval_ms"].as_u64().unwrap();
        assert!((1..=1000).contains(&interval), "{r}");
    }
    assert_eq!(counted.iter().map(|r| r["count"].as_u64().unwrap()).sum::<u64>(), 2);
    // Counters never change readiness: the drain still recorded `not_ready` `shutdown`.
    assert!(records.iter().any(|r| r["kind"] == "readiness" && r["cause"] == "shutdown"));
}

#[test]
fn ev13_a_second_gateway_on_the_same_root_is_refused_and_the_first_keeps_its_lock() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let gw = Gateway::start(d.command(), addr(&d));
    let owner = std::fs::read(events_dir(&d).join(".gateway-lock/owner")).unwrap();
    // Other ports, same artifact root.
    let mut second = d.gateway.clone();
    second["listen"]["port"] = json!(support::free_port("127.0.0.1"));
    second["pcc"]["port"] = json!(support::free_port("127.0.0.1"));
    d.write_file("second.json", &second.to_string());
    let mut cmd = support::ptc();
    cmd.current_dir(d.dir.path()).arg("gateway").arg("second.json").env("GATEWAY_TOKEN", support::TOKEN);
    let out = run_with_deadline(cmd, EXIT_DEADLINE);
    assert_startup_error(&out, "artifact_root_unavailable", "second gateway");
    assert_eq!(std::fs::read(events_dir(&d).join(".gateway-lock/owner")).unwrap(), owner);
    assert_eq!(support::http_get(gw.addr, "/health/ready").unwrap().status, 200, "the first is unaffected");
    let (code, _, _, _) = gw.signal_and_wait(Signal::SIGTERM, EXIT_DEADLINE);
    assert_eq!(code, Some(0));
    let files = event_files(&events_dir(&d));
    assert_eq!(files.len(), 1, "the refused start wrote nothing: {files:?}");
}

/// EV4 and EV14: each prepared events directory refuses startup with `artifact_root_unavailable`, and
/// nothing inside a refused lock directory is changed.
#[test]
fn ev4_ev14_unsafe_events_directories_and_locks_refuse_startup() {
    type Prepare = fn(&Path);
    fn mkdir(p: &Path, m: u32) {
        std::fs::create_dir_all(p).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    }
    fn file(p: &Path, bytes: &[u8], m: u32) {
        std::fs::write(p, bytes).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let cases: [(&str, Prepare); 5] = [
        ("events directory 0755", |root| mkdir(&root.join("events"), 0o755)),
        ("symlinked events directory", |root| {
            mkdir(&root.join("elsewhere"), 0o700);
            std::os::unix::fs::symlink("elsewhere", root.join("events")).unwrap();
        }),
        ("unexpected file", |root| {
            mkdir(&root.join("events"), 0o700);
            file(&root.join("events/notes.txt"), b"x", 0o600);
        }),
        ("symlinked lock directory", |root| {
            mkdir(&root.join("events"), 0o700);
            mkdir(&root.join("lockdir"), 0o700);
            std::os::unix::fs::symlink("../lockdir", root.join("events/.gateway-lock")).unwrap();
        }),
        ("lock with an extra file", |root| {
            mkdir(&root.join("events/.gateway-lock"), 0o700);
            std::fs::set_permissions(root.join("events"), std::fs::Permissions::from_mode(0o700)).unwrap();
            file(&root.join("events/.gateway-lock/owner"), b"{\"pid\":1,\"start_ref\":\"00\"}\n", 0o600);
            file(&root.join("events/.gateway-lock/extra"), b"keep me", 0o600);
        }),
    ];
    for (name, prepare) in cases {
        let mut d = Deployment::baseline();
        d.write_documents();
        let root = d.path("artifacts");
        mkdir(&root, 0o700);
        prepare(&root);
        let before: Vec<(PathBuf, Vec<u8>)> = {
            let mut files = Vec::new();
            files_under(&root, &mut files);
            files.sort();
            files.into_iter().map(|f| (f.clone(), std::fs::read(&f).unwrap())).collect()
        };
        let out = run_with_deadline(d.command(), EXIT_DEADLINE);
        assert_startup_error(&out, "artifact_root_unavailable", name);
        let mut after = Vec::new();
        files_under(&root, &mut after);
        after.sort();
        let after: Vec<(PathBuf, Vec<u8>)> =
            after.into_iter().map(|f| (f.clone(), std::fs::read(&f).unwrap())).collect();
        assert_eq!(after, before, "{name}: nothing was written or changed");
    }
}
