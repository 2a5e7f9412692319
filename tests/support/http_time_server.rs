//! `tests/upstreams/http_time_server.py` (the Streamable HTTP upstream of the real-upstream tests) on a
//! free loopback port, requiring `Authorization: Bearer <token>`; killed with its group and reaped on
//! drop if a test failed before it exited.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct HttpTimeServer {
    pub child: Child,
    pub addr: SocketAddr,
    /// Serving HTTPS (as `localhost`) rather than HTTP.
    pub tls: bool,
}

impl HttpTimeServer {
    /// Starts the script with `python` and waits (30 s at most) for its one `listening` line.
    pub fn start(python: &Path, script: &Path, token: &str) -> HttpTimeServer {
        Self::spawn(python, script, token, None)
    }

    /// As [`HttpTimeServer::start`], serving HTTPS with `cert` and `key` (PEM files).
    pub fn start_tls(python: &Path, script: &Path, token: &str, cert: &Path, key: &Path) -> HttpTimeServer {
        Self::spawn(python, script, token, Some((cert, key)))
    }

    fn spawn(python: &Path, script: &Path, token: &str, tls: Option<(&Path, &Path)>) -> HttpTimeServer {
        let port = super::free_port("127.0.0.1");
        let mut command = Command::new(python);
        if let Some((cert, key)) = tls {
            command.env("PTC_UPSTREAM_TLS_CERT", cert).env("PTC_UPSTREAM_TLS_KEY", key);
        }
        let mut child = command
            .arg(script)
            .arg(port.to_string())
            .env("PTC_UPSTREAM_TOKEN", token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("the HTTP upstream (run tests/third_party/install.sh)");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let server = HttpTimeServer { child, addr, tls: tls.is_some() };
        let line = rx.recv_timeout(Duration::from_secs(30)).expect("no `listening` line within 30 s");
        assert_eq!(line, format!("listening {}\n", server.endpoint()));
        server
    }

    pub fn endpoint(&self) -> String {
        match self.tls {
            true => format!("https://localhost:{}/mcp", self.addr.port()),
            false => format!("http://{}/mcp", self.addr),
        }
    }
}

impl Drop for HttpTimeServer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
        let _ = self.child.wait();
    }
}
