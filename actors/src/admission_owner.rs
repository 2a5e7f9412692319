//! The owner actor of one or more admission pools.
//!
//! Owns: the policy transitions of its pools (quiesce, cancel-all, fence) and their report. The
//! per-request path never touches this mailbox: it reserves on the [`AdmissionPool`] directly. What the
//! owner adds is a supervised life: when the owner is lost, its supervisor fences every pool it held
//! (each then refuses with `Unavailable`), and readiness is fenced with the owner's cause.
//!
//! Does not own: the pools' atomics (`admission.rs`) or readiness (`context.rs`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use ractor::rpc::CallResult;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use crate::admission::{AdmissionPool, AdmissionSnapshot};
use crate::context::DomainContext;
use crate::domain::Domain;
use crate::policy::ChildPolicy;
use crate::supervisor::{ChildSpec, DomainError, DomainHandle};
use crate::tasks::CatchUnwind;

/// The owner's messages: policy transitions only, never a per-request reservation.
#[derive(Debug)]
pub enum OwnerMsg {
    /// Refuse new reservations on every pool (a drain's first step); answers with the pools' reports.
    Quiesce(RpcReplyPort<Vec<AdmissionSnapshot>>),
    /// Cancel the work of every lease (at the drain deadline).
    CancelAll(RpcReplyPort<()>),
    /// Fence every pool for good (work it admitted was lost before it settled).
    Fence(RpcReplyPort<()>),
    /// Report every pool.
    Report(RpcReplyPort<Vec<AdmissionSnapshot>>),
    /// A task linked to this owner ([`AdmissionOwnerRef::spawn_linked`]) was lost before its work
    /// settled: the owner stops without acknowledging cleanup, which its supervisor turns into the
    /// owner's loss: its pools become unavailable and readiness is fenced with the owner's cause.
    WorkLost,
    /// The fault tests' panic in the owner's own logic.
    #[cfg(feature = "fault-injection")]
    Panic,
}

/// Errors of a call to the owner. Closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerError {
    /// The owner is gone; its pools are fenced by its supervisor.
    Gone,
    /// The owner did not answer within the bound.
    Unresponsive,
}

impl OwnerError {
    /// A stable kind for logs and tests.
    pub fn kind(self) -> &'static str {
        match self {
            OwnerError::Gone => "owner_gone",
            OwnerError::Unresponsive => "owner_unresponsive",
        }
    }
}

impl fmt::Display for OwnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind())
    }
}

impl std::error::Error for OwnerError {}

/// The owner actor. Its state is the pools it owns.
#[derive(Clone, Copy, Debug, Default)]
pub struct AdmissionOwner;

impl Actor for AdmissionOwner {
    type Msg = OwnerMsg;
    type State = Vec<AdmissionPool>;
    type Arguments = Vec<AdmissionPool>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        pools: Vec<AdmissionPool>,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(pools)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        pools: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            OwnerMsg::Quiesce(reply) => {
                pools.iter().for_each(|p| {
                    p.quiesce();
                });
                let _ = reply.send(pools.iter().map(AdmissionPool::snapshot).collect());
            }
            OwnerMsg::CancelAll(reply) => {
                pools.iter().for_each(AdmissionPool::cancel_all);
                let _ = reply.send(());
            }
            OwnerMsg::Fence(reply) => {
                pools.iter().for_each(|p| {
                    p.fence();
                });
                let _ = reply.send(());
            }
            OwnerMsg::Report(reply) => {
                let _ = reply.send(pools.iter().map(AdmissionPool::snapshot).collect());
            }
            // The pools were fenced by the reporter already, and the supervisor's loss hook fences them
            // again before readiness changes.
            OwnerMsg::WorkLost => return Err("a linked task was lost before its work settled".into()),
            #[cfg(feature = "fault-injection")]
            OwnerMsg::Panic => return Err("injected fault: a panic in an admission owner".into()),
        }
        Ok(())
    }
}

/// A started owner: its actor and the pools it owns. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AdmissionOwnerRef {
    actor: ActorRef<OwnerMsg>,
    pools: Vec<AdmissionPool>,
}

impl AdmissionOwnerRef {
    /// Starts an owner of `pools` as a child of `domain`, named `name`. Its loss fences every pool and
    /// then readiness with `cause`.
    pub async fn start<D: Domain>(
        domain: &DomainHandle<D>,
        name: &str,
        pools: Vec<AdmissionPool>,
        cause: D::NotReady,
    ) -> Result<AdmissionOwnerRef, DomainError> {
        let fenced_on_loss = pools.clone();
        let spec = ChildSpec::new(name, ChildPolicy::Fence(cause), AdmissionOwner, pools.clone()).on_loss(
            move || {
                fenced_on_loss.iter().for_each(|p| {
                    p.fence();
                });
            },
        );
        #[cfg(feature = "fault-injection")]
        let spec = spec.panic_message(|| OwnerMsg::Panic);
        let actor = domain.start_child(spec).await?;
        Ok(AdmissionOwnerRef { actor, pools })
    }

    /// Spawns `work` as a task linked to this owner: if it panics, the owner hears that its work was
    /// lost and stops without acknowledging cleanup, so its supervisor fences the pools and readiness
    /// with the owner's cause. The task's own result is returned through the handle.
    pub fn spawn_linked<T, F>(&self, work: F) -> tokio::task::JoinHandle<Option<T>>
    where
        F: std::future::Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        tokio::spawn(Linked { work: crate::tasks::catch_unwind(work), owner: self.clone() })
    }

    /// Tells the owner that work it admitted was lost before it settled: the
    /// pools are fenced at once, here, and the owner's loss fences readiness through its supervisor.
    pub fn report_lost_work(&self) {
        self.pools.iter().for_each(|p| {
            p.fence();
        });
        let _ = self.actor.send_message(OwnerMsg::WorkLost);
    }

    /// The pools, in the order given at start. Callers reserve on these directly.
    pub fn pools(&self) -> &[AdmissionPool] {
        &self.pools
    }

    /// The owner's actor (to stop it in fault tests, or to monitor it).
    pub fn actor(&self) -> &ActorRef<OwnerMsg> {
        &self.actor
    }

    /// True once any pool of this owner was fenced (for the drained admission, an exit incident).
    pub fn any_fenced(&self) -> bool {
        self.pools.iter().any(AdmissionPool::is_fenced)
    }

    /// Asks the owner to quiesce and waits for its acknowledgement. Without one the pools are
    /// quiesced directly anyway (new work must be refused), and the error says the stage is unclean.
    pub async fn quiesce(&self, bound: Duration) -> Result<Vec<AdmissionSnapshot>, OwnerError> {
        let acked = self.call(OwnerMsg::Quiesce, bound).await;
        if acked.is_err() {
            self.pools.iter().for_each(|p| {
                p.quiesce();
            });
        }
        acked
    }

    /// At the drain deadline: cancels every lease's work, directly if the owner does not answer.
    pub async fn cancel_all(&self, bound: Duration) -> Result<(), OwnerError> {
        let acked = self.call(OwnerMsg::CancelAll, bound).await;
        if acked.is_err() {
            self.pools.iter().for_each(AdmissionPool::cancel_all);
        }
        acked
    }

    /// Fences the pools (directly as well, so the fence holds even if the owner is slow) and readiness
    /// with `cause`. Returns true iff readiness changed.
    pub async fn fence<D: Domain>(
        &self,
        ctx: &DomainContext<D>,
        cause: D::NotReady,
        bound: Duration,
    ) -> bool {
        self.pools.iter().for_each(|p| {
            p.fence();
        });
        let _ = self.call(OwnerMsg::Fence, bound).await;
        ctx.fence(cause)
    }

    /// The pools' reports, as the owner sees them.
    pub async fn report(&self, bound: Duration) -> Result<Vec<AdmissionSnapshot>, OwnerError> {
        self.call(OwnerMsg::Report, bound).await
    }

    async fn call<R: Send + 'static>(
        &self,
        build: impl FnOnce(RpcReplyPort<R>) -> OwnerMsg,
        bound: Duration,
    ) -> Result<R, OwnerError> {
        match self.actor.call(build, Some(bound)).await {
            Ok(CallResult::Success(value)) => Ok(value),
            Ok(CallResult::Timeout) => Err(OwnerError::Unresponsive),
            Ok(CallResult::SenderError) | Err(_) => Err(OwnerError::Gone),
        }
    }
}

pin_project_lite::pin_project! {
    /// The task of [`AdmissionOwnerRef::spawn_linked`]: the work, whose panic is reported to the owner.
    /// A struct that holds the work once; the `async` block around the `async fn catch_unwind` it
    /// replaces held it three times (issue 27: a call's ending task was 5 KB).
    struct Linked<F> {
        #[pin]
        work: CatchUnwind<F>,
        owner: AdmissionOwnerRef,
    }
}

impl<F: Future> Future for Linked<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match ready!(this.work.poll(cx)) {
            Ok(value) => Poll::Ready(Some(value)),
            Err(_) => {
                this.owner.report_lost_work();
                Poll::Ready(None)
            }
        }
    }
}
