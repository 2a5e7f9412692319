//! The closed outcomes of a call and its dispatch state (execution.md §6.1, §6.2): the same codes appear
//! in the `/mcp` and PCC results and in audit records.
//!
//! Owns the variants and their wire spellings. It does not own their precedence or the fixed texts
//! (`exec::outcome`), nor decide which outcome a call gets (the call driver of `exec`). Here
//! rather than in `exec` because the audit records (`audit`) name the same codes.

/// The ten outcome codes of execution.md §6.1. The set is closed; the same codes appear in audit records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Success,
    InvalidInput,
    ExecutionFailed,
    InvalidResult,
    Cancelled,
    Busy,
    AdmissionUnavailable,
    PublicationFailed,
    CleanupFailed,
    InternalError,
}

impl Outcome {
    /// The wire spelling (execution.md §6.1, audit-events.md).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::InvalidInput => "invalid_input",
            Outcome::ExecutionFailed => "execution_failed",
            Outcome::InvalidResult => "invalid_result",
            Outcome::Cancelled => "cancelled",
            Outcome::Busy => "busy",
            Outcome::AdmissionUnavailable => "admission_unavailable",
            Outcome::PublicationFailed => "publication_failed",
            Outcome::CleanupFailed => "cleanup_failed",
            Outcome::InternalError => "internal_error",
        }
    }
}

/// Whether anything was dispatched for the call (execution.md §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dispatch {
    /// Activation did not happen: no application code ran and no upstream request was issued.
    False,
    /// Activation happened and the run settled.
    True,
    /// Activation happened or may have, and settlement cannot be established.
    Unknown,
}

impl Dispatch {
    /// The wire spelling: `"true"`, `"false"`, `"unknown"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dispatch::False => "false",
            Dispatch::True => "true",
            Dispatch::Unknown => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_spellings() {
        assert_eq!(Outcome::AdmissionUnavailable.as_str(), "admission_unavailable");
        assert_eq!(Outcome::PublicationFailed.as_str(), "publication_failed");
        assert_eq!(Dispatch::Unknown.as_str(), "unknown");
    }
}

super::serialize_as_str!(Outcome, Dispatch);
