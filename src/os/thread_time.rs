//! The CPU time the calling thread has used: what a run tried on an async worker is charged for its slice
//! (docs/decisions.md "A slice is the run's CPU, not the machine's load (issue 27)").
//!
//! A slice bounded by the wall clock alone ends whenever the thread is preempted for a moment, which on a
//! loaded machine is often: the run is then abandoned and started again elsewhere, for work it never had
//! the processor to do. The thread's own CPU clock counts only what the run used.

use std::time::Duration;

/// The CPU time this thread has used so far, or `None` where the clock cannot be read (the caller then
/// goes by the wall clock alone).
pub fn thread_cpu_time() -> Option<Duration> {
    use nix::time::{clock_gettime, ClockId};
    let now = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    let secs = u64::try_from(now.tv_sec()).ok()?;
    let nanos = u32::try_from(now.tv_nsec()).ok()?;
    Some(Duration::new(secs, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clock is the thread's own: it advances while this thread works and is unaffected by another
    /// thread's work.
    #[test]
    fn the_clock_counts_this_threads_work_only() {
        let Some(start) = thread_cpu_time() else { panic!("the thread CPU clock is readable on this OS") };
        let spin_until = start + Duration::from_millis(5);
        let mut turns = 0u64;
        while thread_cpu_time().is_some_and(|t| t < spin_until) && turns < 50_000_000 {
            turns += 1;
        }
        assert!(thread_cpu_time().is_some_and(|t| t >= spin_until), "spun {turns} turns");
        let before = thread_cpu_time();
        let other = std::thread::spawn(|| {
            let end = thread_cpu_time().map(|t| t + Duration::from_millis(20));
            while thread_cpu_time() < end {}
        });
        let _ = other.join();
        let after = thread_cpu_time();
        let used = after.zip(before).map(|(a, b)| a - b);
        assert!(used.is_some_and(|d| d < Duration::from_millis(20)), "{used:?}");
    }
}
