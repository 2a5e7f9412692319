// One justified `unsafe` exists: the parent-death signal in `providers/child.rs` (providers.md §4.1).
#![deny(unsafe_code)]
//! `ptc-gateway`: a loopback-only MCP tool gateway whose served tools are pinned, admitted without
//! queues, and audited durably. The binary `ptc` is a thin shell over this library.

pub mod apps;
pub mod audit;
pub mod calendar;
pub mod call;
pub mod cli;
pub mod codes;
pub mod config;
pub mod events;
pub mod exec;
pub mod fault;
pub mod http;
pub mod json;
pub mod logging;
pub mod mcp;
pub mod mcp_param;
pub mod notify;
pub mod pcc;
pub mod pins;
pub mod providers;
pub mod signals;
pub mod startup;
pub mod storage;
