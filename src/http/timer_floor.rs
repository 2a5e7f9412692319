//! A floor under the time driver's sleep while calls are served, so that the timers a call arms do not
//! unpark it.
//!
//! Arming a tokio timer whose deadline is earlier than the time driver's next wake-up unparks the driver:
//! an eventfd write and, on a two-core machine, a wake-up of the other worker, which then steals the
//! call's next task and turns every later step of the call into a hand-off between threads. Between two
//! calls on a keep-alive connection the driver sleeps until the connection's idle timer, 30 s ahead, so
//! every call that goes past its first slice unparked it once or twice: the driver's heartbeat and
//! deadline, the provider call's own deadline (issue 27: two eventfd writes per forward call under
//! `strace -f`). While calls come, a tick of this module keeps the driver's next wake-up within
//! [`TICK`], so timers further ahead than that (the heartbeat's 5,000 ms, deadlines, the write bounds)
//! are armed without a wake-up; the tick costs the driver a wake-up per [`TICK`] instead of one per call.
//! The tick stops [`LINGER`] after the last call, so an idle gateway sleeps as before.
//!
//! Owns only that tick: no timer's deadline changes, and a timer nearer than [`TICK`] still unparks the
//! driver as before. One tick per process; a runtime that shuts down drops its tick, and the next call on
//! another runtime starts a new one.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::Instant;

/// The tick's period: the driver never sleeps longer than this while calls come.
pub const TICK: Duration = Duration::from_millis(500);
/// The tick stops this long after the last call.
pub const LINGER: Duration = Duration::from_millis(5_000);

struct Floor {
    /// A tick task is running (or spawned).
    ticking: AtomicBool,
    /// The last call, in milliseconds since `origin`.
    last: AtomicU64,
    origin: Instant,
}

fn floor() -> &'static Floor {
    static FLOOR: OnceLock<Floor> = OnceLock::new();
    FLOOR.get_or_init(Floor::new)
}

impl Floor {
    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// A call is about to arm its timers: keeps the tick going, or starts it on the current runtime (none
/// outside one).
pub fn hold() {
    floor().hold();
}

/// Whether a timer `bound` ahead is armed without unparking the time driver now: the tick runs, and the
/// timer is no nearer than the tick's own (`soon::within` then needs no yield to avoid a timer).
pub fn covers(bound: Duration) -> bool {
    floor().covers(bound)
}

impl Floor {
    fn new() -> Floor {
        Floor { ticking: AtomicBool::new(false), last: AtomicU64::new(0), origin: Instant::now() }
    }

    fn covers(&self, bound: Duration) -> bool {
        bound >= TICK && self.ticking.load(Ordering::Acquire)
    }

    fn hold(&'static self) {
        self.last.store(self.now(), Ordering::Relaxed);
        if self.ticking.load(Ordering::Relaxed) || self.ticking.swap(true, Ordering::AcqRel) {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn(tick(Ticking(self)))),
            Err(_) => self.ticking.store(false, Ordering::Release),
        }
    }
}

/// Clears `ticking` when the tick ends, also when its runtime drops it.
struct Ticking(&'static Floor);

impl Drop for Ticking {
    fn drop(&mut self) {
        self.0.ticking.store(false, Ordering::Release);
    }
}

async fn tick(ticking: Ticking) {
    let floor = ticking.0;
    let linger = u64::try_from(LINGER.as_millis()).unwrap_or(u64::MAX);
    loop {
        tokio::time::sleep(TICK).await;
        if floor.now().saturating_sub(floor.last.load(Ordering::Relaxed)) >= linger {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The tick runs while calls come and stops `LINGER` after the last one; a later call starts it again.
    #[tokio::test(start_paused = true)]
    async fn the_tick_stops_after_the_last_call_and_starts_again() {
        // A floor of its own: the process-wide one is held by whatever other test serves a call.
        let floor: &'static Floor = Box::leak(Box::new(Floor::new()));
        floor.hold();
        assert!(floor.ticking.load(Ordering::Acquire));
        tokio::time::sleep(LINGER / 2).await;
        floor.hold();
        tokio::time::sleep(LINGER / 2 + TICK).await;
        assert!(floor.ticking.load(Ordering::Acquire), "kept by the second call");
        tokio::time::sleep(LINGER).await;
        assert!(!floor.ticking.load(Ordering::Acquire), "stopped after the last call");
        floor.hold();
        assert!(floor.ticking.load(Ordering::Acquire), "started again by a later call");
    }

    // A timer is covered only while the tick runs, and only one at least a tick ahead.
    #[tokio::test(start_paused = true)]
    async fn only_timers_a_tick_ahead_are_covered_and_only_while_it_ticks() {
        let floor: &'static Floor = Box::leak(Box::new(Floor::new()));
        assert!(!floor.covers(LINGER), "no tick yet");
        floor.hold();
        assert!(floor.covers(TICK));
        assert!(floor.covers(LINGER * 2));
        assert!(!floor.covers(TICK - Duration::from_millis(1)));
        tokio::time::sleep(LINGER + TICK * 2).await;
        assert!(!floor.covers(LINGER), "the tick stopped after the last call");
    }
}
