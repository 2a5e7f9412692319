#![forbid(unsafe_code)]
//! `ptc-actors`: a supervised actor runtime for one long-running service process: readiness and fencing,
//! admission without queues, a supervision tree whose children declare what their loss means, and a
//! staged shutdown with its exit status.
//!
//! It knows nothing of any protocol, document or specification of the program that embeds it (in this
//! workspace, `ptc-gateway`, which depends on this crate, never the reverse): every cause, stage,
//! deadline and exit status it handles is supplied by that program.
//!
//! # Generic over the domain
//!
//! Every piece that carries a cause or a stage is generic over a [`Domain`]: a marker type whose
//! associated types are the readiness causes, the abnormal-stop causes and the shutdown stages, with the
//! few rules and values the runtime applies to them (the cause a drain records, the fence an abnormal stop
//! makes, the cause of an unregistered child's loss and of the root supervisor's, the fences that count
//! for the exit status, the drain window, the unclean exit status) and the stage table: the stages in
//! order, each with its built-in part ([`Builtin`]), its bound ([`Bound`]) and whether it counts for the
//! exit status. This crate's tests use a small domain of their own.
//!
//! # Pieces
//!
//! | Module | Owns |
//! | --- | --- |
//! | [`domain`] | [`Domain`] and [`Code`]: what the runtime is generic over; the stage table's shape |
//! | [`readiness`] | the one atomic readiness flag and its first cause |
//! | [`context`] | [`DomainContext`]: fence once, report once, stop abnormally, begin the drain |
//! | [`trigger`] | [`ShutdownTrigger`]: first signal, abnormal stop, drain deadline |
//! | [`event_logger`] | [`EventLogger`]: an event log's bounded queue, writer thread and interval |
//! | [`observer`] | [`DomainObserver`]: what an event log hears (readiness, child losses, stages) |
//! | [`policy`] | [`ChildPolicy`] and [`LossKind`]: what a child's loss means, how it stopped |
//! | [`admission`] | [`AdmissionPool`] and its RAII [`Lease`]: reservation without queues |
//! | [`admission_owner`] | [`AdmissionOwnerRef`]: the supervised owner actor of one or more pools |
//! | [`supervisor`] | [`SupervisorHandle`]: the tree; start children in order, apply their loss policy |
//! | [`tasks`] | [`TaskGroup`]: tasks whose end or panic their owner hears |
//! | [`task_owner`] | [`TaskOwner`]: an owner actor that fails when any of its tasks ends or a loss is reported |
//! | [`stage`], [`shutdown`], [`exit`] | stage outcomes and hooks, running the domain's stage table with
//! its bounds, exit 0 or the domain's unclean status |
//!
//! # Features
//!
//! `fault-injection` (test-only): the `Panic` message of every actor of this crate, the child spec's
//! `panic_message` and the handle's `inject_panic`/`inject_own_panic`, which make a running child (or a
//! supervisor) fail in its own logic.
//!
//! # How a program wires it
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use ptc_actors::*;
//!
//! // `D` is the program's domain; the causes and the stage are its codes.
//! # async fn serve<D: Domain>(
//! #     admission_lost: D::NotReady,
//! #     listener_lost: D::Abnormal,
//! #     first_stage: D::Stage,
//! # ) -> Result<u8, DomainError> {
//! // Process start: one context for the whole domain; the observer is, e.g., an event log's enqueuer.
//! let ctx = DomainContext::<D>::new(Arc::new(NoopObserver));
//! // The signal task only reports; a repeated signal changes nothing.
//! let trigger = ctx.trigger().clone();
//! tokio::spawn(async move { /* on a termination signal: */ trigger.signal(); });
//!
//! // Startup, in order. Each child's loss policy is declared once, here.
//! let domain = DomainHandle::start(ctx.clone()).await?;
//! let jobs = AdmissionPool::new("jobs", 4, RefusalOrder::UnavailableFirst);
//! let job_owner = AdmissionOwnerRef::start(&domain, "job_admission", vec![jobs.clone()], admission_lost).await?;
//! let requests = AdmissionPool::new("requests", 16, RefusalOrder::UnavailableFirst);
//! let _request_owner =
//!     AdmissionOwnerRef::start(&domain, "request_admission", vec![requests.clone()], admission_lost).await?;
//! // domain.start_child(ChildSpec::new("listener", ChildPolicy::StopDomain(listener_lost), ..)).await?;
//! # let _ = listener_lost;
//! if !ctx.mark_ready() { /* fenced during startup: a startup failure */ }
//!
//! // Per request (no mailbox): `ctx.readiness().is_ready()`, `requests.try_reserve()`,
//! // `jobs.try_reserve()`; a job selects on `lease.cancelled()` next to its own work.
//!
//! // Serving ends on a signal or on an abnormal stop reported by any owner. The shutdown drains the
//! // job admission: its leases are waited for until the drain deadline, then cancelled.
//! ctx.trigger().triggered().await;
//! let plan = ShutdownPlan::new(job_owner)
//!     .with_stage(first_stage, |_stage: StageContext<D>| async { StageOutcome::Clean })
//!     .with_domain(domain, Duration::from_secs(1));
//! let report = run_shutdown(&ctx, plan).await;
//! Ok(report.exit_code())
//! # }
//! ```
//!
//! # Rules the crate makes true
//!
//! * A fence is permanent and reported once with its first cause; `mark_ready` never revives it.
//! * A child declared [`ChildPolicy::StopDomain`] that is lost stops the domain: the trigger fires with
//!   its abnormal cause, the drain deadline is that instant, the exit is unclean.
//! * A child declared [`ChildPolicy::Tolerate`] that is lost changes nothing. The event logger's thread is
//!   not a supervised child: it can start before the supervisor and close after it, and its loss is
//!   tolerated by construction ([`event_logger`]).
//! * A child that a stage stops on purpose must be stopped with [`DomainHandle::stop_child`] (it is
//!   *retired* first), otherwise its stop is a loss.
//! * Children are stopped explicitly, in reverse start order, by [`DomainHandle::shutdown`]; ractor's
//!   "parent exit kills children without `post_stop`" never happens on an orderly path.
//!
//! # The runtime's own bounds
//!
//! [`shutdown::ACTION_BOUND`] (2 s) bounds the drained admission owner's acknowledgements and is meant
//! for stages that only act and never wait for work; [`shutdown::HOOK_GRACE`] (1 s) is meant to be added
//! after a deadline a hook must act at, so the hook's own bound fires first. A hook that overruns its
//! stage's bound is aborted and its stage is unclean.

pub mod admission;
pub mod admission_owner;
pub mod context;
pub mod domain;
pub mod event_logger;
pub mod exit;
pub mod observer;
pub mod policy;
pub mod readiness;
pub mod shutdown;
pub mod stage;
pub mod supervisor;
pub mod task_owner;
pub mod tasks;
#[cfg(test)]
mod test_domain;
pub mod trigger;

pub use admission::{AdmissionPool, AdmissionSnapshot, IdleTimeout, Lease, PoolState, Refusal, RefusalOrder};
pub use admission_owner::{AdmissionOwner, AdmissionOwnerRef, OwnerError, OwnerMsg};
pub use context::DomainContext;
pub use domain::{Bound, Builtin, Code, Domain, StageSpec};
pub use event_logger::{EventLogger, EventSink, SpawnFailed};
pub use exit::{exit_status, ExitStatus, Incidents};
pub use observer::{DomainObserver, NoopObserver};
pub use policy::{ChildPolicy, LossKind};
pub use readiness::{Phase, Readiness};
pub use shutdown::{run_shutdown, ShutdownPlan, ShutdownReport};
pub use stage::{Stage, StageContext, StageFuture, StageOutcome, Unclean};
pub use supervisor::{
    AsyncLossHook, ChildInfo, ChildSpec, ChildStatus, ChildStop, DomainError, DomainHandle, LossHook,
    LossReport, SupervisorHandle, TreeNode,
};
pub use task_owner::{OwnedTask, TaskOwner, TaskOwnerMsg};
pub use tasks::{TaskEnd, TaskGroup, TaskReport};
pub use trigger::{ShutdownTrigger, TriggerKind, TriggerState};
