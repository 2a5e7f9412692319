//! The owner of the event log's writer thread in the supervision tree (`event_logger`; docs/architecture.md):
//! it watches the thread it owns, and the thread's end while the owner runs is the owner's loss, which its
//! supervisor tolerates: logging never changes readiness (lifecycle.md §6.3, audit-events.md §3.7).
//!
//! Owns the watch of the writer thread. Does not own the queue, the thread or the files
//! (`ptc_actors::event_logger`, `log.rs`); S8 stops this owner before it closes the log, so the orderly
//! end of the thread is no loss.

use crate::codes::domain::{ChildPolicy, ChildSpec, SupervisorHandle};
use ptc_actors::{DomainError, TaskGroup, TaskReport};
use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::EventLog;

/// The name of the event-log owner under the domain.
pub const EVENT_LOGGER: &str = "event_logger";

/// The owner actor; its state is the group holding the watch task.
pub(crate) struct EventLoggerOwner;

pub(crate) enum EventLoggerMsg {
    /// The watched writer thread ended.
    WriterEnded(TaskReport),
    /// The fault tests' panic in the owner's own logic.
    Panic,
}

impl From<TaskReport> for EventLoggerMsg {
    fn from(report: TaskReport) -> Self {
        EventLoggerMsg::WriterEnded(report)
    }
}

impl Actor for EventLoggerOwner {
    type Msg = EventLoggerMsg;
    type State = TaskGroup<EventLoggerMsg>;
    type Arguments = EventLog;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        log: EventLog,
    ) -> Result<Self::State, ActorProcessingErr> {
        let group = TaskGroup::new();
        group.attach(Box::new(move |msg| {
            let _ = myself.send_message(msg);
        }));
        drop(group.spawn("event_log_writer", async move { log.writer_ended().await }));
        Ok(group)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _group: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            EventLoggerMsg::WriterEnded(report) => {
                tracing::warn!(task = report.task, end = ?report.end, "the event log's writer ended");
                Err("the event log's writer thread ended".into())
            }
            EventLoggerMsg::Panic => Err("injected fault: a panic in the event-log owner".into()),
        }
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        group: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        group.retire();
        Ok(())
    }
}

/// Starts the event-log owner under `domain`; its loss is tolerated.
pub(crate) async fn start(domain: &SupervisorHandle, log: EventLog) -> Result<(), DomainError> {
    let spec = ChildSpec::new(EVENT_LOGGER, ChildPolicy::Tolerate, EventLoggerOwner, log)
        .panic_message(|| EventLoggerMsg::Panic);
    domain.start_child(spec).await.map(|_| ())
}
