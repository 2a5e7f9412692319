//! The upstream MCP client layer (providers.md §4–§8, §10, §12–§14): stdio here, Streamable HTTP in
//! [`http`].
//!
//! This module owns a stdio child and its protocol: spawning (`child`), the environment rule (`env`),
//! framing (`framing`), the request table (`table`), the transport owner with its in-flight bound,
//! cancellation and loss (`transport`), `tools/call` result classification (`result`), one provider call (`provider_call`), era negotiation
//! (`negotiate`), listing and mapped-tool checks (`listing`), acquisition (`acquire`), and a call's
//! failure (`failure`). The closed failure classes and transport faults are shared codes
//! (`crate::codes::provider`, `crate::codes::transport`), re-exported here.
//!
//! Wired into the serving gateway by: `upstream` (the transport behind one closed enum, so the Streamable
//! HTTP transport plugs in as one variant), `sites` (one acquisition per (tool, declaration) and its one
//! end), `admission` (provider-call admission with strict FIFO waiters, providers.md §9), `trace`
//! (providers.md §11) and `runtime` (one provider call's steps, settlement, the counters and the loss → fence
//! → close → records path, providers.md §12). Startup's order of acquisition is `startup::providers`; grants
//! and Luau are `exec::borrow`.

pub mod acquire;
pub mod admission;
pub mod child;
pub mod env;
pub mod failure;
pub mod framing;
pub mod http;
pub mod inspect;
pub mod listing;
pub(crate) mod loss;
pub mod model;
pub mod negotiate;
pub mod outgoing;
pub mod owner;
pub mod provider_call;
pub mod result;
pub mod runtime;
pub mod sites;
pub mod stderr_ring;
pub mod table;
pub mod trace;
pub mod transport;
pub mod upstream;

pub use failure::{CallFailure, Dispatch, FailureClass};
