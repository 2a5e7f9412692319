//! Listening sockets exactly as lifecycle.md §11 gives them: `SO_REUSEADDR`, never `SO_REUSEPORT` (a
//! second gateway on the same port must fail to bind), `IPV6_V6ONLY` on IPv6, a backlog of 1024.

use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};

/// The listen backlog (the kernel may lower it).
pub const BACKLOG: i32 = 1024;

/// Binds a non-blocking TCP listener on `addr` for the current tokio runtime.
pub fn bind_socket(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let domain = if addr.is_ipv6() { Domain::IPV6 } else { Domain::IPV4 };
    let socket = Socket::new(domain, Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    tokio::net::TcpListener::from_std(socket.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_bind_on_the_same_port_fails() {
        let first = bind_socket("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = first.local_addr().unwrap();
        assert!(bind_socket(addr).is_err(), "no SO_REUSEPORT: the port is exclusive");
        drop(first);
        assert!(bind_socket(addr).is_ok(), "SO_REUSEADDR: the port is free again at once");
    }
}
