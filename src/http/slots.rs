//! Connection slots (lifecycle.md §11 "One acceptor", http-mcp.md §2.2): a fixed pool of
//! `handler_ceiling = max_inflight_requests + 8` slots, one per open connection.
//!
//! Owns the ceiling and its accounting. The acceptor takes a [`Reserved`] slot *before* it calls
//! `accept`, turns it into a [`ConnectionSlot`] when a connection arrives, and the connection holds that
//! until it closes (the slot is returned on drop, so a panicking connection task gives it back too). At
//! the ceiling no slot is free, so the acceptor does not call `accept` and new clients wait in the
//! kernel's backlog: there is never an HTTP refusal for transport saturation. It does not own request
//! leases (an open connection holds a slot, never a lease).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The connection slots of one listener.
pub struct Slots {
    permits: Arc<Semaphore>,
    ceiling: usize,
    /// Connections open now (slots bound to an accepted connection, not the acceptor's reservation).
    open: AtomicUsize,
    /// The most connections ever open at once.
    peak: AtomicUsize,
    /// Notified whenever a connection closes.
    closed: Notify,
}

/// A point-in-time view of the slots, for tests and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSnapshot {
    /// The handler ceiling.
    pub ceiling: usize,
    /// Connections open now.
    pub open: usize,
    /// The most connections ever open at once.
    pub peak: usize,
}

impl Slots {
    /// A pool of `ceiling` slots.
    pub fn new(ceiling: usize) -> Arc<Slots> {
        Arc::new(Slots {
            permits: Arc::new(Semaphore::new(ceiling)),
            ceiling,
            open: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            closed: Notify::new(),
        })
    }

    /// Waits for a free slot and reserves it for the next `accept`. `None` only if the pool was closed,
    /// which nothing does while the listener lives.
    pub async fn reserve(self: &Arc<Self>) -> Option<Reserved> {
        let permit = self.permits.clone().acquire_owned().await.ok()?;
        Some(Reserved { permit, slots: self.clone() })
    }

    /// The counters now.
    pub fn snapshot(&self) -> SlotSnapshot {
        SlotSnapshot {
            ceiling: self.ceiling,
            open: self.open.load(Ordering::Acquire),
            peak: self.peak.load(Ordering::Acquire),
        }
    }

    /// Waits until no connection is open, or until `deadline`; true iff none is open.
    pub async fn wait_closed(&self, deadline: Instant) -> bool {
        loop {
            // Created before the check, so a close between the check and the wait is not missed
            // (`Notified` receives `notify_waiters` from its creation on).
            let notified = self.closed.notified();
            if self.open.load(Ordering::Acquire) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.open.load(Ordering::Acquire) == 0;
            }
        }
    }
}

/// A slot the acceptor holds while it waits in `accept`.
pub struct Reserved {
    permit: OwnedSemaphorePermit,
    slots: Arc<Slots>,
}

impl Reserved {
    /// Binds the slot to the connection just accepted; the connection keeps it until it closes.
    pub fn bind(self) -> ConnectionSlot {
        let open = self.slots.open.fetch_add(1, Ordering::AcqRel).saturating_add(1);
        self.slots.peak.fetch_max(open, Ordering::AcqRel);
        ConnectionSlot { _permit: self.permit, slots: self.slots }
    }
}

/// The slot of one open connection, returned when dropped.
pub struct ConnectionSlot {
    _permit: OwnedSemaphorePermit,
    slots: Arc<Slots>,
}

impl ConnectionSlot {
    /// Whether this is the listener's only open connection now: the gate of the connection's self-wake
    /// (`self_wake`), which pays off only when no other connection keeps the workers busy.
    pub(crate) fn alone(&self) -> bool {
        self.slots.open.load(Ordering::Relaxed) <= 1
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.slots.open.fetch_sub(1, Ordering::AcqRel);
        self.slots.closed.notify_waiters();
        // The permit itself is released right after this body, when the field drops.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn the_ceiling_bounds_open_connections_and_the_peak_is_kept() {
        let slots = Slots::new(2);
        let a = slots.reserve().await.unwrap().bind();
        let reserved = slots.reserve().await.unwrap();
        assert_eq!(
            slots.snapshot(),
            SlotSnapshot { ceiling: 2, open: 1, peak: 1 },
            "a reservation is not open"
        );
        assert!(a.alone(), "one open connection is served alone");
        let b = reserved.bind();
        assert_eq!(slots.snapshot(), SlotSnapshot { ceiling: 2, open: 2, peak: 2 });
        assert_eq!((a.alone(), b.alone()), (false, false));
        let third = tokio::time::timeout(Duration::from_millis(20), slots.reserve()).await;
        assert!(third.is_err(), "no slot beyond the ceiling");
        drop(a);
        let c = tokio::time::timeout(Duration::from_secs(2), slots.reserve()).await.unwrap().unwrap().bind();
        assert_eq!(slots.snapshot(), SlotSnapshot { ceiling: 2, open: 2, peak: 2 });
        drop((b, c));
        assert_eq!(slots.snapshot().open, 0);
    }

    #[tokio::test]
    async fn wait_closed_observes_the_last_close_and_its_deadline() {
        let slots = Slots::new(1);
        assert!(slots.wait_closed(Instant::now()).await, "nothing open");
        let slot = slots.reserve().await.unwrap().bind();
        assert!(!slots.wait_closed(Instant::now() + Duration::from_millis(10)).await, "deadline passes");
        let waiter = {
            let slots = slots.clone();
            tokio::spawn(async move { slots.wait_closed(Instant::now() + Duration::from_secs(5)).await })
        };
        drop(slot);
        assert!(waiter.await.unwrap());
    }

    #[tokio::test]
    async fn a_panicking_holder_returns_its_slot() {
        let slots = Slots::new(1);
        let slot = slots.reserve().await.unwrap().bind();
        let task = tokio::spawn(async move {
            let _slot = slot;
            panic!("connection task panics");
        });
        assert!(task.await.is_err());
        assert_eq!(slots.snapshot().open, 0);
        assert!(tokio::time::timeout(Duration::from_secs(2), slots.reserve()).await.is_ok());
    }
}
