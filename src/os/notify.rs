//! systemd service notifications (lifecycle.md §9.1): the closed set of messages the gateway sends, the
//! `NOTIFY_SOCKET` target captured once at process start, and the `WATCHDOG_USEC` / `WATCHDOG_PID` rule.
//!
//! Owns the wire texts and the datagram. Does not own *when* a message is sent: stage 12 sends `READY=1`
//! (`startup`), shutdown stage S1 (stop listeners) sends `STOPPING=1` (`startup::shutdown`), and the ticking
//! of `WATCHDOG=1` lives in `startup::watchdog`.
//!
//! The protocol is one `AF_UNIX` datagram of newline-terminated `KEY=VALUE` lines (sd_notify(3)). It is
//! written here over `std::os::unix::net::UnixDatagram` rather than through the `sd-notify` crate because
//! lifecycle.md §9.1 requires abstract socket names (`@name`), which that crate (0.5) does not address; std
//! does, without `unsafe`. A failure to notify is ignored (lifecycle.md §9.1): no method here returns an
//! error.

use std::ffi::{OsStr, OsString};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::time::Duration;

/// lifecycle.md §9.1: the service manager's variables, which MUST NOT reach upstream child processes (in
/// addition to the environment rules of providers.md §4.1). The upstream spawn removes every one of them.
pub const SERVICE_MANAGER_ENV: [&str; 6] =
    ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"];

/// The `STATUS=` texts of lifecycle.md §9.1, exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Starting,
    Ready,
    NotReady,
    Draining,
}

impl Status {
    /// The text after `STATUS=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Starting => "starting",
            Status::Ready => "ready",
            Status::NotReady => "not_ready",
            Status::Draining => "draining",
        }
    }
}

/// One notification line (lifecycle.md §9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    Ready,
    Stopping,
    Watchdog,
    Status(Status),
}

impl Message {
    /// The line without its terminating LF.
    pub fn line(self) -> String {
        match self {
            Message::Ready => "READY=1".to_owned(),
            Message::Stopping => "STOPPING=1".to_owned(),
            Message::Watchdog => "WATCHDOG=1".to_owned(),
            Message::Status(status) => format!("STATUS={}", status.as_str()),
        }
    }
}

/// Where datagrams go.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    /// A filesystem socket path.
    Path(PathBuf),
    /// A Linux abstract name (the bytes after `@`).
    Abstract(Vec<u8>),
}

/// The notification sender; disabled when `NOTIFY_SOCKET` was unset, empty, or not a path or `@name`.
#[derive(Clone, Debug, Default)]
pub struct Notifier {
    target: Option<Target>,
}

impl Notifier {
    /// A notifier that sends nothing (in-process tests, discovery of a library caller).
    pub fn disabled() -> Notifier {
        Notifier { target: None }
    }

    /// Reads `NOTIFY_SOCKET` once. Called at process start, before any thread could change it.
    pub fn from_env() -> Notifier {
        Notifier::from_value(std::env::var_os("NOTIFY_SOCKET").as_deref())
    }

    /// The notifier for a `NOTIFY_SOCKET` value. Other address families systemd knows (`vsock:`) are not
    /// a loopback gateway's concern and disable notification.
    pub fn from_value(value: Option<&OsStr>) -> Notifier {
        let target = value.and_then(|v| {
            let bytes = v.as_encoded_bytes();
            match bytes.first() {
                Some(b'/') => Some(Target::Path(PathBuf::from(v))),
                Some(b'@') if bytes.len() > 1 => bytes.get(1..).map(|name| Target::Abstract(name.to_vec())),
                _ => None,
            }
        });
        Notifier { target }
    }

    /// True when a target is configured.
    pub fn is_enabled(&self) -> bool {
        self.target.is_some()
    }

    /// Sends `messages` as one datagram. Errors are ignored (lifecycle.md §9.1).
    pub fn send(&self, messages: &[Message]) {
        let Some(target) = &self.target else { return };
        let mut datagram = String::new();
        for message in messages {
            datagram.push_str(&message.line());
            datagram.push('\n');
        }
        if let Err(error) = send_to(target, datagram.as_bytes()) {
            tracing::debug!(%error, "service notification not delivered");
        }
    }
}

fn send_to(target: &Target, bytes: &[u8]) -> std::io::Result<usize> {
    let socket = UnixDatagram::unbound()?;
    match target {
        Target::Path(path) => socket.send_to(bytes, path),
        Target::Abstract(name) => send_abstract(&socket, name, bytes),
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn send_abstract(socket: &UnixDatagram, name: &[u8], bytes: &[u8]) -> std::io::Result<usize> {
    #[cfg(target_os = "android")]
    use std::os::android::net::SocketAddrExt;
    #[cfg(target_os = "linux")]
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
    socket.send_to_addr(bytes, &addr)
}

/// Abstract names exist only on Linux; elsewhere (launchd hosts) the notification is not delivered.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn send_abstract(_socket: &UnixDatagram, _name: &[u8], _bytes: &[u8]) -> std::io::Result<usize> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// lifecycle.md §9.1: the watchdog ping interval, `WATCHDOG_USEC / 2`, when `usec` is a positive decimal
/// integer and `pid` is unset or equals `own_pid`; `None` otherwise.
pub fn watchdog_interval(usec: Option<&OsStr>, pid: Option<&OsStr>, own_pid: u32) -> Option<Duration> {
    let usec: u64 = usec?.to_str()?.parse().ok().filter(|u| *u > 0)?;
    let for_us = match pid {
        None => true,
        Some(pid) => pid.to_str().and_then(|p| p.parse::<u32>().ok()) == Some(own_pid),
    };
    // Halving a positive value can give 0 (1 µs); ping as often as the runtime can then, not never.
    for_us.then(|| Duration::from_micros(usec / 2).max(Duration::from_micros(1)))
}

/// The watchdog interval from this process's environment.
pub fn watchdog_interval_from_env() -> Option<Duration> {
    let usec: Option<OsString> = std::env::var_os("WATCHDOG_USEC");
    let pid: Option<OsString> = std::env::var_os("WATCHDOG_PID");
    watchdog_interval(usec.as_deref(), pid.as_deref(), std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_the_exact_texts_of_9_1() {
        let cases = [
            (Message::Ready, "READY=1"),
            (Message::Stopping, "STOPPING=1"),
            (Message::Watchdog, "WATCHDOG=1"),
            (Message::Status(Status::Starting), "STATUS=starting"),
            (Message::Status(Status::Ready), "STATUS=ready"),
            (Message::Status(Status::NotReady), "STATUS=not_ready"),
            (Message::Status(Status::Draining), "STATUS=draining"),
        ];
        for (message, line) in cases {
            assert_eq!(message.line(), line);
        }
    }

    #[test]
    fn targets() {
        let cases: &[(Option<&str>, Option<Target>)] = &[
            (None, None),
            (Some(""), None),
            (Some("@"), None),
            (Some("relative/sock"), None),
            (Some("vsock:2:1234"), None),
            (Some("/run/systemd/notify"), Some(Target::Path(PathBuf::from("/run/systemd/notify")))),
            (Some("@sd-notify"), Some(Target::Abstract(b"sd-notify".to_vec()))),
        ];
        for (value, expected) in cases {
            let notifier = Notifier::from_value(value.map(OsStr::new));
            assert_eq!(&notifier.target, expected, "{value:?}");
        }
    }

    #[test]
    fn watchdog_vectors() {
        let own = 4242;
        let cases: &[(Option<&str>, Option<&str>, Option<Duration>)] = &[
            (None, None, None),
            (Some("0"), None, None),
            (Some("-5"), None, None),
            (Some("abc"), None, None),
            (Some(""), None, None),
            (Some("2000000"), None, Some(Duration::from_secs(1))),
            (Some("2000000"), Some("4242"), Some(Duration::from_secs(1))),
            (Some("2000000"), Some("4243"), None),
            (Some("2000000"), Some("x"), None),
            (Some("1"), None, Some(Duration::from_micros(1))),
        ];
        for (usec, pid, expected) in cases {
            let got = watchdog_interval(usec.map(OsStr::new), pid.map(OsStr::new), own);
            assert_eq!(&got, expected, "usec {usec:?} pid {pid:?}");
        }
    }

    #[test]
    fn datagrams_reach_a_path_and_an_abstract_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let server = UnixDatagram::bind(&path).unwrap();
        Notifier::from_value(Some(path.as_os_str())).send(&[Message::Ready, Message::Status(Status::Ready)]);
        let mut buf = [0u8; 256];
        let n = server.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1\nSTATUS=ready\n");

        #[cfg(target_os = "linux")]
        {
            use std::os::linux::net::SocketAddrExt;
            let name = format!("ptc-notify-test-{}", std::process::id());
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            let server = UnixDatagram::bind_addr(&addr).unwrap();
            Notifier::from_value(Some(OsStr::new(&format!("@{name}")))).send(&[Message::Stopping]);
            let n = server.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"STOPPING=1\n");
        }
    }

    #[test]
    fn a_missing_socket_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        Notifier::from_value(Some(dir.path().join("absent").as_os_str())).send(&[Message::Ready]);
    }
}
