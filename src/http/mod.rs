//! The HTTP front: the loopback listener, its connection ceiling and idle timeout, routing, and the
//! health endpoints (http-mcp.md §2–§4, lifecycle.md §11).
//!
//! Owns the transport rules up to the point where a request reaches an endpoint. It does not own what
//! `POST /mcp` means (the MCP front plugs in through [`mcp::McpEndpoint`]), admission policy (the pools
//! come from `ptc_actors`), or readiness (a snapshot it only reads).

pub mod listener;
pub mod mcp;
pub mod response;
pub mod router;
pub mod socket;

pub use listener::{BoundListener, ListenerControl, ListenerSettings, RunningListener};
pub use response::ResponseBody;
pub use socket::bind_socket;
