//! The serving gateway: the one value that owns what startup built, from stage 12 to the exit.
//!
//! Owns the release stack that startup filled (`release.rs`), from which the shutdown stages take what
//! they close, and the handles of the serving domain: readiness and the trigger, the tree's root, the
//! admission owners and pools, the listeners, the provider runtime, the event log and the audit's handle.
//! Does not own the stages (`serve.rs`) or the shutdown's order and the serving until it (`shutdown.rs`,
//! which imports this file and not the other way round).

use std::net::SocketAddr;
use std::sync::Arc;

use crate::codes::domain::{DomainContext, DomainHandle, Readiness};
use ptc_actors::AdmissionOwnerRef;

use crate::apps::Built;
use crate::audit::AuditLog;
use crate::events::EventLog;
use crate::providers::runtime::ProviderRuntime;
use crate::startup::budget::ListenerPolicy;
use crate::startup::listeners;
use crate::startup::pools::Pools;
use crate::startup::release::ReleaseStack;

/// A gateway that passed stage 12: serving until a stop request or an abnormal stop.
pub struct Gateway {
    /// Everything to undo, in stage order; the shutdown takes its parts out of it.
    pub(crate) stack: ReleaseStack,
    pub(crate) ctx: DomainContext,
    pub(crate) domain: DomainHandle,
    pub(crate) run_owner: AdmissionOwnerRef,
    pub(crate) request_owner: AdmissionOwnerRef,
    pub(crate) provider_owner: AdmissionOwnerRef,
    pub(crate) pools: Pools,
    pub(crate) listeners: listeners::Serving,
    pub(crate) events: EventLog,
    /// The metrics writer, with `artifacts.metrics` (audit-events.md §3.12); the event log close stage (S8)
    /// writes its last file.
    pub(crate) metrics: Option<crate::metrics::Writer>,
    pub(crate) audit: Option<AuditLog>,
    pub(crate) templates: Arc<Built>,
    pub(crate) policy: ListenerPolicy,
    pub(crate) providers: Arc<ProviderRuntime>,
}

impl Gateway {
    /// The domain's readiness snapshot.
    pub fn readiness(&self) -> &Readiness {
        self.ctx.readiness()
    }

    /// The bound HTTP address.
    pub fn http_addr(&self) -> SocketAddr {
        self.listeners.http_addr()
    }

    /// The bound PCC address, when `pcc` is configured.
    pub fn pcc_addr(&self) -> Option<SocketAddr> {
        self.listeners.pcc_addr()
    }

    /// The `listener_policy` report of stage 6 (lifecycle.md §10.2).
    pub fn listener_policy(&self) -> &ListenerPolicy {
        &self.policy
    }

    /// The owners of run admission, request admission and provider-call admission, in that order (for
    /// in-process fault tests that stop one).
    pub fn owners(&self) -> [&AdmissionOwnerRef; 3] {
        [&self.run_owner, &self.request_owner, &self.provider_owner]
    }

    /// The event log (disabled without `artifacts.events`).
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// The domain context (readiness, the shutdown trigger).
    pub fn context(&self) -> &DomainContext {
        &self.ctx
    }

    /// The admission pools.
    pub fn pools(&self) -> &Pools {
        &self.pools
    }

    /// The private audit's handle (its counters), when configured.
    pub fn audit_log(&self) -> Option<AuditLog> {
        self.audit.clone()
    }

    /// The built templates, in tool-name order.
    pub fn templates(&self) -> &Built {
        &self.templates
    }

    /// The built templates, shared (the MCP front holds the same `Arc`).
    pub fn shared_templates(&self) -> Arc<Built> {
        self.templates.clone()
    }

    /// The root of the supervision tree (the watchdog probes it, lifecycle.md §9.1; `tree()` lists it).
    pub fn domain(&self) -> &DomainHandle {
        &self.domain
    }

    /// The provider runtime (its sites, for in-process tests).
    pub fn providers(&self) -> &Arc<ProviderRuntime> {
        &self.providers
    }
}
