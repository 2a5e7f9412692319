//! Where `tests/third_party/install.sh` put the real upstream servers, and the failure when it did not.
//!
//! Owns: the paths of the installed `mcp-server-time` entry point, of server-everything's `bin` entry and
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

/// The console script of the pinned `mcp-server-time` (its shebang names the venv's interpreter).
pub fn time_server() -> PathBuf {
    venv_file("bin/mcp-server-time", "mcp-server-time")
}

/// The `bin` link of the pinned server-everything (`dist/index.js`, run by the `node` on `PATH`).
pub fn everything_server() -> PathBuf {
    let modules = root().join("tests/upstreams/everything/node_modules");
    require(modules.join(".ptc-installed"), "server-everything (pinned package-lock.json)");
    require(modules.join(".bin/mcp-server-everything"), "server-everything")
}

/// The venv's interpreter and the Streamable HTTP upstream script it runs.
pub fn http_time_server() -> (PathBuf, PathBuf) {
    let python = venv_file("bin/python", "the Python venv interpreter");
    (python, root().join("tests/upstreams/http_time_server.py"))
}
