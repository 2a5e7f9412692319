//! The Streamable HTTP transport owner (providers.md §5, §8.1 steps 3–4/6–8, providers.md §10, §12.1, §13.1):
//! the 128 in-flight slots, one spawned exchange per provider call, abandonment with the era's cancellation,
//! settlement, legacy session loss with its single re-initialisation, loss, and the orderly close.
//!
//! This file mirrors the stdio owner's API (`call`, `close`, `events`, `counters`) with the same types, so
//! the integrator treats both alike. Exchanges are `exchange.rs`; the session state machine `session.rs`;
//! the re-initialisation reuses the acquisition steps of `acquire.rs`. HTTP failures are per request: the
//! only losses are a failed, changed or repeated legacy re-initialisation (providers.md §12.1).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::super::acquire::{AcquireError, Facts};
use super::super::failure::{CallFailure, Dispatch, FailureClass};
use super::super::listing::Era;
use super::super::loss::LossState;
use super::super::outgoing::{cancellation_line, message};
use super::super::provider_call::{call_params, CallOutcome, CallRequest};
use super::super::result::{classify, CallError};
use super::super::transport::{
    AbandonReason, Counters, LossFault, Settlement, TransportEnd, TransportEvents, TransportFault,
    INFLIGHT_SLOTS, SETTLEMENT_DEADLINE,
};
use super::exchange::{self, Answer, Post, Progress};
use super::handshake::{legacy, list, HttpSpec, Negotiated};
use super::headers::{mirror, EraHeaders};
use super::session::{OnLoss, Session};
use super::wire::{LegacyHeaders, Wire};
use crate::mcp_param::HeaderParam;
use crate::support::fault::with_task_panic;

/// The name of the re-initialisation task, as the transport's owner hears it (`owner.rs`).
pub(crate) const TASK_REINITIALISE: &str = "http_reinitialise";

struct Shared {
    wire: Wire,
    spec: HttpSpec,
    /// The facts captured at startup, which a re-initialisation must reproduce (providers.md §5.4).
    facts: Facts,
    era: Era,
    protocol_version: String,
    /// Upstream tool name → its `x-mcp-header` projection (modern `Mcp-Param-*`, providers.md §5.2).
    params: BTreeMap<String, Vec<HeaderParam>>,
    session: Session,
    slots: Arc<Semaphore>,
    counters: Counters,
    /// Loss, cleanup failure, closing, and the owner that hears every task's end (`loss.rs`).
    life: LossState,
    reinit: Mutex<Option<JoinHandle<()>>>,
    /// A session a re-initialisation opened but did not adopt (its facts differed, or its listing
    /// failed): the server holds it, so the close deletes it too (providers.md §5.4 "Close").
    unadopted: Mutex<Option<Arc<str>>>,
}

impl Shared {
    fn sealed(&self) -> bool {
        self.life.fault().is_some() || self.life.is_closing()
    }

    /// Transport-owner loss (providers.md §12.1): the fault published once (the owner hears it), then sealed
    /// and waiters released.
    fn lose(&self, fault: LossFault) {
        if self.life.lose(fault) {
            self.session.seal();
        }
    }

    fn loss_class(&self) -> FailureClass {
        match self.life.fault() {
            Some(LossFault::ProtocolError) => FailureClass::McpProtocolError,
            _ => FailureClass::McpTransportError,
        }
    }

    fn legacy_headers<'a>(&'a self, session: Option<&'a str>) -> LegacyHeaders<'a> {
        LegacyHeaders { version: &self.protocol_version, session }
    }
}

/// One Streamable HTTP acquisition's transport.
pub struct HttpTransport {
    shared: Arc<Shared>,
}

fn refused(class: FailureClass) -> CallOutcome {
    failure(CallFailure::new(class, Dispatch::False))
}

fn failure(failure: CallFailure) -> CallOutcome {
    CallOutcome::unsent(Err(CallError { failure, tool_content: None }))
}

/// The request a call sends, formed before any slot is taken.
struct Formed {
    body: Vec<u8>,
    id: u64,
    mirrored: Vec<(String, String)>,
}

impl HttpTransport {
    pub(super) fn start(
        wire: Wire,
        spec: HttpSpec,
        facts: &Facts,
        negotiated: Negotiated,
        params: BTreeMap<String, Vec<HeaderParam>>,
    ) -> HttpTransport {
        // The pool's tasks already run in the transport's group (providers.md §12.1).
        let life = LossState::with_tasks(wire.ctx.pool.tasks().clone());
        let shared = Shared {
            wire,
            spec,
            facts: facts.clone(),
            era: negotiated.era,
            protocol_version: negotiated.protocol_version,
            params,
            session: Session::new(negotiated.session),
            slots: Arc::new(Semaphore::new(INFLIGHT_SLOTS)),
            counters: Counters::default(),
            life,
            reinit: Mutex::new(None),
            unadopted: Mutex::new(None),
        };
        HttpTransport { shared: Arc::new(shared) }
    }

    /// A failed acquisition: delete a legacy session if one was assigned, drop the client, and report the
    /// class with the transport's end (an orderly HTTP close, providers.md §12.2).
    pub(super) async fn fail_acquisition(
        wire: Wire,
        session: Option<Arc<str>>,
        class: FailureClass,
    ) -> AcquireError {
        if let Some(session) = session {
            exchange::delete(&wire.ctx, &session).await;
        }
        wire.ctx.pool.close_idle();
        AcquireError::Failed { class, end: Some(end(TransportFault::Close)) }
    }

    pub fn events(&self) -> TransportEvents {
        self.shared.life.events()
    }

    /// The loss state (the owner attaches to its task group).
    pub(crate) fn life(&self) -> &LossState {
        &self.shared.life
    }

    /// A task of this transport was lost (providers.md §12.1 "the transport owner itself fails"): an
    /// unclassified loss, `transport_error`.
    pub(crate) fn lose_owner(&self) {
        self.shared.lose(LossFault::TransportError);
    }

    pub fn counters(&self) -> &Counters {
        &self.shared.counters
    }

    /// Idle pooled connections now (providers.md §5.1 bound; for tests).
    pub fn idle_connections(&self) -> usize {
        self.shared.wire.ctx.pool.idle_count()
    }

    /// Sealed: closing or lost (providers.md §8.1 step 3).
    pub fn is_sealed(&self) -> bool {
        self.shared.sealed()
    }

    /// providers.md §8.1 steps 3–4: an in-flight slot, held until the request settles.
    pub fn reserve(&self) -> Result<OwnedSemaphorePermit, CallFailure> {
        let s = &self.shared;
        if s.sealed() {
            return Err(CallFailure::new(FailureClass::ProviderUnavailable, Dispatch::False));
        }
        s.slots.clone().try_acquire_owned().map_err(|_| {
            s.counters.busy.fetch_add(1, Ordering::Relaxed);
            CallFailure::new(FailureClass::McpTransportBusy, Dispatch::False)
        })
    }

    /// One provider call (providers.md §8.1 steps 1 (arguments), 3, 4, 6–8; providers.md §10).
    pub async fn call(&self, request: CallRequest<'_>, cancel: impl Future<Output = ()>) -> CallOutcome {
        if self.form_check(&request).is_none() {
            return refused(FailureClass::McpRequestInvalid);
        }
        match self.reserve() {
            Ok(permit) => self.call_reserved(permit, request, cancel).await,
            Err(failed) => failure(failed),
        }
    }

    /// providers.md §8.1 steps 6–8 with a slot from [`HttpTransport::reserve`] (the gateway reserves before
    /// provider-call admission, step 4 before step 5).
    pub async fn call_reserved(
        &self,
        permit: OwnedSemaphorePermit,
        request: CallRequest<'_>,
        cancel: impl Future<Output = ()>,
    ) -> CallOutcome {
        let s = &self.shared;
        let formed = match self.form(&request) {
            Some(formed) => formed,
            None => return refused(FailureClass::McpRequestInvalid),
        };
        if s.sealed() {
            return refused(FailureClass::ProviderUnavailable);
        }
        tokio::pin!(cancel);
        // Legacy: wait out a re-initialisation, holding the slot and keeping the deadline
        // (providers.md §5.4).
        let session = match s.era {
            Era::Modern => None,
            Era::Legacy => tokio::select! {
                ready = s.session.ready() => match ready {
                    Some(ready) => Some(ready),
                    None if s.life.is_closing() => return refused(FailureClass::ProviderUnavailable),
                    None => return refused(s.loss_class()),
                },
                () = tokio::time::sleep_until(request.deadline) => return refused(FailureClass::McpTimeout),
                () = &mut cancel => return refused(FailureClass::McpCancelled),
            },
        };
        let (session_id, generation) = match &session {
            Some((id, generation)) => (id.clone(), *generation),
            None => (None, 0),
        };
        let Some(post) = self.post(&request, &formed, session_id.as_deref()) else {
            return refused(FailureClass::McpRequestInvalid);
        };
        // traces.md §8: the exact body, attributed by its id, before it leaves.
        if let Some(inspect) = request.inspect {
            inspect.file.request(inspect.provider, inspect.alias, formed.id, inspect.traceparent, &post.body);
        }
        let progress = Arc::new(Progress::default());
        let ctx = s.wire.ctx.clone();
        let running = progress.clone();
        let exchange = tokio::spawn(async move { exchange::post(&ctx, post, &running).await });
        // Owned by this call; if the issuing task ends, the guard abandons the exchange as if cancelled
        // (providers.md §10.1), keeping the slot until it settles.
        let id = formed.id;
        let detach =
            Detach { shared: s.clone(), progress: progress.clone(), permit, id, session: session_id };
        let mut task = Running { task: Some(exchange), detach: Some(detach) };
        let mut loss = s.life.loss();
        let mut closing = s.life.closing();
        let reason = tokio::select! {
            answer = task.handle() => {
                task.detach = None;
                return self.answered(answer, &request, generation, id).for_request(id);
            }
            () = tokio::time::sleep_until(request.deadline) => AbandonReason::Timeout,
            () = &mut cancel => AbandonReason::Cancelled,
            _ = loss.wait_for(Option::is_some) => {
                task.detach = None;
                drop(task);
                return failure(CallFailure::new(s.loss_class(), sent_dispatch(&progress))).for_request(id);
            }
            _ = closing.wait_for(|c| *c) => {
                task.detach = None;
                drop(task);
                return match progress.sent() {
                    false => refused(FailureClass::ProviderUnavailable),
                    true => failure(CallFailure::new(FailureClass::McpTransportError, progress.dispatch()))
                        .for_request(id),
                };
            }
        };
        task.abandon(reason).for_request(id)
    }

    /// providers.md §5.2: arguments that are not an object, or cannot be mirrored, fail before anything is
    /// sent (and before a slot is taken).
    fn form_check(&self, request: &CallRequest<'_>) -> Option<Vec<(String, String)>> {
        if !matches!(request.arguments, serde_json::Value::Object(_)) {
            return None;
        }
        let s = &self.shared;
        match s.era {
            Era::Modern => {
                mirror(s.params.get(request.name).map_or(&[][..], Vec::as_slice), &request.arguments)
            }
            Era::Legacy => Some(Vec::new()),
        }
    }

    fn form(&self, request: &CallRequest<'_>) -> Option<Formed> {
        let s = &self.shared;
        let mirrored = self.form_check(request)?;
        let id = s.wire.next_id();
        let params =
            call_params(s.era, request.version, request.name, request.arguments.clone(), request.traceparent);
        Some(Formed { body: message(Some(id), "tools/call", Some(params)), id, mirrored })
    }

    fn post(&self, request: &CallRequest<'_>, formed: &Formed, session: Option<&str>) -> Option<Post> {
        let s = &self.shared;
        let (era, reply_headers) = match s.era {
            Era::Modern => {
                let era = EraHeaders::Modern {
                    method: "tools/call",
                    name: Some(request.name),
                    params: &formed.mirrored,
                };
                (era, None)
            }
            Era::Legacy => {
                let legacy = s.legacy_headers(session);
                (legacy.era(), Some(s.wire.headers(&legacy.era(), None)?))
            }
        };
        Some(Post {
            headers: s.wire.headers(&era, Some(request.traceparent))?,
            body: formed.body.clone(),
            id: Some(formed.id),
            max_bytes: usize::try_from(request.max_result_bytes).unwrap_or(usize::MAX),
            result_bound: true,
            carried_session: session.is_some(),
            reply_headers,
            probe: false,
        })
    }

    fn answered(&self, answer: Answer, request: &CallRequest<'_>, generation: u64, id: u64) -> CallOutcome {
        match answer {
            Answer::Reply(reply, _) => {
                if let Some(inspect) = request.inspect {
                    // A reply is read only from a 200 response (providers.md §5.3).
                    inspect.file.response(inspect.provider, id, Some(200), &reply.raw);
                }
                CallOutcome::unsent(classify(reply.message, reply.size, request.max_result_bytes))
            }
            Answer::Failed { failure: failed, session_lost } => {
                if session_lost {
                    self.session_lost(generation);
                }
                failure(failed)
            }
            Answer::Accepted | Answer::Status(..) => {
                failure(CallFailure::new(FailureClass::McpProtocolError, Dispatch::True))
            }
        }
    }

    /// providers.md §5.4 loss: one re-initialisation, or a fatal second loss within 30 s.
    fn session_lost(&self, generation: u64) {
        match self.shared.session.lost(generation) {
            OnLoss::Nothing => {}
            OnLoss::Fatal => self.shared.lose(LossFault::TransportError),
            OnLoss::Reinitialise => {
                let reinit = with_task_panic(TASK_REINITIALISE, reinitialise(self.shared.clone()));
                let task = self.shared.life.tasks().spawn(TASK_REINITIALISE, reinit);
                *self.shared.reinit.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
            }
        }
    }

    /// The orderly close (providers.md §13.1, HTTP paragraph): seal, drop in-progress exchanges, `DELETE` a
    /// legacy session, drop the pool. The fault is `close` unless a loss or cleanup failure was recorded.
    pub async fn close(&self) -> TransportEnd {
        let s = &self.shared;
        let session = s.session.current();
        s.life.begin_close();
        if let Some(task) = s.reinit.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
        let unadopted = s.unadopted.lock().unwrap_or_else(|p| p.into_inner()).take();
        if s.era == Era::Legacy {
            for session in session.iter().chain(unadopted.iter()) {
                exchange::delete(&s.wire.ctx, session).await;
            }
        }
        s.wire.ctx.pool.close_idle();
        let fault = match (s.life.cleanup_failed(), s.life.fault()) {
            (true, _) | (false, Some(LossFault::TransportError)) => TransportFault::TransportError,
            (false, Some(LossFault::ProtocolError)) => TransportFault::ProtocolError,
            _ => TransportFault::Close,
        };
        end(fault)
    }
}

/// What an abandonment needs besides the exchange itself.
struct Detach {
    shared: Arc<Shared>,
    progress: Arc<Progress>,
    permit: OwnedSemaphorePermit,
    id: u64,
    session: Option<Arc<str>>,
}

/// A call's spawned exchange. Dropped while still armed (the issuing task ended), it is abandoned as
/// cancelled; disarmed (answered, lost, closing), dropping it only aborts the exchange.
struct Running {
    task: Option<JoinHandle<Answer>>,
    detach: Option<Detach>,
}

impl Running {
    async fn handle(&mut self) -> Answer {
        let failed = || Answer::Failed {
            failure: CallFailure::new(FailureClass::McpTransportError, Dispatch::Unknown),
            session_lost: false,
        };
        match self.task.as_mut() {
            Some(task) => task.await.unwrap_or_else(|_| failed()),
            None => failed(),
        }
    }

    fn abandon(mut self, reason: AbandonReason) -> CallOutcome {
        match (self.task.take(), self.detach.take()) {
            (Some(task), Some(detach)) => abandon(reason, task, detach),
            _ => refused(reason.class()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        match (self.task.take(), self.detach.take()) {
            (Some(task), Some(detach)) => drop(abandon(AbandonReason::Cancelled, task, detach)),
            (Some(task), None) => task.abort(),
            _ => {}
        }
    }
}

// providers.md §10.1–§10.2: nothing written → the exchange is dropped; otherwise detached until the era's
// cancellation is done and the exchange has ended, within the settlement deadline.
fn abandon(reason: AbandonReason, task: JoinHandle<Answer>, detach: Detach) -> CallOutcome {
    let Detach { shared: s, progress, permit, id, session } = detach;
    if !progress.sent() {
        task.abort();
        return refused(reason.class());
    }
    s.counters.detached.fetch_add(1, Ordering::Relaxed);
    let dispatch = progress.dispatch();
    let settlement = tokio::spawn(async move {
        let _slot = permit;
        let work = async {
            if s.era == Era::Legacy {
                // POSTed with the legacy headers, then the response stream is closed (providers.md §10.1).
                if let Some(headers) = s.wire.headers(&s.legacy_headers(session.as_deref()).era(), None) {
                    exchange::auxiliary(&s.wire.ctx, &headers, cancellation_line(id, reason)).await;
                }
            }
            task.abort();
            let _ = task.await;
        };
        if tokio::time::timeout(SETTLEMENT_DEADLINE, work).await.is_ok() || s.life.is_closing() {
            return Ok(());
        }
        s.counters.settlement_timeouts.fetch_add(1, Ordering::Relaxed);
        s.life.mark_cleanup_failed();
        Err(CallFailure::new(FailureClass::ProviderCleanupFailed, Dispatch::Unknown))
    });
    CallOutcome {
        result: Err(CallError { failure: CallFailure::new(reason.class(), dispatch), tool_content: None }),
        settlement: Some(Settlement::from_task(settlement)),
        request_id: None,
    }
}

fn sent_dispatch(progress: &Progress) -> Dispatch {
    match progress.dispatch() {
        Dispatch::False => Dispatch::False,
        _ => Dispatch::Unknown,
    }
}

fn end(fault: TransportFault) -> TransportEnd {
    // No process: closed is reaped (providers.md §13.3).
    TransportEnd { fault, exit_status: None, stderr: Vec::new(), stderr_truncated: false, reaped: true }
}

/// providers.md §5.4: a fresh `initialize` without a session id, `notifications/initialized`, every listing
/// page, all within `start_timeout_ms`, holding an in-flight slot; the facts must equal those of startup.
async fn reinitialise(shared: Arc<Shared>) {
    let deadline = Instant::now() + Duration::from_millis(shared.spec.start_timeout_ms);
    let Ok(Ok(_slot)) = tokio::time::timeout_at(deadline, shared.slots.clone().acquire_owned()).await else {
        return shared.lose(LossFault::TransportError);
    };
    let negotiated = match legacy(&shared.wire, &shared.spec, deadline).await {
        Ok(negotiated) => negotiated,
        Err(_) => return shared.lose(LossFault::TransportError),
    };
    let listed = list(&shared.wire, &shared.spec, &negotiated, deadline).await;
    let facts = &shared.facts;
    let fault = match listed {
        Ok(tools)
            if negotiated.protocol_version == facts.protocol_version
                && negotiated.server_info == facts.server_info
                && tools == facts.tools =>
        {
            return shared.session.replace(negotiated.session);
        }
        Ok(_) => LossFault::ProtocolError,
        Err(_) => LossFault::TransportError,
    };
    *shared.unadopted.lock().unwrap_or_else(|p| p.into_inner()) = negotiated.session;
    shared.lose(fault);
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        if let Some(task) = self.shared.reinit.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
    }
}
