//! The relay sides of the forward rows (issue 14, goal G5; issue 27, scope 6): the stdio fixture behind the
//! stdio-to-HTTP relays users run today, so that the table shows the gateway next to them: `mcp-proxy` from
//! PyPI and `supergateway` from npm.
//!
//! Owns installing each relay (`benches/relay/install.sh`: the exact pin of `benches/relay/requirements.txt`,
//! with hashes, into `target/bench-relay/venv`; `benches/supergateway/install.sh`: `npm ci` of
//! `benches/supergateway/package-lock.json` into `target/bench-supergateway`), starting it on a free
//! loopback port over the same fixture (`tests/fixtures/mcp_fixture.py`, mode `modern`, flag `tools_cap`;
//! `supergateway --stdio … --outputTransport streamableHttp --stateful`, so that one session keeps one
//! fixture), stopping and reaping it with the fixture it spawned, and a minimal Streamable HTTP client for
//! it: `initialize`, `notifications/initialized`, then `tools/call echo` in that session, one keep-alive
//! connection per round (each relay's idle keep-alive is 5 s, shorter than the other sides of a round may
//! take); `mcp-proxy` answers JSON, `supergateway` a one-event stream, and both are read to their end. Any
//! failure is returned as a reason, which the table prints as `not measured (reason)`: nothing here fakes
//! a figure, and nothing asserts a threshold.

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

use super::forward::{script, SIDE_DEADLINE};
use super::{try_read_response, Measured};
use crate::support;

/// The pinned `supergateway`, read from the package file the install uses.
pub fn supergateway_version() -> String {
    let package = root().join("benches/supergateway/package.json");
    std::fs::read_to_string(package)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v["dependencies"]["supergateway"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "(unpinned?)".to_owned())
}

/// The pinned `mcp-proxy`, read from the requirements file the install uses (so the table names what ran).
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

/// Which relay.
#[derive(Clone, Copy)]
pub enum Kind {
    McpProxy,
    Supergateway,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::McpProxy => "mcp-proxy",
            Kind::Supergateway => "supergateway",
        }
    }

    /// The install script, and where it installs.
    fn install(self) -> (PathBuf, PathBuf) {
        match self {
            Kind::McpProxy => {
                (root().join("benches/relay/install.sh"), root().join("target/bench-relay/venv"))
            }
            Kind::Supergateway => {
                (root().join("benches/supergateway/install.sh"), root().join("target/bench-supergateway"))
            }
        }
    }
}

/// One relay, started and in session: measured once per round by [`Side::round`].
pub struct Side {
    relay: Relay,
    session: String,
    next_id: usize,
    /// Holds the relay's log and the fixture's marker file.
    _dir: tempfile::TempDir,
}

impl Side {
    /// Installs (when missing) and starts `kind`, and opens its session; or why that could not be done.
    pub async fn start(kind: Kind) -> Result<Side, String> {
        let (script, at) = kind.install();
        let into = at.clone();
        tokio::task::spawn_blocking(move || install(kind, &script, &into))
            .await
            .map_err(|e| format!("install task: {e}"))??;
        let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
        let mut relay = Relay::start(kind, &at, dir.path())?;
        relay.wait_listening().await?;
        let session = match tokio::time::timeout(SIDE_DEADLINE, handshake(relay.addr)).await {
            Ok(Ok(session)) => session,
            Ok(Err(reason)) => return Err(relay.with_stderr(reason)),
            Err(_) => {
                return Err(relay.with_stderr("the session handshake did not finish in time".to_owned()))
            }
        };
        Ok(Side { relay, session, next_id: 1, _dir: dir })
    }

    /// One round: the plan's sequential `tools/call echo` after its unmeasured ones, on a new connection.
    pub async fn round(&mut self) -> Result<Measured, String> {
        let (addr, first) = (self.relay.addr, self.next_id);
        let plan = super::rounds::plan();
        self.next_id += plan.warm_calls + plan.calls;
        let run = drive(addr, &self.session, first, plan.warm_calls, plan.calls);
        let result = match tokio::time::timeout(SIDE_DEADLINE, run).await {
            Ok(result) => result,
            Err(_) => Err(format!("a round did not finish within {} s", SIDE_DEADLINE.as_secs())),
        };
        result.map_err(|reason| self.relay.with_stderr(reason))
    }
}

/// Runs the install script of `kind` (idempotent) into `at` with a deadline; its output goes to a file,
/// whose last line is the reason on failure.
fn install(kind: Kind, script: &Path, at: &Path) -> Result<(), String> {
    let name = kind.name();
    let log_dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let log = log_dir.path().join("install.log");
    let out = File::create(&log).map_err(|e| format!("install log: {e}"))?;
    let err = out.try_clone().map_err(|e| format!("install log: {e}"))?;
    let shown = script.strip_prefix(root()).unwrap_or(script).display().to_string();
    let mut child = Command::new("bash")
        .arg(script)
        .arg(at)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run bash {shown} ({name}): {e}"))?;
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
                return Err(format!("{shown} did not finish within {} s", INSTALL_DEADLINE.as_secs()));
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("waiting for {shown}: {e}"));
            }
        }
    };
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    eprint!("{text}");
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status}): {}", last_line(&text)))
    }
}

fn last_line(text: &str) -> String {
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output").trim().replace('|', "/")
}

/// The running relay (and the fixture it spawned, in the same process group), stopped and reaped on drop.
struct Relay {
    kind: Kind,
    child: Child,
    addr: SocketAddr,
    stderr: PathBuf,
}

impl Relay {
    fn start(kind: Kind, at: &Path, dir: &Path) -> Result<Relay, String> {
        let port = support::free_port("127.0.0.1");
        let stderr = dir.join("relay.stderr");
        let marker = dir.join("marker.jsonl");
        let err = File::create(&stderr).map_err(|e| format!("relay log: {e}"))?;
        let fixture =
            [support::providers::python(), script(), "modern".to_owned(), marker.display().to_string()];
        let mut command = match kind {
            Kind::McpProxy => {
                let mut c = Command::new(at.join("bin/mcp-proxy"));
                c.args(["--host", "127.0.0.1", "--port", &port.to_string(), "--log-level", "WARNING"])
                    .args(["--env", "FIXTURE_FLAGS", "tools_cap", "--"])
                    .args(fixture);
                c
            }
            Kind::Supergateway => {
                // `--stdio` is one shell command line (the relay spawns it with a shell); the fixture takes
                // its flags from the environment it inherits.
                let mut c = Command::new(at.join("node_modules/.bin/supergateway"));
                c.arg("--stdio")
                    .arg(fixture.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" "))
                    .args(["--outputTransport", "streamableHttp", "--stateful", "--logLevel", "none"])
                    .args(["--port", &port.to_string()])
                    .env("FIXTURE_FLAGS", "tools_cap");
                c
            }
        };
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            // Its own group, so that stopping it also stops the fixture it spawned.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", kind.name()))?;
        Ok(Relay { kind, child, addr: SocketAddr::from(([127, 0, 0, 1], port)), stderr })
    }

    /// Waits until the relay accepts connections (it listens only once its upstream is initialized).
    async fn wait_listening(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let name = self.kind.name();
                return Err(self.with_stderr(format!("{name} exited before listening ({status})")));
            }
            if TcpStream::connect(self.addr).await.is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let name = self.kind.name();
                return Err(
                    self.with_stderr(format!("{name} did not listen within {} s", START_DEADLINE.as_secs()))
                );
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
        // SIGTERM lets the relay close its stdio client (which ends the fixture; `supergateway` puts it in a
        // group of its own and signals that group itself); SIGKILL to the group after a grace period ends
        // whatever is left. The relay itself is reaped here; the fixture, its child, is
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

/// `arg` as one word of a POSIX shell command line.
fn shell_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// `initialize` and `notifications/initialized` on a connection of their own: the session id.
async fn handshake(addr: SocketAddr) -> Result<String, String> {
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
    Ok(session)
}

/// `warm + calls` sequential `tools/call echo` in `session` on one new connection, ids from `first`; the
/// last `calls` are measured.
async fn drive(
    addr: SocketAddr,
    session: &str,
    first: usize,
    warm: usize,
    calls: usize,
) -> Result<Measured, String> {
    let mut stream = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut latencies = Vec::with_capacity(calls);
    for round in 0..warm + calls {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}}}}}}"#,
            first + round
        );
        let request = post(addr, Some(session), &body);
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
            if !text.contains(r#""text":"hi""#) || text.contains(r#""isError":true"#) {
                return Err(format!(
                    "tools/call echo through the relay did not echo: {}",
                    text.replace('|', "/")
                ));
            }
        }
        if round >= warm {
            latencies.push(elapsed);
        }
    }
    Ok(Measured::sequential(latencies))
}
