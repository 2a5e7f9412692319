//! The audit committer's owner in the supervision tree (`audit_committer`; docs/architecture.md): a
//! [`TaskOwner`] into whose group the committer's loss callback reports a write or sync failure, or the
//! death of its sync thread; the owner then fails, and its supervisor stops the domain
//! (lifecycle.md §6.3, §7.5; audit-events.md §2.8: the gateway never serves writes it cannot audit).
//!
//! Owns the route of a committer loss into the tree. Does not own the committer, its thread or its files
//! (`committer.rs`, `mod.rs`); the audit flush stage (S7) stops this owner before it closes the audit, so the
//! orderly end of the committer is no loss.

use ptc_actors::{DomainError, TaskGroup, TaskOwner, TaskOwnerMsg};

use super::committer::CommitLoss;
use crate::codes::domain::{ChildPolicy, SupervisorHandle};
use crate::codes::AbnormalCause;

/// The name of the audit owner under the domain.
pub const AUDIT_COMMITTER: &str = "audit_committer";

/// The group through which the committer's loss callback reaches the owner, made before the committer
/// starts (stage 7) and attached when the owner starts (right after).
pub(crate) type AuditLossGroup = TaskGroup<TaskOwnerMsg>;

/// The committer's loss callback: it only delivers to the owner.
pub(crate) fn loss_callback(group: &AuditLossGroup) -> Box<dyn FnOnce(CommitLoss) + Send> {
    let group = group.clone();
    Box::new(move |loss| {
        group.send(TaskOwnerMsg::Lost(match loss {
            CommitLoss::WriteFailed => "an audit write or sync failed",
            CommitLoss::OwnerLost => "the audit committer thread was lost",
        }))
    })
}

/// Starts the audit owner under `domain`; its loss stops the domain.
pub(crate) async fn start(domain: &SupervisorHandle, group: AuditLossGroup) -> Result<(), DomainError> {
    let policy = ChildPolicy::StopDomain(AbnormalCause::AuditOwnerLost);
    let spec = TaskOwner::spec(AUDIT_COMMITTER, policy, (group, Vec::new()));
    domain.start_child(spec).await.map(|_| ())
}
