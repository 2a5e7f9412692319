//! A generic owner actor for work that runs on tasks: it starts its tasks in its own [`TaskGroup`] and
//! fails as soon as any of them ends or panics, or as soon as someone reports a loss into its group, so
//! that its supervisor applies the loss policy the owner was started with. An orderly stop retires the
//! group first, so the ends that follow are expected.
//!
//! Owns: that reaction, and nothing else. It suits owners whose whole job is to notice an end (an accept
//! loop, a writer thread, a background appender's loss report); owners with more to decide are actors of
//! their own.

use std::future::Future;
use std::pin::Pin;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::domain::Domain;
use crate::policy::ChildPolicy;
use crate::supervisor::ChildSpec;

use crate::tasks::{TaskGroup, TaskReport};

/// A task to start in the owner's group: its name (as the owner reports it) and its work.
pub type OwnedTask = (&'static str, Pin<Box<dyn Future<Output = ()> + Send + 'static>>);

/// What the owner hears.
#[derive(Debug)]
pub enum TaskOwnerMsg {
    /// One of its tasks ended or panicked.
    Ended(TaskReport),
    /// Someone reported a loss into its group (what was lost, for the log).
    Lost(&'static str),
    /// The fault tests' failure of the owner's own logic.
    #[cfg(feature = "fault-injection")]
    Panic,
}

impl From<TaskReport> for TaskOwnerMsg {
    fn from(report: TaskReport) -> Self {
        TaskOwnerMsg::Ended(report)
    }
}

/// The owner actor. Start it with its group (made earlier when losses may be reported before it runs)
/// and the tasks it starts in that group.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskOwner;

impl TaskOwner {
    /// How to start a task owner named `name` with `policy` over `group` and `tasks`. With the
    /// `fault-injection` feature it also answers the handle's `inject_panic`.
    pub fn spec<D: Domain>(
        name: impl Into<String>,
        policy: ChildPolicy<D>,
        (group, tasks): (TaskGroup<TaskOwnerMsg>, Vec<OwnedTask>),
    ) -> ChildSpec<TaskOwner, D> {
        let spec = ChildSpec::new(name, policy, TaskOwner, (group, tasks));
        #[cfg(feature = "fault-injection")]
        let spec = spec.panic_message(|| TaskOwnerMsg::Panic);
        spec
    }
}

impl Actor for TaskOwner {
    type Msg = TaskOwnerMsg;
    type State = TaskGroup<TaskOwnerMsg>;
    type Arguments = (TaskGroup<TaskOwnerMsg>, Vec<OwnedTask>);

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        (group, tasks): Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        group.attach(Box::new(move |msg| {
            let _ = myself.send_message(msg);
        }));
        for (name, work) in tasks {
            drop(group.spawn(name, work));
        }
        Ok(group)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _group: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            TaskOwnerMsg::Ended(report) => {
                tracing::warn!(task = report.task, end = ?report.end, "an owned task ended");
                Err(format!("task {} ended", report.task).into())
            }
            TaskOwnerMsg::Lost(what) => {
                tracing::error!(what, "an owner heard of a loss");
                Err(what.into())
            }
            #[cfg(feature = "fault-injection")]
            TaskOwnerMsg::Panic => Err("injected fault: a panic in a task owner".into()),
        }
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        group: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Retired or lost: the tasks' later ends are expected now.
        group.retire();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::context::DomainContext;
    use crate::observer::NoopObserver;
    use crate::readiness::Phase;
    use crate::supervisor::{ChildStatus, SupervisorHandle};
    use crate::test_domain::{Cause, Test};

    async fn wait_fenced(ctx: &DomainContext<Test>) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while ctx.readiness().phase() != Phase::Fenced {
            assert!(tokio::time::Instant::now() < deadline, "never fenced");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn owner(group: TaskGroup<TaskOwnerMsg>, tasks: Vec<OwnedTask>) -> ChildSpec<TaskOwner, Test> {
        TaskOwner::spec("owner", ChildPolicy::Fence(Cause::ChildGone), (group, tasks))
    }

    #[tokio::test]
    async fn the_end_of_an_owned_task_is_the_owners_loss() {
        let ctx = DomainContext::<Test>::new(Arc::new(NoopObserver));
        let root = SupervisorHandle::start(ctx.clone()).await.unwrap();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let task: OwnedTask = ("loop", Box::pin(async move { drop(released.await) }));
        root.start_child(owner(TaskGroup::new(), vec![task])).await.unwrap();
        assert!(ctx.mark_ready());
        drop(release);
        wait_fenced(&ctx).await;
        assert_eq!(ctx.readiness().cause(), Some(Cause::ChildGone));
        root.shutdown(Duration::from_secs(2)).await;
    }

    #[tokio::test]
    async fn a_loss_reported_before_the_owner_started_reaches_it() {
        let ctx = DomainContext::<Test>::new(Arc::new(NoopObserver));
        let root = SupervisorHandle::start(ctx.clone()).await.unwrap();
        let group = TaskGroup::new();
        group.send(TaskOwnerMsg::Lost("the sink"));
        root.start_child(owner(group, Vec::new())).await.unwrap();
        wait_fenced(&ctx).await;
        root.shutdown(Duration::from_secs(2)).await;
    }

    #[cfg(feature = "fault-injection")]
    #[tokio::test]
    async fn an_injected_panic_is_the_owners_loss() {
        use crate::supervisor::DomainError;
        let ctx = DomainContext::<Test>::new(Arc::new(NoopObserver));
        let root = SupervisorHandle::start(ctx.clone()).await.unwrap();
        root.start_child(owner(TaskGroup::new(), Vec::new())).await.unwrap();
        assert!(ctx.mark_ready());
        root.inject_panic("owner").await.unwrap();
        wait_fenced(&ctx).await;
        assert_eq!(ctx.readiness().cause(), Some(Cause::ChildGone));
        let gone = root.inject_panic("owner").await;
        assert_eq!(
            gone,
            Err(DomainError::UnknownChild { child: "owner".to_owned() }),
            "a lost child is no target"
        );
        root.shutdown(Duration::from_secs(2)).await;
    }

    #[tokio::test]
    async fn an_orderly_stop_retires_the_group() {
        let ctx = DomainContext::<Test>::new(Arc::new(NoopObserver));
        let root = SupervisorHandle::start(ctx.clone()).await.unwrap();
        let group = TaskGroup::new();
        root.start_child(owner(group.clone(), Vec::new())).await.unwrap();
        assert!(ctx.mark_ready());
        root.stop_child("owner", Duration::from_secs(2)).await.unwrap();
        group.send(TaskOwnerMsg::Lost("after the stop"));
        assert!(group.is_retired());
        let rows = root.children().await.unwrap();
        assert_eq!(rows[0].status, ChildStatus::Stopped);
        assert!(ctx.readiness().is_ready(), "an expected end is no loss");
        root.shutdown(Duration::from_secs(2)).await;
    }
}
