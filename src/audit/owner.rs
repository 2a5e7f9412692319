//! The audit committer's owner in the supervision tree (`audit_committer`; docs/architecture.md): the
//! committer's sync thread reports a write or sync failure, or its own death, through the committer's
//! loss callback into this owner's group; the owner then fails, and its supervisor stops the domain
//! (lifecycle.md §6.3, §7.5; audit-events.md §2.8: the gateway never serves writes it cannot audit).
//!
//! Owns the reaction to a committer loss. Does not own the committer, its thread or its files
//! (`ptc_actors::committer`, `mod.rs`); S7 stops this owner before it closes the audit, so the orderly end
//! of the committer is no loss.

use crate::codes::domain::{ChildPolicy, ChildSpec, SupervisorHandle};
use crate::codes::AbnormalCause;
use ptc_actors::TaskReport;
use ptc_actors::{CommitLoss, DomainError, TaskGroup};
use ractor::{Actor, ActorProcessingErr, ActorRef};

/// The name of the audit owner under the domain.
pub const AUDIT_COMMITTER: &str = "audit_committer";

/// What the owner hears.
pub(crate) enum AuditOwnerMsg {
    /// The committer reported its loss.
    Lost(CommitLoss),
    /// A task of the owner's group ended (it spawns none today; a task group's events include them).
    Task(TaskReport),
    /// The fault tests' panic in the owner's own logic.
    Panic,
}

impl From<TaskReport> for AuditOwnerMsg {
    fn from(report: TaskReport) -> Self {
        AuditOwnerMsg::Task(report)
    }
}

/// The group through which the committer's loss callback reaches the owner, made before the committer
/// starts (stage 7) and attached when the owner starts (right after).
pub(crate) type AuditLossGroup = TaskGroup<AuditOwnerMsg>;

/// The committer's loss callback: it only delivers to the owner.
pub(crate) fn loss_callback(group: &AuditLossGroup) -> Box<dyn FnOnce(CommitLoss) + Send> {
    let group = group.clone();
    Box::new(move |loss| group.send(AuditOwnerMsg::Lost(loss)))
}

pub(crate) struct AuditOwner;

impl Actor for AuditOwner {
    type Msg = AuditOwnerMsg;
    type State = AuditLossGroup;
    type Arguments = AuditLossGroup;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        group: AuditLossGroup,
    ) -> Result<Self::State, ActorProcessingErr> {
        group.attach(Box::new(move |msg| {
            let _ = myself.send_message(msg);
        }));
        Ok(group)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _group: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            AuditOwnerMsg::Lost(loss) => {
                let what = match loss {
                    CommitLoss::WriteFailed => "an audit write or sync failed",
                    CommitLoss::OwnerLost => "the audit committer thread was lost",
                };
                tracing::error!("{what}; stopping");
                Err(what.into())
            }
            AuditOwnerMsg::Task(report) => {
                tracing::error!(task = report.task, "an audit task ended; stopping");
                Err("an audit task ended".into())
            }
            AuditOwnerMsg::Panic => Err("injected fault: a panic in the audit owner".into()),
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

/// Starts the audit owner under `domain`; its loss stops the domain.
pub(crate) async fn start(domain: &SupervisorHandle, group: AuditLossGroup) -> Result<(), DomainError> {
    let policy = ChildPolicy::StopDomain(AbnormalCause::AuditOwnerLost);
    let spec =
        ChildSpec::new(AUDIT_COMMITTER, policy, AuditOwner, group).panic_message(|| AuditOwnerMsg::Panic);
    domain.start_child(spec).await.map(|_| ())
}
