//! A failed upstream request as a mission sees it (providers.md §8.3): one failure class and one dispatch
//! state.
//!
//! This file owns the pair and its message. The closed classes and dispatch states themselves are codes
//! shared with the event records and the application runtime (`crate::codes::provider`), re-exported here.

pub use crate::codes::provider::{Dispatch, FailureClass, Phase};

/// A failed upstream request as a mission sees it (providers.md §8.3): class, dispatch state, and nothing
/// from the upstream (its messages, bodies and stderr never travel; `mcp_tool_error` content is carried by
/// the call result type instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallFailure {
    pub class: FailureClass,
    pub dispatch: Dispatch,
}

impl CallFailure {
    pub fn new(class: FailureClass, dispatch: Dispatch) -> CallFailure {
        CallFailure { class, dispatch }
    }

    /// The fixed message of the class; a call-phase class always has one.
    pub fn message(&self) -> &'static str {
        self.class.fixed_message().unwrap_or("Provider unavailable")
    }

    pub fn retryable(&self) -> bool {
        self.class.retryable()
    }
}
