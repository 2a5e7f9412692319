#![forbid(unsafe_code)]
//! `ptc-actors`: the supervised runtime of ptc-gateway; docs/architecture.md draws the tree it runs.
//!
//! It owns the generic building blocks the gateway is assembled from: readiness and fencing, admission
//! without queues, the domain supervisor and its staged shutdown. It knows nothing of MCP, JSON-RPC or
//! the gateway's documents; the gateway (`ptc-gateway`) depends on this crate, never the reverse.
//!
//! # Generic over the domain
//!
//! The crate names no cause, stage or deadline of the gateway. Every piece that carries one is generic
//! over a [`Domain`]: a marker type whose associated types are the readiness causes, the abnormal-stop
//! causes and the shutdown stages, with the few rules the runtime applies to them (the cause a drain
//! records, the fence an abnormal stop makes, the cause of an unregistered child's loss and of the root
//! supervisor's, the fences that count for the exit status, the drain window) and the stage table: the
//! stages in order, each with its built-in part ([`Builtin`]), its bound ([`Bound`]) and whether it
//! counts for the exit status. The gateway implements it in `src/codes/domain.rs`; this crate's tests use
//! a small domain of their own.
//!
//! # Pieces
//!
//! | Module | Owns |
//! | --- | --- |
//! | [`domain`] | [`Domain`] and [`Code`]: what the runtime is generic over; the stage table's shape |
//! | [`readiness`] | the one atomic readiness flag and its first cause (lifecycle.md §6.2–§6.4) |
//! | [`context`] | [`DomainContext`]: fence once, report once, stop abnormally, begin the drain |
//! | [`trigger`] | [`ShutdownTrigger`]: first signal, abnormal stop, drain deadline
//! (lifecycle.md §7.1, §7.2, §8.2) |
//! | [`event_logger`] | [`EventLogger`]: the event log's bounded queue, writer thread and interval |
//! | [`observer`] | [`DomainObserver`]: what the event log hears (readiness, child losses, stages) |
//! | [`admission`] | [`AdmissionPool`] and its RAII [`Lease`]: reservation without queues |
//! | [`admission_owner`] | [`AdmissionOwnerRef`]: the supervised owner actor of one or more pools |
//! | [`supervisor`] | [`SupervisorHandle`]: the tree; start children in stage order, apply their loss policy |
//! | [`tasks`] | [`TaskGroup`]: tasks whose end or panic their owner hears |
//! | [`task_owner`] | [`TaskOwner`]: an owner actor that fails when any of its tasks ends or a loss is reported |
//! | [`stage`], [`shutdown`], [`exit`] | stage outcomes and hooks, running the domain's stage table with
//! its bounds (lifecycle.md §7.2, §7.3), exit 0 or 70 (lifecycle.md §7.4) |
//!
//! # How the gateway wires it
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use ptc_actors::*;
//!
//! // `D` is the gateway's domain; the causes and the stage are its codes.
//! # async fn serve<D: Domain>(
//! #     admission_lost: D::NotReady,
//! #     listener_lost: D::Abnormal,
//! #     first_stage: D::Stage,
//! # ) -> Result<u8, DomainError> {
//! // Process start: one context for the whole domain; the observer is the event log's enqueuer.
//! let ctx = DomainContext::<D>::new(Arc::new(NoopObserver));
//! // The signal task only reports; a repeated signal changes nothing (lifecycle.md §8.2).
//! let trigger = ctx.trigger().clone();
//! tokio::spawn(async move { /* on SIGTERM or SIGINT: */ trigger.signal(); });
//!
//! // Startup, in stage order. Each child's loss policy is declared once, here.
//! let domain = DomainHandle::start(ctx.clone()).await?;
//! // domain.start_child(ChildSpec::new("audit", ChildPolicy::StopDomain(audit_lost), ..)).await?;
//! let runs = AdmissionPool::new("runs", 4, RefusalOrder::UnavailableFirst);
//! let run_owner = AdmissionOwnerRef::start(&domain, "run_admission", vec![runs.clone()], admission_lost).await?;
//! let requests = AdmissionPool::new("requests", 16, RefusalOrder::UnavailableFirst);
//! let streams = AdmissionPool::new("pcc_streams", 16, RefusalOrder::ExhaustedFirst);
//! let _request_owner = AdmissionOwnerRef::start(
//!     &domain, "request_admission", vec![requests.clone(), streams.clone()], admission_lost,
//! ).await?;
//! // domain.start_child(ChildSpec::new("listener", ChildPolicy::StopDomain(listener_lost), ..)).await?;
//! # let _ = listener_lost;
//! if !ctx.mark_ready() { /* fenced during startup: a startup failure */ }
//!
//! // Per request (no mailbox): `ctx.readiness().is_ready()`, `requests.try_reserve()`,
//! // `runs.try_reserve()`; a run selects on `lease.cancelled()` next to its own work.
//!
//! // Serving ends on a signal or on an abnormal stop reported by any owner.
//! ctx.trigger().triggered().await;
//! let plan = ShutdownPlan::new(run_owner)
//!     .with_stage(first_stage, |_stage: StageContext<D>| async { StageOutcome::Clean })
//!     .with_domain(domain, Duration::from_secs(1));
//! let report = run_shutdown(&ctx, plan).await;
//! Ok(report.exit.code())
//! # }
//! ```
//!
//! # Rules the crate makes true
//!
//! * A fence is permanent and reported once with its first cause; `mark_ready` never revives it.
//! * A child declared [`ChildPolicy::StopDomain`] (audit owner, listeners) that is lost stops the domain:
//!   the trigger fires with its abnormal cause, the drain deadline is that instant, the exit status is 70.
//! * A child declared [`ChildPolicy::Tolerate`] that is lost changes nothing. The event logger is not a
//!   supervised child: it starts before the supervisor (stage 4) and closes after it (S8), and its loss
//!   is tolerated by construction ([`event_logger`]).
//! * A child that a stage stops on purpose must be stopped with [`DomainHandle::stop_child`] (it is
//!   *retired* first), otherwise its stop is a loss.
//! * Children are stopped explicitly, in reverse start order, by [`DomainHandle::shutdown`]; ractor's
//!   "parent exit kills children without `post_stop`" never happens on an orderly path.
//!
//! # Bounds that are not in the spec
//!
//! [`shutdown::ACTION_BOUND`] (2 s) bounds the run-admission owner's acknowledgements and, in the
//! gateway's table, stages that only act (S1, S2, S4, a hook of S3); [`shutdown::HOOK_GRACE`] (1 s) is
//! what the gateway's table adds after the spec deadlines a hook must act at (S5, S6, S8). A hook that
//! overruns its bound is aborted and its stage is unclean.

pub mod admission;
pub mod admission_owner;
pub mod committer;
pub mod context;
pub mod domain;
pub mod event_logger;
pub mod exit;
pub mod observer;
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
pub use committer::{Bounds, CommitError, CommitLoss, CommitStats, Committer, Layout, SegmentStore, Ticket};
pub use context::DomainContext;
pub use domain::{Bound, Builtin, Code, Domain, StageSpec};
pub use event_logger::{EventLogger, EventSink, SpawnFailed};
pub use exit::{exit_status, ExitStatus, Incidents};
pub use observer::{DomainObserver, NoopObserver};
pub use readiness::{Phase, Readiness};
pub use shutdown::{run_shutdown, ShutdownPlan, ShutdownReport};
pub use stage::{Stage, StageContext, StageFuture, StageOutcome, Unclean};
pub use supervisor::{
    AsyncLossHook, ChildInfo, ChildPolicy, ChildSpec, ChildStatus, ChildStop, DomainError, DomainHandle,
    LossHook, LossKind, LossReport, SupervisorHandle, TreeNode,
};
pub use task_owner::{OwnedTask, TaskOwner, TaskOwnerMsg};
pub use tasks::{TaskEnd, TaskGroup, TaskReport};
pub use trigger::{ShutdownTrigger, TriggerKind, TriggerState};
