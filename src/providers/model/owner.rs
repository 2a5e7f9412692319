//! The owner actor of one model site (models.md §3.3): it hears every task end of the site's pool (its
//! reaper and its connection drivers), so that no task of the pool ends unnoticed.
//!
//! A connection driver's plain end is a closed connection, no loss. Any other end (the reaper ending, a
//! panic of any task) is the site's loss: the owner closes the site and fails, and its supervisor's policy
//! fences the domain with `provider_runtime_lost` and writes the `readiness` record with the pair. Does
//! not own requests (`client.rs`) or the tree (`providers::owner`).

use std::sync::Arc;

use ptc_actors::TaskEnd;
use ractor::{Actor, ActorProcessingErr, ActorRef};

use super::ModelSite;
use crate::codes::domain::{ChildPolicy, ChildSpec};
use crate::codes::NotReadyCause;
use crate::events::EventLog;
use crate::providers::http::pool::TASK_CONNECTION;
use crate::providers::loss::{OwnerEvent, OwnerMsg};

pub(crate) struct ModelOwner;

impl Actor for ModelOwner {
    type Msg = OwnerMsg;
    type State = Arc<ModelSite>;
    type Arguments = Arc<ModelSite>;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        site: Arc<ModelSite>,
    ) -> Result<Self::State, ActorProcessingErr> {
        site.tasks().attach(Box::new(move |event| {
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
            OwnerMsg::Event(OwnerEvent::Task(report))
                if report.task == TASK_CONNECTION && report.end == TaskEnd::Returned =>
            {
                Ok(())
            }
            OwnerMsg::Event(event) => {
                tracing::warn!(?event, "model site task ended");
                site.close();
                Err("a model site task ended".into())
            }
            #[cfg(feature = "fault-injection")]
            OwnerMsg::Panic => {
                site.close();
                Err("injected fault: a panic in a model site owner".into())
            }
        }
    }
}

/// The owner's spec: its loss fences with `provider_runtime_lost` and writes the pair's `readiness` record.
pub(crate) fn model_spec(site: Arc<ModelSite>, events: EventLog) -> ChildSpec<ModelOwner> {
    let name = format!("model:{}", site.provider);
    let policy = ChildPolicy::Fence(NotReadyCause::ProviderRuntimeLost);
    let lost = site.clone();
    let spec = ChildSpec::new(name, policy, ModelOwner, site).on_loss_async(move |report| async move {
        tracing::warn!(tool = %lost.tool, provider = %lost.provider, "model site lost; fenced");
        lost.close();
        if report.first_fence {
            events.pair_not_ready(NotReadyCause::ProviderRuntimeLost, &lost.tool, &lost.provider);
        }
    });
    #[cfg(feature = "fault-injection")]
    let spec = spec.panic_message(|| OwnerMsg::Panic);
    spec
}
