//! The generated messages, server and client of `schemas/pcc_tool_gateway.proto` (pcc.md §2).
//!
//! Owns nothing but the inclusion of the build-time generated code; the server is used by the front
//! (`crate::pcc`), the client only by the black-box tests.

#![allow(missing_docs, clippy::all, clippy::pedantic)]

tonic::include_proto!("pcc.toolgateway.v1");
