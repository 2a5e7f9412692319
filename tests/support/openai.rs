//! The launcher of the scripted OpenAI-compatible fixture (`scripts/openai-fixture.py`, models.md
//! §10): writes the test's script, starts the server, waits (with a deadline) for the port it writes, reads
//! what it recorded, and kills and reaps the process when the guard drops.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::http_fixture::python;

/// One fixture server with its script.
pub struct OpenAiFixture {
    pub dir: tempfile::TempDir,
    pub marker: PathBuf,
    pub port: u16,
    child: Child,
}

impl Drop for OpenAiFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OpenAiFixture {
    /// Starts the fixture answering `answers` in order (the step forms of the fixture's docstring).
    pub fn start(answers: &[Value]) -> OpenAiFixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("script.json");
        let marker = dir.path().join("marker.jsonl");
        let portfile = dir.path().join("port");
        std::fs::write(&script, serde_json::json!({ "answers": answers }).to_string()).expect("script");
        let program = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/openai-fixture.py");
        let child = Command::new(python())
            .arg(&program)
            .arg(&script)
            .arg(&marker)
            .arg(&portfile)
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn the OpenAI fixture");
        let mut fixture = OpenAiFixture { dir, marker, port: 0, child };
        let deadline = Instant::now() + Duration::from_secs(20);
        fixture.port = loop {
            if let Ok(text) = std::fs::read_to_string(&portfile) {
                if let Ok(port) = text.trim().parse() {
                    break port;
                }
            }
            if let Ok(Some(status)) = fixture.child.try_wait() {
                panic!("the OpenAI fixture exited with {status} before writing its port");
            }
            assert!(Instant::now() < deadline, "the OpenAI fixture never wrote its port");
            std::thread::sleep(Duration::from_millis(20));
        };
        fixture
    }

    /// The base URL an `llm` installation names (`http://127.0.0.1:<port>/v1`).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every event recorded so far.
    pub fn events(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.marker).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// The request bodies received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.events().into_iter().filter(|e| e["event"] == "recv").collect()
    }

    /// Waits (with a deadline) until the recorded events satisfy `cond`.
    pub fn wait(&self, what: &str, cond: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let events = self.events();
            if cond(&events) {
                return events;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "the OpenAI fixture never saw {what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
