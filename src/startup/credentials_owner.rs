//! The owner of the captured credentials (lifecycle.md §6.2: "the owner of the captured credentials is
//! running" is a readiness input; lifecycle.md §6.3: its stop fences with `owner_lost`,
//! audit-events.md §4.2).
//!
//! Owns the one [`CapturedCredentials`] value of the process from stage 9b on. Startup reads it through its
//! own reference while it acquires the provider transports (9d) and hashes the bearer token for the fronts
//! (11), and drops that reference when it returns; from then on this owner holds the only one. Its stop
//! (orderly, as the event log close stage (S8) stops the tree, or a loss) releases the value, and every
//! [`Secret`] in it zeroes its bytes when dropped (`config::secret`), so the credentials leave memory with
//! their owner. Does not own capture (`config::credentials`) or the uses of the values.
//!
//! [`Secret`]: crate::config::secret::Secret

use std::sync::Arc;

use ptc_actors::DomainError;
use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::codes::domain::{ChildPolicy, ChildSpec, SupervisorHandle};
use crate::codes::NotReadyCause;
use crate::config::credentials::CapturedCredentials;

/// The name of the credentials owner under the domain.
pub const CREDENTIALS: &str = "credentials";

/// The owner actor. Its state is the credentials, released when it stops.
pub(crate) struct CredentialsOwner;

/// The owner's messages: none in a release build; the fault tests make it fail in its own logic.
pub(crate) enum CredentialsMsg {
    /// The fault tests' panic in the owner's own logic.
    #[cfg(feature = "fault-injection")]
    Panic,
}

impl Actor for CredentialsOwner {
    type Msg = CredentialsMsg;
    /// `None` once released.
    type State = Option<Arc<CapturedCredentials>>;
    type Arguments = Arc<CapturedCredentials>;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        credentials: Arc<CapturedCredentials>,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Some(credentials))
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _credentials: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            #[cfg(feature = "fault-injection")]
            CredentialsMsg::Panic => Err("injected fault: a panic in the credentials owner".into()),
        }
    }

    /// Releases the credentials on an orderly stop. (On a failure the actor's state is dropped with it,
    /// which releases them the same way.)
    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        credentials: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(credentials) = credentials.take() {
            if Arc::strong_count(&credentials) > 1 {
                // Only during a startup that is still running (it holds its own reference until it
                // returns): the value is released with that reference instead.
                tracing::debug!("the credentials outlive their owner until startup releases them");
            }
            drop(credentials);
        }
        Ok(())
    }
}

/// Starts the credentials owner under `domain` (stage 9b), handing it `credentials`.
pub async fn start(
    domain: &SupervisorHandle,
    credentials: Arc<CapturedCredentials>,
) -> Result<(), DomainError> {
    let policy = ChildPolicy::Fence(NotReadyCause::OwnerLost);
    let spec = ChildSpec::new(CREDENTIALS, policy, CredentialsOwner, credentials);
    #[cfg(feature = "fault-injection")]
    let spec = spec.panic_message(|| CredentialsMsg::Panic);
    domain.start_child(spec).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ptc_actors::{ChildStop, NoopObserver};

    use super::*;
    use crate::codes::domain::{DomainContext, DomainHandle};

    #[tokio::test]
    async fn the_owner_holds_the_last_reference_and_releases_it_when_it_stops() {
        let domain = DomainHandle::start(DomainContext::new(Arc::new(NoopObserver))).await.unwrap();
        let credentials = Arc::new(CapturedCredentials::default());
        let held = Arc::downgrade(&credentials);
        start(&domain, credentials).await.unwrap();
        assert!(held.upgrade().is_some(), "the owner holds the credentials while it runs");
        let stopped = domain.stop_child(CREDENTIALS, Duration::from_secs(5)).await.unwrap();
        assert_eq!(stopped, ChildStop::Stopped);
        assert!(held.upgrade().is_none(), "stopping the owner released (and so zeroed) the credentials");
        domain.shutdown(Duration::from_secs(5)).await;
    }
}
