//! The `not_ready` causes of the readiness record (audit-events.md §4.2).
//!
//! Owns the variants, their order and their wire spelling, and the compact code the runtime keeps the
//! first cause as (`ptc_actors::Code`). It does not decide when a cause applies: the owners that fence
//! readiness do, and the rules the runtime applies to these causes are in [`super::domain`].

use ptc_actors::Code;

/// Why the domain stopped being ready (audit-events.md §4.2, the `not_ready` causes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NotReadyCause {
    /// A transport owner of a provider-bearing tool was lost (providers.md §12.1).
    ProviderRuntimeLost,
    /// A detached provider request missed its settlement deadline (providers.md §10.2).
    ProviderCleanupFailed,
    /// Run admission was fenced, or the request-admission owner was lost.
    AdmissionLost,
    /// An audit write or sync failed, or the audit owner was lost (also stops the domain).
    AuditUnavailable,
    /// Any other supervised owner was lost (credentials, provider-call admission, any other child).
    OwnerLost,
    /// A drain began, or the domain stopped abnormally for a listener loss or a supervisor panic.
    Shutdown,
}

impl NotReadyCause {
    /// Every cause, in the order of audit-events.md §4.2 (for tables and tests).
    pub const ALL: [NotReadyCause; 6] = [
        NotReadyCause::ProviderRuntimeLost,
        NotReadyCause::ProviderCleanupFailed,
        NotReadyCause::AdmissionLost,
        NotReadyCause::AuditUnavailable,
        NotReadyCause::OwnerLost,
        NotReadyCause::Shutdown,
    ];

    /// The wire spelling of the cause (audit-events.md §4.2).
    pub fn as_str(self) -> &'static str {
        match self {
            NotReadyCause::ProviderRuntimeLost => "provider_runtime_lost",
            NotReadyCause::ProviderCleanupFailed => "provider_cleanup_failed",
            NotReadyCause::AdmissionLost => "admission_lost",
            NotReadyCause::AuditUnavailable => "audit_unavailable",
            NotReadyCause::OwnerLost => "owner_lost",
            NotReadyCause::Shutdown => "shutdown",
        }
    }
}

impl Code for NotReadyCause {
    const ALL: &'static [NotReadyCause] = &NotReadyCause::ALL;

    fn as_str(self) -> &'static str {
        NotReadyCause::as_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cause_spellings_and_codes_round_trip() {
        let spelled: Vec<&str> = NotReadyCause::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            spelled,
            [
                "provider_runtime_lost",
                "provider_cleanup_failed",
                "admission_lost",
                "audit_unavailable",
                "owner_lost",
                "shutdown"
            ]
        );
        for cause in NotReadyCause::ALL {
            assert_eq!(<NotReadyCause as Code>::from_code(Code::to_code(cause)), Some(cause));
            assert_eq!(Code::as_str(cause), cause.as_str());
        }
        assert_eq!(<NotReadyCause as Code>::from_code(0), None);
    }
}

super::serialize_as_str!(NotReadyCause);
