//! The relay side of the forward rows (issue 14, goal G5): the stdio fixture behind `mcp-proxy`, the widely
//! used stdio-to-HTTP relay from PyPI, so that the table shows the gateway next to what users run today.
//!
//! Owns installing the relay (`benches/relay/install.sh`: the exact pin of `benches/relay/requirements.txt`,
//! with hashes, into `target/bench-relay/venv`), starting it on a free loopback port over the same fixture
//! (`tests/fixtures/mcp_fixture.py`, mode `modern`, flag `tools_cap`), stopping and reaping it with the
//! fixture it spawned (its own process group), and a minimal Streamable HTTP client for it: `initialize`,
//! `notifications/initialized`, then `tools/call echo` in one session over one keep-alive connection (the
//! relay answers JSON, not an event stream). Any failure is returned as a reason, which the table prints
//! as `not measured (reason)`: nothing here fakes a figure, and nothing asserts a threshold.

use std::fs::File;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::forward::{script, ROUNDS, SIDE_DEADLINE, WARM_UP_ROUNDS};
use super::{try_read_response, Measured};
use crate::support;

/// The pinned relay, read from the requirements file the install uses (so the table names what ran).
pub fn version() -> String {
    let requirements = root().join("benches/relay/requirements.txt");
    std::fs::read_to_string(requirements)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                l.strip_prefix("mcp-proxy==").map(|v| v.trim_end_matches([' ', '\\']).to_owned())
            })
        })
        .unwrap_or_else(|| "(unpinned?)".to_owned())
}

/// The install may fetch from PyPI; past this it has failed.
const INSTALL_DEADLINE: Duration = Duration::from_secs(600);
/// The relay starts its fixture and initializes it before it listens.
const START_DEADLINE: Duration = Duration::from_secs(60);
/// What the relay negotiates with the fixture, and so what its clients speak.
const PROTOCOL: &str = "2025-11-25";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `ROUNDS` sequential `tools/call echo` through the relay after `WARM_UP_ROUNDS` unmeasured ones, or why
/// that could not be done.
pub async fn measure() -> Result<Measured, String> {
    let venv = root().join("target/bench-relay/venv");
    let at = venv.clone();
    tokio::task::spawn_blocking(move || install(&at)).await.map_err(|e| format!("install task: {e}"))??;
    let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let mut relay = Relay::start(&venv, dir.path())?;
    relay.wait_listening().await?;
    let addr = relay.addr;
    let result = match tokio::time::timeout(SIDE_DEADLINE, drive(addr)).await {
        Ok(result) => result,
        Err(_) => Err(format!("the relay side did not finish within {} s", SIDE_DEADLINE.as_secs())),
    };
    result.map_err(|reason| relay.with_stderr(reason))
}

/// Runs `benches/relay/install.sh VENV` (idempotent) with a deadline; its output goes to a file, whose last
/// line is the reason on failure.
fn install(venv: &Path) -> Result<(), String> {
    let log_dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let log = log_dir.path().join("install.log");
    let out = File::create(&log).map_err(|e| format!("install log: {e}"))?;
    let err = out.try_clone().map_err(|e| format!("install log: {e}"))?;
    let mut child = Command::new("bash")
        .arg(root().join("benches/relay/install.sh"))
        .arg(venv)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run bash benches/relay/install.sh: {e}"))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < INSTALL_DEADLINE => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "benches/relay/install.sh did not finish within {} s",
                    INSTALL_DEADLINE.as_secs()
                ));
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("waiting for benches/relay/install.sh: {e}"));
            }
        }
    };
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    eprint!("{text}");
    if status.success() {
        Ok(())
    } else {
        Err(format!("benches/relay/install.sh failed ({status}): {}", last_line(&text)))
    }
}

fn last_line(text: &str) -> String {
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output").trim().replace('|', "/")
}

/// The running relay (and the fixture it spawned, in the same process group), stopped and reaped on drop.
struct Relay {
    child: Child,
    addr: SocketAddr,
    stderr: PathBuf,
}

impl Relay {
    fn start(venv: &Path, dir: &Path) -> Result<Relay, String> {
        let port = support::free_port("127.0.0.1");
        let stderr = dir.join("relay.stderr");
        let marker = dir.join("marker.jsonl");
        let err = File::create(&stderr).map_err(|e| format!("relay log: {e}"))?;
        let child = Command::new(venv.join("bin/mcp-proxy"))
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--log-level", "WARNING"])
            .args(["--env", "FIXTURE_FLAGS", "tools_cap", "--"])
            .arg(support::providers::python())
            .args([script(), "modern".to_owned(), marker.display().to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            // Its own group, so that stopping it also stops the fixture it spawned.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start mcp-proxy: {e}"))?;
        Ok(Relay { child, addr: SocketAddr::from(([127, 0, 0, 1], port)), stderr })
    }

    /// Waits until the relay accepts connections (it listens only once its upstream is initialized).
    async fn wait_listening(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(self.with_stderr(format!("mcp-proxy exited before listening ({status})")));
            }
            if TcpStream::connect(self.addr).await.is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(self
                    .with_stderr(format!("mcp-proxy did not listen within {} s", START_DEADLINE.as_secs())));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `reason`, with the last line the relay wrote to stderr when there is one.
    fn with_stderr(&self, reason: String) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        if text.trim().is_empty() {
            reason
        } else {
            format!("{reason}; relay stderr: {}", last_line(&text))
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        // SIGTERM lets the relay close its stdio client (which ends the fixture); SIGKILL to the group after
        // a grace period ends whatever is left. The relay itself is reaped here; the fixture, its child, is
        // reaped by init once its parent is gone.
        let group = Pid::from_raw(self.child.id() as i32);
        let _ = killpg(group, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// One JSON-RPC POST to the relay's Streamable HTTP endpoint.
fn post(addr: SocketAddr, session: Option<&str>, body: &str) -> Vec<u8> {
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: {PROTOCOL}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\r\n{body}",
        support::authority(addr),
        body.len()
    )
    .into_bytes()
}

/// Sends `request` and reads the response: its status and whole text.
async fn exchange(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    request: &[u8],
) -> Result<(u16, String), String> {
    stream.write_all(request).await.map_err(|e| format!("write: {e}"))?;
    let status = try_read_response(stream, buf).await?;
    Ok((status, String::from_utf8_lossy(buf).into_owned()))
}

/// The session handshake, then the measured calls.
async fn drive(addr: SocketAddr) -> Result<Measured, String> {
    let mut stream = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL}","capabilities":{{}},"clientInfo":{{"name":"ptc-bench","version":"1"}}}}}}"#
    );
    let (status, text) = exchange(&mut stream, &mut buf, &post(addr, None, &initialize)).await?;
    if status != 200 {
        return Err(format!("initialize answered {status}"));
    }
    let session = text
        .split("\r\n\r\n")
        .next()
        .unwrap_or("")
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_owned())
        })
        .ok_or("initialize answered without an Mcp-Session-Id")?;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _) = exchange(&mut stream, &mut buf, &post(addr, Some(&session), initialized)).await?;
    if status != 202 {
        return Err(format!("notifications/initialized answered {status}"));
    }
    let mut latencies = Vec::with_capacity(ROUNDS);
    for round in 0..WARM_UP_ROUNDS + ROUNDS {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}}}}}}"#,
            round + 1
        );
        let request = post(addr, Some(&session), &body);
        let sent = Instant::now();
        stream.write_all(&request).await.map_err(|e| format!("write: {e}"))?;
        let status = try_read_response(&mut stream, &mut buf).await?;
        let elapsed = sent.elapsed();
        if status != 200 {
            return Err(format!("tools/call answered {status}"));
        }
        if round == 0 {
            // The relay really reached the upstream: the echoed argument, no tool error.
            let text = String::from_utf8_lossy(&buf);
            if !(text.contains(r#""text":"hi""#) && text.contains(r#""isError":false"#)) {
                return Err(format!(
                    "tools/call echo through the relay did not echo: {}",
                    text.replace('|', "/")
                ));
            }
        }
        if round >= WARM_UP_ROUNDS {
            latencies.push(elapsed);
        }
    }
    Ok(Measured::sequential(latencies))
}
