// Two justified `unsafe` blocks exist: the parent-death signal in `providers/child.rs` (providers.md §4.1)
// and glibc's `malloc_trim` once startup is done in `os/memory.rs`.
#![deny(unsafe_code)]
// Without the test feature, items (and re-exports) only the tests reach through `testing` are unused by
// design; the test build, which CI lints with `-D warnings`, still finds everything truly unused.
#![cfg_attr(not(feature = "fault-injection"), allow(dead_code, unused_imports))]
//! `ptc-gateway`: a loopback-only MCP tool gateway whose served tools are pinned, admitted without
//! queues, and audited durably.
//!
//! The library's surface is one function: [`main`], the whole `ptc` process (the binary is a one-line
//! shell over it). Everything else is internal; its structure is described in `docs/architecture.md`.
//! The black-box and in-process tests reach the internals through [`testing`], which exists only with
//! the `fault-injection` feature that the test command enables and release builds never do. The one
//! doc-hidden module, `bench_hooks`, exists only so that `cargo bench --bench gateway` can time a fresh
//! sandbox in-process (docs/decisions.md); it is not part of the surface.

mod apps;
mod audit;
mod calendar;
mod cli;
mod client;
mod codes;
mod config;
mod events;
mod exec;
mod explain;
mod http;
mod json;
mod mcp;
mod mcp_param;
mod metrics;
mod os;
mod pcc;
mod pins;
mod providers;
mod replay;
mod startup;
mod storage;
mod support;
mod traces;

#[doc(hidden)]
pub mod bench_hooks;
mod process;
#[cfg(feature = "fault-injection")]
pub mod testing;

pub use process::main;
