//! The closed outcomes of a call, its dispatch state, their precedence and the fixed texts
//! (execution.md §6, §7.3).
//!
//! Owns the vocabulary every later stage (the `/mcp` stream, audit records, the PCC front) shares. It does
//! not decide when a condition holds: the call driver observes the run and the connection and asks
//! [`Outcome::strongest`] which condition wins.

use crate::config::manifest::Effect;

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

    /// The rank of an activated call's outcome in execution.md §6.3 (higher wins). Outcomes that cannot
    /// follow an activation rank lowest.
    fn rank(self) -> u8 {
        match self {
            Outcome::CleanupFailed => 7,
            Outcome::Cancelled => 6,
            Outcome::PublicationFailed => 5,
            Outcome::InternalError => 4,
            Outcome::InvalidResult => 3,
            Outcome::ExecutionFailed => 2,
            Outcome::Success => 1,
            Outcome::InvalidInput | Outcome::Busy | Outcome::AdmissionUnavailable => 0,
        }
    }

    /// Of two conditions that both apply to an activated call, the one execution.md §6.3 keeps.
    pub fn strongest(self, other: Outcome) -> Outcome {
        if other.rank() > self.rank() {
            other
        } else {
            self
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

/// The fixed texts of execution.md §7.3.
pub mod texts {
    /// Rule 1: an activated write call that did not succeed.
    pub const WRITE: &str = "Operation may have changed data; do not retry automatically";
    /// Rule 2.
    pub const INVALID_INPUT: &str = "Tool input did not satisfy its contract";
    /// Rule 3.
    pub const CANCELLED: &str = "Tool execution was cancelled";
    /// Rule 4.
    pub const FAILED: &str = "Tool execution failed";
}

/// The first content block of a tool error: the first rule of execution.md §7.3 that applies. Called only
/// for outcomes that are answered with a tool error.
pub fn fixed_text(effect: Effect, dispatch: Dispatch, outcome: Outcome) -> &'static str {
    if effect == Effect::Write && dispatch != Dispatch::False {
        return texts::WRITE;
    }
    match outcome {
        Outcome::InvalidInput => texts::INVALID_INPUT,
        Outcome::Cancelled => texts::CANCELLED,
        _ => texts::FAILED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_follows_the_list_of_section_6_3() {
        let order = [
            Outcome::CleanupFailed,
            Outcome::Cancelled,
            Outcome::PublicationFailed,
            Outcome::InternalError,
            Outcome::InvalidResult,
            Outcome::ExecutionFailed,
            Outcome::Success,
        ];
        for (i, high) in order.iter().enumerate() {
            for low in &order[i..] {
                assert_eq!(high.strongest(*low), *high, "{high:?} over {low:?}");
                assert_eq!(low.strongest(*high), *high, "{high:?} over {low:?}");
            }
        }
    }

    #[test]
    fn fixed_text_rules() {
        use Dispatch::*;
        use Effect::*;
        use Outcome::*;
        let cases = [
            (Write, True, Cancelled, texts::WRITE),
            (Write, Unknown, InternalError, texts::WRITE),
            (Write, True, InvalidResult, texts::WRITE),
            (Write, False, InvalidInput, texts::INVALID_INPUT),
            (Read, False, InvalidInput, texts::INVALID_INPUT),
            (Read, True, Cancelled, texts::CANCELLED),
            (Read, True, ExecutionFailed, texts::FAILED),
            (Read, True, InvalidResult, texts::FAILED),
            (Read, Unknown, CleanupFailed, texts::FAILED),
            (Read, Unknown, InternalError, texts::FAILED),
        ];
        for (effect, dispatch, outcome, text) in cases {
            assert_eq!(fixed_text(effect, dispatch, outcome), text, "{effect:?} {dispatch:?} {outcome:?}");
        }
    }

    #[test]
    fn wire_spellings() {
        assert_eq!(Outcome::AdmissionUnavailable.as_str(), "admission_unavailable");
        assert_eq!(Outcome::PublicationFailed.as_str(), "publication_failed");
        assert_eq!(Dispatch::Unknown.as_str(), "unknown");
    }
}
