//! The interrupt budget of a call (execution.md §12.8): how many interrupt points it may still pass, its
//! deadline and its cancellation, shared by every sandbox of the call (or of one startup probe).
//!
//! Owns the counting and the sticky exhaustion. Does not own where interrupt points come from (the VM's
//! interrupt callback, `vm`) nor what an exhausted budget becomes (the runtime's outcome).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::os::thread_time::thread_cpu_time;

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
    slice: Option<Slice>,
    /// The clock is read once per this many interrupt points.
    clock_every: u64,
    /// 0: running; 1: interrupts exhausted; 2: deadline passed; 3: cancelled; 4: slice ended.
    exhausted: AtomicU8,
    ticks: AtomicU64,
}

/// The clock is read once per this many interrupt points.
const CLOCK_EVERY: u64 = 1024;

/// The wall-clock bound of a slice, whatever CPU time it has had: a thread the machine starves of
/// processor time still gives its worker back this soon (execution.md §12.8 "Fairness" allows 100 ms).
pub const SLICE_WALL_CAP: Duration = Duration::from_millis(20);

/// The end of a run tried on the calling thread. It ends once the thread has used the slice's length of
/// CPU time since the slice began (so a thread preempted by other work on a loaded machine does not end
/// its slice for time it never had), and at the latest [`SLICE_WALL_CAP`] after it began. The thread CPU
/// clock is read only once the slice's length of wall time has passed, since the CPU time used cannot
/// exceed the wall time elapsed. Without a readable thread clock the slice ends by the wall clock.
#[derive(Debug)]
struct Slice {
    /// The slice's length of wall time after its start: before it, the slice cannot have ended.
    earliest: Instant,
    /// [`SLICE_WALL_CAP`] after its start.
    latest: Instant,
    /// The thread's CPU time at which the slice ends.
    cpu_end: Option<Duration>,
}

/// How old a reading of the thread's CPU clock a slice may start from (see [`recent_cpu_time`]): a quarter
/// of the provider-free slice (1 ms), so such a slice still has at least three quarters of its CPU time.
const REUSED_READING: Duration = Duration::from_micros(250);

thread_local! {
    /// This thread's last reading of its CPU clock at a slice's start, and when it was taken.
    static LAST_READING: Cell<Option<(Instant, Duration)>> = const { Cell::new(None) };
}

/// The thread's CPU time for a slice starting at `now`: a reading taken less than [`REUSED_READING`] ago
/// when there is one, else a new one. The thread CPU clock has no vDSO path, so each reading is a system
/// call, and a worker serving quick calls back to back starts a slice every few tens of microseconds.
/// A slice that starts from an earlier reading is charged the thread's CPU time since that reading too, at
/// most the wall time since it: it ends at most [`REUSED_READING`] of CPU time sooner, never later, so
/// execution.md §12.8 "Fairness" holds as before.
fn recent_cpu_time(now: Instant) -> Option<Duration> {
    LAST_READING.with(|last| {
        if let Some((at, cpu)) = last.get() {
            if at <= now && now.duration_since(at) < REUSED_READING {
                return Some(cpu);
            }
        }
        let cpu = thread_cpu_time();
        last.set(cpu.map(|cpu| (now, cpu)));
        cpu
    })
}

impl Slice {
    fn starting_now(length: Duration) -> Slice {
        let now = Instant::now();
        let cpu_end = recent_cpu_time(now).map(|t| t + length);
        Slice { earliest: now + length, latest: now + SLICE_WALL_CAP.max(length), cpu_end }
    }

    fn ended(&self, now: Instant) -> bool {
        if now < self.earliest {
            return false;
        }
        if now >= self.latest {
            return true;
        }
        match (self.cpu_end, thread_cpu_time()) {
            (Some(end), Some(used)) => used >= end,
            _ => true,
        }
    }
}

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

    /// [`Budget::with_cancel`] for a run tried on the calling thread, starting now: it also ends, as
    /// [`Exhaustion::SliceEnded`], once the thread has run it for `slice` (see [`Slice`]). Only a run
    /// without effects outside its sandboxes may be tried so: abandoning it and running it again from the
    /// start is then indistinguishable from having run it once. The budget must be charged on the thread
    /// that made it.
    pub fn with_slice(
        interrupts: u64,
        deadline: Instant,
        cancel: Arc<AtomicBool>,
        slice: Duration,
    ) -> Arc<Budget> {
        let mut budget = Budget::unshared(interrupts, Some(deadline), Some(cancel));
        budget.slice = Some(Slice::starting_now(slice));
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
            slice: None,
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
        if self.deadline.is_none() && self.slice.is_none() {
            return Ok(());
        }
        let now = Instant::now();
        let code = if self.deadline.is_some_and(|at| now >= at) {
            2
        } else if self.slice.as_ref().is_some_and(|slice| slice.ended(now)) {
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
        let length = Duration::from_millis(20);
        let sliced = Budget::with_slice(INTERRUPT_BUDGET, far, Arc::new(AtomicBool::new(false)), length);
        let run = Budget::with_cancel(INTERRUPT_BUDGET, far, Arc::new(AtomicBool::new(false)));
        // The first point reads the clock while the slice is open; then this thread works past its end.
        assert_eq!((sliced.charge(), run.charge()), (Ok(()), Ok(())));
        spin_for_cpu(length);
        let passed = (0..CLOCK_EVERY).take_while(|_| sliced.charge().is_ok()).count() as u64;
        assert_eq!(passed, SLICE_CLOCK_EVERY - 1);
        assert_eq!(sliced.exhausted(), Some(Exhaustion::SliceEnded));
        let passed = (0..CLOCK_EVERY).take_while(|_| run.charge().is_ok()).count() as u64;
        assert_eq!(passed, CLOCK_EVERY, "no deadline passed: a run's budget goes on");
    }

    /// A slice is charged the thread's CPU time: wall time in which the thread did not run (here, asleep;
    /// on a loaded machine, preempted) does not end it before [`SLICE_WALL_CAP`]; past the cap it ends
    /// whatever CPU time it had.
    #[test]
    fn a_slice_ends_by_the_threads_cpu_time_or_at_the_wall_cap() {
        let far = Instant::now() + Duration::from_secs(60);
        let length = Duration::from_millis(2);
        // Read before the slice starts and after its check, so that "within the cap" is never claimed
        // for a check the wall cap had already ended (a preemption between the two on a loaded machine).
        let start = Instant::now();
        let sliced = Budget::with_slice(INTERRUPT_BUDGET, far, Arc::new(AtomicBool::new(false)), length);
        std::thread::sleep(length * 2);
        let checked = sliced.check_deadline();
        if Instant::now() < start + SLICE_WALL_CAP {
            assert_eq!(checked, Ok(()), "asleep, the thread used almost no CPU time");
        }
        spin_for_cpu(length);
        assert_eq!(sliced.check_deadline(), Err(Exhaustion::SliceEnded));

        let idle = Budget::with_slice(INTERRUPT_BUDGET, far, Arc::new(AtomicBool::new(false)), length);
        std::thread::sleep(SLICE_WALL_CAP);
        assert_eq!(idle.check_deadline(), Err(Exhaustion::SliceEnded), "the wall cap bounds every slice");
    }

    /// A slice that starts from the thread's recent reading (see [`recent_cpu_time`]) never runs past its
    /// length of CPU time from its own start, and ends at most [`REUSED_READING`] of CPU time sooner.
    #[test]
    fn a_slice_from_a_recent_reading_ends_no_later() {
        let far = Instant::now() + Duration::from_secs(60);
        let length = Duration::from_millis(2);
        let slice = |_| Budget::with_slice(INTERRUPT_BUDGET, far, Arc::new(AtomicBool::new(false)), length);
        for round in 0..20 {
            let _anchor = slice(round);
            spin_for_cpu(Duration::from_micros(50));
            // Before the slice and after its check, as in the test above.
            let started = Instant::now();
            let sliced = slice(round);
            spin_for_cpu(length - REUSED_READING - Duration::from_micros(100));
            let checked = sliced.check_deadline();
            if Instant::now() < started + SLICE_WALL_CAP {
                assert_eq!(checked, Ok(()), "round {round}: ended more than the reuse sooner");
            }
            spin_for_cpu(REUSED_READING + Duration::from_micros(100));
            assert_eq!(
                sliced.check_deadline(),
                Err(Exhaustion::SliceEnded),
                "round {round}: ran past its length"
            );
        }
    }

    /// Keeps this thread busy until it has used `cpu` more CPU time.
    fn spin_for_cpu(cpu: Duration) {
        let Some(end) = thread_cpu_time().map(|t| t + cpu) else { panic!("no thread CPU clock") };
        let give_up = Instant::now() + Duration::from_secs(30);
        while thread_cpu_time().is_some_and(|t| t < end) && Instant::now() < give_up {
            std::hint::spin_loop();
        }
    }
}
