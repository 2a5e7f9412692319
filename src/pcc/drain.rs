//! The drain state of the PCC front (pcc.md §15), read by stream start (`service`) and by each stream
//! (`stream`): its own file so that neither of the two imports the other for it.

use ptc_actors::Phase;
use tokio::sync::watch;

use crate::codes::domain::Readiness;

/// The drain state the front follows (pcc.md §15): set by the listener's stopper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Drain {
    Serving,
    /// Shutdown stage S1, stop listeners: new streams are refused; idle streams end; a stream with a call
    /// waits for its answer.
    Draining,
    /// Shutdown stage S6, admission clean: every stream still open ends now.
    Cutoff,
}

/// Whether a drain has begun (pcc.md §15): from the signal on, when readiness turns `draining`, although the
/// stop listeners stage (S1) moves the front's own watch only once the listener owners have stopped. Stream
/// admission and a stream's `tools/call` both ask this, so neither sees a gap between the two.
pub fn drain_begun(drain: &watch::Receiver<Drain>, readiness: &Readiness) -> bool {
    *drain.borrow() != Drain::Serving || readiness.phase() == Phase::Draining
}
