//! Provider-call admission (providers.md §9): at most `max_active_provider_calls` active calls and at most
//! `max_waiting_provider_calls` waiters in strict FIFO order, gateway-wide.
//!
//! Owns the active count, the waiter queue, the hand-over of a freed slot to the oldest waiter, and the
//! exits of a waiter (deadline → `mcp_timeout`, cancellation → `mcp_cancelled`, both dispatch `false`,
//! without disturbing the others' order). Does not own the in-flight bound (the transport's), nor the
//! owner whose loss fences the domain (`ptc_actors::AdmissionOwnerRef` over the stage-9 pool, consulted
//! through [`CallAdmission::new`]'s `owner` pool).

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use ptc_actors::AdmissionPool;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::failure::{CallFailure, Dispatch, FailureClass};

struct State {
    active: u32,
    waiters: VecDeque<(u64, oneshot::Sender<()>)>,
    next_waiter: u64,
    closed: bool,
}

struct Inner {
    max_active: u32,
    max_waiting: u32,
    state: Mutex<State>,
    /// The supervised owner's pool: fenced when the owner is lost (providers.md §9 "Loss of the admission's
    /// owner").
    owner: AdmissionPool,
}

impl Inner {
    fn state(&self) -> MutexGuard<'_, State> {
        // No update spans a panic point; keep using a poisoned state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot frees: the oldest live waiter gets it, else the active count drops.
    fn release(&self) {
        let mut state = self.state();
        while let Some((_, waiter)) = state.waiters.pop_front() {
            if waiter.send(()).is_ok() {
                return;
            }
        }
        state.active = state.active.saturating_sub(1);
    }
}

/// The gateway-wide admission. Cheap to clone.
#[derive(Clone)]
pub struct CallAdmission {
    inner: Arc<Inner>,
}

/// An active slot; released (to the oldest waiter) on drop. Held until the call's request settles.
pub struct ActiveSlot {
    inner: Arc<Inner>,
}

impl Drop for ActiveSlot {
    fn drop(&mut self) {
        self.inner.release();
    }
}

fn refused(class: FailureClass) -> CallFailure {
    CallFailure::new(class, Dispatch::False)
}

impl CallAdmission {
    pub fn new(max_active: u32, max_waiting: u32, owner: AdmissionPool) -> CallAdmission {
        let state = State { active: 0, waiters: VecDeque::new(), next_waiter: 0, closed: false };
        CallAdmission { inner: Arc::new(Inner { max_active, max_waiting, state: Mutex::new(state), owner }) }
    }

    /// Take an active slot or wait for one until `deadline` or `cancel` (providers.md §9).
    pub async fn admit(
        &self,
        deadline: Instant,
        cancel: impl Future<Output = ()>,
    ) -> Result<ActiveSlot, CallFailure> {
        if self.inner.owner.is_fenced() {
            return Err(refused(FailureClass::ProviderUnavailable));
        }
        let (id, granted) = {
            let mut state = self.inner.state();
            if state.closed {
                return Err(refused(FailureClass::ProviderUnavailable));
            }
            if state.active < self.inner.max_active && state.waiters.is_empty() {
                state.active += 1;
                return Ok(ActiveSlot { inner: self.inner.clone() });
            }
            if state.waiters.len() >= self.inner.max_waiting as usize {
                return Err(refused(FailureClass::ProviderCapacityExhausted));
            }
            let id = state.next_waiter;
            state.next_waiter += 1;
            let (tx, rx) = oneshot::channel();
            state.waiters.push_back((id, tx));
            (id, rx)
        };
        tokio::pin!(granted);
        let class = tokio::select! {
            got = &mut granted => return match got {
                Ok(()) => Ok(ActiveSlot { inner: self.inner.clone() }),
                // The queue was closed (shutdown): the sender went without a grant.
                Err(_) => Err(refused(FailureClass::ProviderUnavailable)),
            },
            () = tokio::time::sleep_until(deadline) => FailureClass::McpTimeout,
            () = cancel => FailureClass::McpCancelled,
        };
        let still_waiting = {
            let mut state = self.inner.state();
            let before = state.waiters.len();
            state.waiters.retain(|(w, _)| *w != id);
            state.waiters.len() != before
        };
        if !still_waiting && granted.try_recv().is_ok() {
            // Granted in the same instant: hand the slot on at once.
            drop(ActiveSlot { inner: self.inner.clone() });
        }
        Err(refused(class))
    }

    /// Shutdown (lifecycle.md §7.3 stage S5 (provider cleanup)): no new admissions; every waiter leaves with
    /// `provider_unavailable`.
    /// `(max_active, active, waiting)` now, for the metrics file (audit-events.md §3.12).
    pub fn occupancy(&self) -> (u64, u64, u64) {
        let state = self.inner.state();
        (u64::from(self.inner.max_active), u64::from(state.active), state.waiters.len() as u64)
    }

    pub fn close(&self) {
        let mut state = self.inner.state();
        state.closed = true;
        state.waiters.clear();
    }

    /// No active and no waiting call (the criterion of the provider cleanup stage, S5, providers.md §13.3).
    pub fn is_idle(&self) -> bool {
        let state = self.inner.state();
        state.active == 0 && state.waiters.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptc_actors::RefusalOrder;
    use std::time::Duration;

    fn admission(active: u32, waiting: u32) -> CallAdmission {
        CallAdmission::new(active, waiting, AdmissionPool::new("p", active, RefusalOrder::UnavailableFirst))
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[tokio::test]
    async fn waiters_are_granted_in_fifo_order_and_refusals_are_exact() {
        let adm = admission(1, 2);
        let first = adm.admit(far(), std::future::pending()).await.unwrap();
        let (tx, mut order) = tokio::sync::mpsc::unbounded_channel();
        let mut tasks = Vec::new();
        for n in 0..2u8 {
            let (waiter, tx) = (adm.clone(), tx.clone());
            tasks.push(tokio::spawn(async move {
                let slot = waiter.admit(far(), std::future::pending()).await;
                tx.send(n).unwrap();
                drop(slot);
            }));
            // Wait until the waiter is queued before starting the next one (FIFO is by arrival).
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while adm.inner.state().waiters.len() < usize::from(n) + 1 {
                assert!(std::time::Instant::now() < deadline);
                tokio::task::yield_now().await;
            }
        }
        let third = adm.admit(far(), std::future::pending()).await;
        assert_eq!(
            third.err().map(|f| (f.class, f.dispatch)),
            Some((FailureClass::ProviderCapacityExhausted, Dispatch::False))
        );
        drop(first);
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!((order.recv().await, order.recv().await), (Some(0), Some(1)));
        assert!(adm.is_idle());
    }

    #[tokio::test]
    async fn a_waiter_leaves_at_its_deadline_or_cancellation_with_dispatch_false() {
        let adm = admission(1, 1);
        let held = adm.admit(far(), std::future::pending()).await.unwrap();
        let timed = adm.admit(Instant::now() + Duration::from_millis(20), std::future::pending()).await;
        assert_eq!(
            timed.err().map(|f| (f.class, f.dispatch)),
            Some((FailureClass::McpTimeout, Dispatch::False))
        );
        let cancelled = adm.admit(far(), std::future::ready(())).await;
        assert_eq!(cancelled.err().map(|f| f.class), Some(FailureClass::McpCancelled));
        drop(held);
        assert!(adm.is_idle());
        let zero = admission(1, 0);
        let _a = zero.admit(far(), std::future::pending()).await.unwrap();
        assert_eq!(
            zero.admit(far(), std::future::pending()).await.err().map(|f| f.class),
            Some(FailureClass::ProviderCapacityExhausted)
        );
    }
}
