//! One model request over HTTP (models.md §3–§5): a connection from the site's warm pool, the exact POST,
//! the status class, the bounded body and the answer, under a deadline and the run's cancellation.
//!
//! Owns the exchange and how far it got (its dispatch state). Dropping the exchange future drops its
//! connection, which closes it: that is how a timeout or a cancellation stops a request in flight
//! (models.md §5.2). It does not admit calls or count them (the provider runtime does) and never retries:
//! a request hyper hands back unsent is sent once on a fresh connection, which is not a retry because no
//! byte of it left.

use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, USER_AGENT};
use hyper::{HeaderMap, Request, Uri};
use tokio::time::Instant;

use super::chat::{self, ChatAnswer, MAX_RESPONSE_BYTES};
use super::mismatch::AnswerMismatch;
use crate::codes::model::ModelFailure;
use crate::codes::provider::Dispatch;
use crate::http::soon::within;
use crate::providers::http::pool::{Conn, Pool, SendFailure};

/// How long a finished exchange waits for its connection to be reusable before dropping it.
const READY_BOUND: Duration = Duration::from_millis(100);

/// A failed request: the class and how far the request got.
pub type ModelError = (ModelFailure, Dispatch);

/// A failed request as the client saw it: the class and dispatch, and for a `model_protocol_error` the rule
/// of models.md §4.3 the body broke, which only the debug log shows (models.md §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failed {
    pub error: ModelError,
    pub mismatch: Option<AnswerMismatch>,
}

impl From<ModelError> for Failed {
    fn from(error: ModelError) -> Failed {
        Failed { error, mismatch: None }
    }
}

/// How far one request got (models.md §5.1): nothing written, possibly written, a status received.
#[derive(Default)]
struct Progress(AtomicU8);

impl Progress {
    const WRITTEN: u8 = 1;
    const STATUS: u8 = 2;

    fn set(&self, state: u8) {
        self.0.store(state, Ordering::SeqCst);
    }

    fn dispatch(&self) -> Dispatch {
        match self.0.load(Ordering::SeqCst) {
            0 => Dispatch::False,
            Self::WRITTEN => Dispatch::Unknown,
            _ => Dispatch::True,
        }
    }
}

/// The answer's body as it arrives: a body that comes in one frame (the usual case) is kept as hyper
/// handed it, and only a body in several frames is copied together.
#[derive(Default)]
enum Received {
    #[default]
    Nothing,
    One(Bytes),
    Joined(Vec<u8>),
}

impl Received {
    fn len(&self) -> usize {
        match self {
            Received::Nothing => 0,
            Received::One(one) => one.len(),
            Received::Joined(joined) => joined.len(),
        }
    }

    fn push(&mut self, data: Bytes) {
        *self = match std::mem::take(self) {
            Received::Nothing => Received::One(data),
            Received::One(one) => Received::Joined([&one[..], &data[..]].concat()),
            Received::Joined(mut joined) => {
                joined.extend_from_slice(&data);
                Received::Joined(joined)
            }
        };
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Received::Nothing => &[],
            Received::One(one) => one,
            Received::Joined(joined) => joined,
        }
    }
}

/// The HTTP side of one model site.
pub struct ModelClient {
    pool: Pool,
    /// The request target: the endpoint's path with `/chat/completions` appended (models.md §4.1), parsed
    /// once (`None`, sent as `/`, when it does not parse); each request clones it.
    target: Option<Uri>,
    headers: HeaderMap,
}

impl ModelClient {
    /// `credential` is sent as a bearer token; the header value is marked sensitive. `None` when a
    /// header value cannot be formed (capture has already refused such a credential, config.md §8.3.3).
    pub fn new(pool: Pool, credential: &str, gateway_version: &str) -> Option<ModelClient> {
        let endpoint = pool.endpoint();
        let path = endpoint.target.split('?').next().unwrap_or("/");
        let target = format!("{}/chat/completions", path.trim_end_matches('/')).parse().ok();
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(&endpoint.authority).ok()?);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, HeaderValue::from_str(&format!("ptc-gateway/{gateway_version}")).ok()?);
        let mut bearer = HeaderValue::from_str(&format!("Bearer {credential}")).ok()?;
        bearer.set_sensitive(true);
        headers.insert(AUTHORIZATION, bearer);
        Some(ModelClient { pool, target, headers })
    }

    /// The pool (the site closes its idle connections at shutdown).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// POST `body` and read the answer, until `deadline` or `cancel`. `timeout_first` says whether the
    /// deadline is the site's own `ceilings.timeout_ms` (`model_timeout`) rather than the run's (the run
    /// is ending: `model_cancelled`).
    pub async fn chat<F>(
        &self,
        body: Vec<u8>,
        deadline: Instant,
        timeout_first: bool,
        cancel: F,
    ) -> Result<ChatAnswer, Failed>
    where
        F: Future<Output = ()>,
    {
        let progress = Progress::default();
        let exchange = self.exchange(body, &progress);
        tokio::select! {
            answer = exchange => answer,
            () = tokio::time::sleep_until(deadline) => {
                let class = if timeout_first { ModelFailure::Timeout } else { ModelFailure::Cancelled };
                Err(Failed::from((class, progress.dispatch())))
            }
            () = cancel => Err(Failed::from((ModelFailure::Cancelled, progress.dispatch()))),
        }
    }

    async fn exchange(&self, body: Vec<u8>, progress: &Progress) -> Result<ChatAnswer, Failed> {
        let (response, conn) = self.send(Bytes::from(body), progress).await.map_err(Failed::from)?;
        progress.set(Progress::STATUS);
        let status = response.status().as_u16();
        if status != 200 {
            // models.md §5: the body of a refusal is never read; the connection is closed with it.
            return Err(Failed::from((chat::status_class(status), Dispatch::True)));
        }
        let mut body = response.into_body();
        let mut bytes = Received::default();
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                return Err(Failed::from((ModelFailure::TransportError, Dispatch::True)));
            };
            if let Ok(data) = frame.into_data() {
                if bytes.len() + data.len() > MAX_RESPONSE_BYTES {
                    return Err(Failed::from((ModelFailure::ResponseTooLarge, Dispatch::True)));
                }
                bytes.push(data);
            }
        }
        self.release(conn).await;
        chat::parse_answer(bytes.as_slice()).map_err(|mismatch| Failed {
            error: (ModelFailure::ProtocolError, Dispatch::True),
            mismatch: Some(mismatch),
        })
    }

    async fn send(
        &self,
        body: Bytes,
        progress: &Progress,
    ) -> Result<(hyper::Response<hyper::body::Incoming>, Conn), ModelError> {
        let written = |may_have_left: bool| progress.set(if may_have_left { Progress::WRITTEN } else { 0 });
        self.pool.send(self.request(body), written).await.map_err(|failure| match failure {
            SendFailure::Unsent => (ModelFailure::TransportError, Dispatch::False),
            SendFailure::MaybeSent => (ModelFailure::TransportError, Dispatch::Unknown),
        })
    }

    fn request(&self, body: Bytes) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = hyper::Method::POST;
        *request.headers_mut() = self.headers.clone();
        if let Some(uri) = &self.target {
            *request.uri_mut() = uri.clone();
        }
        request
    }

    // A connection goes back to the warm pool once its exchange is complete and hyper reports it ready.
    // It is ready as soon as the connection's task has seen the body's end, which it does when this task
    // yields once; the bound's timer is armed only when it did not (`within`), since arming one per call
    // unparks the runtime's time driver (issue 27).
    async fn release(&self, mut conn: Conn) {
        if within(READY_BOUND, std::pin::pin!(conn.sender.ready())).await.is_ok_and(|r| r.is_ok()) {
            self.pool.checkin(conn);
        }
    }
}
