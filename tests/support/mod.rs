//! Shared harness of the black-box tests: temporary deployments, the real `ptc` binary, raw HTTP.
//!
//! Every spawned gateway is reaped (a `Gateway` kills and waits on drop), every port is picked free by
//! binding port 0, and every wait is a condition polled against a deadline.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub mod audit;
pub mod http_fixture;
pub mod http_time_server;
pub mod marker;
pub mod mcp;
pub mod openai;
pub mod pcc_client;
#[cfg(feature = "fault-injection")]
pub mod pcc_fixture;
pub mod pki;
pub mod providers;
pub mod sse;
pub mod vectors;

/// The generated messages and client of `schemas/pcc_tool_gateway.proto` (pcc.md §2) that `pcc_client`
/// speaks: the library's own with `fault-injection`; without it (the bench, `cargo bench --bench gateway`,
/// issue 27 scope 7) the same build-time file, included here, since `ptc_gateway::testing` is absent.
#[cfg(feature = "fault-injection")]
pub use ptc_gateway::testing::pcc::proto as pcc_proto;
#[cfg(not(feature = "fault-injection"))]
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pcc_proto {
    include!(concat!(env!("OUT_DIR"), "/normative/pcc.toolgateway.v1.rs"));
}

/// Process-wide state that an in-process gateway reads: the audit store's test hooks (the sync gate and
/// `PTC_AUDIT_FAIL_SYNC`, read when an audit starts). The tests of one binary run as threads of one
/// process, so a test that changes that state holds this exclusively and a test whose in-process gateway
/// has a private audit holds it shared for its whole run.
static PROCESS_STATE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// Held by a test that changes the process-wide state of [`PROCESS_STATE`].
pub async fn process_state_exclusive() -> tokio::sync::RwLockWriteGuard<'static, ()> {
    PROCESS_STATE.write().await
}

/// Held by a test whose in-process gateway reads the state of [`PROCESS_STATE`].
pub async fn process_state_shared() -> tokio::sync::RwLockReadGuard<'static, ()> {
    PROCESS_STATE.read().await
}

/// Waits until `condition` holds, polling every 2 ms, and panics naming `what` once `deadline` has passed:
/// the one wait of the async tests (the blocking tests use [`providers::wait`], in the same argument order,
/// which also returns what it found).
pub async fn wait_until(what: &str, deadline: Duration, mut condition: impl FnMut() -> bool) {
    let end = Instant::now() + deadline;
    while !condition() {
        assert!(Instant::now() < end, "timed out after {deadline:?} waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// The `ptc` binary under test.
pub fn ptc() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptc"));
    cmd.env_remove("PTC_LOG").env_remove("NOTIFY_SOCKET");
    cmd
}

/// The examples' shared upstream installs, which the tests reuse rather than keep copies of (tests may
/// depend on `config-examples/`, never the reverse): `config-examples/upstreams/`, filled by its
/// `install.sh` (run by `tests/third_party/install.sh`). Its `.venv` holds `mcp-server-time` and, in the
/// same pinned closure, the `mcp` Python SDK; its `bin/` holds the committed launchers.
pub fn example_upstreams() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples/upstreams")
}

/// A TCP port that was free a moment ago on `ip`.
///
/// Ports come from below Linux's ephemeral range (32768–60999), not from `bind(0)`: a port the kernel hands
/// out for port 0 is also what it hands out to the tests' many client connections, so a gateway started a
/// moment later could find it taken (`listener_unavailable`). A random port in 20000–32767 that binds now is
/// free of that traffic.
pub fn free_port(ip: &str) -> u16 {
    hold_free_port(ip).local_addr().expect("local addr").port()
}

/// A listener on a free port of that range, held until dropped (to pick several distinct ports at once).
pub fn hold_free_port(ip: &str) -> TcpListener {
    for _ in 0..1000 {
        let port: u16 = rand::random_range(20_000..32_768);
        if let Ok(listener) = TcpListener::bind((ip, port)) {
            return listener;
        }
    }
    panic!("no free port in 20000-32767 on {ip}")
}

/// The 32-byte token of the fixtures (config.md §10).
pub const TOKEN: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// The `echo` application of pins.md §11.1, byte for byte.
pub const ECHO_LUAU: &str = "local M = {}\n\nfunction M.run(input)\n  return input\nend\n\nreturn M\n";
pub const ECHO_SCHEMA: &str = "{\"type\":\"object\"}\n";
pub const ECHO_PIN: &str = "sha256:128bcc1b3ac8b2e869fe4acc08762a9b77b2e0324e95cf3d4f867ae31976f853";

/// A deployment in a fresh temporary directory: the provider-free variant of the baseline of config.md
/// §10 (tool `echo`, an unused `notes` installation, artifacts and pcc present).
pub struct Deployment {
    pub dir: tempfile::TempDir,
    pub gateway: Value,
    pub host: Value,
    pub port: u16,
    pub pcc_port: u16,
    /// Set once the documents were written; later edits of `gateway`/`host` are not written again.
    pub frozen: bool,
}

impl Deployment {
    pub fn baseline() -> Deployment {
        let dir = tempfile::Builder::new().prefix("ptc-test-").tempdir().expect("tempdir");
        // Both ports are held at once while they are picked, so they always differ (equal ports would be
        // the `config_invalid` of config.md §4.4 rule 4a).
        let (port, pcc_port) = {
            let a = hold_free_port("127.0.0.1");
            let b = hold_free_port("127.0.0.1");
            (a.local_addr().expect("addr").port(), b.local_addr().expect("addr").port())
        };
        let gateway = json!({
            "version": 1,
            "listen": {"address": "127.0.0.1", "port": port, "path": "/mcp"},
            "authentication": {"bearer": {"binding": "gateway"}},
            "host": {"path": "ptc-host.json"},
            "admission": {"max_inflight_requests": 16, "max_concurrent_runs": 4,
                          "max_active_provider_calls": 4, "max_waiting_provider_calls": 0},
            "artifacts": {"root": "artifacts",
                          "events": {"max_file_bytes": 1048576, "max_retained_files": 8}},
            "pcc": {"address": "127.0.0.1", "port": pcc_port,
                    "servers": {"briefs": {"tools": ["echo"]}}},
            "tools": [
                {"name": "echo", "title": "Echo", "description": "Return the input object unchanged.",
                 "application": {"manifest": "echo/ptc.json"},
                 "expected_application_content_digest": ECHO_PIN,
                 "installation_config_pins": {}, "provider_snapshot_pins": {}}
            ]
        });
        let host = json!({
            "credentials": {"gateway": {"env": "GATEWAY_TOKEN"}},
            "install": {
                "notes": {
                    "source": "mcp",
                    "installation_revision": "fs-1.0.0",
                    "transport": {"type": "stdio", "command": "mcp-server-fs", "args": ["--root", "notes"]},
                    "tools": {"read_text_file": {"as": "notes.read", "effect": "read"}}
                }
            }
        });
        let d = Deployment { dir, gateway, host, port, pcc_port, frozen: false };
        d.write_file("echo/ptc.json", &serde_json::to_string_pretty(&echo_manifest()).expect("json"));
        d.write_file("echo/app.luau", ECHO_LUAU);
        d.write_file("echo/schema.json", ECHO_SCHEMA);
        d
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write_file(&self, rel: &str, content: &str) {
        self.write_bytes(rel, content.as_bytes());
    }

    pub fn write_bytes(&self, rel: &str, content: &[u8]) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, content).expect("write");
    }

    /// Writes both documents as they are now.
    pub fn write_documents(&mut self) {
        self.frozen = true;
        self.write_file("ptc-gateway.json", &serde_json::to_string_pretty(&self.gateway).expect("json"));
        self.write_file("ptc-host.json", &serde_json::to_string_pretty(&self.host).expect("json"));
    }

    pub fn config_path(&self) -> PathBuf {
        self.path("ptc-gateway.json")
    }

    /// `ptc gateway <config>` with the fixture token in the environment, run from the deployment dir.
    pub fn command(&self) -> Command {
        let mut cmd = ptc();
        cmd.current_dir(self.dir.path()).arg("gateway").arg("ptc-gateway.json").env("GATEWAY_TOKEN", TOKEN);
        cmd
    }

    /// `ptc check <config>` (lifecycle.md §1.5) with the fixture token, run from the deployment dir.
    pub fn check_command(&self) -> Command {
        let mut cmd = ptc();
        cmd.current_dir(self.dir.path()).arg("check").arg("ptc-gateway.json").env("GATEWAY_TOKEN", TOKEN);
        cmd
    }

    /// Every path below the deployment directory (for "nothing was created" checks).
    pub fn tree(&self) -> BTreeSet<PathBuf> {
        let mut out = BTreeSet::new();
        walk(self.dir.path(), &mut out);
        out
    }
}

fn walk(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            out.insert(path.clone());
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                walk(&path, out);
            }
        }
    }
}

pub fn echo_manifest() -> Value {
    json!({
        "version": 1,
        "effect": "read",
        "contracts": {"input_schema": {"path": "schema.json"}, "result_schema": {"path": "schema.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"}
    })
}

/// Runs `cmd` to completion with a deadline; the child is killed and reaped if it overruns.
pub fn run_with_deadline(mut cmd: Command, deadline: Duration) -> Output {
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn ptc");
    let start = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().expect("try_wait") {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("output");
            panic!(
                "ptc did not exit within {deadline:?}; stderr: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asserts the startup-failure contract of lifecycle.md §5.1: exit 78, empty stdout, one stderr line.
pub fn assert_startup_error(output: &Output, code: &str, context: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr, format!("{{\"error\":\"{code}\"}}\n"), "{context}: stderr");
    assert_eq!(output.status.code(), Some(78), "{context}: exit status");
    assert!(output.stdout.is_empty(), "{context}: stdout must be empty");
}

/// Asserts the refusal contract of `ptc pin` and `--print-pins` (lifecycle.md §1.3, pins.md §10): exit 78,
/// empty stdout, the one error line of §5.1 first, then the refusal explained as `ptc check` explains it
/// (`<code>: <sentence>` and the facts, lifecycle.md §1.5).
pub fn assert_explained_startup_error(output: &Output, code: &str, context: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let mut lines = stderr.lines();
    assert_eq!(lines.next(), Some(format!("{{\"error\":\"{code}\"}}").as_str()), "{context}: {stderr}");
    let explained = lines.next().unwrap_or_default();
    assert!(explained.starts_with(&format!("{code}: ")), "{context}: {stderr}");
    assert!(lines.all(|l| l.starts_with("  ")), "{context}: facts are indented: {stderr}");
    assert_eq!(output.status.code(), Some(78), "{context}: exit status");
    assert!(output.stdout.is_empty(), "{context}: stdout must be empty");
}

/// The trace files of the directory `dir` (traces.md §4.1), in the byte order of their names (the order the
/// runs were reserved), each with its records; every file ends with LF.
pub fn trace_files(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("trace directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(&name)).expect("trace file");
            assert!(text.ends_with('\n'), "{name}: every record ends with LF");
            let records = text.lines().map(|l| serde_json::from_str(l).expect("record")).collect();
            (name, records)
        })
        .collect()
}

/// A running gateway, killed and reaped on drop.
pub struct Gateway {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Gateway {
    /// Spawns `cmd` and waits until `/health/ready` on `addr` answers 200.
    pub fn start(mut cmd: Command, addr: SocketAddr) -> Gateway {
        let child =
            cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
        let mut gateway = Gateway { child, addr };
        gateway.wait_ready(Duration::from_secs(20));
        gateway
    }

    fn wait_ready(&mut self, deadline: Duration) {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut err = String::new();
                if let Some(stderr) = self.child.stderr.as_mut() {
                    let _ = stderr.read_to_string(&mut err);
                }
                panic!("gateway exited with {status} before ready; stderr: {err}");
            }
            if let Ok(resp) = http_get(self.addr, "/health/ready") {
                if resp.status == 200 {
                    return;
                }
            }
            assert!(start.elapsed() < deadline, "gateway not ready within {deadline:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Takes the gateway's stderr and reads it to its end on a thread, so that plentiful diagnostics
    /// (`PTC_LOG=trace`) never fill the pipe and stall the gateway; join the handle after the exit.
    /// [`Gateway::signal_and_wait`] then returns an empty stderr.
    #[allow(dead_code)]
    pub fn drain_stderr(&mut self) -> std::thread::JoinHandle<Vec<u8>> {
        let mut pipe = self.child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    }

    /// Sends `signal` and waits for the exit (with a deadline), returning status code and output.
    pub fn signal_and_wait(
        mut self,
        signal: nix::sys::signal::Signal,
        deadline: Duration,
    ) -> (Option<i32>, Duration, Vec<u8>, Vec<u8>) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let start = Instant::now();
        nix::sys::signal::kill(pid, signal).expect("kill");
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let elapsed = start.elapsed();
                let mut out = Vec::new();
                let mut err = Vec::new();
                if let Some(s) = self.child.stdout.as_mut() {
                    let _ = s.read_to_end(&mut out);
                }
                if let Some(s) = self.child.stderr.as_mut() {
                    let _ = s.read_to_end(&mut err);
                }
                return (status.code(), elapsed, out, err);
            }
            assert!(start.elapsed() < deadline, "gateway did not exit within {deadline:?} after {signal}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP response read off a raw socket.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Lowercased names, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn header_names(&self) -> Vec<&str> {
        self.headers.iter().map(|(n, _)| n.as_str()).collect()
    }
}

/// Sends raw bytes and reads one response (by `content-length`, or to EOF). `head_only` for HEAD.
pub fn raw_exchange(addr: SocketAddr, request: &[u8], head_only: bool) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(request)?;
    read_response(&mut stream, head_only)
}

pub fn read_response(stream: &mut TcpStream, head_only: bool) -> std::io::Result<Response> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no response head"));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = buf[head_end + 4..].to_vec();
    if !head_only {
        let length =
            headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse::<usize>().ok());
        match length {
            Some(len) => {
                while body.len() < len {
                    let n = stream.read(&mut chunk)?;
                    if n == 0 {
                        break;
                    }
                    body.extend_from_slice(&chunk[..n]);
                }
                body.truncate(len);
            }
            None => {
                let _ = stream.read_to_end(&mut body);
            }
        }
    }
    Ok(Response { status, headers, body })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `GET path` with only the right `Host` header.
pub fn http_get(addr: SocketAddr, path: &str) -> std::io::Result<Response> {
    let host = authority(addr);
    raw_exchange(addr, format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(), false)
}

/// The configured authority for a loopback socket address (http-mcp.md §1).
pub fn authority(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
    }
}

/// The raw bytes of a `POST /mcp` `tools/call` of `tool` as `id` with `arguments` (JSON text), every
/// header http-mcp.md requires, and `Connection: close` when `close`.
pub fn tools_call_request(addr: SocketAddr, tool: &str, id: usize, arguments: &str, close: bool) -> Vec<u8> {
    let request = mcp::Req::tools_call(addr, tool, &id.to_string(), arguments);
    if close { request.add("Connection", "close") } else { request }.bytes()
}

/// Sends `request` on a new connection and reads the response to EOF within `read_timeout`: the status
/// and the whole text (status 0 when the connection failed).
pub fn send_to_eof(addr: SocketAddr, request: &[u8], read_timeout: Duration) -> (u16, String) {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return (0, String::new());
    };
    let _ = s.set_read_timeout(Some(read_timeout));
    if s.write_all(request).is_err() {
        return (0, String::new());
    }
    let mut all = Vec::new();
    let _ = s.read_to_end(&mut all);
    let text = String::from_utf8_lossy(&all).into_owned();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, text)
}

/// An independent implementation of the content pin (pins.md §6) for "pin updated" rows, so that a
/// test never trusts the gateway to tell it the right pin.
pub mod content_pin {
    use serde_json::Value;
    use sha2::{Digest, Sha256};

    fn tcj(v: &Value, out: &mut String) {
        match v {
            Value::Null => out.push_str("[\"null\"]"),
            Value::Bool(b) => out.push_str(&format!("[\"boolean\",{b}]")),
            Value::Number(n) if n.is_i64() || n.is_u64() => out.push_str(&format!("[\"integer\",\"{n}\"]")),
            Value::Number(n) => {
                let bits = n.as_f64().unwrap_or(0.0).to_bits();
                out.push_str(&format!("[\"float64\",\"{bits:016x}\"]"));
            }
            Value::String(s) => {
                out.push_str("[\"string\",");
                out.push_str(&serde_json::to_string(s).unwrap_or_default());
                out.push(']');
            }
            Value::Array(items) => {
                out.push_str("[\"array\",[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    tcj(item, out);
                }
                out.push_str("]]");
            }
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
                out.push_str("[\"object\",[");
                for (i, k) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push('[');
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(',');
                    tcj(&map[*k], out);
                    out.push(']');
                }
                out.push_str("]]");
            }
        }
    }

    /// TCJ of a serde value (strings use serde's escaping, equal to pins.md §2.4 for the test inputs).
    pub fn typed_canonical(v: &Value) -> Vec<u8> {
        let mut s = String::new();
        tcj(v, &mut s);
        s.into_bytes()
    }

    /// The content pin of the application whose manifest is `manifest_path`.
    pub fn of(manifest_path: &std::path::Path) -> String {
        let dir = manifest_path.parent().expect("manifest dir");
        let manifest: Value =
            serde_json::from_slice(&std::fs::read(manifest_path).expect("manifest")).expect("json");
        let mut records: Vec<(u8, String, Vec<u8>)> = vec![(1, String::new(), typed_canonical(&manifest))];
        let read = |p: &str| std::fs::read(dir.join(p)).expect("closure file");
        let contracts = &manifest["contracts"];
        records.push((4, "input".into(), read(contracts["input_schema"]["path"].as_str().expect("path"))));
        records.push((5, "result".into(), read(contracts["result_schema"]["path"].as_str().expect("path"))));
        let mut components = |prefix: String, list: &Value| {
            for c in list.as_array().into_iter().flatten() {
                let name = format!("{prefix}{}", c["id"].as_str().expect("id"));
                records.push((2, name.clone(), read(c["path"].as_str().expect("path"))));
                let deps = c.get("dependencies").cloned().unwrap_or(Value::Array(vec![]));
                records.push((6, name, typed_canonical(&deps)));
            }
        };
        components("workflow/".into(), &manifest["workflow"]["components"]);
        if let Some(missions) = manifest.get("missions").and_then(Value::as_object) {
            for (m, mission) in missions {
                components(format!("mission/{m}/"), &mission["components"]);
            }
        }
        records.sort_by(|a, b| (a.0, a.1.as_bytes()).cmp(&(b.0, b.1.as_bytes())));
        let mut stream = b"ptc-gateway.application-content.v1\0".to_vec();
        stream.extend_from_slice(&(records.len() as u32).to_be_bytes());
        for (kind, name, payload) in &records {
            stream.push(*kind);
            stream.extend_from_slice(&(name.len() as u32).to_be_bytes());
            stream.extend_from_slice(name.as_bytes());
            stream.extend_from_slice(&(payload.len() as u64).to_be_bytes());
            stream.extend_from_slice(payload);
        }
        let digest = Sha256::digest(&stream);
        format!("sha256:{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }
}

/// Copies the directory tree `from` into the existing directory `to` (examples into temporary dirs).
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Starts the deployment's gateway in this process through the library (lifecycle.md stages 1–12), for
/// tests that must reach inside: stop an owner, read the pools' peaks, hold a sync. It still serves over
/// real loopback TCP.
#[cfg(feature = "fault-injection")]
pub async fn start_inproc(d: &Deployment) -> ptc_gateway::testing::startup::gateway::Gateway {
    let args = ptc_gateway::testing::cli::GatewayArgs {
        config: d.config_path(),
        env_file: None,
        mode: ptc_gateway::testing::config::Mode::Serve,
    };
    let mut held = ptc_gateway::testing::startup::serve::Startup::default();
    match ptc_gateway::testing::startup::serve::start(&args, &mut held).await {
        Ok(gateway) => gateway,
        Err(code) => panic!("startup failed: {code}"),
    }
}
