//! What a child declares when it is started, and what the tree reports about it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use ractor::Actor;

use crate::domain::Domain;
use crate::policy::{ChildPolicy, LossKind};

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
    /// The subtree drawn as text, one node a line, with `├─`/`└─` connectors and each node's policy.
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

/// Errors of a supervisor handle. Closed; names, and the actor runtime's message for a start that failed
/// (what the actor's own `pre_start` returned, or the runtime's reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DomainError {
    /// The supervisor could not be spawned.
    SupervisorStartFailed { cause: String },
    /// The supervisor is gone (it stopped or failed).
    SupervisorGone,
    /// The supervisor did not answer within its call bound.
    SupervisorUnresponsive,
    /// A child's `pre_start` failed or it could not be linked; the caller maps this to its own error.
    ChildStartFailed { child: String, cause: String },
    /// No running child has this name.
    UnknownChild { child: String },
}

impl DomainError {
    /// A stable kind for logs and tests.
    pub fn kind(&self) -> &'static str {
        match self {
            DomainError::SupervisorStartFailed { .. } => "supervisor_start_failed",
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
            DomainError::SupervisorStartFailed { cause } => {
                write!(f, "the supervisor failed to start: {cause}")
            }
            DomainError::ChildStartFailed { child, cause } => {
                write!(f, "child {child:?} failed to start: {cause}")
            }
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
    /// (e.g. only after it released what the child held).
    pub first_fence: bool,
}

/// The future of an asynchronous loss hook.
pub type HookFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Work run after a child is lost, on a task its supervisor owns (closing what the child held, records).
pub type AsyncLossHook = Box<dyn FnOnce(LossReport) -> HookFuture + Send + 'static>;

/// Makes a running child panic, for the fault tests of the `fault-injection` feature.
#[cfg(feature = "fault-injection")]
pub type PanicInjector = Box<dyn Fn() + Send + Sync + 'static>;

/// How to start one child: the actor, its arguments, its name and its policy.
pub struct ChildSpec<A: Actor, D: Domain> {
    pub(super) name: String,
    pub(super) policy: ChildPolicy<D>,
    pub(super) actor: A,
    pub(super) args: A::Arguments,
    pub(super) on_loss: Option<LossHook>,
    pub(super) on_loss_async: Option<AsyncLossHook>,
    #[cfg(feature = "fault-injection")]
    pub(super) panic_message: Option<fn() -> A::Msg>,
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
            #[cfg(feature = "fault-injection")]
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

    /// The message that makes this child fail in its own logic, for the fault tests (the handle's
    /// `inject_panic`).
    #[cfg(feature = "fault-injection")]
    pub fn panic_message(mut self, message: fn() -> A::Msg) -> Self {
        self.panic_message = Some(message);
        self
    }
}
