//! The one accept loop of the HTTP listener (lifecycle.md §11 "One acceptor", lifecycle.md §7.3 stage S1
//! (stop listeners), lifecycle.md §7.5).
//!
//! Owns the loop's states and why it ends: reserve a slot, then `accept`; hand the connection and its slot
//! over; repeat until stopped. A graceful stop ends the loop and drops the listening socket (stop listeners,
//! S1); an `accept` error that means the socket itself is broken ends it as a listener loss, which the caller
//! turns into a domain stop (exit 70). Errors that belong to one pending connection or to a momentary
//! shortage of descriptors or memory are retried with a bounded backoff. It does not own what happens on a
//! connection.

use std::io;
use std::time::Duration;

use nix::errno::Errno;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::http::slots::{ConnectionSlot, Slots};

/// Why the accept loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopEnd {
    /// Shutdown stage S1, stop listeners: asked to stop; the listening socket is closed.
    Stopped,
    /// `accept` failed in a way that means the listening socket is unusable: a listener loss
    /// (lifecycle.md §7.5).
    AcceptFailed(io::ErrorKind),
    /// The slot pool closed (cannot happen while the listener lives; listed so the loop never spins).
    SlotsClosed,
    /// The loop's task ended without reporting (it panicked): a listener loss.
    Lost,
}

impl LoopEnd {
    /// True iff the end is a listener loss for lifecycle.md §6.3 ("loss of the HTTP listener stops the
    /// domain"), i.e. anything but an asked-for stop.
    pub fn is_loss(self) -> bool {
        !matches!(self, LoopEnd::Stopped)
    }
}

/// How the acceptor treats one `accept` error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcceptErrorClass {
    /// The error belongs to one pending connection (it was aborted or reset before `accept`, or a
    /// network error Linux reports through `accept`, accept(2)): retry at once.
    Connection,
    /// A shortage of descriptors, buffers or memory: retry after a pause, so the loop does not spin.
    Shortage,
    /// The listening socket itself is broken: the loop ends as a listener loss.
    Fatal,
}

/// Classifies an `accept` error (accept(2) "Error handling"). Anything not known to be about a single
/// connection or a shortage is fatal, so a broken socket is reported instead of retried forever.
pub fn classify_accept_error(error: &io::Error) -> AcceptErrorClass {
    if matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::Interrupted
    ) {
        return AcceptErrorClass::Connection;
    }
    let Some(code) = error.raw_os_error() else {
        return AcceptErrorClass::Fatal;
    };
    let errno = Errno::from_raw(code);
    const CONNECTION: [Errno; 11] = [
        Errno::ECONNABORTED,
        Errno::EINTR,
        Errno::EPROTO,
        Errno::EPERM,
        Errno::ENETDOWN,
        Errno::ENOPROTOOPT,
        Errno::EHOSTDOWN,
        Errno::EHOSTUNREACH,
        Errno::EOPNOTSUPP,
        Errno::ENETUNREACH,
        Errno::ETIMEDOUT,
    ];
    const SHORTAGE: [Errno; 4] = [Errno::EMFILE, Errno::ENFILE, Errno::ENOBUFS, Errno::ENOMEM];
    if CONNECTION.contains(&errno) || errno == Errno::EAGAIN {
        AcceptErrorClass::Connection
    } else if SHORTAGE.contains(&errno) {
        AcceptErrorClass::Shortage
    } else {
        AcceptErrorClass::Fatal
    }
}

/// The first and the longest pause after a shortage; the pause doubles while shortages repeat.
const SHORTAGE_BACKOFF: (Duration, Duration) = (Duration::from_millis(5), Duration::from_millis(500));

/// Runs the accept loop until `stop` turns true or the socket breaks. Each accepted connection is handed
/// to `spawn` with its slot. The listening socket is dropped (closed) when this returns.
pub async fn run(
    listener: TcpListener,
    slots: std::sync::Arc<Slots>,
    mut stop: watch::Receiver<bool>,
    mut spawn: impl FnMut(TcpStream, ConnectionSlot),
) -> LoopEnd {
    let mut backoff = SHORTAGE_BACKOFF.0;
    loop {
        // The slot is taken before `accept` (lifecycle.md §11): at the ceiling the loop waits here.
        let reserved = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => return LoopEnd::Stopped,
            reserved = slots.reserve() => reserved,
        };
        let Some(reserved) = reserved else { return LoopEnd::SlotsClosed };
        let accepted = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => return LoopEnd::Stopped,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _peer)) => {
                backoff = SHORTAGE_BACKOFF.0;
                spawn(stream, reserved.bind());
            }
            Err(error) => {
                // The reserved slot goes back to the pool with `reserved`.
                let class = classify_accept_error(&error);
                tracing::debug!(kind = ?error.kind(), ?class, "accept failed");
                match class {
                    AcceptErrorClass::Connection => {}
                    AcceptErrorClass::Shortage => {
                        drop(reserved);
                        tokio::select! {
                            biased;
                            _ = stop.wait_for(|s| *s) => return LoopEnd::Stopped,
                            _ = tokio::time::sleep(backoff) => {}
                        }
                        backoff = backoff.saturating_mul(2).min(SHORTAGE_BACKOFF.1);
                    }
                    AcceptErrorClass::Fatal => return LoopEnd::AcceptFailed(error.kind()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_errors_are_classified() {
        use AcceptErrorClass::*;
        let cases = [
            (Errno::ECONNABORTED, Connection),
            (Errno::EINTR, Connection),
            (Errno::EPROTO, Connection),
            (Errno::EPERM, Connection),
            (Errno::ENETUNREACH, Connection),
            (Errno::EAGAIN, Connection),
            (Errno::EMFILE, Shortage),
            (Errno::ENFILE, Shortage),
            (Errno::ENOBUFS, Shortage),
            (Errno::ENOMEM, Shortage),
            (Errno::EBADF, Fatal),
            (Errno::EINVAL, Fatal),
            (Errno::ENOTSOCK, Fatal),
            (Errno::EFAULT, Fatal),
        ];
        for (errno, expected) in cases {
            let error = io::Error::from_raw_os_error(errno as i32);
            assert_eq!(classify_accept_error(&error), expected, "{errno}");
        }
        let synthetic = io::Error::new(io::ErrorKind::ConnectionReset, "reset");
        assert_eq!(classify_accept_error(&synthetic), Connection);
        let unknown = io::Error::other("no errno");
        assert_eq!(classify_accept_error(&unknown), Fatal);
    }

    #[test]
    fn only_a_stop_is_not_a_loss() {
        assert!(!LoopEnd::Stopped.is_loss());
        assert!(LoopEnd::AcceptFailed(io::ErrorKind::InvalidInput).is_loss());
        assert!(LoopEnd::SlotsClosed.is_loss());
        assert!(LoopEnd::Lost.is_loss());
    }

    /// On Linux, `shutdown(2)` on a listening socket makes a pending `accept` fail with `EINVAL`: the
    /// socket is broken, so the loop must end as a loss instead of retrying.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_broken_listening_socket_ends_the_loop_as_a_loss() {
        let listener = crate::http::socket::bind_socket("127.0.0.1:0".parse().unwrap()).unwrap();
        let socket = socket2::SockRef::from(&listener).try_clone().unwrap();
        let slots = Slots::new(1);
        let (_stop, stop_rx) = watch::channel(false);
        let task = tokio::spawn(run(listener, slots, stop_rx, |_, _| {}));
        tokio::task::yield_now().await;
        socket.shutdown(std::net::Shutdown::Both).unwrap();
        let end = tokio::time::timeout(Duration::from_secs(5), task).await.unwrap().unwrap();
        assert_eq!(end, LoopEnd::AcceptFailed(io::ErrorKind::InvalidInput));
        assert!(end.is_loss());
    }

    #[tokio::test]
    async fn a_stop_ends_the_loop_and_closes_the_socket() {
        let listener = crate::http::socket::bind_socket("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stop_rx) = watch::channel(false);
        let task = tokio::spawn(run(listener, Slots::new(1), stop_rx, |_, _| {}));
        stop.send_replace(true);
        let end = tokio::time::timeout(Duration::from_secs(5), task).await.unwrap().unwrap();
        assert_eq!(end, LoopEnd::Stopped);
        assert!(TcpStream::connect(addr).await.is_err(), "the listening socket is closed");
    }
}
