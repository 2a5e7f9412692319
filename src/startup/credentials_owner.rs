//! The owner of the captured credentials (lifecycle.md §6.2: "the owner of the captured credentials is
//! running" is a readiness input; lifecycle.md §6.3: its stop fences).
//!
//! Owns the one [`CapturedCredentials`] value of the process from stage 9b on: the bearer check and the
//! provider transports read it through this owner's handle, and its loss fences readiness with
//! `owner_lost` (audit-events.md §4.2). Does not own capture (`config::credentials`) or their use.

use std::sync::Arc;

use ptc_actors::DomainError;
use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::codes::domain::{ChildPolicy, ChildSpec, SupervisorHandle};
use crate::codes::NotReadyCause;
use crate::config::credentials::CapturedCredentials;

/// The name of the credentials owner under the domain.
pub const CREDENTIALS: &str = "credentials";

/// The owner actor. Its state is the credentials; it answers nothing but the fault tests' panic.
pub(crate) struct CredentialsOwner;

pub(crate) enum CredentialsMsg {
    /// The fault tests' panic in the owner's own logic.
    Panic,
}

impl Actor for CredentialsOwner {
    type Msg = CredentialsMsg;
    type State = Arc<CapturedCredentials>;
    type Arguments = Arc<CapturedCredentials>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        credentials: Arc<CapturedCredentials>,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(credentials)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _credentials: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            CredentialsMsg::Panic => Err("injected fault: a panic in the credentials owner".into()),
        }
    }
}

/// Starts the credentials owner under `domain` (stage 9b).
pub async fn start(
    domain: &SupervisorHandle,
    credentials: Arc<CapturedCredentials>,
) -> Result<(), DomainError> {
    let policy = ChildPolicy::Fence(NotReadyCause::OwnerLost);
    let spec = ChildSpec::new(CREDENTIALS, policy, CredentialsOwner, credentials)
        .panic_message(|| CredentialsMsg::Panic);
    domain.start_child(spec).await.map(|_| ())
}
