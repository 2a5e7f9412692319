//! The in-process tests: each module reaches the gateway's internals through `ptc_gateway::testing`
//! (which exists only with the `fault-injection` feature): a gateway started through the library, one
//! listener, one upstream client, read from inside (issue 24: one binary links the gateway's dependencies
//! once instead of once per former test file).
//!
//! The modules run as threads of one process, and two kinds of process-wide state exist here: the audit
//! store's test hooks (`hold_syncs`, and `PTC_AUDIT_FAIL_SYNC`, read when an audit starts) and the proxy
//! variables `providers_http` sets (which nothing in the gateway reads, by design). A test that changes
//! the audit hooks holds [`support::process_state_exclusive`]; a test that runs an in-process gateway with
//! a private audit holds [`support::process_state_shared`] (audit_inproc, pcc_inproc, supervision_tree).

#[path = "../support/mod.rs"]
mod support;

mod audit_inproc;
mod fencing_inproc;
mod health_inproc;
mod listener_inproc;
mod mcp_storm_inproc;
mod notify_inproc;
mod parser_probe_inproc;
mod pcc_inproc;
mod providers_http;
mod providers_stdio;
mod supervision_tree;
