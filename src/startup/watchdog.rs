//! The systemd watchdog ticker (lifecycle.md §9.1): `WATCHDOG=1` every `WATCHDOG_USEC / 2` from process
//! start until exit, each time after the domain supervisor has answered a liveness probe.
//!
//! Owns the ticking task and the probe. Does not own the wire text or the environment rule
//! (`crate::os::notify`), nor the domain it probes (registered by `crate::startup` once stage 12 has run).
//!
//! Before the domain exists (stages 0–7, discovery) there is no supervisor to ask: the tick itself, on the
//! runtime every stage runs on, is the liveness evidence, and startup is bounded by its own timeouts. Once a
//! shutdown has been triggered the ticks go on without a probe (lifecycle.md §9.1: "continues while
//! draining"): the staged shutdown is bounded by its deadlines (lifecycle.md §7.2), and the event log close
//! stage (S8) ends by stopping the supervisor, which must not look like a hang.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::codes::domain::DomainHandle;
use crate::os::notify::{Message, Notifier};

/// The domain the ticker probes, registered once serving starts.
#[derive(Clone, Default)]
pub struct Probe {
    domain: Arc<Mutex<Option<DomainHandle>>>,
}

impl Probe {
    /// Registers the domain to probe from now on.
    pub fn register(&self, domain: DomainHandle) {
        if let Ok(mut slot) = self.domain.lock() {
            *slot = Some(domain);
        }
    }

    /// True when the process may claim to be alive.
    async fn alive(&self) -> bool {
        let domain = match self.domain.lock() {
            Ok(slot) => slot.clone(),
            // A poisoned slot means a panic while registering: claim nothing.
            Err(_) => return false,
        };
        match domain {
            None => true,
            Some(domain) if domain.context().trigger().is_triggered() => true,
            // One message round trip to the supervisor, bounded by the handle's own call bound.
            Some(domain) => domain.children().await.is_ok(),
        }
    }
}

/// Spawns the ticker when `interval` is set and the notifier is enabled; it runs until the runtime ends.
pub fn spawn(notifier: Notifier, interval: Option<Duration>, probe: Probe) {
    let Some(interval) = interval.filter(|_| notifier.is_enabled()) else { return };
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(interval);
        // A late tick is sent once, not in a burst: systemd wants recent evidence, not a count.
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            if probe.alive().await {
                notifier.send(&[Message::Watchdog]);
            }
        }
    });
}
