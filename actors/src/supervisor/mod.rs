//! The supervision tree: supervisors that start owners in stage order, watch them, and turn an
//! unexpected stop into the rule the child declared once when it was started: fence with a cause, stop
//! the domain, or tolerate ([`crate::ChildPolicy`]).
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
//!
//! Files: `child.rs`, what a child declares ([`ChildSpec`], [`ChildPolicy`]) and what the tree reports
//! ([`ChildInfo`], [`TreeNode`], [`ChildStop`], [`DomainError`]); `actor.rs`, the supervisor actor (its
//! children, supervision events, the policies applied); `handle.rs`, [`SupervisorHandle`] (starting,
//! stopping, listing and settling the tree from outside).

mod actor;
mod child;
mod handle;

#[cfg(feature = "fault-injection")]
pub use child::PanicInjector;
pub use child::{
    AsyncLossHook, ChildInfo, ChildSpec, ChildStatus, ChildStop, DomainError, HookFuture, LossHook,
    LossReport, TreeNode,
};
pub use handle::{DomainHandle, SupervisorHandle};
