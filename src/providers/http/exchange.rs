//! One upstream POST and its answer (providers.md §5.2–§5.3, §8.2 row 1): connect or reuse, send, classify
//! the status, read a bounded JSON body or an event stream until the response for the id, answer server
//! requests on a legacy stream, and report how far the request got (the dispatch state, providers.md §1).
//!
//! This file owns the per-exchange rules and bounds. It does not decide about cancellation, deadlines,
//! session loss recovery or fencing (`transport.rs`, `session.rs`); it only reports a 404 on a request
//! that carried the session id.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{HeaderMap, Request, Response};

use super::super::failure::{CallFailure, Dispatch, FailureClass};
use super::super::framing::{parse_message, Message, Violation, WireId};
use super::super::outgoing::server_reply;
use super::super::table::Reply;
use super::headers::StaticHeaders;
use super::pool::{Conn, Pool, SendFailure};
use super::sse::{SseParser, MAX_LINE};
use super::status::{self, Body, Meaning};

/// Auxiliary requests (cancellation POST, replies to server requests, `DELETE`) wait at most this
/// (providers.md §15).
pub const AUXILIARY_TIMEOUT: Duration = Duration::from_millis(2_000);
/// How much of a body is read when only its first JSON-RPC error matters (probe statuses, notifications).
const SMALL_BODY: usize = 65_536;

/// What one acquisition's exchanges share.
pub struct Ctx {
    pub pool: Arc<Pool>,
    pub statics: StaticHeaders,
    pub gateway_version: String,
}

/// How far one request got (providers.md §10.1): nothing written, possibly written, a status received.
#[derive(Default)]
pub struct Progress(AtomicU8);

impl Progress {
    const WRITTEN: u8 = 1;
    const STATUS: u8 = 2;

    fn set(&self, state: u8) {
        self.0.store(state, Ordering::SeqCst);
    }

    /// The dispatch state an abandonment at this point carries (providers.md §10.1).
    pub fn dispatch(&self) -> Dispatch {
        match self.0.load(Ordering::SeqCst) {
            0 => Dispatch::False,
            Self::WRITTEN => Dispatch::Unknown,
            _ => Dispatch::True,
        }
    }

    /// Whether any byte may have left (so the abandonment needs a cancellation).
    pub fn sent(&self) -> bool {
        self.0.load(Ordering::SeqCst) != 0
    }
}

/// One POST to make.
pub struct Post {
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The request id; `None` for a notification or a reply.
    pub id: Option<u64>,
    /// The bound of the response message: `ceilings.max_result_bytes` for a provider call (row 1 of
    /// providers.md §8.2), else the upstream message limit.
    pub max_bytes: usize,
    /// Whether a size above `max_bytes` is `mcp_result_too_large` (a provider call) or a violation.
    pub result_bound: bool,
    pub carried_session: bool,
    /// Legacy: the headers replies to server requests are POSTed with. `None`: modern, where a server
    /// request on a response stream fails the call (providers.md §5.3).
    pub reply_headers: Option<HeaderMap>,
    /// The era probe: an `"id": null` error answers it, and a non-200 status is returned for
    /// providers.md §6.2.
    pub probe: bool,
}

/// What came back.
#[derive(Debug)]
pub enum Answer {
    /// The JSON-RPC response for the id, with its size (providers.md §8.2), and the response headers (for the
    /// legacy session id of `initialize`, providers.md §5.4).
    Reply(Reply, HeaderMap),
    /// A notification or reply was accepted (any 2xx).
    Accepted,
    /// Probe only: a status other than a readable 200, with the JSON-RPC message of a small body.
    Status(u16, Option<Message>),
    Failed {
        failure: CallFailure,
        session_lost: bool,
    },
}

fn failed(class: FailureClass, dispatch: Dispatch) -> Answer {
    Answer::Failed { failure: CallFailure::new(class, dispatch), session_lost: false }
}

/// A response that breaks providers.md §5.3 (`mcp_protocol_error`): what was violated goes to the debug
/// log only, never the body's text.
fn violated(violation: Violation, dispatch: Dispatch) -> Answer {
    tracing::debug!(%violation, "provider response refused");
    failed(FailureClass::McpProtocolError, dispatch)
}

/// Send `post` and read its answer, publishing progress as it goes.
pub async fn post(ctx: &Ctx, post: Post, progress: &Progress) -> Answer {
    let (response, conn) = match send(ctx, &post, progress).await {
        Ok(sent) => sent,
        Err(answer) => return answer,
    };
    progress.set(Progress::STATUS);
    let code = response.status().as_u16();
    if post.id.is_none() {
        return notification(ctx, response, conn, code, post.carried_session).await;
    }
    let meaning = status::for_request(code, response.headers(), post.carried_session);
    if post.probe && code != 200 {
        let body = if matches!(code, 400 | 404 | 405) { small_body(response).await } else { None };
        return Answer::Status(code, body.and_then(|b| parse_message(&b).ok()));
    }
    match meaning {
        Meaning::Read(Body::Json) => json_body(ctx, &post, response, conn).await,
        Meaning::Read(Body::EventStream) => event_stream(ctx, &post, response, conn).await,
        Meaning::SessionLost => Answer::Failed {
            failure: CallFailure::new(FailureClass::McpTransportError, Dispatch::True),
            session_lost: true,
        },
        Meaning::Fail(class) => failed(class, Dispatch::True),
    }
}

// Check out a connection and send (`Pool::send`: a request hyper hands back unwritten goes once more on a
// fresh connection).
async fn send(ctx: &Ctx, post: &Post, progress: &Progress) -> Result<(Response<Incoming>, Conn), Answer> {
    let written = |may_have_left: bool| progress.set(if may_have_left { Progress::WRITTEN } else { 0 });
    ctx.pool.send(build(ctx, post), written).await.map_err(|failure| match failure {
        SendFailure::Unsent => failed(FailureClass::McpTransportError, Dispatch::False),
        SendFailure::MaybeSent => failed(FailureClass::McpTransportError, Dispatch::Unknown),
    })
}

fn build(ctx: &Ctx, post: &Post) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(Bytes::from(post.body.clone())));
    *request.method_mut() = hyper::Method::POST;
    *request.headers_mut() = post.headers.clone();
    if let Ok(uri) = ctx.pool.endpoint().target.parse() {
        *request.uri_mut() = uri;
    }
    request
}

async fn notification(
    ctx: &Ctx,
    response: Response<Incoming>,
    conn: Conn,
    code: u16,
    carried_session: bool,
) -> Answer {
    if status::notification_accepted(code) {
        if read_to_end(response, SMALL_BODY).await.is_some() {
            release(&ctx.pool, conn);
        }
        return Answer::Accepted;
    }
    match status::failure(status::for_request(code, &HeaderMap::new(), carried_session)) {
        Some(failure) => Answer::Failed { failure, session_lost: carried_session && code == 404 },
        None => failed(FailureClass::McpTransportError, Dispatch::True),
    }
}

// A connection goes back to the pool only once its exchange is complete and hyper reports it ready.
fn release(pool: &Arc<Pool>, mut conn: Conn) {
    let pool: Weak<Pool> = Arc::downgrade(pool);
    tokio::spawn(async move {
        if tokio::time::timeout(Duration::from_secs(1), conn.sender.ready()).await.is_ok_and(|r| r.is_ok()) {
            if let Some(pool) = pool.upgrade() {
                pool.checkin(conn);
            }
        }
    });
}

/// The whole body if it is at most `bound` bytes; `None` if longer or failed (reading stops at once).
async fn read_to_end(response: Response<Incoming>, bound: usize) -> Option<Vec<u8>> {
    let mut body = response.into_body();
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.ok()?.into_data() {
            if out.len() + data.len() > bound {
                return None;
            }
            out.extend_from_slice(&data);
        }
    }
    Some(out)
}

async fn small_body(response: Response<Incoming>) -> Option<Vec<u8>> {
    read_to_end(response, SMALL_BODY).await
}

fn answers(message: &Message, id: u64, probe: bool) -> bool {
    match message {
        Message::Result { id: WireId::Number(n), .. } | Message::Error { id: WireId::Number(n), .. } => {
            *n == i128::from(id)
        }
        Message::Error { id: WireId::Null, .. } => probe,
        _ => false,
    }
}

fn too_large(post: &Post) -> Answer {
    let class =
        if post.result_bound { FailureClass::McpResultTooLarge } else { FailureClass::McpProtocolError };
    failed(class, Dispatch::True)
}

// providers.md §5.3 row 1 and providers.md §8.2 row 1: the body is one response for the id; above the bound
// reading stops and the connection is closed (dropped) without reading further.
async fn json_body(ctx: &Ctx, post: &Post, response: Response<Incoming>, conn: Conn) -> Answer {
    let (parts, mut body) = response.into_parts();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return failed(FailureClass::McpTransportError, Dispatch::True) };
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > post.max_bytes {
                return too_large(post);
            }
            bytes.extend_from_slice(&data);
        }
    }
    release(&ctx.pool, conn);
    let Some(id) = post.id else { return Answer::Accepted };
    match parse_message(&bytes) {
        Ok(message) if answers(&message, id, post.probe) => {
            Answer::Reply(Reply { message, size: bytes.len(), raw: bytes }, parts.headers)
        }
        Ok(_) => violated(Violation::NotTheAnswer, Dispatch::True),
        Err(violation) => violated(violation, Dispatch::True),
    }
}

// providers.md §5.3 event streams: until the response for the id (dispatch `true`), a violation, or the end
// (`unknown`). The connection is not reused: the stream is abandoned as soon as the response is in.
async fn event_stream(ctx: &Ctx, post: &Post, response: Response<Incoming>, conn: Conn) -> Answer {
    let Some(id) = post.id else { return Answer::Accepted };
    let (parts, mut body) = response.into_parts();
    // Held (and closed on return) so that the stream's connection is never reused half-read.
    let _conn = conn;
    let mut parser = SseParser::default();
    let mut payloads = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return failed(FailureClass::McpTransportError, Dispatch::Unknown) };
        let Ok(data) = frame.into_data() else { continue };
        if parser.feed(&data, &mut payloads).is_err() {
            return failed(FailureClass::McpProtocolError, Dispatch::Unknown);
        }
        for payload in payloads.drain(..) {
            let message = match parse_message(&payload) {
                Ok(message) => message,
                Err(violation) => return violated(violation, Dispatch::Unknown),
            };
            match message {
                Message::Notification => {}
                Message::Request { id: server_id, method } => match &post.reply_headers {
                    Some(headers) => reply(ctx, headers, server_reply(server_id, &method)).await,
                    None => return failed(FailureClass::McpProtocolError, Dispatch::Unknown),
                },
                message if answers(&message, id, post.probe) => {
                    if payload.len() > post.max_bytes {
                        return too_large(post);
                    }
                    return Answer::Reply(
                        Reply { message, size: payload.len(), raw: payload },
                        parts.headers,
                    );
                }
                _ => return violated(Violation::NotTheAnswer, Dispatch::Unknown),
            }
        }
    }
    failed(FailureClass::McpTransportError, Dispatch::Unknown)
}

/// POST one message that expects no response (a reply to a server request, a cancellation), within the
/// auxiliary timeout, ignoring the outcome (providers.md §5.3, §10.1).
pub async fn auxiliary(ctx: &Ctx, headers: &HeaderMap, body: Vec<u8>) {
    let post = Post {
        headers: headers.clone(),
        body,
        id: None,
        max_bytes: SMALL_BODY,
        result_bound: false,
        carried_session: false,
        reply_headers: None,
        probe: false,
    };
    let progress = Progress::default();
    let exchange = async {
        if let Ok((response, conn)) = send(ctx, &post, &progress).await {
            let code = response.status().as_u16();
            notification(ctx, response, conn, code, false).await;
        }
    };
    let _ = tokio::time::timeout(AUXILIARY_TIMEOUT, exchange).await;
}

async fn reply(ctx: &Ctx, headers: &HeaderMap, body: Vec<u8>) {
    auxiliary(ctx, headers, body).await;
}

/// The bound for acquisition messages: the upstream message limit (a larger body cannot decode).
pub const MESSAGE_BOUND: usize = MAX_LINE;

/// The closing `DELETE` of a legacy session (providers.md §5.4): the id and the static headers, at most 2,000
/// ms, outcome ignored (405 included).
pub async fn delete(ctx: &Ctx, session: &str) {
    use hyper::header::{HeaderValue, HOST, USER_AGENT};
    let mut headers = HeaderMap::new();
    let endpoint = ctx.pool.endpoint();
    let (Ok(host), Ok(agent), Ok(id)) = (
        HeaderValue::from_str(&endpoint.authority),
        HeaderValue::from_str(&format!("ptc-gateway/{}", ctx.gateway_version)),
        HeaderValue::from_str(session),
    ) else {
        return;
    };
    headers.insert(HOST, host);
    headers.insert(USER_AGENT, agent);
    for (name, value) in ctx.statics.iter() {
        headers.append(name.clone(), value.clone());
    }
    headers.insert("mcp-session-id", id);
    let mut request = Request::new(Full::new(Bytes::new()));
    *request.method_mut() = hyper::Method::DELETE;
    *request.headers_mut() = headers;
    if let Ok(uri) = endpoint.target.parse() {
        *request.uri_mut() = uri;
    }
    // As in `send`: a request handed back unsent by a just-closed idle connection goes on a fresh one.
    let exchange = async {
        let mut request = request;
        for _ in 0..2 {
            let Ok(mut conn) = ctx.pool.checkout().await else { return };
            match conn.sender.try_send_request(request).await {
                Ok(_) => return,
                Err(mut error) => match error.take_message() {
                    Some(unsent) => request = unsent,
                    None => return,
                },
            }
        }
    };
    let _ = tokio::time::timeout(AUXILIARY_TIMEOUT, exchange).await;
}
