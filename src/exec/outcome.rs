//! The precedence of the closed call outcomes and the fixed texts (execution.md §6.3, §7.3).
//!
//! Owns the rules every later stage (the `/mcp` stream, the PCC front) shares. The outcome and dispatch
//! codes themselves are shared with the audit records and live in `crate::codes::outcome` (re-exported
//! here). It does not decide when a condition holds: the call driver observes the run and the connection
//! and asks [`Outcome::strongest`] which condition wins.

pub use crate::codes::outcome::{Dispatch, Outcome};
use crate::config::manifest::Effect;

// The precedence is execution's rule, so its inherent methods live here rather than with the codes.
impl Outcome {
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
}
