#![forbid(unsafe_code)]
//! `ptc-actors`: the supervised runtime of ptc-gateway.
//!
//! It owns the generic building blocks the gateway is assembled from: readiness and fencing, admission
//! without queues, the domain supervisor and its staged shutdown. It knows nothing of MCP, JSON-RPC or
//! the gateway's documents; the gateway (`ptc-gateway`) depends on this crate, never the reverse.

pub mod readiness;

pub use readiness::{NotReadyCause, Phase, Readiness};
