//! lifecycle.md §1, §2, §7, §8 against the real binary: the command line, signals, the env file, and
//! the exit statuses of a clean and an unclean stop.

use crate::support;

use std::net::SocketAddr;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::json;
use support::{assert_startup_error, ptc, run_with_deadline, Deployment, Gateway, TOKEN};

fn addr(d: &Deployment) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], d.port))
}

#[test]
fn version_help_and_unknown_subcommands() {
    let version = run_with_deadline(
        {
            let mut c = ptc();
            c.arg("--version");
            c
        },
        Duration::from_secs(5),
    );
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&version.stdout), format!("ptc {}\n", env!("CARGO_PKG_VERSION")));
    assert!(version.stderr.is_empty());

    // --help wins over every other argument check and reads no file.
    let help = run_with_deadline(
        {
            let mut c = ptc();
            c.args(["gateway", "/nonexistent.json", "--verbose", "-h"]);
            c
        },
        Duration::from_secs(5),
    );
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("Usage:"));
    assert!(help.stderr.is_empty());

    for argv in [&[][..], &["serve"][..]] {
        let out = run_with_deadline(
            {
                let mut c = ptc();
                c.args(argv);
                c
            },
            Duration::from_secs(5),
        );
        assert_eq!(out.status.code(), Some(2), "{argv:?}");
        assert!(out.stdout.is_empty(), "{argv:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("Usage:"), "{argv:?}");
    }

    // Any other usage error of `ptc gateway` stays `config_invalid` (lifecycle.md §1.1).
    for argv in [&["gateway", "a.json", "b.json"][..], &["gateway", "--env-file", "e.env"][..]] {
        let out = run_with_deadline(
            {
                let mut c = ptc();
                c.args(argv);
                c
            },
            Duration::from_secs(5),
        );
        assert_startup_error(&out, "config_invalid", &format!("{argv:?}"));
    }
}

/// lifecycle.md §1.1–§1.6: every subcommand typed with no argument at all prints the usage text (the text
/// `--help` prints) on stderr, nothing on stdout, and exits 2.
#[test]
fn a_bare_subcommand_prints_the_usage() {
    let help = run_with_deadline(
        {
            let mut c = ptc();
            c.arg("--help");
            c
        },
        Duration::from_secs(5),
    );
    let usage = String::from_utf8(help.stdout).expect("UTF-8 usage");
    let first_lines = "Usage:\n  ptc gateway CONFIG [--env-file FILE] [--print-pins]\n  ptc pin CONFIG [--env-file FILE]\n  ptc check CONFIG [--env-file FILE]\n  ptc call ENDPOINT TOOL [--arguments JSON]\n  ptc list ENDPOINT [--json]\n  ptc replay CONFIG PATH… [--env-file FILE] [--json]\n  ptc --help | --version\n\n";
    assert!(usage.starts_with(first_lines), "the usage text\n{usage}");
    for subcommand in ["gateway", "pin", "check", "call", "list", "replay"] {
        let out = run_with_deadline(
            {
                let mut c = ptc();
                c.arg(subcommand).env("PTC_GATEWAY_TOKEN", TOKEN);
                c
            },
            Duration::from_secs(5),
        );
        assert_eq!(out.status.code(), Some(2), "ptc {subcommand}");
        assert!(out.stdout.is_empty(), "ptc {subcommand}: stdout");
        assert_eq!(String::from_utf8_lossy(&out.stderr), usage, "ptc {subcommand}: stderr");
    }
}

fn idle_stop(signal: Signal) {
    let mut d = Deployment::baseline();
    d.write_documents();
    let gateway = Gateway::start(d.command(), addr(&d));
    let (code, elapsed, stdout, stderr) = gateway.signal_and_wait(signal, Duration::from_secs(10));
    assert_eq!(code, Some(0), "{signal}: stderr {}", String::from_utf8_lossy(&stderr));
    assert!(elapsed < Duration::from_secs(1), "{signal}: an idle gateway stops within 1 s, took {elapsed:?}");
    assert!(stdout.is_empty() && stderr.is_empty(), "{signal}: a clean stop prints nothing");
    assert!(!d.path("artifacts/events/.gateway-lock").exists(), "{signal}: the events lock is released");
}

#[test]
fn sigterm_while_idle_exits_0_within_1s() {
    idle_stop(Signal::SIGTERM);
}

#[test]
fn sigint_while_idle_exits_0_within_1s() {
    idle_stop(Signal::SIGINT);
}

#[test]
fn sighup_is_ignored() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let gateway = Gateway::start(d.command(), addr(&d));
    let pid = nix::unistd::Pid::from_raw(gateway.child.id() as i32);
    nix::sys::signal::kill(pid, Signal::SIGHUP).expect("hup");
    // Still serving afterwards: a fresh health request answers.
    let resp = support::http_get(addr(&d), "/health/ready").expect("health after SIGHUP");
    assert_eq!(resp.status, 200);
    let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

#[test]
fn a_shutdown_that_cannot_release_the_events_lock_exits_70() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let gateway = Gateway::start(d.command(), addr(&d));
    // An entry the gateway did not create keeps `.gateway-lock` from being removed (audit-events.md §1.4).
    std::fs::write(d.path("artifacts/events/.gateway-lock/intruder"), b"x").expect("plant a file");
    let (code, _, stdout, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(15));
    assert_eq!(code, Some(70));
    assert!(stdout.is_empty());
}

#[test]
fn env_file_is_anchored_at_the_invocation_directory() {
    let mut d = Deployment::baseline();
    d.write_documents();
    d.write_file("conf/e.env", &format!("GATEWAY_TOKEN={}\n", "b".repeat(32)));
    // Row 104: the token only in the file, given relative to the invocation directory.
    let mut cmd = d.command();
    cmd.env_remove("GATEWAY_TOKEN").args(["--env-file", "conf/e.env"]);
    let gateway = Gateway::start(cmd, addr(&d));
    let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));
    // The same relative path from another directory names another (missing) file: row 102.
    let mut cmd = ptc();
    cmd.current_dir(d.path("conf"))
        .args(["gateway", "../ptc-gateway.json", "--env-file", "conf/e.env"])
        .env_remove("GATEWAY_TOKEN");
    let out = run_with_deadline(cmd, Duration::from_secs(10));
    assert_startup_error(&out, "credential_unavailable", "env file relative to another directory");
}

#[test]
fn env_file_values_win_even_when_empty() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let cases = [
        // Row 101: the process value is valid, the file's empty value wins.
        ("GATEWAY_TOKEN=\n".to_string(), Some(TOKEN.to_string()), false),
        // A key that was set before (to an invalid 31-byte value) takes the file's valid value.
        (format!("GATEWAY_TOKEN={}\n", "c".repeat(32)), Some("a".repeat(31)), true),
        // Row 103: a line without `=` refuses the whole file.
        ("KEY\n".to_string(), Some(TOKEN.to_string()), false),
    ];
    for (i, (file, process, starts)) in cases.into_iter().enumerate() {
        d.write_file("e.env", &file);
        let mut cmd = d.command();
        cmd.args(["--env-file", "e.env"]);
        match process {
            Some(v) => cmd.env("GATEWAY_TOKEN", v),
            None => cmd.env_remove("GATEWAY_TOKEN"),
        };
        if starts {
            let gateway = Gateway::start(cmd, addr(&d));
            let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
            assert_eq!(code, Some(0), "case {i}");
        } else {
            let out = run_with_deadline(cmd, Duration::from_secs(10));
            assert_startup_error(&out, "credential_unavailable", &format!("case {i}"));
        }
    }
}

#[test]
fn a_second_gateway_on_the_same_artifact_root_is_refused() {
    // config.md §11 row 139.
    let mut d = Deployment::baseline();
    d.write_documents();
    let gateway = Gateway::start(d.command(), addr(&d));
    let mut second = d.gateway.clone();
    let (a, b) = (
        std::net::TcpListener::bind("127.0.0.1:0").expect("bind"),
        std::net::TcpListener::bind("127.0.0.1:0").expect("bind"),
    );
    second["listen"]["port"] = json!(a.local_addr().expect("addr").port());
    second["pcc"]["port"] = json!(b.local_addr().expect("addr").port());
    drop((a, b));
    d.write_file("second.json", &serde_json::to_string(&second).expect("json"));
    let mut cmd = ptc();
    cmd.current_dir(d.dir.path()).args(["gateway", "second.json"]).env("GATEWAY_TOKEN", TOKEN);
    let out = run_with_deadline(cmd, Duration::from_secs(10));
    assert_startup_error(&out, "artifact_root_unavailable", "row 139");
    let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

#[test]
fn a_stale_events_lock_is_taken_over() {
    // config.md §11 row 138: a lock left by a gateway killed with SIGKILL.
    let mut d = Deployment::baseline();
    d.write_documents();
    let gateway = Gateway::start(d.command(), addr(&d));
    let (code, ..) = gateway.signal_and_wait(Signal::SIGKILL, Duration::from_secs(10));
    assert_eq!(code, None, "killed by a signal");
    assert!(d.path("artifacts/events/.gateway-lock/owner").exists(), "SIGKILL leaves the lock behind");
    let gateway = Gateway::start(d.command(), addr(&d));
    let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}

/// lifecycle.md §6.5 vector RD1: a client that connects after the bind (stage 11) and before readiness
/// waits in the backlog and is served once ready, never refused 503. The fault point `slow_readiness`
/// holds stage 12 for 1,000 ms between the start of the listener owners and readiness, the window in
/// which an accept loop that ran before readiness answered 503.
#[test]
fn rd1_a_client_connected_before_readiness_is_served_once_ready() {
    use std::io::Write;
    use std::net::TcpStream;
    use std::process::Stdio;
    use std::time::Instant;

    let mut d = Deployment::baseline();
    d.write_documents();
    let at = addr(&d);
    let mut command = d.command();
    command.env("PTC_FAULT", "slow_readiness");
    let child =
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    // Reaped on drop, also when an assertion below fails.
    let mut gateway = Gateway { child, addr: at };
    let list = support::mcp::Req::tools_list(at).bytes();
    let health = format!("GET /health/ready HTTP/1.1\r\nHost: {}\r\n\r\n", support::authority(at));
    let started = Instant::now();
    let mut early = loop {
        if let Ok(Some(status)) = gateway.child.try_wait() {
            panic!("the gateway exited with {status} before it listened");
        }
        if let Ok(first) = TcpStream::connect(at) {
            let second = TcpStream::connect(at).expect("a second connection while the first waits");
            break [first, second];
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the port never accepted a connection");
        std::thread::sleep(Duration::from_millis(2));
    };
    let connected = started.elapsed();
    early[0].write_all(health.as_bytes()).expect("health request");
    early[1].write_all(&list).expect("tools/list request");
    let mut answers = Vec::new();
    for stream in &mut early {
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        answers.push(support::read_response(stream, false).expect("an answer once ready"));
    }
    assert_eq!(
        (answers[0].status, String::from_utf8_lossy(&answers[0].body).into_owned()),
        (200, r#"{"status":"ready"}"#.to_owned()),
        "RD1: health on a connection made {connected:?} after the spawn"
    );
    // The same listing a client connected after readiness gets, byte for byte.
    let late = support::raw_exchange(at, &list, false).expect("tools/list once ready");
    assert_eq!(late.status, 200);
    assert_eq!((answers[1].status, &answers[1].body), (200, &late.body), "RD1: tools/list");
    let (code, ..) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(10));
    assert_eq!(code, Some(0));
}
