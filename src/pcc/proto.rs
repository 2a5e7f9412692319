//! The generated messages, server and clients of `schemas/pcc_tool_gateway.proto` (pcc.md §2).
//!
//! Owns nothing but the inclusion of the build-time generated code (`build.rs`): the normative view
//! (messages and a client, as the file is written) at the top, and in [`served`] the server's decoding
//! view, whose `request_body` is `bytes` (wire-identical to `string`) so that a body that is not UTF-8
//! reaches the front and is answered `-32700` (pcc.md §5.2) instead of being refused by prost.

#![allow(missing_docs, clippy::all, clippy::pedantic)]

include!(concat!(env!("OUT_DIR"), "/normative/pcc.toolgateway.v1.rs"));

/// The server's view: the same messages and paths, `request_body` as bytes.
pub mod served {
    #![allow(missing_docs, clippy::all, clippy::pedantic)]
    include!(concat!(env!("OUT_DIR"), "/served/pcc.toolgateway.v1.rs"));
}
