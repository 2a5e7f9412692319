//! The gateway's domain: binds the closed codes of this module to the generic runtime of `ptc_actors`
//! (docs/decisions.md, "The supervision tree").
//!
//! Owns [`GatewayDomain`], its `ptc_actors::Domain` implementation (which readiness cause a drain, an
//! abnormal stop or an unregistered child's loss records, which fence counts for the exit status, the
//! drain window, the unclean exit status 70 of lifecycle.md §2.2 and §7.4, and the stage table S1–S8
//! of lifecycle.md §7.3 with the bounds of lifecycle.md §7.2), and the
//! aliases through which the rest of the crate names the runtime's generic types. It does not decide
//! what a stage does (`startup::shutdown`) or when a cause applies (the owners).

use std::time::Duration;

use ptc_actors::shutdown::{ACTION_BOUND, HOOK_GRACE};
use ptc_actors::{Bound, Builtin, Domain, StageSpec};

use super::abnormal::AbnormalCause;
use super::readiness::NotReadyCause;
use super::stage::{
    StageId, AUDIT_CLOSE_BOUND, CLEANUP_WINDOW, DRAIN_WINDOW, EVENT_LOG_CLOSE_BOUND, TRANSPORT_CLOSE_WINDOW,
};

/// The gateway's domain, as the runtime's type parameter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct GatewayDomain;

impl Domain for GatewayDomain {
    type NotReady = NotReadyCause;
    type Abnormal = AbnormalCause;
    type Stage = StageId;

    /// Stop listeners (the first stage) records `shutdown` (audit-events.md §4.2).
    const DRAIN_CAUSE: NotReadyCause = NotReadyCause::Shutdown;
    /// "Any other supervised domain child" (lifecycle.md §6.3).
    const UNREGISTERED_CAUSE: NotReadyCause = NotReadyCause::OwnerLost;
    const ROOT_LOST: AbnormalCause = AbnormalCause::SupervisorLost;
    const DRAIN_WINDOW: Duration = DRAIN_WINDOW;
    /// lifecycle.md §2.2: 70 after an unclean shutdown (lifecycle.md §7.4) or an abnormal stop (lifecycle.md §7.5).
    const UNCLEAN_EXIT: u8 = 70;

    /// `audit_unavailable` for an audit cause, `shutdown` (the drain) otherwise (audit-events.md §4.2).
    fn abnormal_fence(cause: AbnormalCause) -> Option<NotReadyCause> {
        cause.is_audit().then_some(NotReadyCause::AuditUnavailable)
    }

    /// A provider cleanup failure, during serving or during provider cleanup (lifecycle.md §7.4); a fence
    /// caused only by the loss of a transport owner is deliberately not an incident.
    fn fence_counts_for_exit(cause: NotReadyCause) -> bool {
        cause == NotReadyCause::ProviderCleanupFailed
    }

    /// lifecycle.md §7.3 in order, with the deadlines of lifecycle.md §7.2. Stop listeners, quiesce,
    /// checkpoint events and a hook of drain runs only act ([`ACTION_BOUND`]); provider cleanup's hooks
    /// may close transports until the cleanup deadline + 9 s; the audit flush exists only with
    /// `private_audit` and is skipped when the audit caused the stop (lifecycle.md §7.5); checkpoint events
    /// does not count for the exit status (lifecycle.md §7.4).
    fn stages() -> Vec<StageSpec<GatewayDomain>> {
        use StageId::*;
        let spec = |id: StageId, bound| {
            let spec = StageSpec::new(id, bound);
            if id.counts_for_exit() {
                spec
            } else {
                spec.not_counted()
            }
        };
        vec![
            spec(StopListeners, Bound::FromStart(ACTION_BOUND)).builtin(Builtin::BeginDrain),
            spec(Quiesce, Bound::FromStart(ACTION_BOUND)).builtin(Builtin::StopAdmitting),
            spec(DrainRuns, Bound::FromBuiltin(ACTION_BOUND)).builtin(Builtin::DrainAdmitted),
            spec(CheckpointEvents, Bound::FromStart(ACTION_BOUND)),
            spec(ProviderCleanup, Bound::FromCleanupDeadline(TRANSPORT_CLOSE_WINDOW + HOOK_GRACE))
                .builtin(Builtin::StartCleanup(CLEANUP_WINDOW)),
            spec(AdmissionClean, Bound::FromCleanupDeadline(HOOK_GRACE)).builtin(Builtin::AwaitAdmissionIdle),
            spec(AuditFlush, Bound::FromStart(AUDIT_CLOSE_BOUND))
                .optional()
                .skip_on_abnormal(AbnormalCause::is_audit),
            spec(EventLogClose, Bound::FromStart(EVENT_LOG_CLOSE_BOUND + HOOK_GRACE)),
        ]
    }
}

/// The runtime's generic types, for the gateway's domain.
pub type DomainContext = ptc_actors::DomainContext<GatewayDomain>;
pub type DomainHandle = ptc_actors::DomainHandle<GatewayDomain>;
pub type SupervisorHandle = ptc_actors::SupervisorHandle<GatewayDomain>;
pub type ChildPolicy = ptc_actors::ChildPolicy<GatewayDomain>;
pub type ChildSpec<A> = ptc_actors::ChildSpec<A, GatewayDomain>;
pub type ChildInfo = ptc_actors::ChildInfo<GatewayDomain>;
pub type TreeNode = ptc_actors::TreeNode<GatewayDomain>;
pub type Readiness = ptc_actors::Readiness<GatewayDomain>;
pub type ShutdownTrigger = ptc_actors::ShutdownTrigger<GatewayDomain>;
pub type TriggerState = ptc_actors::TriggerState<GatewayDomain>;
pub type ShutdownPlan = ptc_actors::ShutdownPlan<GatewayDomain>;
pub type ShutdownReport = ptc_actors::ShutdownReport<GatewayDomain>;
pub type StageContext = ptc_actors::StageContext<GatewayDomain>;

/// The gateway's name for enabling the audit flush stage.
pub trait PlanExt {
    /// With `private_audit`, the audit flush runs (and is recorded); without, it is skipped
    /// (lifecycle.md §7.3).
    fn with_private_audit(self, private_audit: bool) -> Self;
}

impl PlanExt for ShutdownPlan {
    fn with_private_audit(self, private_audit: bool) -> Self {
        self.with_enabled(StageId::AuditFlush, private_audit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_runs_s1_to_s8_in_order_and_counts_all_but_s4() {
        let table = GatewayDomain::stages();
        let ids: Vec<StageId> = table.iter().map(|s| s.id).collect();
        assert_eq!(ids, StageId::ALL);
        let uncounted: Vec<StageId> = table.iter().filter(|s| !s.counts_for_exit).map(|s| s.id).collect();
        assert_eq!(uncounted, [StageId::CheckpointEvents]);
        let optional: Vec<StageId> = table.iter().filter(|s| s.optional).map(|s| s.id).collect();
        assert_eq!(optional, [StageId::AuditFlush]);
        let audit_skip = table[6].skip_on_abnormal.expect("S7 has a skip rule");
        let skipped: Vec<bool> = AbnormalCause::ALL.iter().map(|c| audit_skip(*c)).collect();
        assert_eq!(skipped, [true, true, false, false, false]);
    }

    #[test]
    fn the_runtime_rules() {
        let fences: Vec<Option<NotReadyCause>> =
            AbnormalCause::ALL.iter().map(|c| GatewayDomain::abnormal_fence(*c)).collect();
        let audit = Some(NotReadyCause::AuditUnavailable);
        assert_eq!(fences, [audit, audit, None, None, None]);
        let counted: Vec<NotReadyCause> =
            NotReadyCause::ALL.into_iter().filter(|c| GatewayDomain::fence_counts_for_exit(*c)).collect();
        assert_eq!(counted, [NotReadyCause::ProviderCleanupFailed]);
    }
}
