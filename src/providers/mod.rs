//! The upstream MCP client layer (providers.md §4–§8, §10, §12–§14): stdio here, Streamable HTTP in
//! [`http`].
//!
//! This module owns a stdio child and its protocol: spawning (`child`), the environment rule (`env`),
//! framing (`framing`), the request table (`table`), the transport owner with its in-flight bound,
//! cancellation and loss (`transport`), `tools/call` result classification (`result`), one provider call (`provider_call`), era negotiation
//! (`negotiate`), listing and mapped-tool checks (`listing`), acquisition (`acquire`), and the closed
//! failure classes (`failure`).
//!
//! It does not own startup wiring (startup still refuses provider declarations), readiness, event
//! records or provider-call admission (§9); the integrator connects
//! [`transport::TransportEvents`] to the domain's fence.

pub mod acquire;
pub mod child;
pub mod env;
pub mod failure;
pub mod framing;
pub mod http;
pub mod listing;
pub mod negotiate;
pub mod provider_call;
pub mod result;
pub mod stderr_ring;
pub mod table;
pub mod transport;

pub use failure::{CallFailure, Dispatch, FailureClass};
