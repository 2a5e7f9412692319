//! The PCC acceptor's fixed 64 connection slots (pcc.md §3, lifecycle.md §10–§11).
//!
//! Owns the incoming-connection stream handed to tonic: a slot is taken before each `accept`, so while
//! every slot is held no connection is accepted (they wait in the kernel's backlog), and the slot is
//! returned when tonic drops the connection. It does not own HTTP/2 settings (`listener`).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// pcc.md §3: fixed; does not grow with the stream bound.
pub const CONNECTION_SLOTS: usize = 64;

/// One accepted connection holding its slot until dropped.
pub struct Slotted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl Connected for Slotted {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        self.stream.connect_info()
    }
}

impl AsyncRead for Slotted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Slotted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The accepted connections of `listener`, each with a slot. An accept error other than a transient
/// one ends the stream (the listener is lost, pcc.md §3).
pub fn incoming(listener: TcpListener) -> impl Stream<Item = io::Result<Slotted>> {
    let slots = Arc::new(Semaphore::new(CONNECTION_SLOTS));
    futures::stream::unfold((listener, slots), |(listener, slots)| async move {
        let slot = slots.clone().acquire_owned().await.ok()?;
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    return Some((Ok(Slotted { stream, _slot: slot }), (listener, slots)));
                }
                // A connection reset before it was accepted, or a descriptor shortage: try again.
                Err(e) if is_transient(&e) => continue,
                Err(_) => return None,
            }
        }
    })
}

fn is_transient(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted
    )
}
