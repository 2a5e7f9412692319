//! The supervisor actor: its registered children in start order, the reaction to ractor supervision
//! events, and the loss policy each child declared, applied once.
//!
//! A child that is itself a supervisor is kept as its actor reference ([`SupervisorRef`]); `handle.rs`
//! wraps it in a handle. This file imports nothing from `handle.rs`.

use std::marker::PhantomData;
#[cfg(feature = "fault-injection")]
use std::sync::Arc;

use tokio::task::JoinHandle;

use ractor::{Actor, ActorCell, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

use super::child::*;
use crate::context::DomainContext;
use crate::domain::Domain;
use crate::policy::{ChildPolicy, LossKind};

/// The name reported for a linked child that was never registered.
const UNREGISTERED: &str = "unregistered";

/// A supervisor's actor reference: how a parent keeps a child supervisor.
pub(super) type SupervisorRef<D> = ActorRef<SupervisorMsg<D>>;

pub(super) struct Registration<D: Domain> {
    pub(super) name: String,
    pub(super) cell: ActorCell,
    pub(super) policy: ChildPolicy<D>,
    pub(super) on_loss: Option<LossHook>,
    pub(super) on_loss_async: Option<AsyncLossHook>,
    #[cfg(feature = "fault-injection")]
    pub(super) injector: Option<Arc<PanicInjector>>,
    pub(super) sub: Option<SupervisorRef<D>>,
}

/// A retired child: its cell, and its reference if it is a supervisor.
pub(super) type Retired<D> = Option<(ActorCell, Option<SupervisorRef<D>>)>;
/// A running child's panic injector, and its reference if it is a supervisor.
#[cfg(feature = "fault-injection")]
pub(super) type FoundInjector<D> = Option<(Arc<PanicInjector>, Option<SupervisorRef<D>>)>;
/// Every registered child, with its reference if it is a supervisor.
pub(super) type ChildRows<D> = Vec<(ChildInfo<D>, Option<SupervisorRef<D>>)>;

/// A supervisor's messages. Private: callers talk to it through [`SupervisorHandle`].
pub(super) enum SupervisorMsg<D: Domain> {
    BeginStart(RpcReplyPort<StartToken>),
    AbandonStart(StartToken),
    Register(StartToken, Box<Registration<D>>, RpcReplyPort<()>),
    Retire(String, RpcReplyPort<Retired<D>>),
    Children(RpcReplyPort<ChildRows<D>>),
    TakeHookTasks(RpcReplyPort<Vec<JoinHandle<()>>>),
    #[cfg(feature = "fault-injection")]
    Injector(String, RpcReplyPort<FoundInjector<D>>),
    /// The fault tests' panic in the supervisor's own logic.
    #[cfg(feature = "fault-injection")]
    Panic,
}

pub(super) struct Entry<D: Domain> {
    name: String,
    id: ActorId,
    cell: ActorCell,
    policy: ChildPolicy<D>,
    on_loss: Option<LossHook>,
    on_loss_async: Option<AsyncLossHook>,
    #[cfg(feature = "fault-injection")]
    injector: Option<Arc<PanicInjector>>,
    sub: Option<SupervisorRef<D>>,
    status: ChildStatus,
}

pub(super) struct SupervisorState<D: Domain> {
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

pub(super) struct Supervisor<D: Domain>(pub(super) PhantomData<fn() -> D>);

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
            #[cfg(feature = "fault-injection")]
            SupervisorMsg::Injector(name, reply) => {
                let found = state
                    .children
                    .iter()
                    .find(|e| e.name == name && e.status == ChildStatus::Running)
                    .and_then(|e| e.injector.clone().map(|i| (i, e.sub.clone())));
                let _ = reply.send(found);
            }
            #[cfg(feature = "fault-injection")]
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
            #[cfg(feature = "fault-injection")]
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
            // No start is outstanding, so these were linked children nobody registered: their loss
            // fences with the domain's cause for an unregistered child.
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

/// The synchronous hook first (so a fenced pool is in place before readiness turns false), then the
/// policy, then the asynchronous hook on its own task, which the caller keeps.
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
pub(super) struct StartToken(u64);

/// Tells the supervisor that a start is over, however it ended.
pub(super) struct PendingStart<D: Domain> {
    pub(super) supervisor: ActorRef<SupervisorMsg<D>>,
    pub(super) token: StartToken,
}

impl<D: Domain> Drop for PendingStart<D> {
    fn drop(&mut self) {
        // After a registration this is a no-op in the supervisor (tokens are finished once).
        let _ = self.supervisor.send_message(SupervisorMsg::AbandonStart(self.token));
    }
}
