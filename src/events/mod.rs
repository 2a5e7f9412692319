//! The operational event log (audit-events.md §3; lifecycle.md §3.2, §6.4, §7.3 stages S4,
//! checkpoint events, and S8, event log close).
//!
//! Owns: the closed record kinds and their exact key sets ([`record`]), event timestamps ([`time`]),
//! the fixed counter slots ([`counters`]), the event files with rotation and retention ([`files`]), the
//! sink the logger thread drives ([`sink`]) and the handle and domain observer emitters use ([`log`]).
//!
//! Does not own: the events directory policy, its lock and inventory (`storage`, stage 4), the queue and
//! writer thread (`ptc_actors::event_logger`), or the private audit (a durability barrier with other
//! rules, `audit`).

pub mod counters;
pub mod files;
pub mod log;
pub mod owner;
pub mod record;
pub mod sink;
pub mod time;

pub use counters::TotalKey;
pub use log::EventLog;
pub use record::CounterKind;
pub use record::{ReasonClass, Record, StartupOutcome, StartupStage};
