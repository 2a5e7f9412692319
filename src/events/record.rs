//! The closed record kinds of the event log and their exact key sets (audit-events.md §3.4–§3.5, §4).
//!
//! Owns: every value that goes on the wire as a closed enum, the typed [`Record`], and its encoding to
//! one deterministic JSON line ([`Event::to_line`]). Because a record is built only from these types,
//! configured tool names and bounded integers, its key set is exact by construction; what can still fail
//! to validate (a clock outside the format, a count above 2^53−1) makes [`Event::to_line`] return `None`
//! and the record is dropped and counted (audit-events.md §3.4).
//!
//! Does not own: when records are emitted (`log.rs`), files (`files.rs`) or counters (`counters.rs`).
//! Never in a record (audit-events.md §3.9): arguments, results, credentials, endpoints, paths, ids, error
//! text. The types below cannot hold any of them: the only free strings are configured tool and declaration
//! names, and the `stderr_tail` text (audit-events.md §3.8), which is the one kind allowed to carry upstream
//! bytes.

use std::time::SystemTime;

use ptc_actors::StageOutcome;
use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;

use super::time::event_timestamp;
use crate::codes::model::ModelFailure;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::codes::transport::TransportFault;
use crate::codes::StartupCode;
use crate::codes::{NotReadyCause, StageId};
use crate::json::to_deterministic_record;
use crate::storage::AuditReason;

/// The largest count or size a record may carry (audit-events.md §3.4).
pub const MAX_COUNT: u64 = 9_007_199_254_740_991;

/// `startup_stage.stage` (audit-events.md §3.5; lifecycle.md §3.2 event stages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupStage {
    ArtifactRoot,
    Templates,
    Audit,
    RunAdmission,
    WarmProviders,
    RequestAdmission,
    Listener,
}

impl StartupStage {
    pub fn as_str(self) -> &'static str {
        match self {
            StartupStage::ArtifactRoot => "artifact_root",
            StartupStage::Templates => "templates",
            StartupStage::Audit => "audit",
            StartupStage::RunAdmission => "run_admission",
            StartupStage::WarmProviders => "warm_providers",
            StartupStage::RequestAdmission => "request_admission",
            StartupStage::Listener => "listener",
        }
    }
}

/// `startup_stage.outcome`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupOutcome {
    Started,
    Ready,
}

impl StartupOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            StartupOutcome::Started => "started",
            StartupOutcome::Ready => "ready",
        }
    }
}

/// `shutdown_stage.outcome`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownOutcome {
    Started,
    Clean,
    Unclean,
}

impl ShutdownOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            ShutdownOutcome::Started => "started",
            ShutdownOutcome::Clean => "clean",
            ShutdownOutcome::Unclean => "unclean",
        }
    }

    /// The record outcome of a finished stage; `None` for a skipped stage, which has no record
    /// (the audit flush, S7, without `private_audit`, lifecycle.md §7.3).
    pub fn of(outcome: StageOutcome) -> Option<ShutdownOutcome> {
        match outcome {
            StageOutcome::Clean => Some(ShutdownOutcome::Clean),
            StageOutcome::Unclean(_) => Some(ShutdownOutcome::Unclean),
            StageOutcome::Skipped => None,
        }
    }
}

/// `startup_failed.reason_class` (audit-events.md §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReasonClass {
    /// A public startup code, when no finer class applies.
    Code(StartupCode),
    /// An audit class (`audit_ancestry_unsafe`, …).
    Audit(AuditReason),
    /// A provider acquisition class (providers.md §14, §7.5).
    Provider(FailureClass),
    /// Anything unrecognised.
    Other,
}

impl ReasonClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonClass::Code(code) => code.as_str(),
            ReasonClass::Audit(reason) => reason.as_str(),
            ReasonClass::Provider(class) => class.as_str(),
            ReasonClass::Other => "other",
        }
    }
}

/// The counter kinds, in the order of audit-events.md §3.5 (the order periodic reports are written in,
/// audit-events.md §3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CounterKind {
    Busy,
    ProviderBusy,
    Detached,
    SettlementTimeout,
    /// Model requests that left the gateway (dispatch not `false`, models.md §9).
    ModelRequests,
    /// Model calls that ended with a failure class (models.md §9).
    ModelFailed,
    /// The `total_tokens` of successful model answers (models.md §9).
    ModelTokens,
    PublicationFailed,
    /// A run's trace could not be created or written, or its reservation was refused (traces.md §7).
    ArtifactFailed,
    DroppedEvents,
}

impl CounterKind {
    pub const ALL: [CounterKind; 10] = [
        CounterKind::Busy,
        CounterKind::ProviderBusy,
        CounterKind::Detached,
        CounterKind::SettlementTimeout,
        CounterKind::ModelRequests,
        CounterKind::ModelFailed,
        CounterKind::ModelTokens,
        CounterKind::PublicationFailed,
        CounterKind::ArtifactFailed,
        CounterKind::DroppedEvents,
    ];

    /// Whether the kind has one slot per served tool (tool, `null`) instead of pairs
    /// (audit-events.md §3.7).
    pub fn per_tool(self) -> bool {
        matches!(self, CounterKind::PublicationFailed | CounterKind::ArtifactFailed)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CounterKind::Busy => "busy",
            CounterKind::ProviderBusy => "provider_busy",
            CounterKind::Detached => "detached",
            CounterKind::SettlementTimeout => "settlement_timeout",
            CounterKind::ModelRequests => "model_requests",
            CounterKind::ModelFailed => "model_failed",
            CounterKind::ModelTokens => "model_tokens",
            CounterKind::PublicationFailed => "publication_failed",
            CounterKind::ArtifactFailed => "artifact_failed",
            CounterKind::DroppedEvents => "dropped_events",
        }
    }
}

crate::codes::serialize_as_str!(StartupStage, StartupOutcome, ShutdownOutcome, ReasonClass);

/// `readiness.transition` with its cause: `ready` always has cause `startup` (audit-events.md §3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    Ready,
    NotReady(NotReadyCause),
}

/// One record without its timestamp. `tool`/`provider` pairs are `null` in every kind this version
/// emits except the per-tool `publication_failed` slot (audit-events.md §3.7).
///
/// Its encoding is derived: each variant serializes as the kind's own members (audit-events.md §3.5), and
/// [`Event::to_line`] adds `kind` and `timestamp`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Record {
    EventsLockRecovered,
    StartupStage {
        stage: StartupStage,
        outcome: StartupOutcome,
    },
    StartupFailed {
        code: StartupCode,
        reason_class: ReasonClass,
    },
    Readiness(Transition),
    /// `readiness` `not_ready` caused by one acquisition (`provider_runtime_lost`,
    /// `provider_cleanup_failed`): the only readiness records with a non-null pair (audit-events.md §3.5).
    #[serde(serialize_with = "pair_not_ready")]
    PairNotReady {
        cause: NotReadyCause,
        tool: String,
        provider: String,
    },
    /// One transport's end (providers.md §12.2).
    Transport {
        tool: String,
        provider: String,
        fault: TransportFault,
        exit_status: Option<i32>,
    },
    /// One failed model call (models.md §9): its class and dispatch, never its text.
    ModelFailure {
        tool: String,
        provider: String,
        class: ModelFailure,
        dispatch: Dispatch,
    },
    /// The stdio stderr tail (audit-events.md §3.8), text already cut and repaired.
    StderrTail {
        tool: String,
        provider: String,
        text: String,
        truncated: bool,
    },
    Counter {
        /// The record's `kind` (audit-events.md §3.7), not a member.
        #[serde(skip)]
        kind: CounterKind,
        tool: Option<String>,
        provider: Option<String>,
        count: u64,
        interval_ms: u64,
    },
    AuditRecovered {
        removed_bytes: u64,
        removed_empty_files: u64,
    },
    ShutdownStage {
        stage: &'static str,
        outcome: ShutdownOutcome,
    },
}

impl Record {
    /// The `shutdown_stage` record of `stage`, `None` for the event log close stage (S8), which has none.
    pub fn shutdown_stage(stage: StageId, outcome: ShutdownOutcome) -> Option<Record> {
        stage.record_name().map(|stage| Record::ShutdownStage { stage, outcome })
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Record::EventsLockRecovered => "events_lock_recovered",
            Record::StartupStage { .. } => "startup_stage",
            Record::StartupFailed { .. } => "startup_failed",
            Record::Readiness(_) | Record::PairNotReady { .. } => "readiness",
            Record::Transport { .. } => "transport",
            Record::ModelFailure { .. } => "model_failure",
            Record::StderrTail { .. } => "stderr_tail",
            Record::Counter { kind, .. } => kind.as_str(),
            Record::AuditRecovered { .. } => "audit_recovered",
            Record::ShutdownStage { .. } => "shutdown_stage",
        }
    }

    /// Whether every value is in its domain (audit-events.md §3.4–§3.5): a record that is not is dropped
    /// and counted, never written.
    fn is_valid(&self) -> bool {
        let count = |n: u64| n <= MAX_COUNT;
        match self {
            Record::Transport { exit_status: Some(code), .. } => (0..=255).contains(code),
            Record::Counter { count: n, interval_ms, .. } => {
                *n != 0 && count(*n) && (1..=1_000).contains(interval_ms)
            }
            Record::AuditRecovered { removed_bytes, removed_empty_files } => {
                (*removed_bytes != 0 || *removed_empty_files != 0)
                    && count(*removed_bytes)
                    && count(*removed_empty_files)
            }
            _ => true,
        }
    }
}

/// `readiness` members of [`Record::PairNotReady`]: always `not_ready`, with the pair.
fn pair_not_ready<S: Serializer>(
    cause: &NotReadyCause,
    tool: &str,
    provider: &str,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut members = serializer.serialize_struct("PairNotReady", 4)?;
    members.serialize_field("transition", "not_ready")?;
    members.serialize_field("cause", cause)?;
    members.serialize_field("tool", tool)?;
    members.serialize_field("provider", provider)?;
    members.end()
}

/// `readiness` members: `ready` has cause `startup`, and a domain-wide transition has a null pair
/// (audit-events.md §3.5).
impl Serialize for Transition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (transition, cause) = match self {
            Transition::Ready => ("ready", "startup"),
            Transition::NotReady(cause) => ("not_ready", cause.as_str()),
        };
        let mut members = serializer.serialize_struct("Transition", 4)?;
        members.serialize_field("transition", transition)?;
        members.serialize_field("cause", cause)?;
        members.serialize_field("tool", &None::<&str>)?;
        members.serialize_field("provider", &None::<&str>)?;
        members.end()
    }
}

/// The `stderr_tail` text and flag of audit-events.md §3.8 for a ring's `bytes` under `max_file_bytes`.
pub fn stderr_text(bytes: &[u8], ring_truncated: bool, max_file_bytes: u64) -> (String, bool) {
    let n = usize::try_from(max_file_bytes.saturating_sub(512) / 6).unwrap_or(usize::MAX);
    let cut = bytes.len() > n;
    let kept = if cut { &bytes[bytes.len() - n..] } else { bytes };
    // Step 2: a split UTF-8 sequence at the start loses its continuation bytes (at most 3).
    let skip = kept.iter().take(3).take_while(|b| (0x80..=0xBF).contains(*b)).count();
    (String::from_utf8_lossy(&kept[skip..]).into_owned(), ring_truncated || cut)
}

/// A record with the instant it was created (audit-events.md §3.4: the timestamp is taken then, not when
/// written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub at: SystemTime,
    pub record: Record,
}

impl Event {
    /// A record created now.
    pub fn now(record: Record) -> Event {
        Event { at: SystemTime::now(), record }
    }

    /// The record's line: deterministic JSON (keys in byte order, pins.md §2) and LF; `None` if it does
    /// not validate.
    pub fn to_line(&self) -> Option<String> {
        if !self.record.is_valid() {
            return None;
        }
        let line =
            Line { kind: self.record.kind(), timestamp: event_timestamp(self.at)?, record: &self.record };
        let mut line = to_deterministic_record(&line).ok()?;
        line.push('\n');
        Some(line)
    }
}

/// What one line holds: the kind, the timestamp and the kind's own members (audit-events.md §3.4).
#[derive(Serialize)]
struct Line<'a> {
    kind: &'static str,
    timestamp: String,
    #[serde(flatten)]
    record: &'a Record,
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
