//! The stdio child process (providers.md §4.1, §4.4, §13.1, §13.2): executable resolution and digest,
//! spawning without a shell in its own process group, observing the leader's exit without reaping it, the
//! close procedure, the fast close, and kill on drop.
//!
//! This file owns the process and its process group. It does not own the pipes once the transport owner
//! (`transport.rs`) has taken them, and it does not frame or interpret any byte.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;

use super::failure::FailureClass;

/// Close procedure step bounds (providers.md §13.1, §15).
pub const STDIN_GRACE: Duration = Duration::from_millis(2_000);
pub const TERM_GRACE: Duration = Duration::from_millis(2_000);
pub const KILL_GRACE: Duration = Duration::from_millis(5_000);
/// Fast close of a discarded probe process (providers.md §13.2).
pub const FAST_CLOSE_GRACE: Duration = Duration::from_millis(500);

/// What to start (providers.md §4.1). `env` is the exact child environment (`env.rs`).
#[derive(Clone, Debug)]
pub struct LaunchSpec {
    pub command: String,
    pub args: Vec<String>,
    /// The resolved working directory.
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
}

/// How the leader ended, observed with `WNOWAIT` (providers.md §4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// No status could be obtained.
    Unknown,
}

/// Resolve `command` as providers.md §4.1 says: a path when it contains `/`, else the first executable
/// regular file in the absolute entries of the child's `PATH`.
pub fn resolve(spec: &LaunchSpec) -> Result<PathBuf, FailureClass> {
    if spec.command.contains('/') {
        let path = Path::new(&spec.command);
        let path = if path.is_absolute() { path.to_path_buf() } else { spec.cwd.join(path) };
        // A missing or non-executable file cannot be started (providers.md §4.1 spawn failure, F15).
        return if is_executable_file(&path) {
            Ok(path)
        } else {
            Err(FailureClass::McpStdioLauncherUnavailable)
        };
    }
    let path_var = spec.env.get("PATH").ok_or(FailureClass::McpStdioLauncherUnavailable)?;
    path_var
        .split(':')
        .filter(|dir| dir.starts_with('/'))
        .map(|dir| Path::new(dir).join(&spec.command))
        .find(|candidate| is_executable_file(candidate))
        .ok_or(FailureClass::McpStdioLauncherUnavailable)
}

// Mode bits stand in for the effective-uid access check: an `access(2)` call uses the real uid, and the
// gateway never runs with differing ids.
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// `sha256:` + lowercase hex of the resolved file's bytes, links followed (providers.md §4.1, §7.4). A file
/// that cannot be read is `provider_pin_unavailable` for the caller; this returns `None`.
pub fn digest_executable(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(crate::json::sha256_qualified(&bytes))
}

/// A running child, the leader of its own process group.
pub struct Child {
    pid: i32,
    process: Option<tokio::process::Child>,
    exit: watch::Receiver<Option<Exit>>,
}

/// The three pipes, handed to the transport owner.
pub struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// How a close ended (providers.md §13.1): which step the leader exited at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseStep {
    /// Exited after stdin was closed (or had already exited).
    Stdin,
    /// Needed `SIGTERM`.
    Term,
    /// Needed `SIGKILL`.
    Kill,
    /// Did not exit by the end of step 5: a cleanup failure; a background reaper finishes the job.
    Failed,
}

type Job = Box<dyn FnOnce() + Send>;

/// The one spawning thread (providers.md §4.1 "Parent death"): Linux ties `PR_SET_PDEATHSIG` to the thread
/// that forked, so every child is forked from this thread, which is never retired (unlike tokio's blocking
/// pool) and lives until the process exits. `None` if it could not be started (then spawning fails).
fn spawner() -> Option<&'static std::sync::Mutex<std::sync::mpsc::Sender<Job>>> {
    static SPAWNER: std::sync::OnceLock<Option<std::sync::Mutex<std::sync::mpsc::Sender<Job>>>> =
        std::sync::OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<Job>();
            let started = std::thread::Builder::new().name("ptc-spawner".into()).spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                }
            });
            started.ok().map(|_| std::sync::Mutex::new(tx))
        })
        .as_ref()
}

/// Runs `job` on the spawning thread inside the caller's tokio runtime and waits for its result.
fn on_spawner<R: Send + 'static>(job: impl FnOnce() -> R + Send + 'static) -> Option<R> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let boxed: Job = Box::new(move || {
        let _entered = handle.enter();
        let _ = tx.send(job());
    });
    spawner()?.lock().ok()?.send(boxed).ok()?;
    // A fork and exec take milliseconds; the caller's worker waits for them like for any syscall.
    rx.recv().ok()
}

/// The parent-death signal (providers.md §4.1), set in the forked child before it executes.
///
/// `pre_exec` is `unsafe` because the closure runs between fork and exec, where only async-signal-safe
/// calls are allowed. This one makes two raw syscalls (`prctl`, `getppid`), allocates nothing and takes no
/// lock, which is within that contract; it is the only `unsafe` in the crate (lib.rs denies it elsewhere).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn set_parent_death_signal(command: &mut tokio::process::Command) {
    let parent = std::process::id();
    // SAFETY: see above; the closure only issues async-signal-safe syscalls.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
            // The parent may have died before the signal was armed: exit at once then (providers.md §4.1).
            if u32::try_from(nix::unistd::getppid().as_raw()).ok() != Some(parent) {
                return Err(std::io::Error::from_raw_os_error(nix::libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn set_parent_death_signal(_command: &mut tokio::process::Command) {
    // Without a parent-death signal the child relies on end of file on stdin (providers.md §4.1).
}

/// Spawn exactly `resolved` with `argv[0]` the command as written, no shell, in a new process group.
///
/// Rust's `Command` already empties the signal mask, resets `SIGPIPE` to its default and opens every
/// gateway descriptor close-on-exec, which gives the inherited-state rule of providers.md §4.1. The fork
/// happens on the long-lived spawning thread so the parent-death signal stays armed for the child's life.
pub fn spawn(spec: &LaunchSpec, resolved: &Path) -> Result<(Child, Pipes), FailureClass> {
    if !spec.cwd.is_dir() {
        return Err(FailureClass::McpStdioLauncherUnavailable);
    }
    let (spec, resolved) = (spec.clone(), resolved.to_path_buf());
    on_spawner(move || spawn_here(&spec, &resolved)).unwrap_or(Err(FailureClass::McpStdioLauncherUnavailable))
}

fn spawn_here(spec: &LaunchSpec, resolved: &Path) -> Result<(Child, Pipes), FailureClass> {
    let mut command = tokio::process::Command::new(resolved);
    set_parent_death_signal(&mut command);
    command
        .arg0(&spec.command)
        .args(&spec.args)
        .env_clear()
        .envs(&spec.env)
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut process = command.spawn().map_err(|error| {
        // The operator's cause (the OS's reason, never the command's environment) for the failure class.
        tracing::debug!(%error, "the stdio command could not be spawned");
        FailureClass::McpStdioLauncherUnavailable
    })?;
    let pid = process.id().and_then(|p| i32::try_from(p).ok());
    let (Some(pid), Some(stdin), Some(stdout), Some(stderr)) =
        (pid, process.stdin.take(), process.stdout.take(), process.stderr.take())
    else {
        return Err(FailureClass::McpStdioLauncherUnavailable);
    };
    let exit = watch_exit(pid);
    live_groups(|groups| groups.push(pid));
    Ok((Child { pid, process: Some(process), exit }, Pipes { stdin, stdout, stderr }))
}

/// Every process group started and not yet given up by its close, so that the last resort of
/// lifecycle.md §7.5 ("the main thread MUST send SIGKILL to every child process group it started") can
/// reach them when the orderly stages cannot run.
fn live_groups<R>(f: impl FnOnce(&mut Vec<i32>) -> R) -> R {
    static LIVE: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());
    f(&mut LIVE.lock().unwrap_or_else(|p| p.into_inner()))
}

/// A group whose leader is about to be reaped (its id may be reused afterwards) leaves the registry.
fn forget_group(pid: i32) {
    live_groups(|groups| groups.retain(|g| *g != pid));
}

/// lifecycle.md §7.5: SIGKILL to every child process group still registered. Their leaders are left to
/// the runtime's orphan reaping (`kill_on_drop`) or to the process exit.
pub fn kill_every_group() {
    for pid in live_groups(std::mem::take) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

// A dedicated thread blocks in `waitid(WEXITED | WNOWAIT)`: the leader's exit is observed while it stays a
// zombie, so its pid (= the group id) cannot be reused before the final group SIGKILL (providers.md §4.4). A
// plain thread, not the blocking pool, so a runtime shutdown never waits for it.
fn watch_exit(pid: i32) -> watch::Receiver<Option<Exit>> {
    let (tx, rx) = watch::channel(None);
    let spawned = std::thread::Builder::new().name(format!("ptc-exit-{pid}")).spawn(move || {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT;
        let exit = loop {
            match waitid(Id::Pid(Pid::from_raw(pid)), flags) {
                Ok(WaitStatus::Exited(_, code)) => break Exit::Code(code),
                Ok(WaitStatus::Signaled(_, signal, _)) => break Exit::Signal(signal as i32),
                Err(nix::errno::Errno::EINTR) => continue,
                Ok(_) | Err(_) => break Exit::Unknown,
            }
        };
        let _ = tx.send(Some(exit));
    });
    if spawned.is_err() {
        // Without a watcher no exit can be observed; the close procedure then ends at a cleanup failure.
        let (_tx, rx) = watch::channel(None);
        return rx;
    }
    rx
}

impl Child {
    /// The leader's pid, which is also its process group id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// A receiver that turns `Some` once the leader has exited.
    pub fn exit_watch(&self) -> watch::Receiver<Option<Exit>> {
        self.exit.clone()
    }

    fn signal_group(&self, signal: Signal) {
        // ESRCH (group already empty) is the expected outcome once everyone has gone.
        let _ = killpg(Pid::from_raw(self.pid), signal);
    }

    async fn exited_within(&mut self, grace: Duration) -> Option<Exit> {
        let mut exit = self.exit.clone();
        let waited = tokio::time::timeout(grace, exit.wait_for(|e| e.is_some())).await;
        match waited {
            Ok(Ok(seen)) => *seen,
            _ => None,
        }
    }

    /// Steps 2–7 of the close procedure (providers.md §13.1). The caller drops stdin first (step 2), or
    /// passes it.
    pub async fn close(mut self, stdin: Option<ChildStdin>) -> (CloseStep, Exit) {
        drop(stdin);
        let mut step = CloseStep::Stdin;
        let mut exit = self.exited_within(STDIN_GRACE).await;
        if exit.is_none() {
            step = CloseStep::Term;
            self.signal_group(Signal::SIGTERM);
            exit = self.exited_within(TERM_GRACE).await;
        }
        if exit.is_none() {
            step = CloseStep::Kill;
            self.signal_group(Signal::SIGKILL);
            exit = self.exited_within(KILL_GRACE).await;
        }
        match exit {
            Some(exit) => {
                self.finish().await;
                (step, exit)
            }
            None => {
                self.reap_in_background();
                (CloseStep::Failed, Exit::Unknown)
            }
        }
    }

    /// The fast close of a discarded probe process (providers.md §13.2): stdin, 500 ms, `SIGKILL`, reap.
    /// False when the leader outlived the kill grace (a background reaper finishes the job).
    pub async fn fast_close(mut self, stdin: Option<ChildStdin>) -> bool {
        drop(stdin);
        if self.exited_within(FAST_CLOSE_GRACE).await.is_none() {
            self.signal_group(Signal::SIGKILL);
            if self.exited_within(KILL_GRACE).await.is_none() {
                self.reap_in_background();
                return false;
            }
        }
        self.finish().await;
        true
    }

    // Step 6: the leader has exited but is not reaped, so the group id is still ours: SIGKILL the group
    // (members that outlived the leader), then reap.
    async fn finish(&mut self) {
        self.signal_group(Signal::SIGKILL);
        forget_group(self.pid);
        if let Some(mut process) = self.process.take() {
            let _ = process.wait().await;
        }
    }

    // Step 7: a leader that outlived SIGKILL is handed to a background reaper.
    fn reap_in_background(mut self) {
        let process = self.process.take();
        let mut exit = self.exit.clone();
        let pid = self.pid;
        tokio::spawn(async move {
            let _ = exit.wait_for(|e| e.is_some()).await;
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            forget_group(pid);
            if let Some(mut process) = process {
                let _ = process.wait().await;
            }
        });
    }
}

impl Drop for Child {
    /// Kill on drop: a child whose close procedure never ran loses its whole group; the runtime's orphan
    /// queue reaps the leader (`kill_on_drop`).
    fn drop(&mut self) {
        if self.process.is_some() {
            self.signal_group(Signal::SIGKILL);
            forget_group(self.pid);
        }
    }
}
