//! The event logger's runtime: a bounded queue of records in front of one writer thread, a monotonic
//! interval, and a bounded close.
//!
//! Owns: the queue and its "never block, never fail the emitter" rule ([`EventLogger::try_emit`] reports
//! false when the queue is full or the writer is gone, and the caller counts the drop), the interval
//! timer whose first tick is one interval after the start, the close (stop taking records, write what is
//! queued for at most the bound, then the sink's final report), and a test hook that parks the writer.
//!
//! Does not own: what a record is, how it is encoded, files, rotation or counters, nor the queue's
//! capacity or the interval: that is the [`EventSink`] the embedding program supplies. Nor any lock on
//! the log's files: the program releases it after [`EventLogger::close`] returns, so a writer stuck in
//! the kernel can never keep it.
//!
//! Why a thread and not a ractor actor: its writes are blocking file I/O, and it typically closes last,
//! after the supervision tree. The program can give the thread an owner in its tree, which hears the
//! thread's end through [`EventLogger::ended`]. Its loss is tolerated by construction: emitters only
//! ever `try_send`, so a dead writer turns every emit into a counted drop and nothing else (logging
//! never changes readiness).

use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// The embedding program's side of the logger, called on the writer thread only.
pub trait EventSink: Send + 'static {
    /// What travels through the queue.
    type Record: Send + 'static;
    /// How many records the queue holds; an emit beyond it is refused (and counted by the caller).
    const QUEUE_CAPACITY: usize;
    /// The interval between two [`EventSink::tick`]s, on a monotonic clock.
    const INTERVAL: Duration;
    /// Writes one record (or drops and counts it).
    fn write(&mut self, record: Self::Record);
    /// The end of an interval: sync, periodic counters, retry after a write failure.
    fn tick(&mut self);
    /// A queued record that the close bound left unwritten: count it.
    fn dropped(&mut self, record: Self::Record);
    /// The final report with the elapsed milliseconds of the last interval (from 1 up to the interval's
    /// length), then sync and close.
    fn close(&mut self, elapsed_ms: u64);
}

/// What the writer receives.
enum Msg<R> {
    Record(R),
    /// Test hook: park until released.
    Park,
}

#[derive(Default)]
struct HoldState {
    held: bool,
    parked: bool,
}

#[derive(Default)]
struct Hold {
    state: Mutex<HoldState>,
    changed: Condvar,
}

impl Hold {
    fn lock(&self) -> std::sync::MutexGuard<'_, HoldState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// On the writer: wait while held, telling the holder it is parked.
    fn park(&self) {
        let mut state = self.lock();
        state.parked = true;
        self.changed.notify_all();
        while state.held {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.parked = false;
        self.changed.notify_all();
    }
}

struct Shared<R> {
    /// `None` once closing began: the last sender is dropped, so the writer drains and ends.
    sender: Mutex<Option<SyncSender<Msg<R>>>>,
    /// Set when the close begins: records still queued at this instant are dropped, not written.
    close_deadline: Mutex<Option<Instant>>,
    hold: Hold,
}

/// The handle emitters share. Cloning is cheap; every clone feeds the same queue.
pub struct EventLogger<R: Send + 'static> {
    shared: Arc<Shared<R>>,
    done: Arc<Mutex<Option<Receiver<()>>>>,
    /// Turns true when the writer thread has ended, however it ended (a panic included).
    ended: tokio::sync::watch::Receiver<bool>,
}

impl<R: Send + 'static> Clone for EventLogger<R> {
    fn clone(&self) -> Self {
        EventLogger { shared: self.shared.clone(), done: self.done.clone(), ended: self.ended.clone() }
    }
}

/// Sets the writer's `ended` flag when the writer thread leaves, by return or by unwinding.
struct EndGuard(tokio::sync::watch::Sender<bool>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

impl<R: Send + 'static> std::fmt::Debug for EventLogger<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLogger").finish_non_exhaustive()
    }
}

/// The writer thread could not be spawned (the program then runs without a log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpawnFailed;

impl<R: Send + 'static> EventLogger<R> {
    /// Starts the writer thread over `sink`. The first tick is one [`EventSink::INTERVAL`] after this
    /// call.
    pub fn start<S: EventSink<Record = R>>(sink: S) -> Result<EventLogger<R>, SpawnFailed> {
        let (tx, rx) = sync_channel(S::QUEUE_CAPACITY);
        let (done_tx, done_rx) = sync_channel(1);
        let shared = Arc::new(Shared {
            sender: Mutex::new(Some(tx)),
            close_deadline: Mutex::new(None),
            hold: Hold::default(),
        });
        let writer = shared.clone();
        let (ended_tx, ended) = tokio::sync::watch::channel(false);
        thread::Builder::new()
            .name("event-logger".into())
            .spawn(move || {
                let _ended = EndGuard(ended_tx);
                run(sink, rx, &writer);
                let _ = done_tx.send(());
            })
            .map_err(|_| SpawnFailed)?;
        Ok(EventLogger { shared, done: Arc::new(Mutex::new(Some(done_rx))), ended })
    }

    /// Resolves once the writer thread has ended (closed, or lost to a panic), so that its owner notices
    /// the end of the thread it owns.
    pub async fn ended(&self) {
        let mut ended = self.ended.clone();
        let _ = ended.wait_for(|e| *e).await;
    }

    /// Enqueues without blocking. Returns false when the record was not queued (the queue is full, the
    /// writer is gone or the log is closing); the caller then counts it as dropped.
    pub fn try_emit(&self, record: R) -> bool {
        let sender = self.shared.sender.lock().unwrap_or_else(PoisonError::into_inner);
        sender.as_ref().is_some_and(|tx| tx.try_send(Msg::Record(record)).is_ok())
    }

    /// Stops taking records, lets the writer write what is queued until `bound` has
    /// passed (the rest is dropped and counted), then the sink's final report and close. Blocks the calling
    /// thread for at most `bound` plus `grace`; returns false if the writer did not finish in time (it is
    /// then abandoned; the caller still releases the lock).
    pub fn close(&self, bound: Duration, grace: Duration) -> bool {
        let started = Instant::now();
        *self.shared.close_deadline.lock().unwrap_or_else(PoisonError::into_inner) = Some(started + bound);
        drop(self.shared.sender.lock().unwrap_or_else(PoisonError::into_inner).take());
        self.release_hold();
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner).take();
        match done {
            Some(rx) => rx.recv_timeout((bound + grace).saturating_sub(started.elapsed())).is_ok(),
            None => false,
        }
    }

    /// Test hook: parks the writer and returns once it is parked, so every record emitted from now
    /// on stays in the queue until [`EventLogger::release_hold`]. Returns false if the writer did not park
    /// within `bound` (queue full or writer gone).
    pub fn hold(&self, bound: Duration) -> bool {
        self.shared.hold.lock().held = true;
        let sent = {
            let sender = self.shared.sender.lock().unwrap_or_else(PoisonError::into_inner);
            sender.as_ref().is_some_and(|tx| tx.try_send(Msg::Park).is_ok())
        };
        if !sent {
            self.release_hold();
            return false;
        }
        let deadline = Instant::now() + bound;
        let mut state = self.shared.hold.lock();
        while !state.parked {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state =
                self.shared.hold.changed.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }

    /// Releases a writer parked by [`EventLogger::hold`].
    pub fn release_hold(&self) {
        self.shared.hold.lock().held = false;
        self.shared.hold.changed.notify_all();
    }
}

fn past_close_deadline<R>(shared: &Shared<R>) -> bool {
    let deadline = *shared.close_deadline.lock().unwrap_or_else(PoisonError::into_inner);
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// The writer loop: records in arrival order, a tick every [`EventSink::INTERVAL`] on a monotonic clock.
fn run<S: EventSink>(mut sink: S, rx: Receiver<Msg<S::Record>>, shared: &Shared<S::Record>) {
    let interval = S::INTERVAL;
    let mut last_tick = Instant::now();
    let mut next_tick = last_tick + interval;
    loop {
        if past_close_deadline(shared) {
            drain_dropped(&mut sink, &rx);
            break;
        }
        let now = Instant::now();
        if now >= next_tick {
            sink.tick();
            last_tick = next_tick;
            // A writer that fell behind does not report a burst of intervals at once.
            next_tick = if next_tick + interval > now { next_tick + interval } else { now + interval };
            continue;
        }
        match rx.recv_timeout(next_tick - now) {
            Ok(Msg::Record(record)) => sink.write(record),
            Ok(Msg::Park) => shared.hold.park(),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let whole = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX).max(1);
    let elapsed = u64::try_from(last_tick.elapsed().as_millis()).unwrap_or(whole);
    sink.close(elapsed.clamp(1, whole));
}

fn drain_dropped<S: EventSink>(sink: &mut S, rx: &Receiver<Msg<S::Record>>) {
    loop {
        match rx.try_recv() {
            Ok(Msg::Record(record)) => sink.dropped(record),
            Ok(Msg::Park) => {}
            Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => break,
        }
    }
}

#[cfg(test)]
#[path = "event_logger_tests.rs"]
mod tests;
