//! Running the third-party programs (the Python and TypeScript clients, the conformance CLI) as child
//! processes.
//!
//! Owns: spawning in a process group of its own, draining stdout and stderr on threads (so a chatty
//! child can never block on a full pipe), a deadline after which the whole group is killed, reaping, and
//! reading the one JSON object an SDK client prints. Does not own: what that output must be (python.rs,
//! typescript.rs, conformance.rs).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a finished child left behind.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// Both streams, for assertion messages.
    pub fn transcript(&self) -> String {
        format!("status: {}\n--- stdout\n{}\n--- stderr\n{}", self.status, self.stdout, self.stderr)
    }
}

/// Kills the child's whole process group and reaps the child if it is still running when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let group = nix::unistd::Pid::from_raw(self.0.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

fn drain(stream: Option<impl Read + Send + 'static>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut s) = stream {
            let _ = s.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `cmd` to completion; panics naming `what` (with everything it printed) if it overruns `deadline`.
pub fn run(what: &str, mut cmd: Command, deadline: Duration) -> Finished {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut guard = Guard(cmd.spawn().unwrap_or_else(|e| panic!("{what}: cannot start: {e}")));
    let stdout = drain(guard.0.stdout.take());
    let stderr = drain(guard.0.stderr.take());
    let start = Instant::now();
    let status = loop {
        if let Some(status) = guard.0.try_wait().expect("try_wait") {
            break Some(status);
        }
        if start.elapsed() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Killing the group (if still running) closes the pipes, so the drains end.
    drop(guard);
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    match status {
        Some(status) => Finished { status, stdout, stderr },
        None => {
            panic!("{what}: did not finish within {deadline:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}")
        }
    }
}

/// Runs a client program that prints one JSON object on stdout: panics naming `what` (with everything it
/// printed) unless it exits 0 and prints that object; returns the object and the transcript.
pub fn run_json(what: &str, cmd: Command, deadline: Duration) -> (serde_json::Value, String) {
    let run = run(what, cmd, deadline);
    let transcript = run.transcript();
    assert!(run.status.success(), "{what} failed\n{transcript}");
    let value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("{what} printed no JSON object ({e})\n{transcript}"));
    (value, transcript)
}
