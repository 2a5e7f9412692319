//! The one launcher of the HTTP fault fixture (`tests/fixtures/mcp_http_fixture.py`, providers.md §16.1):
//! it starts the server in a mode, waits (with a deadline) for the port the fixture writes to its port file,
//! and kills and reaps the process when the guard drops. Shared by the library-level HTTP tests
//! (`tests/inproc/providers_http.rs`) and the gateway-level ones (`tests/black_box/providers_gateway_http.rs`).
//!
//! Self-contained (no `super::`), so a test crate can include it by `#[path]` alone.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The real interpreter (not a version-manager shim, which would add its own environment and processes).
pub fn python() -> String {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .expect("python3");
            String::from_utf8(out.stdout).expect("utf-8").trim().to_owned()
        })
        .clone()
}

/// One fixture server: its directory, marker file and port; killed and reaped on drop.
pub struct HttpFixture {
    pub dir: tempfile::TempDir,
    pub marker: PathBuf,
    pub port: u16,
    child: Child,
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpFixture {
    /// Starts the fixture in `mode` (its comma-separated flags) and waits for its port.
    pub fn start(mode: &str) -> HttpFixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("marker.jsonl");
        let portfile = dir.path().join("port");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_http_fixture.py");
        let child = Command::new(python())
            .arg(&script)
            .arg(mode)
            .arg(&marker)
            .arg(&portfile)
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn the HTTP fixture");
        let mut fixture = HttpFixture { dir, marker, port: 0, child };
        let deadline = Instant::now() + Duration::from_secs(20);
        fixture.port = loop {
            if let Ok(text) = std::fs::read_to_string(&portfile) {
                break text.trim().parse().expect("port");
            }
            if let Ok(Some(status)) = fixture.child.try_wait() {
                panic!("the HTTP fixture exited with {status} before writing its port");
            }
            assert!(Instant::now() < deadline, "the fixture never wrote its port");
            std::thread::sleep(Duration::from_millis(20));
        };
        fixture
    }

    /// The endpoint URL (`http://127.0.0.1:<port>/mcp` plus `query`, e.g. `"?tenant=a"`, or `""`).
    pub fn endpoint(&self, query: &str) -> String {
        format!("http://127.0.0.1:{}/mcp{query}", self.port)
    }

    /// The fixture's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes the release file `slow` waits for.
    pub fn release(&self) {
        std::fs::write(format!("{}.release", self.marker.display()), "").expect("release file");
    }
}
