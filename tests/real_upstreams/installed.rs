//! Where `tests/third_party/install.sh` put the real upstream servers, and the failure when it did not.
//!
//! Owns: the paths of the committed launchers of `mcp-server-time` and server-everything, and
//! of the HTTP upstream script with the venv interpreter that runs it. Each path is required together with
//! the install stamp of its part, so a half-finished install is a missing install. Does not own: the
//! failure message (install.rs) or installing anything.

use std::path::{Path, PathBuf};

use crate::install::require;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn venv_file(rel: &str, what: &str) -> PathBuf {
    require(root().join("tests/python/.venv/.ptc-installed"), "the Python venv (pinned requirements)");
    require(root().join("tests/python/.venv").join(rel), what)
}

/// The committed launcher of the pinned `mcp-server-time` (`tests/upstreams/bin/mcp-server-time`, which
/// runs it from the venv; its bytes, unlike the venv's console script, do not depend on the clone path).
pub fn time_server() -> PathBuf {
    venv_file("bin/mcp-server-time", "mcp-server-time");
    root().join("tests/upstreams/bin/mcp-server-time")
}

/// The committed launcher of the pinned server-everything (`tests/upstreams/bin/mcp-server-everything`,
/// which runs its `dist/index.js` with the `node` on `PATH`).
pub fn everything_server() -> PathBuf {
    let modules = root().join("tests/upstreams/everything/node_modules");
    require(modules.join(".ptc-installed"), "server-everything (pinned package-lock.json)");
    require(modules.join("@modelcontextprotocol/server-everything/dist/index.js"), "server-everything");
    root().join("tests/upstreams/bin/mcp-server-everything")
}

/// The venv's interpreter and the Streamable HTTP upstream script it runs.
pub fn http_time_server() -> (PathBuf, PathBuf) {
    let python = venv_file("bin/python", "the Python venv interpreter");
    (python, root().join("tests/upstreams/http_time_server.py"))
}
