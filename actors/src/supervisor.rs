//! The domain supervisor: starts owners in stage order, watches them, and turns an unexpected stop into
//! the rule of lifecycle.md §6.3 for that child: fence, stop the domain, or tolerate.
//!
//! Owns: the list of supervised children (name, policy, status) in start order, the reaction to ractor
//! supervision events, retiring children (an expected stop), and stopping them explicitly in reverse
//! order at the end. ractor's defaults are not these rules (docs/architecture.md): by default a supervisor
//! stops when a child stops, and a parent's exit kills its children without their `post_stop`. This
//! supervisor never stops because of a child, and [`DomainHandle::shutdown`] stops every child in reverse
//! start order before it stops itself.
//!
//! Does not own: what the children do, readiness itself (`DomainContext`), or the shutdown stages.
//!
//! Children are spawned by the caller's task, linked to the supervisor, and then registered. A loss
//! that arrives before its registration is held until the registration (or the abandoned start) resolves
//! it, so the supervisor's mailbox is never blocked by a child's `pre_start`.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

use crate::context::DomainContext;
use crate::readiness::NotReadyCause;
use crate::trigger::AbnormalCause;

/// How long a call to the supervisor may take before it counts as unresponsive.
const CALL_BOUND: Duration = Duration::from_millis(5_000);

/// The name reported for a linked child that was never registered.
const UNREGISTERED: &str = "unregistered";

/// What the loss of a child means (lifecycle.md §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildPolicy {
    /// The loss fences readiness for good with this cause (admission owners, provider runtime,
    /// credentials owner, any other child).
    Fence(NotReadyCause),
    /// The loss stops the domain abnormally, exit 70 (audit owner, HTTP and PCC listeners,
    /// lifecycle.md §7.5).
    StopDomain(AbnormalCause),
    /// The loss changes nothing (a best-effort child; the event logger has the same rule but runs on its
    /// own thread, `event_logger`).
    Tolerate,
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

/// The status of a registered child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildStatus {
    Running,
    /// Retired: its stop is expected and has been requested.
    Retiring,
    /// Stopped after retiring.
    Stopped,
    /// Stopped unexpectedly; its policy was applied.
    Lost(LossKind),
}

/// One row of [`DomainHandle::children`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildInfo {
    pub name: String,
    pub policy: ChildPolicy,
    pub status: ChildStatus,
}

/// How [`DomainHandle::stop_child`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildStop {
    /// Stopped within the bound; its `post_stop` ran.
    Stopped,
    /// Did not stop within the bound and was killed (no `post_stop`).
    Killed,
    /// It had already stopped.
    AlreadyGone,
}

/// Errors of the domain handle. Closed; names only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DomainError {
    /// The supervisor could not be spawned.
    SupervisorStartFailed,
    /// The supervisor is gone (it stopped or failed).
    SupervisorGone,
    /// The supervisor did not answer within its call bound.
    SupervisorUnresponsive,
    /// A child's `pre_start` failed or it could not be linked; the gateway maps this to its stage code.
    ChildStartFailed { child: String },
    /// No running child has this name.
    UnknownChild { child: String },
}

impl DomainError {
    /// A stable kind for logs and tests.
    pub fn kind(&self) -> &'static str {
        match self {
            DomainError::SupervisorStartFailed => "supervisor_start_failed",
            DomainError::SupervisorGone => "supervisor_gone",
            DomainError::SupervisorUnresponsive => "supervisor_unresponsive",
            DomainError::ChildStartFailed { .. } => "child_start_failed",
            DomainError::UnknownChild { .. } => "unknown_child",
        }
    }
}

impl fmt::Display for DomainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DomainError::ChildStartFailed { child } => write!(f, "child {child:?} failed to start"),
            DomainError::UnknownChild { child } => write!(f, "no running child named {child:?}"),
            other => f.write_str(other.kind()),
        }
    }
}

impl std::error::Error for DomainError {}

/// Work run when a child is lost, before readiness changes (e.g. fence the pools an admission owner held).
pub type LossHook = Box<dyn FnOnce() + Send + 'static>;

/// How to start one child: the actor, its arguments, its name and its policy.
pub struct ChildSpec<A: Actor> {
    name: String,
    policy: ChildPolicy,
    actor: A,
    args: A::Arguments,
    on_loss: Option<LossHook>,
}

impl<A: Actor> ChildSpec<A> {
    /// A child named `name` (used in reports and in [`DomainHandle::stop_child`]).
    pub fn new(name: impl Into<String>, policy: ChildPolicy, actor: A, args: A::Arguments) -> Self {
        ChildSpec { name: name.into(), policy, actor, args, on_loss: None }
    }

    /// Runs `hook` once if the child is lost (not when it is retired).
    pub fn on_loss(mut self, hook: impl FnOnce() + Send + 'static) -> Self {
        self.on_loss = Some(Box::new(hook));
        self
    }
}

struct Registration {
    name: String,
    cell: ActorCell,
    policy: ChildPolicy,
    on_loss: Option<LossHook>,
}

/// The supervisor's messages. Private: the gateway talks to it through [`DomainHandle`].
enum SupervisorMsg {
    BeginStart(RpcReplyPort<StartToken>),
    AbandonStart(StartToken),
    Register(StartToken, Box<Registration>, RpcReplyPort<()>),
    Retire(String, RpcReplyPort<Option<ActorCell>>),
    Children(RpcReplyPort<Vec<ChildInfo>>),
}

struct Entry {
    name: String,
    id: ActorId,
    cell: ActorCell,
    policy: ChildPolicy,
    on_loss: Option<LossHook>,
    status: ChildStatus,
}

struct SupervisorState {
    ctx: DomainContext,
    children: Vec<Entry>,
    /// Starts that have spawned (or may spawn) a linked child not yet registered.
    pending: Vec<StartToken>,
    next_token: u64,
    /// Losses of children not registered yet.
    orphans: Vec<(ActorId, LossKind)>,
}

struct Supervisor;

impl Actor for Supervisor {
    type Msg = SupervisorMsg;
    type State = SupervisorState;
    type Arguments = DomainContext;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        ctx: DomainContext,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(SupervisorState {
            ctx,
            children: Vec::new(),
            pending: Vec::new(),
            next_token: 0,
            orphans: Vec::new(),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SupervisorMsg::BeginStart(reply) => {
                let token = StartToken(state.next_token);
                state.next_token = state.next_token.wrapping_add(1);
                state.pending.push(token);
                let _ = reply.send(token);
            }
            SupervisorMsg::AbandonStart(token) => state.finish_start(token),
            SupervisorMsg::Register(token, registration, reply) => {
                state.register(*registration);
                state.finish_start(token);
                let _ = reply.send(());
            }
            SupervisorMsg::Retire(name, reply) => {
                let cell = state.retire(&name);
                let _ = reply.send(cell);
            }
            SupervisorMsg::Children(reply) => {
                let rows = state
                    .children
                    .iter()
                    .map(|e| ChildInfo { name: e.name.clone(), policy: e.policy, status: e.status })
                    .collect();
                let _ = reply.send(rows);
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        // Never stop because a child stopped (ractor's default does): apply the child's policy instead.
        match event {
            SupervisionEvent::ActorTerminated(cell, _, _) => {
                state.child_stopped(cell.get_id(), LossKind::Stopped)
            }
            SupervisionEvent::ActorFailed(cell, _) => state.child_stopped(cell.get_id(), LossKind::Failed),
            _ => {}
        }
        Ok(())
    }
}

impl SupervisorState {
    fn register(&mut self, r: Registration) {
        let id = r.cell.get_id();
        self.children.push(Entry {
            name: r.name,
            id,
            cell: r.cell,
            policy: r.policy,
            on_loss: r.on_loss,
            status: ChildStatus::Running,
        });
        if let Some(at) = self.orphans.iter().position(|(orphan, _)| *orphan == id) {
            let (_, loss) = self.orphans.swap_remove(at);
            self.child_stopped(id, loss);
        }
    }

    /// Idempotent: a start registered and then reported abandoned is finished once.
    fn finish_start(&mut self, token: StartToken) {
        self.pending.retain(|pending| *pending != token);
        if self.pending.is_empty() {
            // No start is outstanding, so these were linked children nobody registered: "any other
            // supervised domain child" (lifecycle.md §6.3).
            for (_, loss) in std::mem::take(&mut self.orphans) {
                self.unregistered_lost(loss);
            }
        }
    }

    fn retire(&mut self, name: &str) -> Option<ActorCell> {
        let entry = self.children.iter_mut().find(|e| e.name == name && e.status == ChildStatus::Running)?;
        entry.status = ChildStatus::Retiring;
        Some(entry.cell.clone())
    }

    fn child_stopped(&mut self, id: ActorId, loss: LossKind) {
        let Some(entry) = self.children.iter_mut().find(|e| e.id == id) else {
            if !self.pending.is_empty() {
                self.orphans.push((id, loss));
            } else {
                self.unregistered_lost(loss);
            }
            return;
        };
        match entry.status {
            ChildStatus::Running => {
                entry.status = ChildStatus::Lost(loss);
                let (name, policy, hook) = (entry.name.clone(), entry.policy, entry.on_loss.take());
                tracing::warn!(child = %name, ?loss, "supervised child stopped unexpectedly");
                apply_policy(&self.ctx, &name, policy, loss, hook);
            }
            ChildStatus::Retiring => entry.status = ChildStatus::Stopped,
            ChildStatus::Stopped | ChildStatus::Lost(_) => {}
        }
    }

    fn unregistered_lost(&self, loss: LossKind) {
        tracing::warn!(?loss, "an unregistered linked child stopped");
        apply_policy(&self.ctx, UNREGISTERED, ChildPolicy::Fence(NotReadyCause::OwnerLost), loss, None);
    }
}

/// lifecycle.md §6.3: the loss hook first (so a fenced pool is in place before readiness turns false),
/// then the policy.
fn apply_policy(
    ctx: &DomainContext,
    name: &str,
    policy: ChildPolicy,
    loss: LossKind,
    hook: Option<LossHook>,
) {
    ctx.observer().child_lost(name, policy, loss);
    if let Some(hook) = hook {
        hook();
    }
    match policy {
        ChildPolicy::Fence(cause) => {
            ctx.fence(cause);
        }
        ChildPolicy::StopDomain(cause) => {
            ctx.stop_abnormally(cause);
        }
        ChildPolicy::Tolerate => {}
    }
}

/// Identifies one start between `BeginStart` and its registration or abandonment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StartToken(u64);

/// Tells the supervisor that a start is over, however it ended.
struct PendingStart {
    supervisor: ActorRef<SupervisorMsg>,
    token: StartToken,
}

impl Drop for PendingStart {
    fn drop(&mut self) {
        // After a registration this is a no-op in the supervisor (tokens are finished once).
        let _ = self.supervisor.send_message(SupervisorMsg::AbandonStart(self.token));
    }
}

/// The gateway's handle on the running domain supervisor. Cloneable; all clones drive the same domain.
#[derive(Clone)]
pub struct DomainHandle {
    supervisor: ActorRef<SupervisorMsg>,
    ctx: DomainContext,
    orderly: Arc<AtomicBool>,
    /// Becomes true once the watcher has seen the supervisor stop and judged that stop.
    watched: watch::Receiver<bool>,
}

impl fmt::Debug for DomainHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DomainHandle").field("supervisor", &self.supervisor.get_id()).finish()
    }
}

impl DomainHandle {
    /// Spawns the domain supervisor. If the supervisor ever stops other than through
    /// [`DomainHandle::shutdown`] (a panic in its logic), the domain stops abnormally with
    /// [`AbnormalCause::SupervisorLost`] (lifecycle.md §7.5).
    pub async fn start(ctx: DomainContext) -> Result<DomainHandle, DomainError> {
        let (supervisor, _join) = Supervisor::spawn(None, Supervisor, ctx.clone())
            .await
            .map_err(|_| DomainError::SupervisorStartFailed)?;
        let orderly = Arc::new(AtomicBool::new(false));
        let (done_tx, watched) = watch::channel(false);
        let watcher_cell = supervisor.get_cell();
        let (watcher_ctx, watcher_orderly) = (ctx.clone(), orderly.clone());
        tokio::spawn(async move {
            let _ = watcher_cell.wait(None).await;
            if !watcher_orderly.load(Ordering::Acquire) {
                watcher_ctx.stop_abnormally(AbnormalCause::SupervisorLost);
            }
            done_tx.send_replace(true);
        });
        Ok(DomainHandle { supervisor, ctx, orderly, watched })
    }

    /// The context shared by the domain.
    pub fn context(&self) -> &DomainContext {
        &self.ctx
    }

    /// Starts one child linked to the supervisor and registers it with its policy. Call in stage order;
    /// an error is the stage's failure. The child's `pre_start` runs on the caller's task.
    pub async fn start_child<A: Actor>(&self, spec: ChildSpec<A>) -> Result<ActorRef<A::Msg>, DomainError> {
        let token = self.call(SupervisorMsg::BeginStart).await?;
        // Dropped on every path (error, success, or the caller abandoning this future).
        let _pending = PendingStart { supervisor: self.supervisor.clone(), token };
        let ChildSpec { name, policy, actor, args, on_loss } = spec;
        let spawned = A::spawn_linked(None, actor, args, self.supervisor.get_cell()).await;
        let (child, _join) = spawned.map_err(|_| DomainError::ChildStartFailed { child: name.clone() })?;
        let registration = Box::new(Registration { name, cell: child.get_cell(), policy, on_loss });
        // If the supervisor is gone, so are its linked children: the error says so.
        self.call(|reply| SupervisorMsg::Register(token, registration, reply)).await?;
        Ok(child)
    }

    /// Retires the named running child and stops it, waiting up to `bound` for its `post_stop`; a child
    /// still running then is killed. Its stop is expected, so no policy applies. Stages use this to stop
    /// a listener (S1) or the audit owner (S7) without stopping the domain.
    pub async fn stop_child(&self, name: &str, bound: Duration) -> Result<ChildStop, DomainError> {
        let cell = self.call(|reply| SupervisorMsg::Retire(name.to_string(), reply)).await?;
        let cell = cell.ok_or_else(|| DomainError::UnknownChild { child: name.to_string() })?;
        Ok(stop_cell(&cell, bound).await)
    }

    /// Every registered child, in start order.
    pub async fn children(&self) -> Result<Vec<ChildInfo>, DomainError> {
        self.call(SupervisorMsg::Children).await
    }

    /// Stops every running child in reverse start order, each with `bound_per_child`, then the supervisor
    /// itself, which is then not an abnormal stop. Returns how each child stopped.
    pub async fn shutdown(&self, bound_per_child: Duration) -> Vec<(String, ChildStop)> {
        let mut stopped = Vec::new();
        let running = match self.children().await {
            Ok(rows) => rows.into_iter().filter(|c| c.status == ChildStatus::Running).collect(),
            Err(_) => Vec::new(),
        };
        for child in running.into_iter().rev() {
            match self.stop_child(&child.name, bound_per_child).await {
                Ok(how) => stopped.push((child.name, how)),
                Err(_) => stopped.push((child.name, ChildStop::AlreadyGone)),
            }
        }
        self.orderly.store(true, Ordering::Release);
        let _ = stop_cell(&self.supervisor.get_cell(), bound_per_child).await;
        // Wait for the watcher's verdict, so that nothing about this domain changes after we return.
        let mut watched = self.watched.clone();
        let _ = tokio::time::timeout(bound_per_child, watched.wait_for(|done| *done)).await;
        stopped
    }

    /// The supervisor's cell (for tests that inject faults).
    pub fn supervisor_cell(&self) -> ActorCell {
        self.supervisor.get_cell()
    }

    async fn call<R: Send + 'static>(
        &self,
        build: impl FnOnce(RpcReplyPort<R>) -> SupervisorMsg,
    ) -> Result<R, DomainError> {
        match self.supervisor.call(build, Some(CALL_BOUND)).await {
            Ok(ractor::rpc::CallResult::Success(value)) => Ok(value),
            Ok(ractor::rpc::CallResult::Timeout) => Err(DomainError::SupervisorUnresponsive),
            Ok(ractor::rpc::CallResult::SenderError) | Err(_) => Err(DomainError::SupervisorGone),
        }
    }
}

async fn stop_cell(cell: &ActorCell, bound: Duration) -> ChildStop {
    match cell.stop_and_wait(None, Some(bound)).await {
        Ok(()) => ChildStop::Stopped,
        Err(ractor::RactorErr::Timeout) => {
            let _ = cell.kill_and_wait(Some(bound)).await;
            ChildStop::Killed
        }
        Err(_) => ChildStop::AlreadyGone,
    }
}
