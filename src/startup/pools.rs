//! The admission pools of the serving gateway as one named value (issue 24): built at stage 10 and handed,
//! whole, to the fronts, the listeners, the metrics writer, the gateway and its shutdown.

use ptc_actors::AdmissionPool;

/// The three admission pools, by name: the one value they travel in from stage 10 on (config.md §4.4
/// `admission`, pcc.md §10).
#[derive(Clone)]
pub struct Pools {
    /// The run slots (`admission.max_concurrent_runs`), shared by the `/mcp` and PCC fronts.
    pub runs: AdmissionPool,
    /// The `/mcp` request leases (`admission.max_inflight_requests`).
    pub requests: AdmissionPool,
    /// The PCC stream leases (pcc.md §10), as many as request leases; created also without `pcc`.
    pub pcc_streams: AdmissionPool,
}
