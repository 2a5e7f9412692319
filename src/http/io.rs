//! The IO seam of a connection (http-mcp.md §2.4): what a connection is served over ([`ConnIo`]) and how
//! an accepted stream is wrapped before hyper sees it ([`IoLayer`]), where the head guard plugs in.
//!
//! Its own file because the connection (`connection.rs`) and the wrappers it stacks (`observed.rs`,
//! `version.rs`, `guard.rs`) all name it; none of them imports another for it.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::http::response::EmptyBodyStatus;

/// The IO a connection is served over: the accepted stream, or a guard around it.
pub trait ConnIo: AsyncRead + AsyncWrite + Send + Unpin + 'static {
    /// The empty-body refusal a head guard decided (http-mcp.md §2.4), if any. Asked once, after hyper
    /// has ended; the connection layer then writes it and closes.
    fn refusal(&mut self) -> Option<EmptyBodyStatus> {
        None
    }
}

impl ConnIo for TcpStream {}

/// Wraps each accepted stream before hyper sees it: the place where the head guard of http-mcp.md §2.4 plugs
/// in.
pub trait IoLayer: Send + Sync + 'static {
    /// The IO for one accepted connection.
    fn wrap(&self, stream: TcpStream) -> Box<dyn ConnIo>;
}

/// The identity layer: hyper reads the socket directly.
pub struct PlainIo;

impl IoLayer for PlainIo {
    fn wrap(&self, stream: TcpStream) -> Box<dyn ConnIo> {
        Box::new(stream)
    }
}
