//! The causes of an abnormal domain stop (lifecycle.md §7.5).
//!
//! Owns the variants, their wire spelling and which of them are the audit's. It does not decide when a
//! cause applies (the children's loss policies, declared where they start, and the audit's commit
//! loss do); what the runtime does with an audit cause is in [`super::domain`].

use ptc_actors::Code;

/// Why the domain stopped abnormally (lifecycle.md §7.5). The set is closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbnormalCause {
    /// The audit owner stopped unexpectedly.
    AuditOwnerLost,
    /// An audit write or sync failed (audit-events.md §2.8).
    AuditWriteFailed,
    /// The HTTP listener stopped unexpectedly.
    ListenerLost,
    /// The PCC listener stopped unexpectedly.
    PccListenerLost,
    /// The domain supervisor's own logic failed (a panic or an error in its handler).
    SupervisorLost,
}

impl AbnormalCause {
    /// Every cause.
    pub const ALL: [AbnormalCause; 5] = [
        AbnormalCause::AuditOwnerLost,
        AbnormalCause::AuditWriteFailed,
        AbnormalCause::ListenerLost,
        AbnormalCause::PccListenerLost,
        AbnormalCause::SupervisorLost,
    ];

    /// A stable name for logs and tests.
    pub fn as_str(self) -> &'static str {
        match self {
            AbnormalCause::AuditOwnerLost => "audit_owner_lost",
            AbnormalCause::AuditWriteFailed => "audit_write_failed",
            AbnormalCause::ListenerLost => "listener_lost",
            AbnormalCause::PccListenerLost => "pcc_listener_lost",
            AbnormalCause::SupervisorLost => "supervisor_lost",
        }
    }

    /// True when the audit is the cause: then shutdown skips the audit flush (lifecycle.md §7.5) and
    /// readiness records `audit_unavailable` rather than `shutdown` (audit-events.md §4.2).
    pub fn is_audit(self) -> bool {
        matches!(self, AbnormalCause::AuditOwnerLost | AbnormalCause::AuditWriteFailed)
    }
}

impl Code for AbnormalCause {
    const ALL: &'static [AbnormalCause] = &AbnormalCause::ALL;

    fn as_str(self) -> &'static str {
        AbnormalCause::as_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_causes_are_marked() {
        let audit: Vec<(&str, bool)> =
            AbnormalCause::ALL.iter().map(|c| (c.as_str(), c.is_audit())).collect();
        assert_eq!(
            audit,
            [
                ("audit_owner_lost", true),
                ("audit_write_failed", true),
                ("listener_lost", false),
                ("pcc_listener_lost", false),
                ("supervisor_lost", false)
            ]
        );
    }
}
