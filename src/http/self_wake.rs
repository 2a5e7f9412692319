//! A connection's poll that takes in the wake-ups it gives itself, so that they do not wake the other
//! worker.
//!
//! hyper's request body is a channel between the connection's dispatcher and the service, and the service
//! runs inside the connection's own poll: taking a body chunk wakes the dispatcher, that is the very task
//! being polled. tokio treats a task woken during its own poll as one that yields: it goes to the back of
//! the worker's queue, and an idle worker is woken (a futex or eventfd write) to steal it. On a two-core
//! machine every request with a body then woke the other worker, which polled the connection for nothing
//! and took over the I/O driver, so the rest of a forward call (the upstream's answer, the message) was
//! handled on another thread than its request (issue 27: one futex wake-up per forward call, and a thread
//! that competes with the upstream for a core while it starts on the request).
//!
//! [`SelfWakes::poll`] polls with a waker of its own: a wake that arrives while the poll runs is noted and
//! answered by polling again at once, on the same thread; a wake at any other time goes to the task's
//! waker as before. Polls in a row are bounded ([`MAX_POLLS`]): past the bound the wake is passed on,
//! and the runtime schedules the task as it did before, so a connection that keeps waking itself cannot
//! hold a worker. Nothing a connection reads or writes changes, only which thread goes on with it.
//!
//! **Only for a connection served alone.** Under load the other worker is busy anyway, and the poll again
//! at once costs more than it saves: a Luau call spawned during the poll has not run yet when the
//! connection is polled again, so the connection is polled once more after the call's end, where the
//! runtime's yield would have let the call run first (measured: about a fifth more CPU a Luau call at 16
//! connections, docs/decisions.md "The connection's self-wake, gated"). The caller says whether the
//! connection is the only one open; when it is not, the poll is the plain one with the task's waker,
//! so a loaded gateway pays one atomic load a poll for this module.
//!
//! Owns only that waker; the connection's life is `connection.rs`.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// At most this many polls in a row for wakes given during a poll.
pub(crate) const MAX_POLLS: usize = 4;

/// No poll is running: a wake goes to the task.
const IDLE: u8 = 0;
/// A poll is running and nothing woke it yet.
const POLLING: u8 = 1;
/// A poll is running and was woken: the poller polls again.
const WOKEN: u8 = 2;

struct Shared {
    state: AtomicU8,
    /// The waker of the task that polls, as of its last poll.
    task: Mutex<Option<Waker>>,
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            match state {
                // The poller sees the wake when its poll returns.
                WOKEN => return,
                POLLING => {
                    match self.state.compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire) {
                        Ok(_) => return,
                        Err(now) => state = now,
                    }
                }
                _ => break,
            }
        }
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(task) = task {
            task.wake();
        }
    }
}

/// The waker one connection is polled with.
pub(crate) struct SelfWakes {
    shared: Arc<Shared>,
    waker: Waker,
}

impl Default for SelfWakes {
    fn default() -> Self {
        let shared = Arc::new(Shared { state: AtomicU8::new(IDLE), task: Mutex::new(None) });
        let waker = Waker::from(shared.clone());
        SelfWakes { shared, waker }
    }
}

impl SelfWakes {
    /// Polls `f` with this waker, again at once while a poll was woken during itself and still pending,
    /// up to [`MAX_POLLS`] times; past that, the wake goes to the task of `cx`. When not `alone`, polls
    /// `f` once with `cx` itself.
    pub(crate) fn poll<T>(
        &self,
        cx: &mut Context<'_>,
        alone: bool,
        mut f: impl FnMut(&mut Context<'_>) -> Poll<T>,
    ) -> Poll<T> {
        if !alone {
            // Wakers registered by an earlier poll still reach the task: outside a poll the state is
            // `IDLE`, and a wake goes to the task's waker, which is the same task's.
            return f(cx);
        }
        {
            let mut task = self.shared.task.lock().unwrap_or_else(|p| p.into_inner());
            if !task.as_ref().is_some_and(|t| t.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        let mut own = Context::from_waker(&self.waker);
        for _ in 0..MAX_POLLS {
            self.shared.state.store(POLLING, Ordering::Release);
            let polled = f(&mut own);
            let woken = self.shared.state.swap(IDLE, Ordering::AcqRel) == WOKEN;
            if polled.is_ready() || !woken {
                return polled;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts the task's wake-ups.
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn task() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn a_wake_during_the_poll_is_a_second_poll_not_a_wake_of_the_task() {
        let (count, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let wakes = SelfWakes::default();
        let mut polls = 0;
        let polled = wakes.poll(&mut cx, true, |own| {
            polls += 1;
            if polls == 1 {
                own.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(polls)
            }
        });
        assert_eq!(polled, Poll::Ready(2));
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_wake_after_the_poll_goes_to_the_task() {
        let (count, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let wakes = SelfWakes::default();
        let mut kept = None;
        let polled: Poll<()> = wakes.poll(&mut cx, true, |own| {
            kept = Some(own.waker().clone());
            Poll::Pending
        });
        assert_eq!(polled, Poll::Pending);
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        kept.expect("registered").wake();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_poll_that_keeps_waking_itself_is_bounded_and_passes_the_wake_on() {
        let (count, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let wakes = SelfWakes::default();
        let mut polls = 0;
        let polled: Poll<()> = wakes.poll(&mut cx, true, |own| {
            polls += 1;
            own.waker().wake_by_ref();
            Poll::Pending
        });
        assert_eq!(polled, Poll::Pending);
        assert_eq!(polls, MAX_POLLS);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_latest_task_waker_is_the_one_woken() {
        let (first, first_waker) = task();
        let (second, second_waker) = task();
        let wakes = SelfWakes::default();
        let mut kept = None;
        let _: Poll<()> = wakes.poll(&mut Context::from_waker(&first_waker), true, |own| {
            kept = Some(own.waker().clone());
            Poll::Pending
        });
        let _: Poll<()> = wakes.poll(&mut Context::from_waker(&second_waker), true, |_| Poll::Pending);
        kept.expect("registered").wake();
        assert_eq!((first.0.load(Ordering::SeqCst), second.0.load(Ordering::SeqCst)), (0, 1));
    }

    #[test]
    fn a_connection_not_alone_is_polled_once_with_the_task_waker() {
        let (count, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let wakes = SelfWakes::default();
        let mut polls = 0;
        let polled: Poll<()> = wakes.poll(&mut cx, false, |own| {
            polls += 1;
            assert!(own.waker().will_wake(&waker), "the task's own waker");
            own.waker().wake_by_ref();
            Poll::Pending
        });
        assert_eq!((polled, polls), (Poll::Pending, 1));
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the wake went to the task, as without this module");
    }

    #[test]
    fn a_waker_left_by_a_poll_alone_still_reaches_the_task_after_polls_not_alone() {
        let (count, waker) = task();
        let mut cx = Context::from_waker(&waker);
        let wakes = SelfWakes::default();
        let mut kept = None;
        let _: Poll<()> = wakes.poll(&mut cx, true, |own| {
            kept = Some(own.waker().clone());
            Poll::Pending
        });
        let _: Poll<()> = wakes.poll(&mut cx, false, |_| Poll::Pending);
        kept.expect("registered").wake();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }
}
