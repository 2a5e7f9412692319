//! Real third-party peers against the real `ptc` binary (issue 3 scope item 6): the official `mcp`
//! Python SDK as a client (python.rs) and the official MCP conformance suite through an authenticating
//! loopback proxy (conformance.rs, proxy.rs). Both programs are installed from pinned files by
//! `tests/third_party/install.sh`, which `.ci/run` runs before the test command; without that install
//! these tests fail and say so (install.rs). The harness pieces have their own tests here
//! (harness_tests.rs), which need neither install.

#[path = "../support/mod.rs"]
mod support;

mod child;
mod conformance;
mod fixture;
mod harness_tests;
mod install;
mod proxy;
mod python;
