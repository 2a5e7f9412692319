//! Bounded waits that arm their timer only when the work is still pending after the task yielded once.
//!
//! Registering a tokio timer whose deadline is earlier than the time driver's next wake-up unparks the
//! driver: a write to its eventfd, and on a two-core machine a wake-up of the other worker for nothing.
//! On the request path most bounded waits end at once — the body of a small request is in hyper's read
//! buffer, and a response the call's task queued is written as soon as the connection's task runs — so
//! a timer per wait was a large share of a quick call's cost (issue 27: about 6% of the gateway's CPU at
//! concurrency 1, and one eventfd write per call). Polling the work, yielding once so that the
//! connection's task can run, and polling again settles those waits without a timer; the bound is the
//! same, counted from the first poll.
//!
//! Owns only that pattern; each caller keeps its own bound and what a late end means.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use tokio::time::error::Elapsed;
use tokio::time::Instant;

use super::timer_floor;

/// The output of `work` if it is ready now or after this task yielded once; `None` if it is still
/// pending (it may be polled again).
pub async fn ready_soon<F: Future + Unpin>(work: &mut F) -> Option<F::Output> {
    if let Poll::Ready(out) = futures::poll!(&mut *work) {
        return Some(out);
    }
    tokio::task::yield_now().await;
    match futures::poll!(&mut *work) {
        Poll::Ready(out) => Some(out),
        Poll::Pending => None,
    }
}

/// Awaits `work` for at most `bound` from now, like `tokio::time::timeout`, arming the timer only if
/// [`ready_soon`] did not settle it. While the timer floor ticks (`timer_floor`: calls are being served),
/// a timer at least a tick ahead unparks nothing, so the work is awaited with its timer at once: the yield
/// would cost more than the timer (it leaves a deferred wake-up, which makes the worker poll the I/O
/// driver once more before it sleeps, and with another task ready it wakes the other worker; issue 27,
/// the forward call's message).
///
/// The work comes pinned where the caller holds it (`std::pin::pin!` at the call): an `async fn` that took
/// it by value would hold it three times (its argument, the pinned local, the timeout's copy), and every
/// future that awaits this one would carry and copy that size (issue 27, sixth round).
pub async fn within<F: Future + ?Sized>(
    bound: Duration,
    mut work: Pin<&mut F>,
) -> Result<F::Output, Elapsed> {
    let deadline = Instant::now() + bound;
    if timer_floor::covers(bound) {
        return tokio::time::timeout_at(deadline, work).await;
    }
    if let Some(out) = ready_soon(&mut work).await {
        return Ok(out);
    }
    tokio::time::timeout_at(deadline, work).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;

    #[tokio::test]
    async fn ready_work_ends_without_a_timer_and_late_work_at_its_bound() {
        assert_eq!(within(Duration::from_millis(10), pin!(async { 7 })).await.ok(), Some(7));
        let (tell, told) = tokio::sync::oneshot::channel::<u8>();
        // Answered by another task while this one yields: still no timer needed.
        tokio::spawn(async move { tell.send(3) });
        assert_eq!(within(Duration::from_secs(5), pin!(told)).await.ok(), Some(Ok(3)));
        let started = std::time::Instant::now();
        let never = std::future::pending::<()>();
        assert!(within(Duration::from_millis(50), pin!(never)).await.is_err(), "late at its bound");
        assert!(started.elapsed() >= Duration::from_millis(50));
    }
}
