//! Admission without queues: a bounded pool of slots with an atomic fast path.
//!
//! Owns: the slot count, the pool's state (open, quiescing, fenced), the RAII [`Lease`], the peak gauge,
//! *wait until idle*, and *cancel-all* (what a staged shutdown needs: stop admitting, cancel what is
//! left at a deadline, wait until the last lease is returned). A program uses one pool per kind of work
//! it bounds.
//!
//! Does not own: who may change the state (that is the owner actor, `admission_owner.rs`), readiness, or
//! any wire answer. A refusal is a closed [`Refusal`]; the caller maps it to its own answer.
//!
//! The count and the state live in one `AtomicU64`, so a reservation and a quiesce or fence are ordered:
//! once [`AdmissionPool::quiesce`] returns, no reservation that has not already succeeded can succeed.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{watch, Notify};
use tokio::time::Instant;

/// Low 48 bits: slots in use. Bits 48..56: the state.
const COUNT_MASK: u64 = (1 << 48) - 1;
const STATE_SHIFT: u32 = 48;
const OPEN: u64 = 0;
const QUIESCING: u64 = 1;
const FENCED: u64 = 2;

/// Why a reservation was refused. The set is closed; each front maps it to its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// Every slot is held: a transient condition, worth retrying later.
    Exhausted,
    /// The pool refuses new work because a drain began.
    Quiescing,
    /// The pool is fenced: its owner was lost or it was declared unavailable, for good.
    Unavailable,
}

impl Refusal {
    /// A stable name for logs and tests.
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Exhausted => "exhausted",
            Refusal::Quiescing => "quiescing",
            Refusal::Unavailable => "unavailable",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::error::Error for Refusal {}

/// Which refusal wins when a pool is both full and fenced. Quiescing always wins over both: a drain
/// refuses every new reservation, whatever else holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefusalOrder {
    /// Unavailability first: the more durable answer is given (a fenced pool is not worth retrying,
    /// a full one is).
    UnavailableFirst,
    /// Exhaustion first, for a caller whose checks ask "is a slot available" before "is the owner
    /// alive".
    ExhaustedFirst,
}

/// The pool's state as seen from outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolState {
    /// Reservations are granted while slots are free.
    Open,
    /// Refusing new reservations (drain); existing leases run to completion.
    Quiescing,
    /// Permanently unavailable.
    Fenced,
}

/// The wait of [`AdmissionPool::wait_until_idle`] reached its deadline with slots still in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdleTimeout {
    /// Slots in use at the deadline.
    pub in_use: usize,
}

impl fmt::Display for IdleTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} slot(s) still in use at the deadline", self.in_use)
    }
}

impl std::error::Error for IdleTimeout {}

/// A point-in-time report of one pool (what the owner actor answers to `Report`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionSnapshot {
    /// The pool's name, as given at construction.
    pub name: &'static str,
    pub capacity: usize,
    pub in_use: usize,
    /// The highest `in_use` ever observed; load tests assert `peak <= capacity` from inside.
    pub peak: usize,
    pub state: PoolState,
    /// True once [`AdmissionPool::cancel_all`] was called.
    pub cancelled_all: bool,
}

struct Inner {
    name: &'static str,
    capacity: u64,
    order: RefusalOrder,
    word: AtomicU64,
    peak: AtomicUsize,
    idle: Notify,
    cancel: watch::Sender<bool>,
}

/// A bounded pool of slots with no queue. Cheap to clone; every clone is the same pool.
#[derive(Clone)]
pub struct AdmissionPool {
    inner: Arc<Inner>,
}

impl fmt::Debug for AdmissionPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdmissionPool")
            .field("name", &self.inner.name)
            .field("capacity", &self.inner.capacity)
            .field("in_use", &self.in_use())
            .field("state", &self.state())
            .finish()
    }
}

fn count_of(word: u64) -> u64 {
    word & COUNT_MASK
}

fn state_of(word: u64) -> u64 {
    word >> STATE_SHIFT
}

fn with_state(word: u64, state: u64) -> u64 {
    count_of(word) | (state << STATE_SHIFT)
}

impl AdmissionPool {
    /// An open pool of `capacity` slots. `name` identifies it in snapshots and logs.
    pub fn new(name: &'static str, capacity: u32, order: RefusalOrder) -> Self {
        let (cancel, _) = watch::channel(false);
        AdmissionPool {
            inner: Arc::new(Inner {
                name,
                capacity: u64::from(capacity),
                order,
                word: AtomicU64::new(with_state(0, OPEN)),
                peak: AtomicUsize::new(0),
                idle: Notify::new(),
                cancel,
            }),
        }
    }

    /// The fast path: takes one slot atomically or refuses at once; never waits, never queues, never
    /// touches an actor's mailbox.
    pub fn try_reserve(&self) -> Result<Lease, Refusal> {
        let inner = &self.inner;
        let mut current = inner.word.load(Ordering::Acquire);
        loop {
            if let Some(refusal) = self.refusal_for(current) {
                return Err(refusal);
            }
            match inner.word.compare_exchange_weak(current, current + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(actual) => current = actual,
            }
        }
        let now_in_use = usize::try_from(count_of(current) + 1).unwrap_or(usize::MAX);
        inner.peak.fetch_max(now_in_use, Ordering::AcqRel);
        Ok(Lease { pool: self.clone(), cancel: inner.cancel.subscribe() })
    }

    fn refusal_for(&self, word: u64) -> Option<Refusal> {
        let full = count_of(word) >= self.inner.capacity;
        match (state_of(word), self.inner.order) {
            (QUIESCING, _) => Some(Refusal::Quiescing),
            (FENCED, RefusalOrder::UnavailableFirst) => Some(Refusal::Unavailable),
            (FENCED, RefusalOrder::ExhaustedFirst) if full => Some(Refusal::Exhausted),
            (FENCED, RefusalOrder::ExhaustedFirst) => Some(Refusal::Unavailable),
            _ if full => Some(Refusal::Exhausted),
            _ => None,
        }
    }

    /// The pool's name.
    pub fn name(&self) -> &'static str {
        self.inner.name
    }

    /// The number of slots.
    pub fn capacity(&self) -> usize {
        usize::try_from(self.inner.capacity).unwrap_or(usize::MAX)
    }

    /// Slots held right now.
    pub fn in_use(&self) -> usize {
        usize::try_from(count_of(self.inner.word.load(Ordering::Acquire))).unwrap_or(usize::MAX)
    }

    /// The highest number of slots ever held at once.
    pub fn peak(&self) -> usize {
        self.inner.peak.load(Ordering::Acquire)
    }

    /// The current state.
    pub fn state(&self) -> PoolState {
        match state_of(self.inner.word.load(Ordering::Acquire)) {
            OPEN => PoolState::Open,
            QUIESCING => PoolState::Quiescing,
            _ => PoolState::Fenced,
        }
    }

    /// True once the pool was fenced; a fence is permanent. The staged shutdown reads this for the
    /// drained admission's last stage and for the exit status.
    pub fn is_fenced(&self) -> bool {
        self.state() == PoolState::Fenced
    }

    /// Refuses every new reservation with [`Refusal::Quiescing`] (a drain's first step). Leases already
    /// granted are unaffected. A fenced pool stays fenced. Returns true iff this call changed the state.
    /// Meant to be called by the pool's owner actor.
    pub fn quiesce(&self) -> bool {
        self.set_state(|state| (state == OPEN).then_some(QUIESCING))
    }

    /// Makes the pool permanently unavailable (its owner was lost). Leases already granted are returned
    /// as usual. Returns true iff this call fenced it. Meant for the owner actor and its supervisor.
    pub fn fence(&self) -> bool {
        self.set_state(|state| (state != FENCED).then_some(FENCED))
    }

    fn set_state(&self, next: impl Fn(u64) -> Option<u64>) -> bool {
        self.inner
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                next(state_of(word)).map(|state| with_state(word, state))
            })
            .is_ok()
    }

    /// Signals every lease, present and future, that its work must stop (at a drain deadline, for the
    /// work still running). Slots are still returned only when leases drop, so a later
    /// [`AdmissionPool::wait_until_idle`] sees the work settle.
    pub fn cancel_all(&self) {
        self.inner.cancel.send_replace(true);
    }

    /// True once [`AdmissionPool::cancel_all`] was called.
    pub fn is_cancelled_all(&self) -> bool {
        *self.inner.cancel.borrow()
    }

    /// Waits until no slot is in use, or until `deadline`. Never holds a
    /// slot, so it does not delay the work it waits for.
    pub async fn wait_until_idle(&self, deadline: Instant) -> Result<(), IdleTimeout> {
        loop {
            let notified = self.inner.idle.notified();
            tokio::pin!(notified);
            // Register before reading the count so a release between the two is not missed.
            notified.as_mut().enable();
            if self.in_use() == 0 {
                return Ok(());
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(deadline) => {
                    let in_use = self.in_use();
                    return if in_use == 0 { Ok(()) } else { Err(IdleTimeout { in_use }) };
                }
            }
        }
    }

    /// A report of the pool.
    pub fn snapshot(&self) -> AdmissionSnapshot {
        AdmissionSnapshot {
            name: self.inner.name,
            capacity: self.capacity(),
            in_use: self.in_use(),
            peak: self.peak(),
            state: self.state(),
            cancelled_all: self.is_cancelled_all(),
        }
    }

    fn release(&self) {
        let previous = self.inner.word.fetch_sub(1, Ordering::AcqRel);
        if count_of(previous) == 1 {
            self.inner.idle.notify_waiters();
        }
    }
}

/// One held slot. Dropping it returns the slot exactly once, on every path: normal completion, an
/// early return, a panic that unwinds the holding task, or an aborted task.
#[must_use = "dropping a lease returns its slot at once"]
pub struct Lease {
    pool: AdmissionPool,
    cancel: watch::Receiver<bool>,
}

impl fmt::Debug for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease").field("pool", &self.pool.inner.name).finish()
    }
}

impl Lease {
    /// The pool this lease belongs to.
    pub fn pool(&self) -> &AdmissionPool {
        &self.pool
    }

    /// True once the pool's work was cancelled (drain cutoff).
    pub fn is_cancelled(&self) -> bool {
        *self.cancel.borrow()
    }

    /// Completes when the pool's work is cancelled (drain cutoff). The holder selects on this next to its
    /// own work and deadline. Never completes otherwise.
    pub async fn cancelled(&self) {
        let mut cancel = self.cancel.clone();
        if cancel.wait_for(|cancelled| *cancelled).await.is_err() {
            // The pool (and so its sender) cannot be dropped while this lease holds it.
            std::future::pending::<()>().await;
        }
    }

    /// Returns the slot now. The same as dropping the lease; spelled out where the caller's release
    /// order matters.
    pub fn release(self) {
        drop(self);
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.pool.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pool(capacity: u32, order: RefusalOrder) -> AdmissionPool {
        AdmissionPool::new("test", capacity, order)
    }

    #[test]
    fn refusal_table() {
        use PoolState::*;
        use RefusalOrder::*;
        // (order, state, full, expected)
        let table = [
            (UnavailableFirst, Open, false, None),
            (UnavailableFirst, Open, true, Some(Refusal::Exhausted)),
            (UnavailableFirst, Quiescing, false, Some(Refusal::Quiescing)),
            (UnavailableFirst, Quiescing, true, Some(Refusal::Quiescing)),
            (UnavailableFirst, Fenced, false, Some(Refusal::Unavailable)),
            (UnavailableFirst, Fenced, true, Some(Refusal::Unavailable)),
            (ExhaustedFirst, Open, true, Some(Refusal::Exhausted)),
            (ExhaustedFirst, Quiescing, true, Some(Refusal::Quiescing)),
            (ExhaustedFirst, Fenced, false, Some(Refusal::Unavailable)),
            (ExhaustedFirst, Fenced, true, Some(Refusal::Exhausted)),
        ];
        for (order, state, full, expected) in table {
            let p = pool(1, order);
            let held = if full { Some(p.try_reserve().unwrap()) } else { None };
            match state {
                Open => {}
                Quiescing => assert!(p.quiesce()),
                Fenced => assert!(p.fence()),
            }
            let got = p.try_reserve().err();
            assert_eq!(got, expected, "{order:?} {state:?} full={full}");
            drop(held);
        }
    }

    #[test]
    fn lease_returns_its_slot_once() {
        let p = pool(2, RefusalOrder::UnavailableFirst);
        let a = p.try_reserve().unwrap();
        let b = p.try_reserve().unwrap();
        assert_eq!(p.try_reserve().unwrap_err(), Refusal::Exhausted);
        assert_eq!(p.in_use(), 2);
        drop(a);
        assert_eq!(p.in_use(), 1);
        b.release();
        assert_eq!(p.in_use(), 0);
        assert_eq!(p.peak(), 2);
        assert!(p.try_reserve().is_ok());
    }

    #[test]
    fn quiesce_and_fence_are_one_way() {
        let p = pool(1, RefusalOrder::UnavailableFirst);
        assert!(p.quiesce());
        assert!(!p.quiesce());
        assert_eq!(p.state(), PoolState::Quiescing);
        assert!(p.fence());
        assert!(!p.fence());
        assert!(!p.quiesce(), "a fenced pool stays fenced");
        assert_eq!(p.state(), PoolState::Fenced);
        assert!(p.is_fenced());
    }

    #[test]
    fn state_changes_keep_the_count() {
        let p = pool(3, RefusalOrder::UnavailableFirst);
        let held = [p.try_reserve().unwrap(), p.try_reserve().unwrap()];
        p.quiesce();
        assert_eq!(p.in_use(), 2);
        p.fence();
        assert_eq!(p.in_use(), 2);
        drop(held);
        assert_eq!(p.in_use(), 0);
        assert_eq!(p.state(), PoolState::Fenced);
    }

    #[test]
    fn zero_capacity_is_always_exhausted() {
        let p = pool(0, RefusalOrder::UnavailableFirst);
        assert_eq!(p.try_reserve().unwrap_err(), Refusal::Exhausted);
        assert_eq!(p.peak(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn wait_until_idle_honours_the_deadline() {
        let p = pool(1, RefusalOrder::UnavailableFirst);
        let lease = p.try_reserve().unwrap();
        let start = Instant::now();
        let got = p.wait_until_idle(start + Duration::from_millis(100)).await;
        assert_eq!(got, Err(IdleTimeout { in_use: 1 }));
        assert_eq!(start.elapsed(), Duration::from_millis(100));

        let releaser = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(40)).await;
            drop(lease);
        });
        let start = Instant::now();
        assert_eq!(p.wait_until_idle(start + Duration::from_secs(10)).await, Ok(()));
        assert_eq!(start.elapsed(), Duration::from_millis(40), "woken by the release, not the deadline");
        releaser.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn cancel_all_reaches_present_and_future_leases() {
        let p = pool(2, RefusalOrder::UnavailableFirst);
        let lease = p.try_reserve().unwrap();
        assert!(!lease.is_cancelled());
        let waiter = tokio::spawn(async move {
            lease.cancelled().await;
            lease.is_cancelled()
        });
        tokio::task::yield_now().await;
        p.cancel_all();
        assert!(waiter.await.unwrap());
        let later = p.try_reserve().unwrap();
        assert!(later.is_cancelled());
        later.cancelled().await;
        assert!(p.snapshot().cancelled_all);
    }

    #[test]
    fn snapshot_reports_everything() {
        let p = AdmissionPool::new("jobs", 4, RefusalOrder::UnavailableFirst);
        let held = p.try_reserve().unwrap();
        p.quiesce();
        assert_eq!(
            p.snapshot(),
            AdmissionSnapshot {
                name: "jobs",
                capacity: 4,
                in_use: 1,
                peak: 1,
                state: PoolState::Quiescing,
                cancelled_all: false
            }
        );
        drop(held);
    }
}
