//! [`SupervisorHandle`]: the tree driven from outside: start a child or a child supervisor, stop a
//! subtree, list the tree, settle the loss hooks and, with the `fault-injection` feature, make a child
//! panic. Builds on `actor.rs` (the supervisor's messages) and `child.rs`; neither imports this file.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use ractor::{Actor, ActorCell, ActorRef, RpcReplyPort};

use super::actor::*;
use super::child::*;
use crate::context::DomainContext;
use crate::domain::Domain;
use crate::policy::ChildPolicy;

/// How long a call to a supervisor may take before it counts as unresponsive.
const CALL_BOUND: Duration = Duration::from_millis(5_000);

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
    /// [`Domain::ROOT_LOST`].
    pub async fn start(ctx: DomainContext<D>) -> Result<SupervisorHandle<D>, DomainError> {
        let (supervisor, join) = Supervisor::spawn(None, Supervisor(PhantomData), ctx.clone())
            .await
            .map_err(|e| DomainError::SupervisorStartFailed { cause: e.to_string() })?;
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

    /// The handle on a child supervisor of this one (a child supervisor's stop is its parent's to judge).
    fn sub(&self, supervisor: SupervisorRef<D>) -> SupervisorHandle<D> {
        SupervisorHandle { supervisor, ctx: self.ctx.clone(), root: None }
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
        #[cfg(feature = "fault-injection")]
        let ChildSpec { name, policy, actor, args, on_loss, on_loss_async, panic_message } = spec;
        #[cfg(not(feature = "fault-injection"))]
        let ChildSpec { name, policy, actor, args, on_loss, on_loss_async } = spec;
        let spawned = A::spawn_linked(None, actor, args, self.supervisor.get_cell()).await;
        let (child, _join) = spawned
            .map_err(|e| DomainError::ChildStartFailed { child: name.clone(), cause: e.to_string() })?;
        #[cfg(feature = "fault-injection")]
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
            #[cfg(feature = "fault-injection")]
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
        let (child, _join) = spawned
            .map_err(|e| DomainError::ChildStartFailed { child: name.clone(), cause: e.to_string() })?;
        let handle = self.sub(child.clone());
        #[cfg(feature = "fault-injection")]
        let panicking = child.clone();
        #[cfg(feature = "fault-injection")]
        let injector: PanicInjector = Box::new(move || {
            let _ = panicking.send_message(SupervisorMsg::Panic);
        });
        let registration = Box::new(Registration {
            name,
            cell: child.get_cell(),
            policy,
            on_loss: None,
            on_loss_async: None,
            #[cfg(feature = "fault-injection")]
            injector: Some(Arc::new(injector)),
            sub: Some(child),
        });
        self.call(|reply| SupervisorMsg::Register(token, registration, reply)).await?;
        Ok(handle)
    }

    /// Retires the named running child and stops it, waiting up to `bound` for its `post_stop`; a child
    /// still running then is killed. Its stop is expected, so no policy applies. A child supervisor is
    /// stopped as a subtree: its children first, in reverse start order ([`SupervisorHandle::shutdown`]).
    /// Shutdown stages use this to stop one part of the tree without stopping the domain.
    pub async fn stop_child(&self, name: &str, bound: Duration) -> Result<ChildStop, DomainError> {
        let retired = self.call(|reply| SupervisorMsg::Retire(name.to_string(), reply)).await?;
        let (cell, sub) = retired.ok_or_else(|| DomainError::UnknownChild { child: name.to_string() })?;
        if let Some(sub) = sub {
            let stopped = Box::pin(self.sub(sub).shutdown(bound)).await;
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
                Some(sub) if info.status == ChildStatus::Running => Box::pin(self.sub(sub).tree()).await?,
                _ => Vec::new(),
            };
            nodes.push(TreeNode { name: info.name, policy: info.policy, status: info.status, children });
        }
        Ok(nodes)
    }

    /// Makes the running child at `path` (names joined by `/`, relative to this supervisor) panic, if
    /// it was started with a panic injector (every child supervisor has one). For the fault tests.
    #[cfg(feature = "fault-injection")]
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
            (Some((_, Some(sub))), Some(rest)) => Box::pin(self.sub(sub).inject_panic(rest)).await,
            _ => Err(unknown()),
        }
    }

    /// Makes this supervisor itself panic in its own logic (for the root: the domain then stops
    /// abnormally with [`Domain::ROOT_LOST`]). For the fault tests.
    #[cfg(feature = "fault-injection")]
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
            clean &= Box::pin(self.sub(sub).settle_losses(left)).await;
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
