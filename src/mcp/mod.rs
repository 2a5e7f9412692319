//! The MCP 2026-07-28 front of `POST /mcp` (http-mcp.md §5–§11): the ordered validation table (the
//! transport checks, the JSON-RPC checks and the `tools/call` checks of http-mcp.md §6, §7 and §8.1–§8.4),
//! the JSON-RPC answers, `server/discover` and `tools/list`.
//!
//! Owns everything between the router's hand-over (the method check, http-mcp.md §6.1, has passed) and the
//! hand-over of an admitted `tools/call` to execution ([`call::CallExecutor`]). It does not own the HTTP
//! transport (`crate::http`), what a call does after the readiness check (input contract, run reservation,
//! the event stream: `exec`), or the tool templates (`crate::apps`).
//!
//! The steps, in order, each in its module (the spec's row ids in parentheses): method (M1)
//! `crate::http::mcp::method_rule`; header size (M2) [`size`]; authority (M3)
//! `crate::http::fields::authority_matches`; Origin (M4) [`origin`]; bearer (M5) [`bearer`]; Content-Type
//! (M6) [`media`]; Accept (M7) [`accept`]; request admission (M8) the request pool (in [`front`]); body
//! read (M9) [`body`]; strict JSON and envelope (M10–M11) [`envelope`]; `_meta` (M12) [`meta`], with the
//! earlier-revision answer [`earlier`]; header
//! and body consistency (M13) [`consistency`]; version, method and parameters (M14–M16) [`method`];
//! `tools/list` readiness (M17, in [`front`]); `Mcp-Name` and tool lookup (C1–C2) [`tool`];
//! `Mcp-Param-*` headers (C3) [`params`] with `crate::mcp_param`; `tools/call` readiness (C4).
//! [`front`] sequences them; [`refusal`] and [`rpc`] write the
//! answers; [`step`] names the rows and logs every refusal; [`leased`] holds the request lease until a JSON
//! answer is written.

pub mod accept;
pub mod bearer;
pub mod body;
pub mod call;
pub mod consistency;
pub(crate) mod earlier;
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
pub(crate) mod step;
pub mod tool;

pub use bearer::BearerDigest;
pub use front::{FrontSettings, McpFront};

#[cfg(test)]
mod chain_props;
#[cfg(test)]
mod params_props;
