//! The owner of the event log's writer thread in the supervision tree (`event_logger`; docs/architecture.md):
//! a [`TaskOwner`] whose one task waits for the writer thread's end, so that the thread's end while the
//! owner runs is the owner's loss, which its supervisor tolerates: logging never changes readiness
//! (lifecycle.md §6.3, audit-events.md §3.7).
//!
//! Owns the watch of the writer thread. Does not own the queue, the thread or the files
//! (`ptc_actors::event_logger`, `log.rs`); the event log close stage (S8) stops this owner before it closes
//! the log, so the orderly end of the thread is no loss.

use ptc_actors::{DomainError, TaskGroup, TaskOwner};

use super::EventLog;
use crate::codes::domain::{ChildPolicy, SupervisorHandle};

/// The name of the event-log owner under the domain.
pub const EVENT_LOGGER: &str = "event_logger";

/// Starts the event-log owner under `domain`; its loss is tolerated.
pub(crate) async fn start(domain: &SupervisorHandle, log: EventLog) -> Result<(), DomainError> {
    let watch = Box::pin(async move { log.writer_ended().await });
    let args = (TaskGroup::new(), vec![("event_log_writer", watch as _)]);
    let spec = TaskOwner::spec(EVENT_LOGGER, ChildPolicy::Tolerate, args);
    domain.start_child(spec).await.map(|_| ())
}
