//! The stdio upstream client library (`src/providers/`, not the gateway) against real, pinned upstream
//! MCP servers (issue 5; providers.md §16 F35): the official `mcp-server-time` (PyPI, a 2026-07-28 server)
//! and `@modelcontextprotocol/server-everything` (npm, a 2025-11-25 server), plus our Streamable HTTP
//! upstream `tests/upstreams/http_time_server.py` and its credential check. All are installed from pinned
//! files by `tests/third_party/install.sh` (which `.ci/run` runs before the test command); nothing is
//! fetched here. Without that install these tests fail and name the install step (installed.rs), as
//! `tests/third_party` does: in CI they must run, never pass silently.

mod http;
mod installed;
mod spawns;
mod stdio;
