//! The one loss mechanism of every transport, stdio and Streamable HTTP alike (providers.md §12.1): the
//! fault published once, the cleanup-failure flag (providers.md §10.2, §12.2), the close that makes later
//! ends expected, and the [`TaskGroup`] through which every task of the transport reports its end to the
//! transport's owner actor (`owner.rs`).
//!
//! Owns: "lost" as a fact with its first fault, and delivering that fact and every task end to the
//! owner. Does not own what a loss does to requests (each transport seals its own table or session),
//! readiness (the owner's supervisor fences), or the close procedure.

use std::sync::OnceLock;

use tokio::sync::watch;

use ptc_actors::{TaskGroup, TaskReport};

use super::framing::Violation;

/// Why the transport was lost (providers.md §12.1), as the `transport` record's fault (providers.md §12.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossFault {
    TransportError,
    ProtocolError,
    ServerExit(i32),
    ServerSignal,
    StdoutEof,
}

/// What the owner publishes: the loss (once) and whether a cleanup failure was recorded.
#[derive(Clone)]
pub struct TransportEvents {
    pub loss: watch::Receiver<Option<LossFault>>,
    pub cleanup_failed: watch::Receiver<bool>,
}

/// What a transport's owner hears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OwnerEvent {
    /// A task of the transport ended or panicked.
    Task(TaskReport),
    /// The transport published its loss (providers.md §12.1).
    Lost,
}

/// The messages of an owner actor of a provider site (a transport's, `owner.rs`, or a model site's,
/// `model/owner.rs`): what the site's task group delivers, and the fault tests' panic.
pub(crate) enum OwnerMsg {
    Event(OwnerEvent),
    #[cfg(feature = "fault-injection")]
    Panic,
}

impl From<TaskReport> for OwnerEvent {
    fn from(report: TaskReport) -> Self {
        OwnerEvent::Task(report)
    }
}

/// The loss state of one transport.
pub(crate) struct LossState {
    loss: watch::Sender<Option<LossFault>>,
    /// The violation behind a `ProtocolError` loss, for the owner's log line (never a record: the
    /// `transport` record's keys are closed, providers.md §12.2).
    violation: OnceLock<Violation>,
    cleanup_failed: watch::Sender<bool>,
    closing: watch::Sender<bool>,
    tasks: TaskGroup<OwnerEvent>,
}

impl Default for LossState {
    fn default() -> Self {
        LossState {
            loss: watch::channel(None).0,
            violation: OnceLock::new(),
            cleanup_failed: watch::channel(false).0,
            closing: watch::channel(false).0,
            tasks: TaskGroup::new(),
        }
    }
}

impl LossState {
    /// A loss state whose tasks run in `tasks` (a transport whose parts started tasks before it existed:
    /// the HTTP pool's reaper and connection drivers).
    pub(crate) fn with_tasks(tasks: TaskGroup<OwnerEvent>) -> LossState {
        LossState { tasks, ..LossState::default() }
    }

    /// Publishes the loss with `fault` unless the transport is closing or already lost; the owner hears
    /// it. Returns true for the first loss. Callers seal their requests after this returns, so a waiter
    /// that sees its failure also sees why.
    pub(crate) fn lose(&self, fault: LossFault) -> bool {
        if self.is_closing() {
            return false;
        }
        let first = self.loss.send_if_modified(|current| {
            let first = current.is_none();
            if first {
                *current = Some(fault);
            }
            first
        });
        if first {
            self.tasks.send(OwnerEvent::Lost);
        }
        first
    }

    /// A protocol violation (providers.md §12.1): the loss with `ProtocolError`, keeping what was violated.
    /// The violation is kept before the loss is published, so the owner that hears the loss reads it; a
    /// violation after another fault is never read ([`LossState::violation`]).
    pub(crate) fn violate(&self, violation: Violation) -> bool {
        let _ = self.violation.set(violation);
        self.lose(LossFault::ProtocolError)
    }

    /// What was violated, when the loss was a protocol violation published through [`LossState::violate`].
    pub(crate) fn violation(&self) -> Option<Violation> {
        match self.fault() {
            Some(LossFault::ProtocolError) => self.violation.get().copied(),
            _ => None,
        }
    }

    /// The first fault, once lost.
    pub(crate) fn fault(&self) -> Option<LossFault> {
        *self.loss.borrow()
    }

    /// Records a cleanup failure (a settlement expiry, providers.md §10.2): the `transport` record says
    /// `transport_error` whatever happens later (providers.md §12.2).
    pub(crate) fn mark_cleanup_failed(&self) {
        self.cleanup_failed.send_replace(true);
    }

    pub(crate) fn cleanup_failed(&self) -> bool {
        *self.cleanup_failed.borrow()
    }

    /// The close began (providers.md §13.1 step 1): from now on no loss is published and the tasks' ends are
    /// expected, so the owner is told nothing more.
    pub(crate) fn begin_close(&self) {
        self.closing.send_replace(true);
        self.tasks.retire();
    }

    pub(crate) fn is_closing(&self) -> bool {
        *self.closing.borrow()
    }

    /// A receiver that turns true when the close begins.
    pub(crate) fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// A receiver of the loss.
    pub(crate) fn loss(&self) -> watch::Receiver<Option<LossFault>> {
        self.loss.subscribe()
    }

    /// The group every task of this transport is spawned in.
    pub(crate) fn tasks(&self) -> &TaskGroup<OwnerEvent> {
        &self.tasks
    }

    pub(crate) fn events(&self) -> TransportEvents {
        TransportEvents { loss: self.loss.subscribe(), cleanup_failed: self.cleanup_failed.subscribe() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{DecodeError, DecodeErrorKind};

    // providers.md §12.1–§12.2: the first fault wins; the violation is read only when that fault is the
    // protocol violation it explains.
    #[test]
    fn the_violation_is_the_one_behind_the_first_loss() {
        let not_json = DecodeError { kind: DecodeErrorKind::Syntax, offset: 0, line: 1, column: 1 };
        type Case<'a> = (&'a [Result<Violation, LossFault>], Option<LossFault>, Option<Violation>);
        let cases: [Case; 4] = [
            (
                &[Ok(Violation::NotJson(not_json))],
                Some(LossFault::ProtocolError),
                Some(Violation::NotJson(not_json)),
            ),
            (
                &[Ok(Violation::TooLong), Ok(Violation::UnissuedId)],
                Some(LossFault::ProtocolError),
                Some(Violation::TooLong),
            ),
            (&[Err(LossFault::StdoutEof), Ok(Violation::RepliesFull)], Some(LossFault::StdoutEof), None),
            (&[Err(LossFault::ProtocolError)], Some(LossFault::ProtocolError), None),
        ];
        for (steps, fault, violation) in cases {
            let life = LossState::default();
            for step in steps {
                match *step {
                    Ok(v) => life.violate(v),
                    Err(f) => life.lose(f),
                };
            }
            assert_eq!((life.fault(), life.violation()), (fault, violation), "{steps:?}");
        }
        // What the owner's line says of each violation: the rule, never the line's text.
        let said = [
            Violation::NotJson(not_json),
            Violation::NotAnEnvelope,
            Violation::TooLong,
            Violation::UnissuedId,
            Violation::NotTheAnswer,
            Violation::RepliesFull,
        ]
        .map(|v| v.to_string());
        assert_eq!(
            said,
            [
                "the line is not strict JSON: syntax at byte 0 (line 1, column 1)",
                "the message is not a JSON-RPC 2.0 request, notification or response",
                "the line is longer than 8,388,608 bytes",
                "a response to an id the gateway never issued, or an error with a null id",
                "a response that does not answer the request",
                "more than 64 replies to the server's requests wait for the writer",
            ]
        );
    }
}
