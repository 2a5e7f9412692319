//! One admitted stream (pcc.md §5, §7, §11, §15): the state machine from `OPEN` to `ENDED`, its timers,
//! the one call in flight, cancellation, and the drain.
//!
//! Owns what each inbound message does in each state and when the stream ends. It does not own the
//! checks before the first message (`service`), the message shapes (`envelope`, `methods`, `wire`) or
//! the call's execution (`call`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use ptc_actors::Lease;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tonic::{Status, Streaming};

use crate::apps::ServedTool;
use crate::codes::domain::Readiness;
use crate::exec::outcome::{fixed_text, Dispatch, Outcome};
use crate::exec::Shared;
use crate::mcp::rpc::RequestId;
use crate::pcc::call::{begin, Begun, PccCall, Settled, Stop};
use crate::pcc::drain::{drain_begun, Drain};
use crate::pcc::envelope::{classify, Inbound};
use crate::pcc::methods::{self, Server};
use crate::pcc::proto::served::create_mcp_transport_request::{Connect, Request};
use crate::pcc::proto::served::create_mcp_transport_response::{Connected, Response};
use crate::pcc::proto::served::{CreateMcpTransportRequest, CreateMcpTransportResponse};
use crate::pcc::result::tool_error;
use crate::pcc::wire::{End, PccError};
use crate::providers::trace::TraceId;
use crate::support::fault::{self, FaultPoint};

/// pcc.md §5.1: from stream start to the first message.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(10_000);
/// pcc.md §5.1: without an inbound message while no call is in flight.
pub const IDLE_TIMEOUT: Duration = Duration::from_millis(60_000);
/// pcc.md §7.5 step 8: a response must be handed to the stream within this.
pub const PUBLICATION_TIMEOUT: Duration = Duration::from_millis(10_000);
/// pcc.md §13: `request_id` has 1 to 256 bytes.
const MAX_REQUEST_ID_BYTES: usize = 256;

/// What a stream shares with the front.
pub struct StreamContext {
    pub servers: Arc<BTreeMap<String, Server>>,
    pub readiness: Readiness,
    pub exec: Arc<Shared>,
    pub drain: watch::Receiver<Drain>,
    /// pcc.md §13: every `tools/call` id must equal it when present.
    pub request_uuid: Option<String>,
    /// pcc.md §4: the client deadline (`grpc-timeout`) of the whole stream.
    pub client_deadline: Option<std::time::Instant>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Open,
    Connected,
    Initializing,
    Ready,
}

/// The call in flight (pcc.md §5.1 `READY`).
struct InFlight {
    id: RequestId,
    /// The served tool (for the fixed text of a lost run).
    tool: ServedTool,
    done: tokio::sync::oneshot::Receiver<Settled>,
    stop: watch::Sender<Option<Stop>>,
    /// `notifications/cancelled` named it: its response is never sent (pcc.md §11).
    cancelled: bool,
}

type Out = mpsc::Sender<Result<CreateMcpTransportResponse, Status>>;

struct Conversation {
    ctx: StreamContext,
    out: Out,
    state: State,
    server: Option<String>,
    /// pcc.md §12: the stream's trace id, fixed by the `connect`.
    trace: Option<TraceId>,
    call: Option<InFlight>,
    half_closed: bool,
}

/// What the inbound branch decided.
enum Step {
    Continue,
    End(End),
}

/// Never completes without a deadline.
async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

fn json(text: String) -> CreateMcpTransportResponse {
    CreateMcpTransportResponse { response: Some(Response::Json(text)) }
}

/// Runs the stream until it ends; `slot` (the stream's `pcc_streams` lease) is held until then (pcc.md §10).
pub async fn run(
    ctx: StreamContext,
    mut inbound: Streaming<CreateMcpTransportRequest>,
    out: Out,
    slot: Lease,
) {
    let mut conv = Conversation {
        ctx,
        out,
        state: State::Open,
        server: None,
        trace: None,
        call: None,
        half_closed: false,
    };
    let end = conv.drive(&mut inbound).await;
    if let Some(call) = conv.call.take() {
        // The stream ends with a call in flight: it is cancelled and counts as disconnected
        // (pcc.md §5.2, §11).
        call.stop.send_replace(Some(Stop::Disconnected));
    }
    if let Some(end) = end {
        if end != End::Ok {
            let _ = conv.out.try_send(Err(end.status()));
        }
    }
    drop(slot);
}

impl Conversation {
    /// The main loop; the status to end with, or `None` when the client is gone (nothing can be sent).
    async fn drive(&mut self, inbound: &mut Streaming<CreateMcpTransportRequest>) -> Option<End> {
        let mut timer = Instant::now() + CONNECT_TIMEOUT;
        let mut drain = self.ctx.drain.clone();
        let client_deadline = self.ctx.client_deadline.map(Instant::from_std);
        loop {
            let draining = *drain.borrow();
            let idle_ends = self.call.is_none() && !fault::injected(FaultPoint::StreamOutlivesDrain);
            if draining == Drain::Cutoff || (draining == Drain::Draining && idle_ends) {
                return Some(End::Draining);
            }
            if self.half_closed && self.call.is_none() {
                return Some(End::Ok);
            }
            let timing = self.call.is_none();
            tokio::select! {
                message = inbound.message(), if !self.half_closed => {
                    match message {
                        Ok(Some(message)) => {
                            timer = Instant::now() + IDLE_TIMEOUT;
                            if let Step::End(end) = self.on_message(message).await {
                                return Some(end);
                            }
                        }
                        Ok(None) if self.state == State::Open => return Some(End::ConnectRequired),
                        Ok(None) => self.half_closed = true,
                        Err(status) => {
                            // A reset or a library refusal (oversized, undecodable): send it, if anyone
                            // listens. tonic reports an oversized message as OUT_OF_RANGE; pcc.md §14 says
                            // RESOURCE_EXHAUSTED, with the library's text.
                            let status = match status.code() {
                                tonic::Code::OutOfRange => Status::resource_exhausted(status.message().to_owned()),
                                _ => status,
                            };
                            let _ = self.out.try_send(Err(status));
                            return None;
                        }
                    }
                }
                settled = async { (&mut self.call.as_mut()?.done).await.ok() }, if self.call.is_some() => {
                    if !self.publish(settled).await {
                        return None;
                    }
                    timer = Instant::now() + IDLE_TIMEOUT;
                }
                _ = tokio::time::sleep_until(timer), if timing => {
                    return Some(if self.state == State::Open { End::ConnectTimeout } else { End::IdleTimeout });
                }
                // pcc.md §4, §11: the client deadline cancels the stream; an in-flight call is disconnected.
                _ = sleep_until_some(client_deadline) => return Some(End::ClientDeadline),
                _ = drain.changed() => {}
                _ = self.out.closed() => return None,
            }
        }
    }

    /// Hands the settled call's response to the stream (pcc.md §7.5 step 8), then releases the run slot
    /// (execution.md §10). False when the stream must be reset.
    async fn publish(&mut self, settled: Option<Settled>) -> bool {
        let Some(call) = self.call.take() else { return true };
        let Some(Settled { response, run, tool }) = settled else {
            // The call's task was lost without settling (a panic its own guard could not catch): the
            // run-admission owner heard it and fences (lifecycle.md §6.3); the client still gets the
            // call's answer, internal_error with dispatch unknown (execution.md §6.2).
            if !call.cancelled {
                let effect = call.tool.effect;
                let text = fixed_text(effect, Dispatch::Unknown, Outcome::InternalError);
                let answer = tool_error(&call.id, text, None, Outcome::InternalError);
                let _ = self.out.send_timeout(Ok(json(answer)), PUBLICATION_TIMEOUT).await;
            }
            return true;
        };
        let mut ok = true;
        if let (Some(response), false) = (response, call.cancelled) {
            let sent = self.out.send_timeout(Ok(json(response)), PUBLICATION_TIMEOUT).await;
            if sent.is_err() {
                // audit-events.md §3.5: counted; the record (if any) is already durable.
                self.ctx.exec.events.publication_failed(tool.index());
                ok = false;
            }
        }
        drop(run);
        ok
    }

    async fn send(&self, text: String) {
        // Inbound processing waits while the outbound queue is full (pcc.md §14).
        let _ = self.out.send(Ok(json(text))).await;
    }

    async fn on_message(&mut self, message: CreateMcpTransportRequest) -> Step {
        match message.request {
            None => Step::End(End::EmptyMessage),
            Some(Request::Connect(connect)) => self.on_connect(connect).await,
            Some(Request::RequestBody(_)) if self.state == State::Open => Step::End(End::ConnectRequired),
            Some(Request::RequestBody(body)) => {
                // `body` is the raw bytes of the string field (`proto::served`): UTF-8 is judged here.
                match classify(&body) {
                    Err((error, id)) => self.send(error.body(id.as_ref())).await,
                    Ok(Inbound::Response) => {}
                    Ok(Inbound::Notification { method, params }) => {
                        self.on_notification(&method, params.as_ref())
                    }
                    Ok(Inbound::Request { id, method, params }) => {
                        let answer = self.on_request(&id, &method, params.as_ref());
                        if let Some(answer) = answer {
                            self.send(answer).await;
                        }
                    }
                }
                Step::Continue
            }
        }
    }

    /// pcc.md §5.2 rows 1–3 and pcc.md §13.
    async fn on_connect(&mut self, connect: Connect) -> Step {
        if self.state != State::Open {
            return Step::End(End::AlreadyConnected);
        }
        if !self.ctx.servers.contains_key(&connect.server_id) {
            return Step::End(End::UnknownServer);
        }
        if connect.request_id.is_empty() || connect.request_id.len() > MAX_REQUEST_ID_BYTES {
            return Step::End(End::InvalidConnect);
        }
        // pcc.md §12: only a valid trace id of the connect counts; otherwise a fresh one, never an error.
        let given = connect.trace_context.as_ref().map(|t| t.trace_id.as_str());
        self.trace = Some(TraceId::from_connect(given));
        // pcc.md §13: request_id, tenant_info and server_cloudos_version are validated and dropped here.
        let connected = CreateMcpTransportResponse { response: Some(Response::Connected(Connected {})) };
        let _ = self.out.send(Ok(connected)).await;
        self.server = Some(connect.server_id);
        self.state = State::Connected;
        Step::Continue
    }

    fn on_notification(&mut self, method: &str, params: Option<&serde_json::Map<String, serde_json::Value>>) {
        match method {
            "notifications/initialized" if self.state == State::Initializing => self.state = State::Ready,
            "notifications/cancelled" if self.state == State::Ready => {
                let requested = params.and_then(|p| p.get("requestId")).and_then(RequestId::from_value);
                if let Some(call) = self.call.as_mut().filter(|c| Some(&c.id) == requested.as_ref()) {
                    call.cancelled = true;
                    call.stop.send_replace(Some(Stop::Requested));
                }
            }
            // Every other notification is ignored (pcc.md §5.2).
            _ => {}
        }
    }

    /// The answer to one request, or `None` when it is answered later (a started call).
    fn on_request(
        &mut self,
        id: &RequestId,
        method: &str,
        params: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Option<String> {
        let ready = self.state == State::Ready;
        Some(match method {
            "initialize" if self.state == State::Connected => match methods::initialize(id, params) {
                Some(answer) => {
                    self.state = State::Initializing;
                    answer
                }
                None => PccError::InvalidParams.body(Some(id)),
            },
            "initialize" => PccError::AlreadyInitialized.body(Some(id)),
            "ping" => methods::pong(id),
            "tools/list" | "tools/call" if !ready => PccError::NotInitialized.body(Some(id)),
            "tools/list" => self.list(id, params),
            "tools/call" => return self.call(id, params),
            _ => PccError::MethodNotFound.body(Some(id)),
        })
    }

    fn subset(&self) -> Option<&Server> {
        self.server.as_ref().and_then(|s| self.ctx.servers.get(s))
    }

    /// pcc.md §7.4.
    fn list(&self, id: &RequestId, params: Option<&serde_json::Map<String, serde_json::Value>>) -> String {
        if !methods::list_params_valid(params) {
            return PccError::InvalidParams.body(Some(id));
        }
        if !self.ctx.readiness.is_ready() {
            return PccError::Unavailable.body(Some(id));
        }
        match self.subset() {
            Some(server) => crate::mcp::rpc::result_body(id, &server.listing),
            None => PccError::Internal.body(Some(id)),
        }
    }

    /// pcc.md §7.5, steps 1–6 in order.
    fn call(
        &mut self,
        id: &RequestId,
        params: Option<&serde_json::Map<String, serde_json::Value>>,
    ) -> Option<String> {
        // pcc.md §15 step 3: during a drain a stream is open only for its call in flight, and further calls
        // are answered -31998 (not `call_in_flight`): nothing more will execute on it.
        if drain_begun(&self.ctx.drain, &self.ctx.readiness) {
            return Some(PccError::Unavailable.body(Some(id)));
        }
        if self.call.is_some() {
            return Some(PccError::CallInFlight.body(Some(id)));
        }
        if let Some(uuid) = &self.ctx.request_uuid {
            if *id != RequestId::String(uuid.clone()) {
                return Some(PccError::RequestUuidMismatch.body(Some(id)));
            }
        }
        let Some((name, arguments)) = methods::call_params(params) else {
            return Some(PccError::InvalidParams.body(Some(id)));
        };
        let tool = crate::mcp::tool::find(&self.ctx.exec.built, name);
        let Some(tool) = tool.filter(|t| self.subset().is_some_and(|s| s.tools.contains(&t.index()))) else {
            return Some(PccError::InvalidParams.body(Some(id)));
        };
        if !self.ctx.readiness.is_ready() {
            return Some(PccError::Unavailable.body(Some(id)));
        }
        let call = PccCall {
            tool: tool.clone(),
            arguments,
            id: id.clone(),
            trace: self.trace.unwrap_or_else(TraceId::fresh),
            client_deadline: self.ctx.client_deadline,
        };
        match begin(&self.ctx.exec, call) {
            Begun::Answered(answer) => Some(answer),
            Begun::Refused(error) => Some(error.body(Some(id))),
            Begun::Running(running) => {
                self.call = Some(InFlight {
                    id: id.clone(),
                    tool,
                    done: running.done,
                    stop: running.stop,
                    cancelled: false,
                });
                None
            }
        }
    }
}
