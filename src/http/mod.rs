//! The HTTP front: the loopback listener, its connection ceiling and idle timeout, routing, and the
//! health endpoints (http-mcp.md §1–§4, lifecycle.md §11).
//!
//! Owns the transport rules up to the point where a request reaches an endpoint. It does not own what
//! `POST /mcp` means (the MCP front plugs in through [`mcp::McpEndpoint`]), the parser limits that hyper
//! cannot enforce are the [`guard`] (an [`io::IoLayer`] over [`head_scan`]), admission policy (the pools
//! come from `ptc_actors`), or readiness (a snapshot it only reads).
//!
//! The path of a connection: [`socket`] binds (stage 11a) → [`listener`] starts the one
//! [`acceptor`] (stage 12), which takes a [`slots`] slot before each `accept` → [`connection`] serves
//! hyper over the socket → [`router`] classifies each request → [`health`] or the `/mcp` endpoint
//! answers with the fixed bodies of [`response`], using the head predicates of [`fields`]; [`version`]
//! keeps every status line at HTTP/1.1.

pub mod acceptor;
pub mod activity;
pub mod connection;
pub mod fields;
pub mod guard;
pub mod head_scan;
pub mod health;
pub mod io;
pub mod listener;
pub mod mcp;
pub mod observed;
pub mod progress;
pub mod response;
pub mod router;
pub(crate) mod self_wake;
pub mod slots;
pub mod socket;
pub(crate) mod soon;
pub(crate) mod timer_floor;
pub mod version;

pub use acceptor::LoopEnd;
pub use activity::ReadActivity;
pub use connection::CloseSignal;
pub use io::{ConnIo, IoLayer};
pub use listener::{BoundListener, ListenerControl, ListenerSettings, RunningListener};
pub use response::ResponseBody;
pub use slots::SlotSnapshot;
pub use socket::{bind_socket, BindError};
