//! The transport of one acquisition behind one closed enum (providers.md §3 "transport"): what the
//! provider runtime needs of any transport — reserve an in-flight slot, issue one `tools/call`, report
//! loss, close, hand over the stderr tail.
//!
//! Two variants: stdio (`transport.rs`) and Streamable HTTP (`providers::http`), with the same
//! reserve/call/close/events shape, so the runtime has one call path for both. Does not own admission,
//! deadlines or fencing (`runtime.rs`), nor acquisition (`acquire.rs`, `http::acquire`).

use std::future::Future;

use tokio::sync::OwnedSemaphorePermit;

use super::failure::{CallFailure, Dispatch, FailureClass};
use super::http::HttpTransport;
use super::provider_call::{self, CallOutcome, CallRequest};
use super::result::CallError;
use super::transport::{InflightSlot, StdioTransport, TransportEnd, TransportEvents};

/// One acquisition's transport.
pub enum Upstream {
    /// Boxed: the stdio owner is far larger than the HTTP handle (an `Arc`).
    Stdio(Box<StdioTransport>),
    Http(HttpTransport),
}

/// An in-flight slot of some transport (providers.md §8.1 step 4).
pub enum Reserved {
    Stdio(InflightSlot),
    Http(OwnedSemaphorePermit),
}

impl Upstream {
    /// Sealed: closing, lost or fenced (providers.md §8.1 step 3).
    pub fn is_sealed(&self) -> bool {
        match self {
            Upstream::Stdio(t) => t.is_sealed(),
            Upstream::Http(t) => t.is_sealed(),
        }
    }

    /// providers.md §8.1 steps 3–4.
    pub fn reserve(&self) -> Result<Reserved, CallFailure> {
        match self {
            Upstream::Stdio(t) => t.reserve().map(Reserved::Stdio),
            Upstream::Http(t) => t.reserve().map(Reserved::Http),
        }
    }

    /// providers.md §8.1 steps 6–8 with a reserved slot.
    pub async fn call(
        &self,
        slot: Reserved,
        request: CallRequest<'_>,
        cancel: impl Future<Output = ()>,
    ) -> CallOutcome {
        match (self, slot) {
            (Upstream::Stdio(t), Reserved::Stdio(slot)) => {
                provider_call::call_reserved(t, slot, request, cancel).await
            }
            (Upstream::Http(t), Reserved::Http(permit)) => t.call_reserved(permit, request, cancel).await,
            // A slot of the other transport cannot be reserved on this one: nothing sent.
            _ => CallOutcome::unsent(Err(CallError {
                failure: CallFailure::new(FailureClass::McpTransportError, Dispatch::False),
                tool_content: None,
            })),
        }
    }

    /// Loss and cleanup-failure notifications (providers.md §12.1).
    pub fn events(&self) -> TransportEvents {
        match self {
            Upstream::Stdio(t) => t.events(),
            Upstream::Http(t) => t.events(),
        }
    }

    /// The close procedure (providers.md §13.1); only the first call acts.
    pub async fn close(&self) -> TransportEnd {
        match self {
            Upstream::Stdio(t) => t.close(false).await,
            Upstream::Http(t) => t.close().await,
        }
    }

    /// The stderr ring (stdio only; HTTP transports have no stderr, audit-events.md §3.8).
    pub fn stderr_tail(&self) -> Option<(Vec<u8>, bool)> {
        match self {
            Upstream::Stdio(t) => Some(t.stderr_tail()),
            Upstream::Http(_) => None,
        }
    }

    /// The loss state shared by both transports (`loss.rs`): the owner attaches to its task group.
    pub(crate) fn life(&self) -> &super::loss::LossState {
        match self {
            Upstream::Stdio(t) => t.life(),
            Upstream::Http(t) => t.life(),
        }
    }

    /// The owner lost a task of this transport (providers.md §12.1): an unclassified loss.
    pub(crate) fn lose_owner(&self) {
        match self {
            Upstream::Stdio(t) => t.lose_owner(),
            Upstream::Http(t) => t.lose_owner(),
        }
    }

    /// The child's process group (stdio only).
    pub fn pid(&self) -> Option<i32> {
        match self {
            Upstream::Stdio(t) => t.pid(),
            Upstream::Http(_) => None,
        }
    }
}
