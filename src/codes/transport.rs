//! The closed `fault` of the one `transport` event record (providers.md §12.2).
//!
//! Owns the variants, their precedence order and their wire spelling. It does not decide which fault a
//! transport's end gets (the transport owner of `providers` does). Here rather than in
//! `providers` because the event records (`events`) name the same codes.

/// The `fault` of the one `transport` record (providers.md §12.2), in precedence order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportFault {
    TransportError,
    ProtocolError,
    ServerExit,
    ServerSignal,
    StdoutEof,
    Close,
    CloseTimeout,
    Killed,
}

impl TransportFault {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportFault::TransportError => "transport_error",
            TransportFault::ProtocolError => "protocol_error",
            TransportFault::ServerExit => "server_exit",
            TransportFault::ServerSignal => "server_signal",
            TransportFault::StdoutEof => "stdout_eof",
            TransportFault::Close => "close",
            TransportFault::CloseTimeout => "close_timeout",
            TransportFault::Killed => "killed",
        }
    }
}

super::serialize_as_str!(TransportFault);
