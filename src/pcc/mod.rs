//! The PCC tool gateway front (pcc.md): the gRPC stream `PccToolGateway.CreateMcpTransport` on its own
//! loopback port.
//!
//! [`proto`] is the generated code of `schemas/pcc_tool_gateway.proto`, [`listener`] serves it over
//! the connection slots of [`slots`],
//! [`service`] makes the checks of stream start (with [`deadline`], the client deadline), [`stream`]
//! runs the state machine ([`drain`] is the drain state both follow), [`envelope`],
//! [`methods`], [`result`] and [`wire`] own the message shapes, and [`call`] carries one `tools/call`
//! from its reservation to its settled response over the same shared execution state as `/mcp`
//! (`crate::exec`: the runner, the audit hook and the release order). This front does not own admission
//! pools, the bearer's capture or execution itself.

pub mod call;
pub mod deadline;
pub mod drain;
pub mod envelope;
pub mod listener;
pub mod methods;
pub mod proto;
pub mod result;
pub mod service;
pub mod slots;
pub mod stream;
pub mod wire;
