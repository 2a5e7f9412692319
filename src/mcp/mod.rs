//! The MCP 2026-07-28 front of `POST /mcp` (http-mcp.md §5–§11): the ordered validation table M2–M17 and
//! C1–C4, the JSON-RPC answers, `server/discover` and `tools/list`.
//!
//! Owns everything between the router's hand-over (step M1 has passed) and the hand-over of an admitted
//! `tools/call` to execution ([`call::CallExecutor`]). It does not own the HTTP transport (`crate::http`),
//! what a call does after C4 (input contract, run reservation, the event stream: `exec`), or the
//! tool templates (`crate::apps`).
//!
//! The steps, in order, each in its module: M1 `crate::http::mcp::method_rule`; M2 [`size`]; M3
//! `crate::http::fields::authority_matches`; M4 [`origin`]; M5 [`bearer`]; M6 [`media`]; M7 [`accept`];
//! M8 the request pool (in [`front`]); M9 [`body`]; M10–M11 [`envelope`]; M12 [`meta`]; M13
//! [`consistency`]; M14–M16 [`method`]; M17 readiness (in [`front`]); C1–C2 [`tool`]; C3 [`params`]
//! with `crate::mcp_param`; C4 readiness. [`front`] sequences them; [`refusal`] and [`rpc`] write the
//! answers; [`leased`] holds the request lease until a JSON answer is written.

pub mod accept;
pub mod bearer;
pub mod body;
pub mod call;
pub mod consistency;
pub mod envelope;
pub mod fields;
pub mod front;
pub mod leased;
pub mod media;
pub mod meta;
pub mod method;
pub mod origin;
pub mod params;
pub mod refusal;
pub mod rpc;
pub mod size;
pub mod tool;

pub use bearer::BearerDigest;
pub use front::{FrontSettings, McpFront};

#[cfg(test)]
mod chain_props;
#[cfg(test)]
mod params_props;
