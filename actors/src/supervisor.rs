//! The supervision tree: supervisors that start owners in stage order, watch them, and turn an
//! unexpected stop into the rule the child declared once when it was started: fence with a cause, stop
//! the domain, or tolerate (lifecycle.md §6.3, §7.5).
//!
//! Owns: each supervisor's children (name, policy, status, and for a child that is itself a
//! supervisor, its handle) in start order; the reaction to ractor supervision events; the loss hooks
//! a loss runs (synchronous ones before readiness changes, asynchronous ones on tasks this supervisor
//! owns and awaits); retiring children (an expected stop); stopping a subtree explicitly, children in
//! reverse start order first; and the tree listing that the running system reports.
//!
//! ractor's defaults are not these rules: by default a supervisor stops when a child stops, and a
//! parent's exit kills its children without their `post_stop`. A supervisor here never stops because of
//! a child, and [`SupervisorHandle::shutdown`] stops every child (recursively, in reverse start order)
//! before it stops itself.
//!
//! Does not own: what the children do, readiness itself (`DomainContext`), or the shutdown stages.
//!
//! Children are spawned by the caller's task, linked to their supervisor, and then registered. A loss
//! that arrives before its registration is held until the registration (or the abandoned start) resolves
//! it, so a supervisor's mailbox is never blocked by a child's `pre_start`.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

use crate::context::DomainContext;
use crate::domain::{Code, Domain};

/// How long a call to a supervisor may take before it counts as unresponsive.
const CALL_BOUND: Duration = Duration::from_millis(5_000);

/// The name reported for a linked child that was never registered.
const UNREGISTERED: &str = "unregistered";

/// What the loss of a child means (lifecycle.md §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildPolicy<D: Domain> {
    /// The loss fences readiness for good with this cause.
    Fence(D::NotReady),
    /// The loss stops the domain abnormally, exit 70 (lifecycle.md §7.5).
    StopDomain(D::Abnormal),
    /// The loss changes nothing (a best-effort child such as the event logger).
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

/// One row of [`SupervisorHandle::children`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildInfo<D: Domain> {
    pub name: String,
    pub policy: ChildPolicy<D>,
    pub status: ChildStatus,
    /// True for a child that is itself a supervisor.
    pub supervisor: bool,
}

/// One node of [`SupervisorHandle::tree`]: a child with its own children (empty for an owner).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeNode<D: Domain> {
    pub name: String,
    pub policy: ChildPolicy<D>,
    pub status: ChildStatus,
    pub children: Vec<TreeNode<D>>,
}

impl<D: Domain> TreeNode<D> {
    /// The subtree drawn as text, one node a line, with `├─`/`└─` connectors and each node's policy,
    /// the way `docs/architecture.md` draws the tree.
    pub fn render(nodes: &[TreeNode<D>], root: &str) -> String {
        let mut out = format!("{root}\n");
        render_level(nodes, "", &mut out);
        out
    }
}

fn render_level<D: Domain>(nodes: &[TreeNode<D>], prefix: &str, out: &mut String) {
    for (i, node) in nodes.iter().enumerate() {
        let last = i + 1 == nodes.len();
        let (branch, deeper) = if last { ("└─ ", "   ") } else { ("├─ ", "│  ") };
        out.push_str(&format!("{prefix}{branch}{}  [{}]\n", node.name, node.policy.describe()));
        render_level(&node.children, &format!("{prefix}{deeper}"), out);
    }
}

/// How [`SupervisorHandle::stop_child`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildStop {
    /// Stopped within the bound; its `post_stop` ran (and, for a supervisor, every child's did).
    Stopped,
    /// Did not stop within the bound and was killed (no `post_stop`).
    Killed,
    /// It had already stopped.
    AlreadyGone,
}

/// Errors of a supervisor handle. Closed; names only.
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

/// What an asynchronous loss hook is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossReport {
    pub kind: LossKind,
    /// True iff this loss is what turned readiness false. With an asynchronous hook a fence is not
    /// reported to the observer by the supervisor: the hook records it, later and with more detail
    /// (providers.md §12.1 step 4: the `readiness` record follows the close).
    pub first_fence: bool,
}

/// The future of an asynchronous loss hook.
pub type HookFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Work run after a child is lost, on a task its supervisor owns (a transport's close and records).
pub type AsyncLossHook = Box<dyn FnOnce(LossReport) -> HookFuture + Send + 'static>;

/// Makes a running child panic, for the fault tests of the `fault-injection` feature.
pub type PanicInjector = Box<dyn Fn() + Send + Sync + 'static>;

/// How to start one child: the actor, its arguments, its name and its policy.
pub struct ChildSpec<A: Actor, D: Domain> {
    name: String,
    policy: ChildPolicy<D>,
    actor: A,
    args: A::Arguments,
    on_loss: Option<LossHook>,
    on_loss_async: Option<AsyncLossHook>,
    panic_message: Option<fn() -> A::Msg>,
}

impl<A: Actor, D: Domain> ChildSpec<A, D> {
    /// A child named `name` (used in reports and in [`SupervisorHandle::stop_child`]).
    pub fn new(name: impl Into<String>, policy: ChildPolicy<D>, actor: A, args: A::Arguments) -> Self {
        ChildSpec {
            name: name.into(),
            policy,
            actor,
            args,
            on_loss: None,
            on_loss_async: None,
            panic_message: None,
        }
    }

    /// Runs `hook` once if the child is lost (not when it is retired), before the policy applies.
    pub fn on_loss(mut self, hook: impl FnOnce() + Send + 'static) -> Self {
        self.on_loss = Some(Box::new(hook));
        self
    }

    /// Runs `hook` once if the child is lost, after the policy applied, on a task the supervisor owns
    /// and awaits in [`SupervisorHandle::settle_losses`] and at its shutdown. With this hook a
    /// [`ChildPolicy::Fence`] is not reported to the observer: the hook records it
    /// ([`LossReport::first_fence`]).
    pub fn on_loss_async<F>(mut self, hook: impl FnOnce(LossReport) -> F + Send + 'static) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.on_loss_async = Some(Box::new(move |report| Box::pin(hook(report)) as HookFuture));
        self
    }

    /// The message that makes this child fail in its own logic, for the fault tests
    /// ([`SupervisorHandle::inject_panic`]).
    pub fn panic_message(mut self, message: fn() -> A::Msg) -> Self {
        self.panic_message = Some(message);
        self
    }
}

struct Registration<D: Domain> {
    name: String,
    cell: ActorCell,
    policy: ChildPolicy<D>,
    on_loss: Option<LossHook>,
    on_loss_async: Option<AsyncLossHook>,
    injector: Option<Arc<PanicInjector>>,
    sub: Option<SupervisorHandle<D>>,
}

/// A retired child: its cell, and its handle if it is a supervisor.
type Retired<D> = Option<(ActorCell, Option<SupervisorHandle<D>>)>;
/// A running child's panic injector, and its handle if it is a supervisor.
type FoundInjector<D> = Option<(Arc<PanicInjector>, Option<SupervisorHandle<D>>)>;
/// Every registered child, with its handle if it is a supervisor.
type ChildRows<D> = Vec<(ChildInfo<D>, Option<SupervisorHandle<D>>)>;

/// A supervisor's messages. Private: callers talk to it through [`SupervisorHandle`].
enum SupervisorMsg<D: Domain> {
    BeginStart(RpcReplyPort<StartToken>),
    AbandonStart(StartToken),
    Register(StartToken, Box<Registration<D>>, RpcReplyPort<()>),
    Retire(String, RpcReplyPort<Retired<D>>),
    Children(RpcReplyPort<ChildRows<D>>),
    TakeHookTasks(RpcReplyPort<Vec<JoinHandle<()>>>),
    Injector(String, RpcReplyPort<FoundInjector<D>>),
    /// The fault tests' panic in the supervisor's own logic.
    Panic,
}

struct Entry<D: Domain> {
    name: String,
    id: ActorId,
    cell: ActorCell,
    policy: ChildPolicy<D>,
    on_loss: Option<LossHook>,
    on_loss_async: Option<AsyncLossHook>,
    injector: Option<Arc<PanicInjector>>,
    sub: Option<SupervisorHandle<D>>,
    status: ChildStatus,
}

struct SupervisorState<D: Domain> {
    ctx: DomainContext<D>,
    children: Vec<Entry<D>>,
    /// Starts that have spawned (or may spawn) a linked child not yet registered.
    pending: Vec<StartToken>,
    next_token: u64,
    /// Losses of children not registered yet.
    orphans: Vec<(ActorId, LossKind)>,
    /// The asynchronous loss hooks started by this supervisor, until someone awaits them.
    hook_tasks: Vec<JoinHandle<()>>,
}

struct Supervisor<D: Domain>(PhantomData<fn() -> D>);

impl<D: Domain> Actor for Supervisor<D> {
    type Msg = SupervisorMsg<D>;
    type State = SupervisorState<D>;
    type Arguments = DomainContext<D>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        ctx: DomainContext<D>,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(SupervisorState {
            ctx,
            children: Vec::new(),
            pending: Vec::new(),
            next_token: 0,
            orphans: Vec::new(),
            hook_tasks: Vec::new(),
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
                    .map(|e| {
                        let info = ChildInfo {
                            name: e.name.clone(),
                            policy: e.policy,
                            status: e.status,
                            supervisor: e.sub.is_some(),
                        };
                        (info, e.sub.clone())
                    })
                    .collect();
                let _ = reply.send(rows);
            }
            SupervisorMsg::TakeHookTasks(reply) => {
                let _ = reply.send(std::mem::take(&mut state.hook_tasks));
            }
            SupervisorMsg::Injector(name, reply) => {
                let found = state
                    .children
                    .iter()
                    .find(|e| e.name == name && e.status == ChildStatus::Running)
                    .and_then(|e| e.injector.clone().map(|i| (i, e.sub.clone())));
                let _ = reply.send(found);
            }
            SupervisorMsg::Panic => {
                return Err("injected fault: a panic in a supervisor's own logic".into());
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

impl<D: Domain> SupervisorState<D> {
    fn register(&mut self, r: Registration<D>) {
        let id = r.cell.get_id();
        self.children.push(Entry {
            name: r.name,
            id,
            cell: r.cell,
            policy: r.policy,
            on_loss: r.on_loss,
            on_loss_async: r.on_loss_async,
            injector: r.injector,
            sub: r.sub,
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

    fn retire(&mut self, name: &str) -> Retired<D> {
        let entry = self.children.iter_mut().find(|e| e.name == name && e.status == ChildStatus::Running)?;
        entry.status = ChildStatus::Retiring;
        Some((entry.cell.clone(), entry.sub.clone()))
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
                let (name, policy) = (entry.name.clone(), entry.policy);
                let hooks = (entry.on_loss.take(), entry.on_loss_async.take());
                tracing::warn!(child = %name, ?loss, "supervised child stopped unexpectedly");
                if let Some(task) = apply_policy(&self.ctx, &name, policy, loss, hooks) {
                    self.hook_tasks.push(task);
                }
            }
            ChildStatus::Retiring => entry.status = ChildStatus::Stopped,
            ChildStatus::Stopped | ChildStatus::Lost(_) => {}
        }
    }

    fn unregistered_lost(&self, loss: LossKind) {
        tracing::warn!(?loss, "an unregistered linked child stopped");
        let policy = ChildPolicy::Fence(D::UNREGISTERED_CAUSE);
        let _ = apply_policy(&self.ctx, UNREGISTERED, policy, loss, (None, None));
    }
}

/// lifecycle.md §6.3: the synchronous hook first (so a fenced pool is in place before readiness turns
/// false), then the policy, then the asynchronous hook on its own task, which the caller keeps.
fn apply_policy<D: Domain>(
    ctx: &DomainContext<D>,
    name: &str,
    policy: ChildPolicy<D>,
    kind: LossKind,
    (hook, async_hook): (Option<LossHook>, Option<AsyncLossHook>),
) -> Option<JoinHandle<()>> {
    ctx.observer().child_lost(name, policy, kind);
    if let Some(hook) = hook {
        hook();
    }
    let first_fence = match policy {
        ChildPolicy::Fence(cause) if async_hook.is_some() => ctx.fence_unreported(cause),
        ChildPolicy::Fence(cause) => ctx.fence(cause),
        ChildPolicy::StopDomain(cause) => {
            ctx.stop_abnormally(cause);
            false
        }
        ChildPolicy::Tolerate => false,
    };
    async_hook.map(|hook| tokio::spawn(hook(LossReport { kind, first_fence })))
}

/// Identifies one start between `BeginStart` and its registration or abandonment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StartToken(u64);

/// Tells the supervisor that a start is over, however it ended.
struct PendingStart<D: Domain> {
    supervisor: ActorRef<SupervisorMsg<D>>,
    token: StartToken,
}

impl<D: Domain> Drop for PendingStart<D> {
    fn drop(&mut self) {
        // After a registration this is a no-op in the supervisor (tokens are finished once).
        let _ = self.supervisor.send_message(SupervisorMsg::AbandonStart(self.token));
    }
}

/// A handle on one supervisor of the tree. Cloneable; all clones drive the same supervisor.
#[derive(Clone)]
pub struct SupervisorHandle<D: Domain> {
    supervisor: ActorRef<SupervisorMsg<D>>,
    ctx: DomainContext<D>,
    /// Only the root has these: its stop other than through [`SupervisorHandle::shutdown`] is an
    /// abnormal stop of the domain (a child supervisor's stop is its parent's to judge).
    root: Option<RootWatch>,
}

/// The root's watcher: set `orderly` before an intended stop; `watched` turns true once the watcher
/// has judged the stop.
#[derive(Clone)]
struct RootWatch {
    orderly: Arc<AtomicBool>,
    watched: watch::Receiver<bool>,
}

/// The root of the tree: the domain supervisor.
pub type DomainHandle<D> = SupervisorHandle<D>;

impl<D: Domain> fmt::Debug for SupervisorHandle<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SupervisorHandle").field("supervisor", &self.supervisor.get_id()).finish()
    }
}

impl<D: Domain> SupervisorHandle<D> {
    /// Spawns the domain supervisor, the root of the tree. If it ever stops other than through
    /// [`SupervisorHandle::shutdown`] (a panic in its logic), the domain stops abnormally with
    /// [`Domain::ROOT_LOST`] (lifecycle.md §7.5).
    pub async fn start(ctx: DomainContext<D>) -> Result<SupervisorHandle<D>, DomainError> {
        let (supervisor, join) = Supervisor::spawn(None, Supervisor(PhantomData), ctx.clone())
            .await
            .map_err(|_| DomainError::SupervisorStartFailed)?;
        let orderly = Arc::new(AtomicBool::new(false));
        let (done_tx, watched) = watch::channel(false);
        let (watcher_ctx, watcher_orderly) = (ctx.clone(), orderly.clone());
        // The root's own end is watched through its join handle, so even a root that could not run
        // its post_stop is noticed.
        tokio::spawn(async move {
            let _ = join.await;
            if !watcher_orderly.load(Ordering::Acquire) {
                watcher_ctx.stop_abnormally(D::ROOT_LOST);
            }
            done_tx.send_replace(true);
        });
        Ok(SupervisorHandle { supervisor, ctx, root: Some(RootWatch { orderly, watched }) })
    }

    /// The context shared by the domain.
    pub fn context(&self) -> &DomainContext<D> {
        &self.ctx
    }

    /// Starts one child linked to this supervisor and registers it with its policy. Call in stage
    /// order; an error is the stage's failure. The child's `pre_start` runs on the caller's task.
    pub async fn start_child<A: Actor>(
        &self,
        spec: ChildSpec<A, D>,
    ) -> Result<ActorRef<A::Msg>, DomainError> {
        let token = self.call(SupervisorMsg::BeginStart).await?;
        // Dropped on every path (error, success, or the caller abandoning this future).
        let _pending = PendingStart { supervisor: self.supervisor.clone(), token };
        let ChildSpec { name, policy, actor, args, on_loss, on_loss_async, panic_message } = spec;
        let spawned = A::spawn_linked(None, actor, args, self.supervisor.get_cell()).await;
        let (child, _join) = spawned.map_err(|_| DomainError::ChildStartFailed { child: name.clone() })?;
        let injector = panic_message.map(|message| {
            let target = child.clone();
            let injector: PanicInjector = Box::new(move || {
                let _ = target.send_message(message());
            });
            Arc::new(injector)
        });
        let registration = Box::new(Registration {
            name,
            cell: child.get_cell(),
            policy,
            on_loss,
            on_loss_async,
            injector,
            sub: None,
        });
        // If the supervisor is gone, so are its linked children: the error says so.
        self.call(|reply| SupervisorMsg::Register(token, registration, reply)).await?;
        Ok(child)
    }

    /// Starts a child supervisor named `name`. `policy` applies to the loss of that supervisor itself
    /// (a panic in its own logic); each of its children declares its own policy when started.
    pub async fn start_supervisor(
        &self,
        name: impl Into<String>,
        policy: ChildPolicy<D>,
    ) -> Result<SupervisorHandle<D>, DomainError> {
        let name = name.into();
        let token = self.call(SupervisorMsg::BeginStart).await?;
        let _pending = PendingStart { supervisor: self.supervisor.clone(), token };
        let spawned = Supervisor::spawn_linked(
            None,
            Supervisor(PhantomData),
            self.ctx.clone(),
            self.supervisor.get_cell(),
        )
        .await;
        let (child, _join) = spawned.map_err(|_| DomainError::ChildStartFailed { child: name.clone() })?;
        let handle = SupervisorHandle { supervisor: child.clone(), ctx: self.ctx.clone(), root: None };
        let panicking = child.clone();
        let injector: PanicInjector = Box::new(move || {
            let _ = panicking.send_message(SupervisorMsg::Panic);
        });
        let registration = Box::new(Registration {
            name,
            cell: child.get_cell(),
            policy,
            on_loss: None,
            on_loss_async: None,
            injector: Some(Arc::new(injector)),
            sub: Some(handle.clone()),
        });
        self.call(|reply| SupervisorMsg::Register(token, registration, reply)).await?;
        Ok(handle)
    }

    /// Retires the named running child and stops it, waiting up to `bound` for its `post_stop`; a child
    /// still running then is killed. Its stop is expected, so no policy applies. A child supervisor is
    /// stopped as a subtree: its children first, in reverse start order ([`SupervisorHandle::shutdown`]).
    /// Stages use this to stop the listeners (S1) or the audit owner (S7) without stopping the domain.
    pub async fn stop_child(&self, name: &str, bound: Duration) -> Result<ChildStop, DomainError> {
        let retired = self.call(|reply| SupervisorMsg::Retire(name.to_string(), reply)).await?;
        let (cell, sub) = retired.ok_or_else(|| DomainError::UnknownChild { child: name.to_string() })?;
        if let Some(sub) = sub {
            let stopped = Box::pin(sub.shutdown(bound)).await;
            if stopped.iter().any(|(_, how)| *how == ChildStop::Killed) {
                let _ = stop_cell(&cell, bound).await;
                return Ok(ChildStop::Killed);
            }
        }
        Ok(stop_cell(&cell, bound).await)
    }

    /// Every registered child of this supervisor, in start order.
    pub async fn children(&self) -> Result<Vec<ChildInfo<D>>, DomainError> {
        Ok(self.call(SupervisorMsg::Children).await?.into_iter().map(|(info, _)| info).collect())
    }

    /// The tree below this supervisor as the running system reports it, children in start order.
    pub async fn tree(&self) -> Result<Vec<TreeNode<D>>, DomainError> {
        let rows = self.call(SupervisorMsg::Children).await?;
        let mut nodes = Vec::with_capacity(rows.len());
        for (info, sub) in rows {
            let children = match sub {
                Some(sub) if info.status == ChildStatus::Running => Box::pin(sub.tree()).await?,
                _ => Vec::new(),
            };
            nodes.push(TreeNode { name: info.name, policy: info.policy, status: info.status, children });
        }
        Ok(nodes)
    }

    /// Makes the running child at `path` (names joined by `/`, relative to this supervisor) panic, if
    /// it was started with a panic injector (every child supervisor has one). For the fault tests.
    pub async fn inject_panic(&self, path: &str) -> Result<(), DomainError> {
        let (head, rest) = match path.split_once('/') {
            Some((head, rest)) => (head, Some(rest)),
            None => (path, None),
        };
        let found = self.call(|reply| SupervisorMsg::Injector(head.to_string(), reply)).await?;
        let unknown = || DomainError::UnknownChild { child: path.to_string() };
        match (found, rest) {
            (Some((injector, _)), None) => {
                injector();
                Ok(())
            }
            (Some((_, Some(sub))), Some(rest)) => Box::pin(sub.inject_panic(rest)).await,
            _ => Err(unknown()),
        }
    }

    /// Makes this supervisor itself panic (the fault tests' lifecycle.md §7.5 case for the root).
    pub fn inject_own_panic(&self) {
        let _ = self.supervisor.send_message(SupervisorMsg::Panic);
    }

    /// Waits, up to `bound`, for every asynchronous loss hook this supervisor and its child
    /// supervisors started so far. True iff all ended within the bound without a panic.
    pub async fn settle_losses(&self, bound: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + bound;
        let mut clean = true;
        let Ok(rows) = self.call(SupervisorMsg::Children).await else { return false };
        for sub in rows.into_iter().filter_map(|(_, sub)| sub) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            clean &= Box::pin(sub.settle_losses(left)).await;
        }
        let Ok(tasks) = self.call(SupervisorMsg::TakeHookTasks).await else { return false };
        for task in tasks {
            let abort = task.abort_handle();
            match tokio::time::timeout_at(deadline, task).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => {
                    tracing::error!("a loss hook panicked");
                    clean = false;
                }
                Err(_) => {
                    abort.abort();
                    clean = false;
                }
            }
        }
        clean
    }

    /// Stops every running child in reverse start order, each with `bound_per_child` (a child
    /// supervisor as a subtree), then this supervisor itself, which is then not a loss. Returns how
    /// each direct child stopped.
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
        let _ = self.settle_losses(bound_per_child).await;
        if let Some(root) = &self.root {
            root.orderly.store(true, Ordering::Release);
        }
        let _ = stop_cell(&self.supervisor.get_cell(), bound_per_child).await;
        if let Some(root) = &self.root {
            // Wait for the watcher's verdict, so that nothing about this domain changes after we return.
            let mut watched = root.watched.clone();
            let _ = tokio::time::timeout(bound_per_child, watched.wait_for(|done| *done)).await;
        }
        stopped
    }

    /// The supervisor's cell (for tests that inject faults).
    pub fn supervisor_cell(&self) -> ActorCell {
        self.supervisor.get_cell()
    }

    async fn call<R: Send + 'static>(
        &self,
        build: impl FnOnce(RpcReplyPort<R>) -> SupervisorMsg<D>,
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
