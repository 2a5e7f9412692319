//! Real third-party peers against the real `ptc` binary (issue 3 scope item 6, issue 17 scope 6): the
//! official `mcp` Python SDK (python.rs) and the official TypeScript client SDK (typescript.rs) as clients,
//! and the official MCP conformance suite through an authenticating loopback proxy (conformance.rs,
//! proxy.rs). All three are installed from pinned files by `tests/third_party/install.sh`, which `.ci/run`
//! runs before the test command; without that install these tests fail and say so (install.rs). The
//! harness pieces have their own tests here (harness_tests.rs), which need no install.
//!
//! The same binary holds the tests against real upstream servers (issue 5): the upstream client library
//! against them (real_upstreams.rs, which needs `fault-injection`) and served tools over them through the
//! real binary (real_upstreams_gateway.rs); the same install provides them.

#[path = "../support/mod.rs"]
mod support;

mod child;
mod conformance;
mod fixture;
mod harness_tests;
mod install;
mod proxy;
mod python;
#[cfg(feature = "fault-injection")]
mod real_upstreams;
mod real_upstreams_gateway;
mod typescript;
