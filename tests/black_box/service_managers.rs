//! lifecycle.md §9 against the real binary: the systemd notification datagrams on a socket the test owns
//! (as systemd does, through `NOTIFY_SOCKET`), and the example unit and plist under `config-examples/`.

use crate::support;

use std::io::Read;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use support::{http_get, Deployment};

/// The test's end of the notification protocol: a bound datagram socket in a private directory.
struct NotifySocket {
    _dir: tempfile::TempDir,
    path: PathBuf,
    socket: UnixDatagram,
}

impl NotifySocket {
    fn bind() -> NotifySocket {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let socket = UnixDatagram::bind(&path).unwrap();
        socket.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        NotifySocket { _dir: dir, path, socket }
    }

    /// The next datagram's lines, or `None` when none arrived within the poll interval.
    fn poll(&self) -> Option<Vec<String>> {
        let mut buf = [0u8; 4096];
        let n = self.socket.recv(&mut buf).ok()?;
        let text = String::from_utf8(buf[..n].to_vec()).unwrap();
        assert!(text.ends_with('\n'), "every line is LF-terminated: {text:?}");
        Some(text.lines().map(str::to_owned).collect())
    }
}

fn addr(d: &Deployment) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], d.port))
}

fn ready_status(d: &Deployment) -> Option<u16> {
    http_get(addr(d), "/health/ready").ok().map(|r| r.status)
}

/// Receives datagrams until one holds `wanted`, checking `each` on every datagram before it; returns
/// every line seen, in order.
fn until(
    socket: &NotifySocket,
    wanted: &str,
    deadline: Duration,
    mut each: impl FnMut(&[String]),
) -> Vec<String> {
    let start = Instant::now();
    let mut seen = Vec::new();
    loop {
        if let Some(lines) = socket.poll() {
            each(&lines);
            let done = lines.iter().any(|l| l == wanted);
            seen.extend(lines);
            if done {
                return seen;
            }
        }
        assert!(start.elapsed() < deadline, "no {wanted} within {deadline:?}; saw {seen:?}");
    }
}

#[test]
fn ready_after_health_is_green_stopping_after_sigterm_then_the_exit() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let notify = NotifySocket::bind();
    let mut cmd = d.command();
    // 200 ms watchdog: pings every 100 ms, from process start (§9.1).
    cmd.env("NOTIFY_SOCKET", &notify.path).env("WATCHDOG_USEC", "200000").env_remove("WATCHDOG_PID");
    let mut guard =
        Reaped(cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap());

    let before_ready = until(&notify, "READY=1", Duration::from_secs(20), |lines| {
        if lines.iter().any(|l| l == "READY=1") {
            // READY=1 is sent only once readiness is true (§9.1), so the health answer is already 200.
            assert_eq!(ready_status(&d), Some(200), "READY=1 arrived before /health/ready was 200");
        }
    });
    // Watchdog pings run from process start (§9.1), so under load one may come before the first status.
    let first_status = before_ready.iter().find(|l| *l != "WATCHDOG=1");
    assert_eq!(first_status.map(String::as_str), Some("STATUS=starting"), "{before_ready:?}");
    assert_eq!(before_ready.iter().filter(|l| *l == "READY=1").count(), 1);
    assert!(!before_ready.iter().any(|l| l == "STOPPING=1"), "{before_ready:?}");

    // The watchdog keeps ticking while serving.
    until(&notify, "WATCHDOG=1", Duration::from_secs(5), |_| {});

    let pid = nix::unistd::Pid::from_raw(guard.id() as i32);
    nix::sys::signal::kill(pid, Signal::SIGTERM).unwrap();
    let after = until(&notify, "STOPPING=1", Duration::from_secs(10), |lines| {
        assert!(!lines.iter().any(|l| l == "READY=1"), "READY=1 is sent once: {lines:?}");
    });
    assert!(after.iter().any(|l| l == "STATUS=draining"), "{after:?}");

    let start = Instant::now();
    let status = loop {
        if let Some(status) = guard.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no exit after STOPPING=1");
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    guard.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.is_empty(), "a clean stop prints nothing: {stderr}");
    // After the exit nothing more arrives but watchdog pings sent before it.
    while let Some(lines) = notify.poll() {
        assert!(lines.iter().all(|l| l == "WATCHDOG=1"), "after STOPPING=1: {lines:?}");
    }
}

#[test]
fn a_startup_failure_sends_neither_ready_nor_stopping() {
    let mut d = Deployment::baseline();
    d.gateway["version"] = serde_json::json!(2);
    d.write_documents();
    let notify = NotifySocket::bind();
    let mut cmd = d.command();
    cmd.env("NOTIFY_SOCKET", &notify.path).env_remove("WATCHDOG_USEC");
    let output = support::run_with_deadline(cmd, Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(78));
    let mut lines = Vec::new();
    while let Some(datagram) = notify.poll() {
        lines.extend(datagram);
    }
    assert_eq!(lines, vec!["STATUS=starting".to_owned()]);
}

/// Kills and reaps the child on every path.
struct Reaped(std::process::Child);

impl std::ops::Deref for Reaped {
    type Target = std::process::Child;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn example(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples").join(rel)
}

/// Whether a tool can run here; `None` with the reason when it cannot.
fn tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

#[test]
fn the_systemd_unit_has_the_required_settings_and_passes_systemd_analyze() {
    let unit_path = example("systemd/ptc-gateway.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    let lines: Vec<&str> = unit.lines().map(str::trim).collect();
    // lifecycle.md §9.1: the settings the example MUST contain, exactly.
    for required in [
        "Type=notify",
        "NotifyAccess=main",
        "KillSignal=SIGTERM",
        "KillMode=mixed",
        "TimeoutStopSec=45",
        "Restart=on-failure",
        "RestartPreventExitStatus=78",
    ] {
        assert!(lines.contains(&required), "{required} missing from the unit");
    }
    let exec = lines.iter().find(|l| l.starts_with("ExecStart=")).expect("ExecStart=");
    let argv: Vec<&str> = exec["ExecStart=".len()..].split_whitespace().collect();
    assert!(argv[0].starts_with('/') && argv[1] == "gateway" && argv[2].starts_with('/'), "{exec}");
    let env_file = argv.iter().position(|a| *a == "--env-file").expect("--env-file");
    assert!(argv[env_file + 1].starts_with('/'), "{exec}");
    let value = |key: &str| -> u64 {
        let line = lines.iter().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("{key} missing"));
        line[key.len()..].trim_end_matches('s').parse().unwrap_or_else(|_| panic!("{line}"))
    };
    // The quickstart has no provider, so no start_timeout_ms: any start timeout above the startup of
    // the stages is enough; the unit documents its margin.
    assert!(value("TimeoutStartSec=") >= 30);
    assert!(value("LimitNOFILE=") >= 1024);

    let Some(analyze) = tool("systemd-analyze") else {
        println!("SKIP systemd-analyze verify: systemd-analyze is not installed (.ci/run installs systemd)");
        return;
    };
    // verify checks that ExecStart's binary exists: point a copy of the unit at a binary that does.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("ptc-gateway.service");
    let exe = env!("CARGO_BIN_EXE_ptc");
    std::fs::write(&copy, unit.replace(argv[0], exe)).unwrap();
    let out = Command::new(analyze).arg("verify").arg(&copy).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("System has not been booted with systemd") {
        println!("SKIP systemd-analyze verify: {}", stderr.trim());
        return;
    }
    // Lines about the host's own units are not about ours.
    let ours: Vec<&str> = stderr.lines().filter(|l| l.contains("ptc-gateway.service")).collect();
    assert!(out.status.success() && ours.is_empty(), "systemd-analyze verify: {stderr}");
}

#[test]
fn the_launchd_plist_is_well_formed_and_waits_past_the_drain() {
    let plist = example("launchd/dev.ptc-gateway.plist");
    let Some(python) = tool("python3") else {
        panic!("python3 is needed to parse the plist (plistlib)");
    };
    // plistlib is the reference reader of Apple's XML property lists; print the keys the spec names.
    let script = r#"
import json, plistlib, sys
with open(sys.argv[1], "rb") as f:
    p = plistlib.load(f, fmt=plistlib.FMT_XML)
print(json.dumps({
    "exit": p.get("ExitTimeOut"),
    "keepalive": p.get("KeepAlive"),
    "args": p.get("ProgramArguments"),
    "stderr": p.get("StandardErrorPath"),
    "throttle": p.get("ThrottleInterval"),
    "nofile": p.get("SoftResourceLimits", {}).get("NumberOfFiles"),
    "env": p.get("EnvironmentVariables", {}),
}, sort_keys=True))
"#;
    let out = Command::new(python).arg("-c").arg(script).arg(&plist).output().unwrap();
    assert!(out.status.success(), "plistlib: {}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // lifecycle.md §9.2.
    assert!(v["exit"].as_i64().unwrap() >= 45, "{v}");
    assert_eq!(v["keepalive"], serde_json::json!({"SuccessfulExit": false}), "{v}");
    let args: Vec<&str> = v["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert!(args[0].starts_with('/') && args[1] == "gateway" && args[2].starts_with('/'), "{args:?}");
    let env_file = args.iter().position(|a| *a == "--env-file").expect("--env-file");
    assert!(args[env_file + 1].starts_with('/'), "{args:?}");
    assert!(v["stderr"].as_str().unwrap().starts_with('/'), "{v}");
    assert!(v["throttle"].as_i64().unwrap() > 0, "{v}");
    assert!(v["nofile"].as_i64().unwrap() >= 1024, "{v}");
    let env = v["env"].as_object().unwrap();
    assert!(env.keys().all(|k| !k.contains("TOKEN")), "secrets belong in the env file: {env:?}");
}

/// issue 17 scope 9: `scripts/run-gateway-source.sh` execs the gateway, so SIGTERM sent to the script's
/// pid reaches the gateway itself and ends in the same clean staged shutdown (exit 0, nothing printed, the
/// event log's `shutdown_stage` records). Cargo is replaced on `PATH` by a stand-in that records its
/// arguments and builds nothing, and the target directory is the one holding the binary under test, so
/// the test neither compiles nor changes what other tests run.
#[test]
fn the_source_wrapper_execs_the_gateway_so_sigterm_reaches_it() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let bin = Path::new(env!("CARGO_BIN_EXE_ptc"));
    let target = bin.parent().and_then(Path::parent).expect("the target directory");
    let fake = tempfile::tempdir().expect("tempdir");
    let record = fake.path().join("cargo-args");
    let cargo = fake.path().join("cargo");
    std::fs::write(&cargo, format!("#!/bin/sh\necho \"$@\" > '{}'\n", record.display())).expect("fake cargo");
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/run-gateway-source.sh");
    let path = format!("{}:{}", fake.path().display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = Command::new("bash");
    cmd.arg(&script)
        .arg("ptc-gateway.json")
        .current_dir(d.dir.path())
        .env("PATH", path)
        .env("PTC_SOURCE_PROFILE", "dev")
        .env("CARGO_TARGET_DIR", target)
        .env("GATEWAY_TOKEN", support::TOKEN)
        .env_remove("PTC_LOG")
        .env_remove("NOTIFY_SOCKET");
    let mut guard = Reaped(
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn"),
    );
    let start = Instant::now();
    while ready_status(&d) != Some(200) {
        assert!(guard.try_wait().expect("wait").is_none(), "the gateway exited before ready");
        assert!(start.elapsed() < Duration::from_secs(20), "not ready within 20 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The script's process is now the gateway: exec kept the pid.
    let exe = std::fs::read_link(format!("/proc/{}/exe", guard.id())).expect("exe");
    assert_eq!(exe, bin.canonicalize().expect("binary"), "the script exec'd the gateway");
    let args = std::fs::read_to_string(&record).expect("cargo was asked to build");
    assert!(
        args.starts_with("build --manifest-path ") && args.trim_end().ends_with("--locked --quiet --bin ptc"),
        "{args}"
    );
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(guard.id() as i32), Signal::SIGTERM).expect("kill");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = guard.try_wait().expect("wait") {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    guard.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("read");
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.is_empty(), "a clean stop prints nothing: {stderr}");
    let stages: Vec<serde_json::Value> = support::providers::event_records(&d)
        .into_iter()
        .filter(|r| r["kind"] == "shutdown_stage" && r["outcome"] != "started")
        .collect();
    assert!(!stages.is_empty() && stages.iter().all(|r| r["outcome"] == "clean"), "{stages:?}");
}
