//! The MCP 2026-07-28 front of `POST /mcp` (http-mcp.md §5–§11): the ordered validation table M2–M17 and
//! C1–C4, the JSON-RPC answers, `server/discover` and `tools/list`.
//!
//! Owns everything between the router's hand-over (step M1 has passed) and the hand-over of an admitted
//! `tools/call` to execution ([`call::CallExecutor`]). It does not own the HTTP transport (`crate::http`),
//! what a call does after C4 (input contract, run reservation, the event stream: `crate::exec`), or the
//! tool templates (`crate::apps`).

pub mod call;
pub mod rpc;
