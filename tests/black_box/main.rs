//! The black-box tests: each module drives the real `ptc` binary (`CARGO_BIN_EXE_ptc`) over its command
//! line, loopback TCP, its files and its signals, as a former test binary of its own did (issue 24: one
//! binary links the gateway's dependencies once). Modules marked `fault-injection` need the feature (the
//! README's test command enables it): they set `PTC_FAULT` on the child or reach `ptc_gateway::testing`.
//!
//! The modules run as threads of one process: none of them changes process-wide state (environment
//! variables, the current directory, signal dispositions); every child gets its environment through its
//! own `Command`.

#[path = "../support/mod.rs"]
mod support;

mod audit;
#[cfg(feature = "fault-injection")]
mod check_command;
mod check_explains;
#[cfg(feature = "fault-injection")]
mod cold_tools;
mod config_vectors;
mod config_vectors_live;
mod event_log;
mod health;
mod lifecycle;
mod mcp_calls;
#[cfg(feature = "fault-injection")]
mod mcp_front;
#[cfg(feature = "fault-injection")]
mod metrics;
#[cfg(feature = "fault-injection")]
mod models;
mod owner_faults;
mod parser_limits;
#[cfg(feature = "fault-injection")]
mod pcc_front;
#[cfg(feature = "fault-injection")]
mod pcc_upstream;
#[cfg(feature = "fault-injection")]
mod pin_command;
mod pins_and_budget;
#[cfg(feature = "fault-injection")]
mod providers_gateway;
mod providers_gateway_http;
mod ptc_call;
mod replay_command;
mod service_managers;
#[cfg(feature = "fault-injection")]
mod traces;
mod traces_replay;
#[cfg(feature = "fault-injection")]
mod traces_upstream;
