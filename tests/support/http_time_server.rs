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
}

impl HttpTimeServer {
    /// Starts the script with `python` and waits (30 s at most) for its one `listening` line.
    pub fn start(python: &Path, script: &Path, token: &str) -> HttpTimeServer {
        let port = super::free_port("127.0.0.1");
        let mut child = Command::new(python)
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
        let server = HttpTimeServer { child, addr: SocketAddr::from(([127, 0, 0, 1], port)) };
        let line = rx.recv_timeout(Duration::from_secs(30)).expect("no `listening` line within 30 s");
        assert_eq!(line, format!("listening {}\n", server.endpoint()));
        server
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}/mcp", self.addr)
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
