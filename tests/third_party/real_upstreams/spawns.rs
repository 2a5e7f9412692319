//! Counting an upstream's spawns from outside the library (providers.md §16 F35), and checking that every
//! counted process is gone afterwards.
//!
//! How: the launch is `/bin/sh -c 'echo $$ >> "$0"; exec "$@"' MARKER COMMAND ARGS...`. The shell appends
//! its pid to the marker file and then `exec`s the real server, so each spawn the library makes leaves
//! exactly one line, and the pid on it is the server's own pid (and process group id, §4.1). This does not
//! rely on `Acquired::spawns`, the library's own count, which the tests compare against it. Owns only the
//! wrapper and the marker; the server and the assertions on it are stdio.rs's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ptc_gateway::testing::providers::child::LaunchSpec;

/// The wrapper script; `$0` is the marker path, `$@` the real argument vector.
const RECORD_AND_EXEC: &str = r#"echo $$ >> "$0"; exec "$@""#;

pub struct SpawnCounter {
    dir: tempfile::TempDir,
    marker: PathBuf,
}

impl SpawnCounter {
    pub fn new() -> SpawnCounter {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("spawns.txt");
        SpawnCounter { dir, marker }
    }

    /// The child environment of `inherit_environment: false` (§4.1): `PATH` only, from the test's own
    /// environment (server-everything's `#!/usr/bin/env node` needs it).
    pub fn environment() -> BTreeMap<String, String> {
        BTreeMap::from([("PATH".to_owned(), std::env::var("PATH").unwrap())])
    }

    /// `command args...` as launched directly, in the counter's scratch directory.
    pub fn direct(&self, command: &Path, args: &[&str]) -> LaunchSpec {
        LaunchSpec {
            command: command.display().to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: self.dir.path().to_path_buf(),
            env: SpawnCounter::environment(),
        }
    }

    /// `command args...` behind the recording wrapper.
    pub fn counted(&self, command: &Path, args: &[&str]) -> LaunchSpec {
        let mut argv = vec![
            "-c".to_owned(),
            RECORD_AND_EXEC.to_owned(),
            self.marker.display().to_string(),
            command.display().to_string(),
        ];
        argv.extend(args.iter().map(|a| a.to_string()));
        LaunchSpec { command: "/bin/sh".to_owned(), args: argv, ..self.direct(command, args) }
    }

    /// The pids recorded so far, one per spawn, in spawn order.
    pub fn pids(&self) -> Vec<i32> {
        let text = std::fs::read_to_string(&self.marker).unwrap_or_default();
        text.lines().map(|l| l.trim().parse().unwrap()).collect()
    }

    /// Every counted process and its whole group are gone (no process, no zombie), waiting for the
    /// kernel with a deadline: a killed grandchild is a zombie until init reaps it.
    pub fn assert_all_gone(&self) {
        for pid in self.pids() {
            assert!(!Path::new(&format!("/proc/{pid}")).exists(), "process {pid} remains");
            let deadline = Instant::now() + Duration::from_secs(5);
            while nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), None).is_ok() {
                assert!(Instant::now() < deadline, "process group {pid} remains");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}
