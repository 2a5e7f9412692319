//! The audit's durable group committer: the durability barrier of audit-events.md §2.6–§2.9.
//!
//! Owns: batching submitted lines (a batch is flushed at once when no sync is in progress; it holds at
//! most 64 lines and, unless one line alone exceeds it, at most `L = min(64 KiB, max_file_bytes)` bytes),
//! one write and one sync per batch, one sync at a time, acknowledgements strictly in arrival order and
//! only after the sync, rotation to the next numbered segment before a batch that would not fit, retention
//! of closed segments oldest first, the permanent failure state (nothing pending or later is ever
//! acknowledged) with its one loss report, the final flush on close, and the batch/sync counters. Does
//! not own: what a line means (a validator is handed in), file names, modes or directory policy (a
//! [`SegmentStore`] is handed in), nor what the domain does on a loss (a callback is handed in).
//!
//! The committer runs on one dedicated OS thread: every step is a blocking system call (write, fsync), and
//! a thread keeps them off the async workers that serve requests. Callers await a `oneshot` answer.
//!
//! How batches form (audit-events.md §2.6): submitting is a non-blocking send on an unbounded channel,
//! which fixes the line's arrival position; a sync in progress never blocks it. The thread waits for work
//! only when it holds no pending line. The first line that wakes it opens a batch; the lines already
//! queued behind it join without any wait (within the bounds), and the batch is flushed as soon as the
//! queue is empty. While that batch is written and synced, new lines queue in the channel in arrival
//! order: they are the next batch, drained and flushed as soon as the sync returns. No batch ever waits
//! for a timer, so the 2 ms window of the spec is met by construction.

use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

/// audit-events.md §2.6: a batch is flushed once it holds this many lines.
pub const BATCH_RECORDS: usize = 64;
/// audit-events.md §2.6: the byte bound `L` is `min(BATCH_BYTES, max_file_bytes)`.
pub const BATCH_BYTES: u64 = 65_536;

/// Where batches go: numbered segments in one directory. Every method is one durable step; an error is a
/// write failure (audit-events.md §2.8). Implementations own names, modes and the directory descriptor.
pub trait SegmentStore: Send + 'static {
    /// Appends `bytes` to the active segment as one write, continuing after a short write.
    fn write_active(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Syncs the active segment.
    fn sync_active(&mut self) -> io::Result<()>;
    /// audit-events.md §2.7 steps 1–2: creates segment `number`, syncs it and the directory, then makes it
    /// the active segment (closing the previous one).
    fn open_segment(&mut self, number: u64) -> io::Result<()>;
    /// Removes the closed segment `number` (retention, audit-events.md §2.7 step 3).
    fn remove_segment(&mut self, number: u64) -> io::Result<()>;
    /// Syncs the directory.
    fn sync_dir(&mut self) -> io::Result<()>;
}

/// The segments as the committer starts with them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The active segment's number.
    pub active: u64,
    /// Its current size in bytes.
    pub active_size: u64,
    /// Closed segments still retained, ascending.
    pub closed: Vec<u64>,
}

/// The committer's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// A segment never exceeds this many bytes.
    pub max_file_bytes: u64,
    /// Retained segments, the active one included (at least 2).
    pub max_retained_files: usize,
}

impl Bounds {
    /// `L = min(64 KiB, max_file_bytes)`.
    pub fn batch_bytes(&self) -> u64 {
        BATCH_BYTES.min(self.max_file_bytes)
    }
}

/// Why a line was not acknowledged. Closed: the committer either made a line durable or it did not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitError {
    /// The committer failed (or was closed or lost): nothing pending or later is durable
    /// (audit-events.md §2.8).
    Unavailable,
}

/// Counters for tests and benches.
#[derive(Debug, Default)]
pub struct CommitStats {
    submitted: AtomicU64,
    batches: AtomicU64,
    syncs: AtomicU64,
    records: AtomicU64,
    rotations: AtomicU64,
    at_once: AtomicU64,
    cut_by_bound: AtomicU64,
}

impl CommitStats {
    /// Lines handed to the committer (their arrival position fixed), acknowledged or not yet.
    pub fn submitted(&self) -> u64 {
        self.submitted.load(Ordering::Acquire)
    }
    /// Batches written.
    pub fn batches(&self) -> u64 {
        self.batches.load(Ordering::Acquire)
    }
    /// Successful segment syncs.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Acquire)
    }
    /// Lines acknowledged as durable.
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Acquire)
    }
    /// Rotations to a new segment.
    pub fn rotations(&self) -> u64 {
        self.rotations.load(Ordering::Acquire)
    }
    /// Batches written because nothing more was queued (or the committer was closing): flushed at once,
    /// without waiting for more lines.
    pub fn at_once(&self) -> u64 {
        self.at_once.load(Ordering::Acquire)
    }
    /// Batches written because they reached 64 lines or `L` bytes, or because the next line would have
    /// pushed them over `L`.
    pub fn cut_by_bound(&self) -> u64 {
        self.cut_by_bound.load(Ordering::Acquire)
    }
}

type Ack = oneshot::Sender<Result<(), CommitError>>;
type Validator = Box<dyn Fn(&[u8]) -> bool + Send>;
type LossReport = Box<dyn FnOnce(CommitLoss) + Send>;

/// How the committer was lost (both stop the domain; the cause differs, lifecycle.md §7.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitLoss {
    /// A write, sync, rotation or retention step failed, or a line was invalid (audit-events.md §2.8).
    WriteFailed,
    /// The committer thread panicked: the owner itself is gone.
    OwnerLost,
}

enum Msg {
    Submit { line: Vec<u8>, ack: Ack },
    Close { ack: Ack },
}

/// A cloneable handle to submit lines; the committer thread ends when it is closed or every handle is
/// dropped (pending lines are flushed first).
#[derive(Clone)]
pub struct Committer {
    tx: Sender<Msg>,
    stats: Arc<CommitStats>,
    thread: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl std::fmt::Debug for Committer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Committer").field("stats", &self.stats).finish()
    }
}

impl Committer {
    /// Starts the committer thread over `store`, whose segments are `layout`. `validate` is applied to
    /// every line (a line that fails is a write failure, audit-events.md §2.3); `on_loss` is called once,
    /// from the committer thread, when a write, sync, rotation or retention fails or a line is invalid
    /// ([`CommitLoss::WriteFailed`]), or when the thread panics ([`CommitLoss::OwnerLost`]).
    pub fn start(
        store: Box<dyn SegmentStore>,
        layout: Layout,
        bounds: Bounds,
        validate: Validator,
        on_loss: LossReport,
    ) -> io::Result<Committer> {
        let (tx, rx) = mpsc::channel();
        let stats = Arc::new(CommitStats::default());
        let worker = Worker {
            store,
            layout,
            bounds,
            validate,
            on_loss: Some(on_loss),
            stats: stats.clone(),
            failed: false,
        };
        let thread =
            std::thread::Builder::new().name("group-committer".into()).spawn(move || worker.run(rx))?;
        Ok(Committer { tx, stats, thread: Arc::new(Mutex::new(Some(thread))) })
    }

    /// Submits one encoded line and waits until it is durable. `Err` means it is not, and never will be.
    pub async fn submit(&self, line: Vec<u8>) -> Result<(), CommitError> {
        self.enqueue(line).wait().await
    }

    /// Hands `line` to the committer now (its arrival position is fixed by this call) and returns the
    /// ticket to await its acknowledgement with.
    pub fn enqueue(&self, line: Vec<u8>) -> Ticket {
        let (ack, answer) = oneshot::channel();
        let sent = self.tx.send(Msg::Submit { line, ack }).is_ok();
        if sent {
            self.stats.submitted.fetch_add(1, Ordering::AcqRel);
        }
        Ticket { answer: sent.then_some(answer) }
    }

    /// audit-events.md §2.9: flushes the pending batch through the same barrier and stops the thread. `Ok`
    /// iff everything acknowledged so far and pending now is durable.
    pub async fn close(&self) -> Result<(), CommitError> {
        let (ack, answer) = oneshot::channel();
        let sent = self.tx.send(Msg::Close { ack }).is_ok();
        let result = if sent {
            answer.await.unwrap_or(Err(CommitError::Unavailable))
        } else {
            Err(CommitError::Unavailable)
        };
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(thread) = thread {
            // The thread answers before it exits; joining only reaps it.
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
        result
    }

    /// The counters.
    pub fn stats(&self) -> &CommitStats {
        &self.stats
    }
}

/// The acknowledgement of one enqueued line.
#[derive(Debug)]
pub struct Ticket {
    answer: Option<oneshot::Receiver<Result<(), CommitError>>>,
}

impl Ticket {
    /// Waits until the line is durable (`Ok`) or will never be (`Err`).
    pub async fn wait(self) -> Result<(), CommitError> {
        match self.answer {
            Some(answer) => answer.await.unwrap_or(Err(CommitError::Unavailable)),
            None => Err(CommitError::Unavailable),
        }
    }
}

/// The pending batch, in arrival order.
#[derive(Default)]
struct Batch {
    lines: Vec<(Vec<u8>, Ack)>,
    bytes: u64,
}

/// Why a batch was closed (counted in [`CommitStats`]).
#[derive(Clone, Copy)]
enum Cut {
    /// Nothing more was queued, or the committer is closing.
    AtOnce,
    /// 64 lines or `L` bytes, or the next line would exceed `L`.
    Bound,
}

impl Batch {
    fn push(&mut self, line: Vec<u8>, ack: Ack) {
        self.bytes += line.len() as u64;
        self.lines.push((line, ack));
    }

    fn take(&mut self) -> Batch {
        std::mem::take(self)
    }
}

struct Worker {
    store: Box<dyn SegmentStore>,
    layout: Layout,
    bounds: Bounds,
    validate: Validator,
    on_loss: Option<LossReport>,
    stats: Arc<CommitStats>,
    failed: bool,
}

impl Worker {
    fn run(mut self, rx: Receiver<Msg>) {
        let loss = self.on_loss.take();
        let mut loss = loss;
        let outcome = catch_unwind(AssertUnwindSafe(|| self.serve(&rx, &mut loss)));
        if outcome.is_err() {
            // A lost committer is a loss of the audit owner: the domain stops (lifecycle.md §7.5). Every
            // pending answer was dropped with the unwound state and reads as `Unavailable`.
            if let Some(report) = loss.take() {
                report(CommitLoss::OwnerLost);
            }
        }
    }

    /// audit-events.md §2.6: a batch is flushed at once when no sync is in progress. Waiting happens only
    /// with nothing pending; with a pending batch the queue is drained without waiting, and an empty queue
    /// flushes it. A sync runs on this thread, so lines that arrive meanwhile wait in the channel and form
    /// the next batch, flushed as soon as the sync returns.
    fn serve(&mut self, rx: &Receiver<Msg>, loss: &mut Option<LossReport>) {
        let mut batch = Batch::default();
        loop {
            let msg = if batch.lines.is_empty() {
                rx.recv().ok()
            } else {
                match rx.try_recv() {
                    Ok(msg) => Some(msg),
                    Err(TryRecvError::Empty) => {
                        self.flush(batch.take(), Cut::AtOnce, loss);
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => None,
                }
            };
            match msg {
                None => {
                    self.flush(batch.take(), Cut::AtOnce, loss);
                    return;
                }
                Some(Msg::Close { ack }) => {
                    self.flush(batch.take(), Cut::AtOnce, loss);
                    let _ = ack.send(if self.failed { Err(CommitError::Unavailable) } else { Ok(()) });
                    return;
                }
                Some(Msg::Submit { line, ack }) => self.admit(&mut batch, line, ack, loss),
            }
        }
    }

    /// audit-events.md §2.6 "Submit": a line that would push a non-empty batch over `L` flushes it first; a
    /// full batch is flushed at once.
    fn admit(&mut self, batch: &mut Batch, line: Vec<u8>, ack: Ack, loss: &mut Option<LossReport>) {
        if self.failed {
            self.flush(batch.take(), Cut::AtOnce, loss);
            let _ = ack.send(Err(CommitError::Unavailable));
            return;
        }
        let len = line.len() as u64;
        if !(self.validate)(&line) || len == 0 || len > self.bounds.max_file_bytes {
            // audit-events.md §2.3: an invalid record is an internal fault handled as a write failure.
            self.fail(batch.take(), loss);
            let _ = ack.send(Err(CommitError::Unavailable));
            return;
        }
        let limit = self.bounds.batch_bytes();
        if !batch.lines.is_empty() && batch.bytes + len > limit {
            self.flush(batch.take(), Cut::Bound, loss);
        }
        batch.push(line, ack);
        if batch.lines.len() >= BATCH_RECORDS || batch.bytes >= limit {
            self.flush(batch.take(), Cut::Bound, loss);
        }
    }

    /// audit-events.md §2.6 "Flush" and "Acknowledgement".
    fn flush(&mut self, batch: Batch, cut: Cut, loss: &mut Option<LossReport>) {
        if batch.lines.is_empty() {
            return;
        }
        if self.failed {
            answer(batch, Err(CommitError::Unavailable));
            return;
        }
        let counter = match cut {
            Cut::AtOnce => &self.stats.at_once,
            Cut::Bound => &self.stats.cut_by_bound,
        };
        counter.fetch_add(1, Ordering::AcqRel);
        match self.write_batch(&batch) {
            Ok(()) => {
                self.stats.records.fetch_add(batch.lines.len() as u64, Ordering::AcqRel);
                answer(batch, Ok(()));
            }
            Err(_) => self.fail(batch, loss),
        }
    }

    fn write_batch(&mut self, batch: &Batch) -> io::Result<()> {
        if self.layout.active_size + batch.bytes > self.bounds.max_file_bytes {
            self.rotate()?;
        }
        let mut bytes = Vec::with_capacity(usize::try_from(batch.bytes).unwrap_or(0));
        for (line, _) in &batch.lines {
            bytes.extend_from_slice(line);
        }
        self.stats.batches.fetch_add(1, Ordering::AcqRel);
        self.store.write_active(&bytes)?;
        self.layout.active_size += batch.bytes;
        self.store.sync_active()?;
        self.stats.syncs.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// audit-events.md §2.7: a new durable segment first, then retention oldest first, then the directory
    /// sync.
    fn rotate(&mut self) -> io::Result<()> {
        let next =
            self.layout.active.checked_add(1).ok_or_else(|| io::Error::other("segment numbers exhausted"))?;
        self.store.open_segment(next)?;
        self.layout.closed.push(self.layout.active);
        self.layout.active = next;
        self.layout.active_size = 0;
        self.stats.rotations.fetch_add(1, Ordering::AcqRel);
        let keep_closed = self.bounds.max_retained_files.saturating_sub(1);
        while self.layout.closed.len() > keep_closed {
            let oldest = self.layout.closed.remove(0);
            self.store.remove_segment(oldest)?;
        }
        self.store.sync_dir()
    }

    /// audit-events.md §2.8: nothing in `batch` is acknowledged, the committer never writes again, the loss
    /// is reported.
    fn fail(&mut self, batch: Batch, loss: &mut Option<LossReport>) {
        self.failed = true;
        answer(batch, Err(CommitError::Unavailable));
        if let Some(report) = loss.take() {
            report(CommitLoss::WriteFailed);
        }
    }
}

/// Answers a batch's callers in arrival order.
fn answer(batch: Batch, result: Result<(), CommitError>) {
    for (_, ack) in batch.lines {
        let _ = ack.send(result);
    }
}

#[cfg(test)]
#[path = "committer_tests.rs"]
mod tests;
