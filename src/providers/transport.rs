//! The stdio transport owner (providers.md §4.2–§4.3, §8.1 steps 4/6/7, providers.md §10, §12.1): one writer,
//! one stdout reader, one stderr drain, the exit monitor, the 128 in-flight slots, abandonment with
//! `notifications/cancelled`, settlement, loss and the close procedure's bookkeeping.
//!
//! This file owns one child's pipes and request table. It does not classify a `tools/call` result
//! (`result.rs`), negotiate an era (`negotiate.rs`) or decide readiness: it reports loss and cleanup
//! failure through [`TransportEvents`] for the integrator's owner to fence on.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot, watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::child::{Child, CloseStep, Exit, Pipes};
use super::failure::{CallFailure, Dispatch, FailureClass};
use super::framing::{self, Line, Message, Violation};
use super::inspect::Inspect;
use super::loss::LossState;
// The loss's and the cancellation's own types, named here too where the transports have always found them.
pub use super::loss::{LossFault, TransportEvents};
pub use super::outgoing::AbandonReason;
use super::outgoing::{cancellation_line, message, server_reply};
use super::stderr_ring::StderrRing;
use super::table::{Reply, Table, WriteState};
pub use crate::codes::transport::TransportFault;
use crate::json;
use crate::support::fault::with_task_panic;

/// In-flight slots per acquisition, fixed (providers.md §8.1 step 4, providers.md §15).
pub const INFLIGHT_SLOTS: usize = 128;
/// Replies to server requests that may wait for the writer (providers.md §4.3, §15).
pub const REPLY_QUEUE: usize = 64;
/// A detached request must settle within this (providers.md §10.2).
pub const SETTLEMENT_DEADLINE: Duration = Duration::from_millis(10_000);
// After stdout end of file, how long the reader waits for the leader's exit status so that a child that
// simply exited is reported `server_exit`/`server_signal` rather than `stdout_eof` (providers.md §12.2). A
// spec gap: the two are observed by different syscalls and the spec gives no window.
const EOF_EXIT_GRACE: Duration = Duration::from_millis(200);

/// How long the close waits, once the group is reaped, for the stderr drain to read the pipe's end, so
/// the tail holds everything the child wrote before it was reaped (providers.md §12.1 step 4). Only a
/// process that left the group can still hold the pipe open; the wait is bounded for it.
const STDERR_EOF_GRACE: Duration = Duration::from_millis(200);

/// The names of a stdio transport's tasks, as its owner hears them (`owner.rs`).
pub(crate) const TASK_WRITER: &str = "stdio_writer";
pub(crate) const TASK_READER: &str = "stdio_reader";
pub(crate) const TASK_STDERR: &str = "stdio_stderr";
pub(crate) const TASK_EXIT_WATCH: &str = "stdio_exit_watch";

/// How the transport ended: the `transport` record's fields and the stderr tail.
#[derive(Debug)]
pub struct TransportEnd {
    pub fault: TransportFault,
    /// 0..255 when the leader exited with a code; `None` for a signal or no status.
    pub exit_status: Option<i32>,
    pub stderr: Vec<u8>,
    pub stderr_truncated: bool,
    /// The transport is closed and, for stdio, its leader reaped (providers.md §13.3, the provider cleanup
    /// stage's cleanliness). Independent of `fault`: a child lost to a pipe error (`transport_error`) is
    /// still reaped by the close procedure.
    pub reaped: bool,
}

/// Counters and fences the integrator observes (providers.md §12, audit-events.md).
#[derive(Default)]
pub struct Counters {
    pub busy: AtomicU64,
    pub detached: AtomicU64,
    pub settlement_timeouts: AtomicU64,
}

enum Outgoing {
    Request { id: u64, line: Vec<u8> },
    Cancel { line: Vec<u8>, done: oneshot::Sender<()> },
    Notification(Vec<u8>),
}

struct Shared {
    table: Mutex<Table>,
    stderr: Mutex<StderrRing>,
    /// True once the stderr drain has read the pipe's end (or failed reading it).
    stderr_eof: watch::Sender<bool>,
    /// Loss, cleanup failure, closing, and the owner that hears every task's end (`loss.rs`).
    life: LossState,
    counters: Counters,
}

impl Shared {
    fn table(&self) -> MutexGuard<'_, Table> {
        // A poisoned lock means a panic under it; the table itself stays consistent (no partial updates
        // span an await), so keep using it.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Transport-owner loss (providers.md §12.1): publish the fault once (the owner hears it), then seal and
    /// fail every pending request, so a waiter that sees its failure also sees why.
    fn lose(&self, fault: LossFault) {
        if !self.life.lose(fault) {
            return;
        }
        let class = match fault {
            LossFault::ProtocolError => FailureClass::McpProtocolError,
            _ => FailureClass::McpTransportError,
        };
        self.table().seal(class);
    }

    /// A protocol violation (providers.md §12.1): the loss, keeping what was violated for the owner's log.
    fn violate(&self, violation: Violation) {
        if self.life.violate(violation) {
            self.table().seal(FailureClass::McpProtocolError);
        }
    }

    fn closing(&self) -> bool {
        self.life.is_closing()
    }
}

/// A registered request whose line is queued; holds its in-flight slot until it settles.
pub struct Pending {
    id: u64,
    rx: oneshot::Receiver<Result<Reply, CallFailure>>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Pending {
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// One of the 128 in-flight slots (providers.md §8.1 step 4), reserved before provider-call admission.
pub struct InflightSlot(OwnedSemaphorePermit);

/// A detached request's settlement (providers.md §10.2): resolves `Ok` once the cancellation line is written,
/// or `Err(provider_cleanup_failed)` when the 10 s deadline passes. It holds the in-flight slot meanwhile.
pub struct Settlement(JoinHandle<Result<(), CallFailure>>);

impl Settlement {
    /// A settlement computed by another transport's task (the HTTP layer, providers.md §10.2).
    pub(crate) fn from_task(task: JoinHandle<Result<(), CallFailure>>) -> Settlement {
        Settlement(task)
    }

    pub async fn settled(self) -> Result<(), CallFailure> {
        self.0.await.unwrap_or(Err(CallFailure::new(FailureClass::ProviderCleanupFailed, Dispatch::Unknown)))
    }
}

/// The outcome of waiting for one request.
pub enum Waited {
    Answered(Reply),
    Failed(CallFailure),
    /// Abandoned after (part of) its line was written: the failure now, the settlement later.
    Detached(CallFailure, Settlement),
}

/// One stdio transport and its owner tasks.
pub struct StdioTransport {
    shared: Arc<Shared>,
    out: mpsc::UnboundedSender<Outgoing>,
    slots: Arc<Semaphore>,
    pid: i32,
    /// Taken by the one close (providers.md §13.1); shared callers hold `&self` while the owner closes.
    owned: Mutex<Option<Owned>>,
    tasks: Vec<JoinHandle<()>>,
}

/// What only the close procedure consumes.
struct Owned {
    child: Child,
    writer: JoinHandle<Option<ChildStdin>>,
    close_stdin: oneshot::Sender<()>,
}

impl StdioTransport {
    /// Take ownership of a spawned child and start its tasks in the transport's group, so that the end
    /// or panic of any of them reaches the transport's owner (`owner.rs`, providers.md §12.1).
    pub fn start(child: Child, pipes: Pipes) -> StdioTransport {
        let shared = Arc::new(Shared {
            table: Mutex::new(Table::default()),
            stderr: Mutex::new(StderrRing::default()),
            stderr_eof: watch::Sender::new(false),
            life: LossState::default(),
            counters: Counters::default(),
        });
        let (out, out_rx) = mpsc::unbounded_channel();
        let (replies, replies_rx) = mpsc::channel(REPLY_QUEUE);
        let (close_stdin, close_rx) = oneshot::channel();
        let group = shared.life.tasks();
        // `with_task_panic` is the identity unless a fault test asked this task to panic once serving.
        let writer = write_loop(shared.clone(), pipes.stdin, out_rx, replies_rx, close_rx);
        let writer = group.spawn(TASK_WRITER, with_task_panic(TASK_WRITER, writer));
        let reader = read_loop(shared.clone(), pipes.stdout, replies, child.exit_watch());
        let stderr = drain_stderr(shared.clone(), pipes.stderr);
        let exit = watch_exit(shared.clone(), child.exit_watch());
        let tasks = vec![
            group.spawn(TASK_READER, with_task_panic(TASK_READER, reader)),
            group.spawn(TASK_STDERR, with_task_panic(TASK_STDERR, stderr)),
            group.spawn(TASK_EXIT_WATCH, with_task_panic(TASK_EXIT_WATCH, exit)),
        ];
        StdioTransport {
            shared,
            out,
            slots: Arc::new(Semaphore::new(INFLIGHT_SLOTS)),
            pid: child.pid(),
            owned: Mutex::new(Some(Owned { child, writer, close_stdin })),
            tasks,
        }
    }

    /// The leader's pid (= its process group id).
    pub fn pid(&self) -> Option<i32> {
        Some(self.pid)
    }

    /// Whether the transport is sealed (lost or closing): new calls fail `provider_unavailable`
    /// (providers.md §8.1).
    pub fn is_sealed(&self) -> bool {
        self.shared.table().is_sealed() || self.shared.closing()
    }

    pub fn events(&self) -> TransportEvents {
        self.shared.life.events()
    }

    /// The loss state (the owner attaches to its task group).
    pub(crate) fn life(&self) -> &LossState {
        &self.shared.life
    }

    /// A task of this transport was lost (providers.md §12.1 "the transport owner itself fails"): an
    /// unclassified loss, `transport_error`.
    pub(crate) fn lose_owner(&self) {
        self.shared.lose(LossFault::TransportError);
    }

    pub fn counters(&self) -> &Counters {
        &self.shared.counters
    }

    /// Reserve an in-flight slot and queue one request (providers.md §8.1 steps 3, 4, 6). `params` absent is
    /// sent without a `params` member (the legacy first `tools/list`, providers.md §7.2).
    pub fn send(&self, method: &str, params: Option<Value>, probe: bool) -> Result<Pending, CallFailure> {
        let slot = self.reserve()?;
        self.send_reserved(slot, method, params, probe, None)
    }

    /// providers.md §8.1 steps 3–4 alone: sealed → `provider_unavailable`; all 128 slots taken →
    /// `mcp_transport_busy`. The slot is held from here until the request settles, admission wait included.
    pub fn reserve(&self) -> Result<InflightSlot, CallFailure> {
        if self.is_sealed() {
            return Err(CallFailure::new(FailureClass::ProviderUnavailable, Dispatch::False));
        }
        let Ok(permit) = self.slots.clone().try_acquire_owned() else {
            self.shared.counters.busy.fetch_add(1, Ordering::Relaxed);
            return Err(CallFailure::new(FailureClass::McpTransportBusy, Dispatch::False));
        };
        Ok(InflightSlot(permit))
    }

    /// providers.md §8.1 step 6 with a slot from [`StdioTransport::reserve`].
    pub fn send_reserved(
        &self,
        slot: InflightSlot,
        method: &str,
        params: Option<Value>,
        probe: bool,
        inspect: Option<Inspect<'_>>,
    ) -> Result<Pending, CallFailure> {
        self.send_line_reserved(slot, probe, inspect, |id| message(Some(id), method, params))
    }

    /// [`StdioTransport::send_reserved`] with the request line written by `line` for the id the table
    /// assigns (the `tools/call` line is written directly, `provider_call::call_line`; the bytes are
    /// `DJ` of the message either way, pins.md §2).
    pub(crate) fn send_line_reserved(
        &self,
        slot: InflightSlot,
        probe: bool,
        inspect: Option<Inspect<'_>>,
        line: impl FnOnce(u64) -> Vec<u8>,
    ) -> Result<Pending, CallFailure> {
        if self.is_sealed() {
            return Err(CallFailure::new(FailureClass::ProviderUnavailable, Dispatch::False));
        }
        let Some((id, rx)) = self.shared.table().register(probe) else {
            return Err(CallFailure::new(FailureClass::ProviderUnavailable, Dispatch::False));
        };
        let line = line(id);
        // traces.md §8: the exact line, attributed by its id, before it leaves.
        if let Some(inspect) = inspect {
            inspect.file.request(inspect.provider, inspect.alias, id, inspect.traceparent, &line);
        }
        if self.out.send(Outgoing::Request { id, line }).is_err() {
            self.shared.table().abandon(id);
            return Err(CallFailure::new(FailureClass::ProviderUnavailable, Dispatch::False));
        }
        Ok(Pending { id, rx, permit: Some(slot.0) })
    }

    /// Queue a notification (`notifications/initialized`, providers.md §6.3 step 5).
    pub fn notify(&self, method: &str) -> Result<(), CallFailure> {
        let mut message = Map::new();
        message.insert("jsonrpc".to_owned(), Value::String("2.0".to_owned()));
        message.insert("method".to_owned(), Value::String(method.to_owned()));
        let line = json::to_deterministic(&Value::Object(message));
        self.out
            .send(Outgoing::Notification(line))
            .map_err(|_| CallFailure::new(FailureClass::ProviderUnavailable, Dispatch::False))
    }

    /// Wait for the answer, the deadline or `cancel` (providers.md §8.1 step 7, providers.md §10.1).
    pub async fn wait(
        &self,
        mut pending: Pending,
        deadline: Instant,
        cancel: impl Future<Output = ()>,
    ) -> Waited {
        let reason = tokio::select! {
            delivered = &mut pending.rx => return match delivered {
                Ok(Ok(reply)) => Waited::Answered(reply),
                Ok(Err(failure)) => Waited::Failed(failure),
                Err(_) => Waited::Failed(CallFailure::new(FailureClass::McpTransportError, Dispatch::Unknown)),
            },
            () = tokio::time::sleep_until(deadline) => AbandonReason::Timeout,
            () = cancel => AbandonReason::Cancelled,
        };
        self.abandon(pending, reason)
    }

    fn abandon(&self, mut pending: Pending, reason: AbandonReason) -> Waited {
        let state = self.shared.table().abandon(pending.id);
        match state {
            // Settled meanwhile (answered or failed by a loss): report what arrived.
            None => match pending.rx.try_recv() {
                Ok(Ok(reply)) => Waited::Answered(reply),
                Ok(Err(failure)) => Waited::Failed(failure),
                Err(_) => Waited::Failed(CallFailure::new(reason.class(), Dispatch::Unknown)),
            },
            Some(WriteState::Queued) => Waited::Failed(CallFailure::new(reason.class(), Dispatch::False)),
            Some(WriteState::Writing | WriteState::Written) => {
                let failure = CallFailure::new(reason.class(), Dispatch::Unknown);
                self.shared.counters.detached.fetch_add(1, Ordering::Relaxed);
                let settlement = self.detach(pending.id, pending.permit.take(), reason);
                Waited::Detached(failure, settlement)
            }
        }
    }

    // Queue the cancellation after the request line (the single writer completes a partial line first,
    // providers.md §4.2) and hold the slot until it is written or the settlement deadline passes
    // (providers.md §10.2).
    fn detach(&self, id: u64, permit: Option<OwnedSemaphorePermit>, reason: AbandonReason) -> Settlement {
        let line = cancellation_line(id, reason);
        let (done, done_rx) = oneshot::channel();
        let queued = self.out.send(Outgoing::Cancel { line, done }).is_ok();
        let shared = self.shared.clone();
        let deadline = Instant::now() + SETTLEMENT_DEADLINE;
        Settlement(tokio::spawn(async move {
            let _slot = permit;
            let written = queued && matches!(tokio::time::timeout_at(deadline, done_rx).await, Ok(Ok(())));
            // A transport that was lost or closed meanwhile has no writer left; its pending work is gone
            // with the process, which counts as settled.
            if written || shared.table().is_sealed() || shared.closing() {
                return Ok(());
            }
            shared.counters.settlement_timeouts.fetch_add(1, Ordering::Relaxed);
            shared.life.mark_cleanup_failed();
            Err(CallFailure::new(FailureClass::ProviderCleanupFailed, Dispatch::Unknown))
        }))
    }

    /// The stderr ring's content and truncation flag.
    pub fn stderr_tail(&self) -> (Vec<u8>, bool) {
        self.shared.stderr.lock().unwrap_or_else(|p| p.into_inner()).snapshot()
    }

    /// The close procedure (providers.md §13.1), or the fast close of a probe process (providers.md §13.2)
    /// when `fast`. Only the first close acts; a later one reports `transport_error` with no status.
    pub async fn close(&self, fast: bool) -> TransportEnd {
        self.shared.life.begin_close();
        self.shared.table().seal(FailureClass::ProviderUnavailable);
        let owned = self.owned.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(Owned { child, writer, close_stdin }) = owned else {
            return self.end(TransportFault::TransportError, Exit::Unknown, false);
        };
        let _ = close_stdin.send(());
        // Step 2 closes stdin even when the writer is stuck on a full pipe (a child that stopped
        // reading): aborting the writer drops its end.
        writer.abort();
        let _ = writer.await;
        let stdin = None;
        if fast {
            let reaped = child.fast_close(stdin).await;
            return self.end(TransportFault::Close, Exit::Unknown, reaped);
        }
        let (step, exit) = child.close(stdin).await;
        let mut stderr_eof = self.shared.stderr_eof.subscribe();
        let _ = tokio::time::timeout(STDERR_EOF_GRACE, stderr_eof.wait_for(|eof| *eof)).await;
        let fault = match (self.shared.life.fault(), step) {
            _ if self.shared.life.cleanup_failed() => TransportFault::TransportError,
            (_, CloseStep::Failed) => TransportFault::TransportError,
            (Some(LossFault::TransportError), _) => TransportFault::TransportError,
            (Some(LossFault::ProtocolError), _) => TransportFault::ProtocolError,
            (Some(LossFault::ServerExit(_)), _) => TransportFault::ServerExit,
            (Some(LossFault::ServerSignal), _) => TransportFault::ServerSignal,
            (Some(LossFault::StdoutEof), _) => TransportFault::StdoutEof,
            (None, CloseStep::Stdin) => TransportFault::Close,
            (None, CloseStep::Term) => TransportFault::CloseTimeout,
            (None, CloseStep::Kill) => TransportFault::Killed,
        };
        self.end(fault, exit, step != CloseStep::Failed)
    }

    fn end(&self, fault: TransportFault, exit: Exit, reaped: bool) -> TransportEnd {
        let (stderr, stderr_truncated) = self.stderr_tail();
        let exit_status = match exit {
            Exit::Code(code) => Some(code),
            Exit::Signal(_) | Exit::Unknown => None,
        };
        TransportEnd { fault, exit_status, stderr, stderr_truncated, reaped }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Kill on drop happens in `Child`; the reader tasks end with the pipes.
        for task in &self.tasks {
            task.abort();
        }
    }
}

// The line and its LF in one write: the child's read of a request wakes once, for the whole line.
async fn write_line(stdin: &mut ChildStdin, mut line: Vec<u8>) -> std::io::Result<()> {
    line.push(b'\n');
    stdin.write_all(&line).await?;
    stdin.flush().await
}

// The single writer (providers.md §4.2): replies first (bounded queue), then requests, cancellations,
// notifications in order. Returns stdin unless the close asked for it, so the close procedure can drop it
// (step 2).
async fn write_loop(
    shared: Arc<Shared>,
    mut stdin: ChildStdin,
    mut out: mpsc::UnboundedReceiver<Outgoing>,
    mut replies: mpsc::Receiver<Vec<u8>>,
    mut close: oneshot::Receiver<()>,
) -> Option<ChildStdin> {
    loop {
        let result = tokio::select! {
            biased;
            _ = &mut close => return None,
            Some(reply) = replies.recv() => write_line(&mut stdin, reply).await,
            item = out.recv() => match item {
                None => return Some(stdin),
                Some(Outgoing::Request { id, line }) => {
                    if !shared.table().begin_write(id) {
                        continue;
                    }
                    let written = write_line(&mut stdin, line).await;
                    shared.table().end_write(id);
                    written
                }
                Some(Outgoing::Cancel { line, done }) => {
                    let written = write_line(&mut stdin, line).await;
                    if written.is_ok() {
                        let _ = done.send(());
                    }
                    written
                }
                Some(Outgoing::Notification(line)) => write_line(&mut stdin, line).await,
            },
        };
        if result.is_err() {
            // EPIPE while open is transport-owner loss (providers.md §4.3).
            shared.lose(LossFault::TransportError);
            return None;
        }
    }
}

async fn read_loop(
    shared: Arc<Shared>,
    stdout: ChildStdout,
    replies: mpsc::Sender<Vec<u8>>,
    exit: watch::Receiver<Option<Exit>>,
) {
    let mut reader = BufReader::with_capacity(65_536, stdout);
    read_messages(&shared, &mut reader, &replies, exit).await;
    // After a loss stdout is still drained (responses discarded) until end of file, so the child never
    // blocks on a full stdout pipe during the close procedure (providers.md §13.1 step 1).
    let mut sink = vec![0u8; 65_536];
    while let Ok(n) = reader.read(&mut sink).await {
        if n == 0 {
            return;
        }
    }
}

async fn read_messages(
    shared: &Shared,
    reader: &mut BufReader<ChildStdout>,
    replies: &mpsc::Sender<Vec<u8>>,
    mut exit: watch::Receiver<Option<Exit>>,
) {
    loop {
        let line = match framing::read_line(reader).await {
            Ok(Line::Bytes(line)) => line,
            Ok(Line::TooLong) => return shared.violate(Violation::TooLong),
            Ok(Line::Eof) => {
                let exited = tokio::time::timeout(EOF_EXIT_GRACE, exit.wait_for(|e| e.is_some())).await;
                let fault = match exited.ok().and_then(|seen| seen.ok().and_then(|e| *e)) {
                    Some(exit) => exit_fault(exit),
                    None => LossFault::StdoutEof,
                };
                return shared.lose(fault);
            }
            Err(_) => return shared.lose(LossFault::TransportError),
        };
        if shared.closing() {
            continue;
        }
        let size = line.len();
        let message = match framing::parse_message(&line) {
            Ok(message) => message,
            Err(violation) => return shared.violate(violation),
        };
        match message {
            Message::Notification => {}
            Message::Request { id, method } => {
                if replies.try_send(server_reply(id, &method)).is_err() {
                    return shared.violate(Violation::RepliesFull);
                }
            }
            Message::Result { ref id, .. } | Message::Error { ref id, .. } => {
                let id = id.clone();
                let routed = shared.table().route(&id, Reply { message, size, raw: line });
                if routed == super::table::Routed::Violation {
                    return shared.violate(Violation::UnissuedId);
                }
            }
        }
    }
}

fn exit_fault(exit: Exit) -> LossFault {
    match exit {
        Exit::Code(code) => LossFault::ServerExit(code),
        Exit::Signal(_) => LossFault::ServerSignal,
        Exit::Unknown => LossFault::TransportError,
    }
}

// The leader exiting while open is loss even if a grandchild keeps stdout open (providers.md §12.1).
async fn watch_exit(shared: Arc<Shared>, mut exit: watch::Receiver<Option<Exit>>) {
    if let Ok(seen) = exit.wait_for(|e| e.is_some()).await {
        if let Some(exit) = *seen {
            shared.lose(exit_fault(exit));
        }
    }
}

// stderr is drained whatever else happens, so a chatty child never blocks (providers.md §4.2).
async fn drain_stderr(shared: Arc<Shared>, mut stderr: ChildStderr) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        shared.stderr.lock().unwrap_or_else(|p| p.into_inner()).push(&buf[..n]);
    }
    shared.stderr_eof.send_replace(true);
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;

    use tokio::io::AsyncReadExt;

    use super::write_line;

    // providers.md §4.2: a line and its LF leave together, so the child's first read of the pipe holds the
    // whole line (one write of fewer than PIPE_BUF bytes is atomic). `dd count=1` reads the pipe once.
    #[tokio::test]
    async fn a_line_and_its_terminator_are_one_write() {
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", "dd bs=65536 count=1 2>/dev/null | wc -c"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
        let mut stdin = child.stdin.take().expect("stdin");
        let line = br#"{"id":1,"jsonrpc":"2.0","method":"tools/call"}"#.to_vec();
        let expected = line.len() + 1;
        write_line(&mut stdin, line).await.expect("write");
        let mut out = String::new();
        child.stdout.take().expect("stdout").read_to_string(&mut out).await.expect("read");
        drop(stdin);
        let _ = child.wait().await;
        assert_eq!(out.trim(), expected.to_string());
    }
}
