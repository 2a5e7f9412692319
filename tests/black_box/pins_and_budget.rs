//! pins.md §10 and §12.3–§12.4 for provider-free tools, and the descriptor budget of lifecycle.md §10.4,
//! against the real binary.

use crate::support;

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use support::{assert_startup_error, run_with_deadline, Deployment, Gateway};

fn addr(d: &Deployment) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], d.port))
}

fn discover(d: &Deployment) -> Value {
    let mut cmd = d.command();
    cmd.arg("--print-pins").env_remove("GATEWAY_TOKEN");
    let out = run_with_deadline(cmd, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "discovery: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty());
    assert_eq!(out.stdout.last(), Some(&b'\n'), "one line");
    serde_json::from_slice(&out.stdout).expect("pins JSON")
}

#[test]
fn discovery_prints_the_pins_that_serving_verifies() {
    let mut d = Deployment::baseline();
    // A stale content pin does not change the output (pins.md §10.3).
    d.gateway["tools"][0]["expected_application_content_digest"] =
        json!(format!("sha256:{}", "0".repeat(64)));
    d.write_documents();
    let before = d.tree();
    // The port is held by someone else: discovery binds nothing, so it still succeeds (pins.md §11.6).
    let _holder = std::net::TcpListener::bind(("127.0.0.1", d.port)).expect("hold");
    let pins = discover(&d);
    assert_eq!(d.tree(), before, "discovery creates nothing (no artifacts/ directory)");
    assert_eq!(
        pins,
        json!({"echo": {"expected_application_content_digest": support::ECHO_PIN,
                        "installation_config_pins": {}, "provider_snapshot_pins": {}}})
    );
    drop(_holder);
    // Copying the printed members into the document makes serving start.
    for (k, v) in pins["echo"].as_object().expect("object") {
        d.gateway["tools"][0][k] = v.clone();
    }
    d.write_documents();
    let gateway = Gateway::start(d.command(), addr(&d));
    let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

/// Copies `config-examples/quickstart` into a temporary directory on a free port.
fn quickstart() -> (tempfile::TempDir, u16) {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples/quickstart");
    let status = Command::new("cp")
        .arg("-R")
        .arg(format!("{}/.", src.display()))
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(status.success());
    let port = support::free_port("127.0.0.1");
    let path = dir.path().join("ptc-gateway.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    doc["listen"]["port"] = json!(port);
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).expect("json")).expect("write");
    (dir, port)
}

fn quickstart_command(dir: &std::path::Path) -> Command {
    let mut cmd = support::ptc();
    cmd.current_dir(dir).args(["gateway", "ptc-gateway.json", "--env-file", "credentials.env"]);
    cmd
}

#[test]
fn quickstart_pins_are_current_and_one_changed_byte_refuses() {
    let (dir, port) = quickstart();
    let mut cmd = quickstart_command(dir.path());
    cmd.arg("--print-pins");
    let out = run_with_deadline(cmd, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let pins: Value = serde_json::from_slice(&out.stdout).expect("json");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("ptc-gateway.json")).expect("read"))
            .expect("json");
    assert_eq!(
        pins["greet"]["expected_application_content_digest"],
        doc["tools"][0]["expected_application_content_digest"],
        "the checked-in quickstart pin is the one discovery prints"
    );
    let gateway = Gateway::start(quickstart_command(dir.path()), SocketAddr::from(([127, 0, 0, 1], port)));
    let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));

    for file in ["greet/greet.luau", "greet/input.schema.json"] {
        let path = dir.path().join(file);
        let original = std::fs::read(&path).expect("read");
        let mut changed = original.clone();
        changed.push(b' ');
        std::fs::write(&path, &changed).expect("write");
        let out = run_with_deadline(quickstart_command(dir.path()), Duration::from_secs(20));
        assert_startup_error(&out, "application_content_digest_mismatch", file);
        std::fs::write(&path, &original).expect("restore");
    }
}

/// The provider-free baseline's budget: 24 + 64 + 2 + (128 + 1×4 + 0 + 2×4) = 230.
const BUDGET: u64 = 230;

fn with_soft_limit(d: &Deployment, soft: u64) -> Command {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--nofile={soft}:4096")).arg(env!("CARGO_BIN_EXE_ptc"));
    cmd.current_dir(d.dir.path()).args(["gateway", "ptc-gateway.json"]).env("GATEWAY_TOKEN", support::TOKEN);
    cmd.env_remove("PTC_LOG");
    cmd
}

#[test]
fn descriptor_budget_exact_and_minus_one() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        panic!("prlimit (util-linux) is required; .ci/run installs it");
    }
    let mut d = Deployment::baseline();
    d.write_documents();
    let out = run_with_deadline(with_soft_limit(&d, BUDGET - 1), Duration::from_secs(20));
    assert_startup_error(&out, "listener_capacity_exceeded", "budget - 1");
    let gateway = Gateway::start(with_soft_limit(&d, BUDGET), addr(&d));
    let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

#[test]
fn budget_precedes_the_audit_directory() {
    // config.md §11 row 93: a symlinked audit directory is not looked at before the budget fails.
    let mut d = Deployment::baseline();
    let manifest = {
        let mut m = support::echo_manifest();
        m["effect"] = json!("write");
        m
    };
    d.write_file("echo/ptc.json", &serde_json::to_string(&manifest).expect("json"));
    d.gateway["tools"][0]["expected_application_content_digest"] =
        json!(support::content_pin::of(&d.path("echo/ptc.json")));
    d.gateway["tools"][0]["allow_write"] = json!(true);
    d.gateway["private_audit"] =
        json!({"directory": "audit", "max_file_bytes": 1048576, "max_retained_files": 4});
    std::fs::create_dir_all(d.path("real-audit")).expect("mkdir");
    std::os::unix::fs::symlink("real-audit", d.path("audit")).expect("symlink");
    d.write_documents();
    let out = run_with_deadline(with_soft_limit(&d, BUDGET - 1), Duration::from_secs(20));
    assert_startup_error(&out, "listener_capacity_exceeded", "row 93");
}
