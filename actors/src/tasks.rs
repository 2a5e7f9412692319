//! Tasks with an owner: every task spawned through a [`TaskGroup`] reports how it ended (returned or
//! panicked) to the group's owner, so that the end of any task is noticed by someone whose loss policy
//! is declared in the tree (an owner whose task ends or panics has lost part of itself).
//!
//! Owns: the wrapping of each task (a panic is caught, reported, and then re-raised so the task's
//! `JoinHandle` still says it panicked), the buffering of reports made before an owner attached (tasks
//! may start before the owner actor that will hear them exists), the owner's other events
//! sent through the same channel, and the retirement of the group (after [`TaskGroup::retire`] the ends
//! of its tasks are expected and nobody is told).
//!
//! Does not own: what an end means (the owner decides), or the tasks' work.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use tokio::task::JoinHandle;

/// How a task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskEnd {
    /// Its future completed.
    Returned,
    /// It panicked.
    Panicked,
}

/// One task's end, as its owner hears it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskReport {
    /// The name the task was spawned with.
    pub task: &'static str,
    pub end: TaskEnd,
}

/// Where a group's events go once an owner is attached.
pub type Deliver<E> = Box<dyn Fn(E) + Send + Sync + 'static>;

struct State<E> {
    owner: Option<Deliver<E>>,
    early: Vec<E>,
    retired: bool,
}

/// A set of tasks and one owner that hears each task's end, and any other event the group is given.
/// Cheap to clone; clones share the group.
pub struct TaskGroup<E> {
    state: Arc<Mutex<State<E>>>,
}

impl<E> Clone for TaskGroup<E> {
    fn clone(&self) -> Self {
        TaskGroup { state: self.state.clone() }
    }
}

impl<E: From<TaskReport> + Send + 'static> Default for TaskGroup<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: From<TaskReport> + Send + 'static> TaskGroup<E> {
    /// A group with no owner yet: events are buffered until [`TaskGroup::attach`].
    pub fn new() -> Self {
        TaskGroup { state: Arc::new(Mutex::new(State { owner: None, early: Vec::new(), retired: false })) }
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        // A poisoned lock means a panic while delivering; the state itself is always consistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Spawns `future` as a task of this group. Its end is reported as `E::from(TaskReport)`; a panic is
    /// reported first and then re-raised, so the returned handle sees it too.
    pub fn spawn<T, F>(&self, task: &'static str, future: F) -> JoinHandle<T>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let group = self.clone();
        tokio::spawn(async move {
            let ended = catch_unwind(future).await;
            let end = if ended.is_ok() { TaskEnd::Returned } else { TaskEnd::Panicked };
            group.send(E::from(TaskReport { task, end }));
            match ended {
                Ok(value) => value,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    /// Sends an event to the owner (buffered until one is attached; dropped once retired).
    pub fn send(&self, event: E) {
        let mut state = self.lock();
        if state.retired {
            return;
        }
        match &state.owner {
            Some(deliver) => deliver(event),
            None => state.early.push(event),
        }
    }

    /// Attaches the owner: the buffered events are delivered at once, in order, then every later one.
    pub fn attach(&self, deliver: Deliver<E>) {
        let mut state = self.lock();
        for event in std::mem::take(&mut state.early) {
            deliver(event);
        }
        state.owner = Some(deliver);
    }

    /// From now on the tasks' ends are expected (an orderly close): nothing more is delivered.
    pub fn retire(&self) {
        let mut state = self.lock();
        state.retired = true;
        state.owner = None;
        state.early.clear();
    }

    /// True once [`TaskGroup::retire`] was called.
    pub fn is_retired(&self) -> bool {
        self.lock().retired
    }
}

pin_project_lite::pin_project! {
    /// `catch_unwind` for a future, without a dependency on the `futures` crate: a panic in a poll is the
    /// output's error. A struct that holds the future once; an `async fn` taking it by value held it twice
    /// (its argument and the pinned local), and every task spawned with it carried that size (issue 27).
    pub(crate) struct CatchUnwind<F> {
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.project().future;
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// `future`, with a panic in any of its polls caught (see [`CatchUnwind`]).
pub(crate) fn catch_unwind<F: Future>(future: F) -> CatchUnwind<F> {
    CatchUnwind { future }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Eq)]
    enum Event {
        Task(TaskReport),
        Other(u8),
    }

    impl From<TaskReport> for Event {
        fn from(report: TaskReport) -> Self {
            Event::Task(report)
        }
    }

    fn recorder() -> (Deliver<Event>, std::sync::mpsc::Receiver<Event>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = Mutex::new(tx);
        (Box::new(move |e| drop(tx.lock().map(|tx| tx.send(e)))), rx)
    }

    #[tokio::test]
    async fn ends_before_the_owner_attached_are_delivered_in_order_at_attach() {
        let group: TaskGroup<Event> = TaskGroup::new();
        let returned = group.spawn("reader", async { 7 });
        assert_eq!(returned.await.unwrap(), 7);
        group.send(Event::Other(1));
        let (deliver, rx) = recorder();
        group.attach(deliver);
        let seen: Vec<Event> = rx.try_iter().collect();
        assert_eq!(
            seen,
            [Event::Task(TaskReport { task: "reader", end: TaskEnd::Returned }), Event::Other(1)]
        );
    }

    #[tokio::test]
    async fn a_panicking_task_is_reported_and_its_handle_still_sees_the_panic() {
        let group: TaskGroup<Event> = TaskGroup::new();
        let (deliver, rx) = recorder();
        group.attach(deliver);
        let task = group.spawn("writer", async {
            if std::hint::black_box(true) {
                panic!("injected");
            }
        });
        assert!(task.await.unwrap_err().is_panic());
        assert_eq!(
            rx.try_iter().collect::<Vec<_>>(),
            [Event::Task(TaskReport { task: "writer", end: TaskEnd::Panicked })]
        );
    }

    #[tokio::test]
    async fn a_retired_group_tells_nobody() {
        let group: TaskGroup<Event> = TaskGroup::new();
        let (deliver, rx) = recorder();
        group.attach(deliver);
        group.retire();
        group.spawn("stderr", async {}).await.unwrap();
        group.send(Event::Other(2));
        assert!(rx.try_iter().next().is_none());
        assert!(group.is_retired());
    }
}
