//! What the loss of a supervised child means, and how a child stopped: the vocabulary shared by the
//! supervisor (which applies a policy) and the observer (which hears a loss).
//!
//! Owns: [`ChildPolicy`] and [`LossKind`]. Does not own applying them (`supervisor/`) or recording
//! them (`observer.rs`). Imports only `domain.rs`.

use crate::domain::{Code, Domain};

/// What the loss of a child means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildPolicy<D: Domain> {
    /// The loss fences readiness for good with this cause.
    Fence(D::NotReady),
    /// The loss stops the domain abnormally: the shutdown starts at once, and the exit is unclean.
    StopDomain(D::Abnormal),
    /// The loss changes nothing (a best-effort child).
    Tolerate,
}

impl<D: Domain> ChildPolicy<D> {
    /// A short text for tree listings: `fence <cause>`, `stop domain <cause>` or `tolerate`.
    pub fn describe(&self) -> String {
        match self {
            ChildPolicy::Fence(cause) => format!("fence {}", cause.as_str()),
            ChildPolicy::StopDomain(cause) => format!("stop domain {}", cause.as_str()),
            ChildPolicy::Tolerate => "tolerate".to_owned(),
        }
    }
}

/// How a child stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// It stopped or was killed (ractor `ActorTerminated`).
    Stopped,
    /// It panicked or returned an error (ractor `ActorFailed`). The error text is never reported: it
    /// may carry anything.
    Failed,
}
