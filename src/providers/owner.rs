//! The providers' part of the supervision tree (docs/architecture.md): a `providers` supervisor, one
//! `tool:<name>` supervisor per provider-bearing served tool, and one `transport:<declaration>` owner
//! actor per acquisition (providers.md §3, §12.1).
//!
//! Owns: the transport owner actor, which hears every task end of its transport and the transport's
//! loss (`loss.rs`) and turns either into its own failure, so that its supervisor applies the one loss
//! policy declared here: fence with `provider_runtime_lost`, then, on a task the supervisor owns, close
//! the transport and write the `transport`, `readiness` (with the (tool, provider) pair, first fence
//! only) and `stderr_tail` records in that order (providers.md §12.1 steps 2–4).
//!
//! Does not own: the transports' work (`transport.rs`, `http/`), provider calls (`runtime.rs`), or the
//! orderly close at shutdown (the provider cleanup stage, S5, in `runtime.rs`, which closes every site; the
//! owners are retired after).

use std::collections::BTreeMap;
use std::sync::Arc;

use ptc_actors::{DomainError, TaskEnd};
use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::http::pool::TASK_CONNECTION;
use super::http::transport::TASK_REINITIALISE;
use super::loss::{OwnerEvent, OwnerMsg};
use super::model::owner::model_spec;
use super::model::ModelSite;
use super::sites::Site;
use super::transport::TASK_STDERR;
use crate::codes::domain::{ChildPolicy, ChildSpec, SupervisorHandle};
use crate::codes::NotReadyCause;
use crate::events::EventLog;

/// The tasks whose plain end is expected while the transport is open.
const ENDS_ARE_NO_LOSS: [&str; 3] = [TASK_STDERR, TASK_REINITIALISE, TASK_CONNECTION];

/// The name of the providers supervisor under the domain.
pub const PROVIDERS: &str = "providers";

/// The owner actor of one acquisition's transport.
pub(crate) struct TransportOwner;

impl Actor for TransportOwner {
    type Msg = OwnerMsg;
    type State = Arc<Site>;
    type Arguments = Arc<Site>;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        site: Arc<Site>,
    ) -> Result<Self::State, ActorProcessingErr> {
        // Every event made before now (a loss or a task end during stages 9–12) is delivered at once:
        // watching starts before readiness is declared.
        site.upstream.life().tasks().attach(Box::new(move |event| {
            let _ = myself.send_message(OwnerMsg::Event(event));
        }));
        Ok(site)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        site: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            // providers.md §12.1: the transport published its loss.
            OwnerMsg::Event(OwnerEvent::Lost) => Err("transport lost".into()),
            // Tasks whose plain end is no loss (their panic is): a child may close its stderr and live
            // on, a re-initialisation ends when it is done (a failed one publishes its own loss), and a
            // pooled HTTP connection ends when it closes.
            OwnerMsg::Event(OwnerEvent::Task(report))
                if ENDS_ARE_NO_LOSS.contains(&report.task) && report.end == TaskEnd::Returned =>
            {
                Ok(())
            }
            // "The transport owner itself fails (its task ends or panics)": seal the transport with an
            // unclassified loss (transport_error, providers.md §12.2), then fail.
            OwnerMsg::Event(OwnerEvent::Task(report)) => {
                tracing::warn!(task = report.task, end = ?report.end, "transport task ended");
                site.upstream.lose_owner();
                Err("a transport task ended".into())
            }
            #[cfg(feature = "fault-injection")]
            OwnerMsg::Panic => {
                site.upstream.lose_owner();
                Err("injected fault: a panic in a transport owner".into())
            }
        }
    }
}

/// Starts the providers subtree under `domain` for `sites` and model sites (each in (tool, declaration)
/// order): the supervisor, a supervisor per tool and an owner per site, transports first. Called at stage
/// 9, right after the last acquisition, so a transport lost before stage 12 fences startup.
pub async fn start_tree(
    domain: &SupervisorHandle,
    (sites, models): (&[Arc<Site>], &[Arc<ModelSite>]),
    events: &EventLog,
) -> Result<SupervisorHandle, DomainError> {
    let providers = domain.start_supervisor(PROVIDERS, ChildPolicy::Fence(NotReadyCause::OwnerLost)).await?;
    let mut tools: BTreeMap<&str, SupervisorHandle> = BTreeMap::new();
    let names = sites.iter().map(|s| s.tool.as_str()).chain(models.iter().map(|m| m.tool.as_str()));
    for name in names {
        if !tools.contains_key(name) {
            let policy = ChildPolicy::Fence(NotReadyCause::OwnerLost);
            let supervisor = providers.start_supervisor(format!("tool:{name}"), policy).await?;
            tools.insert(name, supervisor);
        }
    }
    for site in sites {
        if let Some(supervisor) = tools.get(site.tool.as_str()) {
            supervisor.start_child(transport_spec(site.clone(), events.clone())).await?;
        }
    }
    for site in models {
        if let Some(supervisor) = tools.get(site.tool.as_str()) {
            supervisor.start_child(model_spec(site.clone(), events.clone())).await?;
        }
    }
    Ok(providers)
}

/// One owner's spec: its loss fences with `provider_runtime_lost` and then runs providers.md §12.1 steps 3–4.
fn transport_spec(site: Arc<Site>, events: EventLog) -> ChildSpec<TransportOwner> {
    let name = format!("transport:{}", site.provider);
    let policy = ChildPolicy::Fence(NotReadyCause::ProviderRuntimeLost);
    let lost = site.clone();
    let spec = ChildSpec::new(name, policy, TransportOwner, site).on_loss_async(move |report| async move {
        // providers.md §12.2: the `transport` record says `protocol_error`; the log says which rule.
        match lost.upstream.life().violation() {
            Some(violation) => tracing::warn!(
                tool = %lost.tool,
                provider = %lost.provider,
                %violation,
                "provider transport lost; fenced"
            ),
            None => tracing::warn!(tool = %lost.tool, provider = %lost.provider, "provider transport lost; fenced"),
        }
        lost.finish(&events).await;
        if report.first_fence {
            events.pair_not_ready(NotReadyCause::ProviderRuntimeLost, &lost.tool, &lost.provider);
        }
        lost.stderr_once(&events);
    });
    #[cfg(feature = "fault-injection")]
    let spec = spec.panic_message(|| OwnerMsg::Panic);
    spec
}
