//! Unit tests of stage 5: fixtures written to temporary directories, the applications of pins.md §11.1
//! (`echo`) and pins.md §11.2 (`brief`), and the baseline host document of config.md §10.

mod agent;
mod api;
mod blocking_places;
mod catalog;
mod chat_reply;
mod closure;
mod content_pin;
mod contracts;
mod convert;
mod header;
mod luau;
mod order;
mod room;
mod rows;
mod runtime;
mod runtime_limits;
mod selection;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::config::gateway::ToolConfig;
use crate::config::host::{self, HostConfig};
use crate::json::{self, Limits};

/// A temporary directory, removed on drop.
pub struct Fixture {
    pub dir: PathBuf,
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

impl Fixture {
    pub fn new(name: &str) -> Fixture {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ptc-apps-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Fixture { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    /// Writes `value` as deterministic JSON (its decoded content is all that matters to the pin).
    pub fn write_json(&self, rel: &str, value: &Value) {
        self.write(rel, json::to_deterministic(value));
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Decodes test JSON.
pub fn parse(text: &str) -> Value {
    json::decode(text.as_bytes(), Limits::DOCUMENT).unwrap()
}

/// Sets the member at `path` (creating objects on the way).
pub fn set(value: &mut Value, path: &[&str], new: Value) {
    let (last, init) = path.split_last().unwrap();
    let mut at = value;
    for key in init {
        let Value::Object(map) = at else { panic!("not an object at {key}") };
        at = map.entry(key.to_string()).or_insert_with(|| Value::Object(Default::default()));
    }
    let Value::Object(map) = at else { panic!("not an object at {last}") };
    map.insert(last.to_string(), new);
}

/// pins.md §11.1, exactly as shown.
pub const ECHO_MANIFEST: &str = r#"{
  "version": 1,
  "effect": "read",
  "contracts": {
    "input_schema": {"path": "schema.json"},
    "result_schema": {"path": "schema.json"}
  },
  "workflow": {
    "components": [{"id": "app", "path": "app.luau"}],
    "entry": "app.run"
  }
}
"#;
pub const ECHO_APP: &str = "local M = {}\n\nfunction M.run(input)\n  return input\nend\n\nreturn M\n";
pub const OBJECT_SCHEMA: &str = "{\"type\":\"object\"}\n";
pub const ECHO_PIN: &str = "sha256:128bcc1b3ac8b2e869fe4acc08762a9b77b2e0324e95cf3d4f867ae31976f853";

/// pins.md §11.2, exactly as shown.
pub const BRIEF_MANIFEST: &str = r#"{
  "version": 1,
  "effect": "read",
  "contracts": {
    "input_schema": {"path": "input.schema.json"},
    "result_schema": {"path": "result.schema.json"}
  },
  "workflow": {
    "components": [{"id": "app", "path": "app.luau"}],
    "entry": "app.run"
  },
  "missions": {
    "default": {
      "components": [{"id": "files", "path": "files.luau"}],
      "providers": ["notes"]
    }
  },
  "providers": {"mission": [{"name": "notes"}]}
}
"#;
pub const BRIEF_APP: &str = "local M = {}\n\nfunction M.run(input)\n  local text = mission(\"default\"):call(\"files.brief\", {})\n  return {value = text}\nend\n\nreturn M\n";
pub const BRIEF_FILES: &str = "local M = {}\n\nfunction M.brief(args)\n  local r = tool(\"notes.read\", {path = \"brief.txt\"})\n  if not r.ok then\n    fail(r.error)\n  end\n  return r.value.text\nend\n\nreturn M\n";
pub const BRIEF_RESULT_SCHEMA: &str =
    "{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"string\"}},\"required\":[\"value\"]}\n";
pub const BRIEF_PIN: &str = "sha256:f478b324e6ac3f0d3784c1f71588f4f1132436a4013f16ee251589bb3211333d";

/// Writes `echo/` of pins.md §11.1 below `f`.
pub fn write_echo(f: &Fixture) {
    f.write("echo/ptc.json", ECHO_MANIFEST);
    f.write("echo/app.luau", ECHO_APP);
    f.write("echo/schema.json", OBJECT_SCHEMA);
}

/// Writes `brief/` of pins.md §11.2 below `f`.
pub fn write_brief(f: &Fixture) {
    f.write("brief/ptc.json", BRIEF_MANIFEST);
    f.write("brief/app.luau", BRIEF_APP);
    f.write("brief/files.luau", BRIEF_FILES);
    f.write("brief/input.schema.json", OBJECT_SCHEMA);
    f.write("brief/result.schema.json", BRIEF_RESULT_SCHEMA);
}

/// The host document of config.md §10.
pub fn baseline_host() -> Value {
    parse(
        r#"{"credentials": {"gateway": {"env": "GATEWAY_TOKEN"}},
            "install": {"notes": {"source": "mcp", "installation_revision": "fs-1.0.0",
              "transport": {"type": "stdio", "command": "mcp-server-fs", "args": ["--root", "notes"]},
              "tools": {"read_text_file": {"as": "notes.read", "effect": "read"}}}}}"#,
    )
}

/// The host document through the real loader (bearer binding `gateway`).
pub fn host_config(doc: &Value, dir: &Path) -> HostConfig {
    host::from_bytes(&json::to_deterministic(doc), &dir.join("ptc-host.json"), "gateway").unwrap()
}

/// A served tool of the baseline gateway document.
pub fn tool(name: &str, manifest: PathBuf, pin: &str) -> ToolConfig {
    ToolConfig {
        name: name.into(),
        title: format!("Title of {name}"),
        description: format!("Description of {name}."),
        manifest,
        allow_write: false,
        expected_application_content_digest: Some(pin.into()),
        installation_config_pins: Some(Default::default()),
        provider_snapshot_pins: Some(Default::default()),
    }
}
