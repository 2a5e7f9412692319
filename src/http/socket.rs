//! Listening sockets exactly as lifecycle.md §11 gives them: `SO_REUSEADDR`, never `SO_REUSEPORT` (a
//! second gateway on the same port must fail to bind), `IPV6_V6ONLY` on IPv6, a backlog of 1024.
//!
//! Owns socket creation and the closed error of a bind, which the caller reports as
//! `listener_unavailable` (stage 11a/11b). It does not accept connections.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};

use crate::codes::StartupCode;

/// The listen backlog (the kernel may lower it).
pub const BACKLOG: i32 = 1024;

/// The step of a bind that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindStep {
    /// `socket(2)`.
    Socket,
    /// `SO_REUSEADDR`, `IPV6_V6ONLY` or non-blocking mode.
    Options,
    /// `bind(2)`: typically the port is taken (`AddrInUse`) or the address is not local.
    Bind,
    /// `listen(2)`.
    Listen,
    /// Registering the socket with the tokio runtime, or reading its local address.
    Register,
}

/// A listener could not be bound: always `listener_unavailable` for startup (lifecycle.md §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindError {
    /// Which step failed.
    pub step: BindStep,
    /// The OS error's kind (never a message with paths or values).
    pub kind: io::ErrorKind,
    /// The OS error number, when the failure was a system call's: its message is the reason a person
    /// reads (`Address already in use`).
    pub os_error: Option<i32>,
}

impl BindError {
    /// The failure of `step` with the system call's `error`.
    pub fn of(step: BindStep, error: &io::Error) -> BindError {
        BindError { step, kind: error.kind(), os_error: error.raw_os_error() }
    }

    /// The startup code of every bind failure.
    pub fn code(&self) -> StartupCode {
        StartupCode::ListenerUnavailable
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let step = match self.step {
            BindStep::Socket => "creating the socket",
            BindStep::Options => "setting socket options",
            BindStep::Bind => "binding the address",
            BindStep::Listen => "listening",
            BindStep::Register => "registering the socket",
        };
        match self.os_error {
            Some(code) => write!(f, "{step} failed: {}", io::Error::from_raw_os_error(code)),
            None => write!(f, "{step} failed ({:?})", self.kind),
        }
    }
}

impl std::error::Error for BindError {}

impl From<BindError> for io::Error {
    fn from(error: BindError) -> io::Error {
        io::Error::new(error.kind, error)
    }
}

/// Binds a non-blocking TCP listener on `addr` for the current tokio runtime (must be called inside
/// one). The socket listens at once (so the kernel completes handshakes into the backlog), but nothing is
/// accepted until an accept loop runs: binding is stage 11a, accepting stage 12.
pub fn bind_socket(addr: SocketAddr) -> Result<tokio::net::TcpListener, BindError> {
    let at = |step: BindStep| move |error: io::Error| BindError::of(step, &error);
    let domain = if addr.is_ipv6() { Domain::IPV6 } else { Domain::IPV4 };
    let socket = Socket::new(domain, Type::STREAM, Some(Protocol::TCP)).map_err(at(BindStep::Socket))?;
    socket.set_reuse_address(true).map_err(at(BindStep::Options))?;
    if addr.is_ipv6() {
        socket.set_only_v6(true).map_err(at(BindStep::Options))?;
    }
    socket.set_nonblocking(true).map_err(at(BindStep::Options))?;
    socket.bind(&addr.into()).map_err(at(BindStep::Bind))?;
    socket.listen(BACKLOG).map_err(at(BindStep::Listen))?;
    tokio::net::TcpListener::from_std(socket.into()).map_err(at(BindStep::Register))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_bind_on_the_same_port_fails() {
        let first = bind_socket("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = first.local_addr().unwrap();
        let options = socket2::SockRef::from(&first);
        assert!(options.reuse_address().unwrap(), "SO_REUSEADDR");
        assert!(!options.reuse_port().unwrap(), "never SO_REUSEPORT");
        let second = bind_socket(addr).unwrap_err();
        assert_eq!(
            second,
            BindError { step: BindStep::Bind, kind: io::ErrorKind::AddrInUse, os_error: Some(98) },
            "no SO_REUSEPORT"
        );
        assert_eq!(second.code().as_str(), "listener_unavailable");
        assert_eq!(second.to_string(), "binding the address failed: Address already in use (os error 98)");
        drop(first);
        assert!(bind_socket(addr).is_ok(), "SO_REUSEADDR: the port is free again at once");
    }

    #[tokio::test]
    async fn ipv6_is_v6_only() {
        let Ok(v6) = bind_socket("[::1]:0".parse().unwrap()) else {
            eprintln!("skipped: ::1 cannot be bound here");
            return;
        };
        let socket = socket2::SockRef::from(&v6);
        assert!(socket.only_v6().unwrap(), "IPV6_V6ONLY");
        assert!(socket.reuse_address().unwrap(), "SO_REUSEADDR");
    }

    #[tokio::test]
    async fn a_foreign_address_is_a_bind_error() {
        // 192.0.2.1 (TEST-NET-1) is never a local address.
        let error = bind_socket("192.0.2.1:0".parse().unwrap()).unwrap_err();
        assert_eq!(error.step, BindStep::Bind);
        assert_eq!(
            error.to_string(),
            format!("listener unavailable: binding the address failed ({:?})", error.kind)
        );
    }
}
