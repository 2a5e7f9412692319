//! Where `tests/third_party/install.sh` put the real upstream servers, and the failure when it did not.
//!
//! Owns: the paths of the committed launchers of `mcp-server-time` and server-everything (the examples'
//! own, in `config-examples/upstreams/bin/`), and of the HTTP upstream script with the venv interpreter
//! that runs it. Each path is required together with the install stamp of its part, so a half-finished
//! install is a missing install. Does not own: the failure message (install.rs) or installing anything.

use std::path::{Path, PathBuf};

use crate::install::{require, venv_file};
use crate::support::example_upstreams;

/// The committed launcher of the pinned `mcp-server-time` (`config-examples/upstreams/bin/mcp-server-time`,
/// which runs it from the venv; its bytes, unlike the venv's console script, do not depend on the clone
/// path).
pub fn time_server() -> PathBuf {
    venv_file("bin/mcp-server-time", "mcp-server-time");
    example_upstreams().join("bin/mcp-server-time")
}

/// The committed launcher of the pinned server-everything
/// (`config-examples/upstreams/bin/mcp-server-everything`, which runs its `dist/index.js` with the `node`
/// on `PATH`).
pub fn everything_server() -> PathBuf {
    let modules = example_upstreams().join("node_modules");
    require(modules.join(".ptc-installed"), "server-everything (pinned package-lock.json)");
    require(modules.join("@modelcontextprotocol/server-everything/dist/index.js"), "server-everything");
    example_upstreams().join("bin/mcp-server-everything")
}

/// The venv's interpreter and the Streamable HTTP upstream script it runs.
pub fn http_time_server() -> (PathBuf, PathBuf) {
    let python = venv_file("bin/python", "the Python venv interpreter");
    (python, Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstreams/http_time_server.py"))
}
