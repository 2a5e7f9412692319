//! The message side of one HTTP acquisition's exchanges (providers.md §4.3 ids, providers.md §5.2): request
//! ids 1, 2, 3, … never reused, the deterministic JSON-RPC bodies, and the headers each era puts on them.
//!
//! This file owns what is sent; `exchange.rs` sends it. It does not wait, cancel or keep session state.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hyper::HeaderMap;
use serde_json::Value;

use super::exchange::{self, Answer, Ctx, Post, Progress, MESSAGE_BOUND};
use super::headers::{request_headers, EraHeaders};
use crate::providers::outgoing::message;

/// The shared sending side.
pub struct Wire {
    pub ctx: Arc<Ctx>,
    last_id: AtomicU64,
}

/// The legacy header state of one request: negotiated version and the session id it carries.
#[derive(Clone, Copy)]
pub struct LegacyHeaders<'a> {
    pub version: &'a str,
    pub session: Option<&'a str>,
}

impl<'a> LegacyHeaders<'a> {
    pub fn era(self) -> EraHeaders<'a> {
        EraHeaders::Legacy { version: self.version, session: self.session }
    }
}

impl Wire {
    pub fn new(ctx: Ctx) -> Wire {
        Wire { ctx: Arc::new(ctx), last_id: AtomicU64::new(0) }
    }

    /// The transport's next id (providers.md §4.3).
    pub fn next_id(&self) -> u64 {
        self.last_id.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Every header of one POST; `None` only on a defect (see `headers.rs`).
    pub fn headers(&self, era: &EraHeaders<'_>, traceparent: Option<&str>) -> Option<HeaderMap> {
        let ctx = &self.ctx;
        request_headers(&ctx.pool.endpoint().authority, &ctx.gateway_version, &ctx.statics, era, traceparent)
    }

    /// An acquisition request (never cancelled: the caller drops it at the deadline, which closes its
    /// connection). Legacy requests answer server requests on their stream with the same headers.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        era: EraHeaders<'_>,
        probe: bool,
    ) -> Answer {
        let carried_session = matches!(era, EraHeaders::Legacy { session: Some(_), .. });
        let legacy = matches!(era, EraHeaders::Legacy { .. } | EraHeaders::Initialize);
        let Some(headers) = self.headers(&era, None) else { return defect() };
        let reply_headers = legacy.then(|| headers.clone());
        let id = self.next_id();
        let post = Post {
            headers,
            body: message(Some(id), method, params),
            id: Some(id),
            max_bytes: MESSAGE_BOUND,
            result_bound: false,
            carried_session,
            reply_headers,
            probe,
        };
        exchange::post(&self.ctx, post, &Progress::default()).await
    }

    /// A notification (`notifications/initialized`), answered by any 2xx.
    pub async fn notify(&self, method: &str, era: EraHeaders<'_>) -> Answer {
        let carried_session = matches!(era, EraHeaders::Legacy { session: Some(_), .. });
        let Some(headers) = self.headers(&era, None) else { return defect() };
        let post = Post {
            headers,
            body: message(None, method, None),
            id: None,
            max_bytes: MESSAGE_BOUND,
            result_bound: false,
            carried_session,
            reply_headers: None,
            probe: false,
        };
        exchange::post(&self.ctx, post, &Progress::default()).await
    }
}

fn defect() -> Answer {
    use super::super::failure::{CallFailure, Dispatch, FailureClass};
    Answer::Failed {
        failure: CallFailure::new(FailureClass::McpTransportError, Dispatch::False),
        session_lost: false,
    }
}
