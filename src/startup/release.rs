//! The release stack: everything a startup stage creates that must be undone, pushed as the stage completes,
//! so that a later failure or a stop during startup (lifecycle.md §5.2, §8.3) undoes exactly what exists, in
//! reverse stage order, by popping. The serving gateway keeps the same stack; the shutdown stages take their
//! parts out of it (provider cleanup, S5, the providers; audit flush, S7, the audit; event log close, S8, the
//! event log and the artifact root), and whatever is left is released the same way at the end.
//!
//! Owns the order of undoing and what "undone" means for each part. Does not own the stages (`serve.rs`)
//! or the shutdown (`shutdown.rs`).

use std::sync::Arc;
use std::time::Duration;

use crate::codes::domain::DomainHandle;
use ptc_actors::{ChildStop, DomainError};

use crate::audit::owner::AUDIT_COMMITTER;
use crate::audit::Audit;
use crate::codes::StartupCode;
use crate::events::{EventLog, ReasonClass};
use crate::providers::owner::PROVIDERS;
use crate::providers::runtime::ProviderRuntime;
use crate::startup::listeners;
use crate::storage::artifact_root::ArtifactRoot;

/// The bound on stopping one child of the tree during a release.
pub(crate) const CHILD_STOP_BOUND: Duration = Duration::from_secs(2);

/// One undoable thing a stage created.
pub(crate) enum Part {
    /// Stage 4: the locked artifact root (and events directory).
    ArtifactRoot(ArtifactRoot),
    /// Stage 4: the event log; undone by recording `startup_failed` after a failure, then closing.
    EventLog(EventLog),
    /// Stage 4: the domain supervisor and every child still in it.
    Domain(DomainHandle),
    /// Stage 7: the audit and its owner in the tree.
    Audit { audit: Audit, domain: DomainHandle },
    /// Stage 9: every acquisition and the providers subtree.
    Providers { runtime: Arc<ProviderRuntime>, domain: DomainHandle },
    /// Stage 11: the bound listening sockets (stage 12 consumes them).
    Listeners(listeners::Bound),
}

/// The parts, in the order their stages created them.
#[derive(Default)]
pub(crate) struct ReleaseStack {
    parts: Vec<Part>,
}

impl ReleaseStack {
    pub(crate) fn push(&mut self, part: Part) {
        self.parts.push(part);
    }

    /// Takes the first part `pick` accepts out of the stack (a stage that closes it itself).
    pub(crate) fn take<T>(
        &mut self,
        pick: impl Fn(&Part) -> bool,
        unwrap: impl FnOnce(Part) -> Option<T>,
    ) -> Option<T> {
        let at = self.parts.iter().position(pick)?;
        unwrap(self.parts.remove(at))
    }

    pub(crate) fn take_audit(&mut self) -> Option<Audit> {
        self.take(
            |p| matches!(p, Part::Audit { .. }),
            |p| match p {
                Part::Audit { audit, .. } => Some(audit),
                _ => None,
            },
        )
    }

    pub(crate) fn take_listeners(&mut self) -> Option<listeners::Bound> {
        self.take(
            |p| matches!(p, Part::Listeners(_)),
            |p| match p {
                Part::Listeners(bound) => Some(bound),
                _ => None,
            },
        )
    }

    pub(crate) fn take_artifact_root(&mut self) -> Option<ArtifactRoot> {
        self.take(
            |p| matches!(p, Part::ArtifactRoot(_)),
            |p| match p {
                Part::ArtifactRoot(root) => Some(root),
                _ => None,
            },
        )
    }

    pub(crate) fn take_domain(&mut self) -> Option<DomainHandle> {
        self.take(
            |p| matches!(p, Part::Domain(_)),
            |p| match p {
                Part::Domain(domain) => Some(domain),
                _ => None,
            },
        )
    }

    /// Drops the providers part: the provider cleanup stage (S5) closed every acquisition and stopped the
    /// subtree itself.
    pub(crate) fn forget_providers(&mut self) {
        self.parts.retain(|p| !matches!(p, Part::Providers { .. }));
    }

    /// Drops the event-log part: the event log close stage (S8) closed the log itself.
    pub(crate) fn forget_event_log(&mut self) {
        self.parts.retain(|p| !matches!(p, Part::EventLog(_)));
    }

    /// Pops and undoes every part, last created first (lifecycle.md §5.2). After a failure with `code`, the
    /// event log records `startup_failed` (with the finer `reason`, audit-events.md §4.1) before it
    /// closes. True iff every undo was clean (a stop during startup exits 0 only then, lifecycle.md §8.3).
    pub(crate) async fn release(mut self, failure: Option<(StartupCode, Option<ReasonClass>)>) -> bool {
        let mut clean = true;
        while let Some(part) = self.parts.pop() {
            clean &= undo(part, failure).await;
        }
        clean
    }
}

async fn undo(part: Part, failure: Option<(StartupCode, Option<ReasonClass>)>) -> bool {
    match part {
        // Dropping the sockets closes them; nothing was served.
        Part::Listeners(bound) => {
            drop(bound);
            true
        }
        // providers.md §13.3: every acquisition is closed (with its records) before the exit; then the
        // subtree of their owners, whose tasks were retired by the close.
        Part::Providers { runtime, domain } => {
            let closed = runtime.close_all().await;
            closed && stop_subtree(&domain, PROVIDERS).await
        }
        // The owner first, so the committer's end is no loss; audit-events.md §2.5: a start that fails
        // after the audit stage leaves no new file behind.
        Part::Audit { audit, domain } => {
            let stopped = stop_subtree(&domain, AUDIT_COMMITTER).await;
            audit.abandon().await && stopped
        }
        // Every child left, in reverse start order, then the supervisor.
        Part::Domain(domain) => {
            let stopped = domain.shutdown(CHILD_STOP_BOUND).await;
            stopped.iter().all(|(_, how)| *how != ChildStop::Killed)
        }
        // The log closes before its lock is released (audit-events.md §3.10); its loss is no unclean
        // release (logging never changes an outcome, audit-events.md §3.7).
        Part::EventLog(events) => {
            if let Some((code, reason)) = failure {
                events.startup_failed(code, reason.unwrap_or(ReasonClass::Code(code)));
            }
            let _ = events.close_async().await;
            true
        }
        Part::ArtifactRoot(root) => root.release().is_ok(),
    }
}

/// Stops the named child of `domain` as a subtree. True when it stopped in time or was no longer running
/// (lost earlier, its policy applied then); false when it had to be killed.
pub(crate) async fn stop_subtree(domain: &DomainHandle, name: &str) -> bool {
    match domain.stop_child(name, CHILD_STOP_BOUND).await {
        Ok(ChildStop::Stopped | ChildStop::AlreadyGone) | Err(DomainError::UnknownChild { .. }) => true,
        Ok(ChildStop::Killed) | Err(_) => false,
    }
}
