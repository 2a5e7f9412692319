//! The interrupt budget of a call (execution.md §12.8): how many interrupt points it may still pass, its
//! deadline and its cancellation, shared by every sandbox of the call (or of one startup probe).
//!
//! Owns the counting and the sticky exhaustion. Does not own where interrupt points come from (the VM's
//! interrupt callback, `vm`) nor what an exhausted budget becomes (the runtime's outcome).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// execution.md §12.8: a call may pass at most 100,000,000 interrupt points across its sandboxes.
pub const INTERRUPT_BUDGET: u64 = 100_000_000;

/// Why a budget refused to continue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhaustion {
    /// More interrupt points than the budget allows (execution.md §12.8).
    Interrupts,
    /// The deadline passed (the run's deadline, or the 5,000 ms startup bound of execution.md §12.7).
    Deadline,
    /// The run was cancelled from outside (execution.md §5.3: client gone, drain cutoff, front request).
    Cancelled,
    /// The slice of a run tried on the calling thread ended (see [`Budget::with_slice`]): the run is
    /// abandoned and runs again from the start on a run thread. Never the end of a run.
    SliceEnded,
}

/// The interrupt budget, deadline and cancellation flag shared by every sandbox of one call (or of one
/// startup probe). Once exhausted it stays exhausted: every later interrupt point raises again, so no loop
/// can iterate and no function can be entered, whatever `pcall` catches (execution.md §12.8).
#[derive(Debug)]
pub struct Budget {
    remaining: AtomicU64,
    deadline: Option<Instant>,
    /// Set from another thread to cancel the run; read at every interrupt point (execution.md §12.8).
    cancel: Option<Arc<AtomicBool>>,
    /// When a run tried on the calling thread must give up (see [`Budget::with_slice`]).
    slice_end: Option<Instant>,
    /// The clock is read once per this many interrupt points.
    clock_every: u64,
    /// 0: running; 1: interrupts exhausted; 2: deadline passed; 3: cancelled; 4: slice ended.
    exhausted: AtomicU8,
    ticks: AtomicU64,
}

/// The clock is read once per this many interrupt points.
const CLOCK_EVERY: u64 = 1024;

/// The clock is read once per this many interrupt points in a slice: a slice is short (about a
/// millisecond) and a point may be slow (a loop that builds a 200 KB string each time round passes a few
/// points per iteration), and a slice that ends a thousand points late holds up the async worker it runs
/// on and a provider-free call's commit, which waits for it (execution.md §4.5, §12.8 "Fairness").
const SLICE_CLOCK_EVERY: u64 = 16;

impl Budget {
    /// A budget of `interrupts` interrupt points, ending at `deadline` when given.
    pub fn new(interrupts: u64, deadline: Option<Instant>) -> Arc<Budget> {
        Budget::build(interrupts, deadline, None)
    }

    /// A run's budget: like [`Budget::new`], and also exhausted once `cancel` is set.
    pub fn with_cancel(interrupts: u64, deadline: Instant, cancel: Arc<AtomicBool>) -> Arc<Budget> {
        Budget::build(interrupts, Some(deadline), Some(cancel))
    }

    /// [`Budget::with_cancel`] for a run tried on the calling thread: it also ends, as
    /// [`Exhaustion::SliceEnded`], once `slice_end` passes. Only a run without effects outside its
    /// sandboxes may be tried so: abandoning it and running it again from the start is then
    /// indistinguishable from having run it once.
    pub fn with_slice(
        interrupts: u64,
        deadline: Instant,
        cancel: Arc<AtomicBool>,
        slice_end: Instant,
    ) -> Arc<Budget> {
        let mut budget = Budget::unshared(interrupts, Some(deadline), Some(cancel));
        budget.slice_end = Some(slice_end);
        budget.clock_every = SLICE_CLOCK_EVERY;
        Arc::new(budget)
    }

    fn build(interrupts: u64, deadline: Option<Instant>, cancel: Option<Arc<AtomicBool>>) -> Arc<Budget> {
        Arc::new(Budget::unshared(interrupts, deadline, cancel))
    }

    fn unshared(interrupts: u64, deadline: Option<Instant>, cancel: Option<Arc<AtomicBool>>) -> Budget {
        Budget {
            remaining: AtomicU64::new(interrupts),
            deadline,
            cancel,
            slice_end: None,
            clock_every: CLOCK_EVERY,
            exhausted: AtomicU8::new(0),
            ticks: AtomicU64::new(0),
        }
    }

    /// Counts one interrupt point.
    pub fn charge(&self) -> Result<(), Exhaustion> {
        self.tick(true)
    }

    /// Checks like [`Budget::charge`] without spending a point: for the interrupts Luau raises inside its
    /// library functions, which are not interrupt points of execution.md §12.8.
    pub fn pass(&self) -> Result<(), Exhaustion> {
        self.tick(false)
    }

    fn tick(&self, spend: bool) -> Result<(), Exhaustion> {
        if let Some(e) = self.exhausted() {
            return Err(e);
        }
        self.check_cancel()?;
        if spend
            && self
                .remaining
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1))
                .is_err()
        {
            self.exhausted.store(1, Ordering::Relaxed);
            return Err(Exhaustion::Interrupts);
        }
        let tick = self.ticks.fetch_add(1, Ordering::Relaxed);
        if tick % self.clock_every == 0 {
            self.check_deadline()?;
        }
        Ok(())
    }

    /// Checks the deadline (and the slice's end) now (also used between compilation steps).
    pub fn check_deadline(&self) -> Result<(), Exhaustion> {
        if self.deadline.is_none() && self.slice_end.is_none() {
            return Ok(());
        }
        let now = Instant::now();
        let passed = |at: Option<Instant>| at.is_some_and(|at| now >= at);
        let code = if passed(self.deadline) {
            2
        } else if passed(self.slice_end) {
            4
        } else {
            return Ok(());
        };
        let _ = self.exhausted.compare_exchange(0, code, Ordering::Relaxed, Ordering::Relaxed);
        self.exhausted().map_or(Ok(()), Err)
    }

    /// Checks the cancellation flag now (an atomic load, cheap enough for every interrupt point).
    pub fn check_cancel(&self) -> Result<(), Exhaustion> {
        if self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Acquire)) {
            let _ = self.exhausted.compare_exchange(0, 3, Ordering::Relaxed, Ordering::Relaxed);
            return self.exhausted().map_or(Ok(()), Err);
        }
        Ok(())
    }

    /// Everything at once, for host-function boundaries (execution.md §12.8): sticky state, cancellation, the
    /// clock.
    pub fn check(&self) -> Result<(), Exhaustion> {
        if let Some(e) = self.exhausted() {
            return Err(e);
        }
        self.check_cancel()?;
        self.check_deadline()
    }

    /// Whether, and why, the budget is exhausted.
    pub fn exhausted(&self) -> Option<Exhaustion> {
        match self.exhausted.load(Ordering::Relaxed) {
            0 => None,
            1 => Some(Exhaustion::Interrupts),
            2 => Some(Exhaustion::Deadline),
            3 => Some(Exhaustion::Cancelled),
            _ => Some(Exhaustion::SliceEnded),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A slice's end is seen within [`SLICE_CLOCK_EVERY`] interrupt points, however slow each point is:
    /// a run's budget reads the clock only every [`CLOCK_EVERY`] points.
    #[test]
    fn a_slice_reads_the_clock_every_sixteen_points() {
        let far = Instant::now() + Duration::from_secs(60);
        let slice_end = Instant::now() + Duration::from_millis(20);
        let sliced = Budget::with_slice(INTERRUPT_BUDGET, far, Arc::new(AtomicBool::new(false)), slice_end);
        let run = Budget::with_cancel(INTERRUPT_BUDGET, far, Arc::new(AtomicBool::new(false)));
        // The first point reads the clock while the slice is open; then the slice ends.
        assert_eq!((sliced.charge(), run.charge()), (Ok(()), Ok(())));
        while Instant::now() < slice_end {
            std::hint::spin_loop();
        }
        let passed = (0..CLOCK_EVERY).take_while(|_| sliced.charge().is_ok()).count() as u64;
        assert_eq!(passed, SLICE_CLOCK_EVERY - 1);
        assert_eq!(sliced.exhausted(), Some(Exhaustion::SliceEnded));
        let passed = (0..CLOCK_EVERY).take_while(|_| run.charge().is_ok()).count() as u64;
        assert_eq!(passed, CLOCK_EVERY, "no deadline passed: a run's budget goes on");
    }
}
