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
use serde_json::{Map, Value};

use super::time::event_timestamp;
use crate::codes::model::ModelFailure;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::codes::transport::TransportFault;
use crate::codes::StartupCode;
use crate::codes::{NotReadyCause, StageId};
use crate::json::to_deterministic_string;
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

/// `readiness.transition` with its cause: `ready` always has cause `startup` (audit-events.md §3.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    Ready,
    NotReady(NotReadyCause),
}

/// One record without its timestamp. `tool`/`provider` pairs are `null` in every kind this version
/// emits except the per-tool `publication_failed` slot (audit-events.md §3.7).
#[derive(Clone, Debug, PartialEq, Eq)]
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
}

fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

fn count(n: u64) -> Option<Value> {
    (n <= MAX_COUNT).then_some(Value::from(n))
}

fn tool_value(tool: &Option<String>) -> Value {
    tool.as_deref().map_or(Value::Null, string)
}

/// The kind-specific members (audit-events.md §3.5), or `None` if a value is out of its domain.
fn members(record: &Record, map: &mut Map<String, Value>) -> Option<()> {
    let mut put = |k: &str, v: Value| {
        map.insert(k.to_owned(), v);
    };
    match record {
        Record::EventsLockRecovered => {}
        Record::StartupStage { stage, outcome } => {
            put("stage", string(stage.as_str()));
            put("outcome", string(outcome.as_str()));
        }
        Record::StartupFailed { code, reason_class } => {
            put("code", string(code.as_str()));
            put("reason_class", string(reason_class.as_str()));
        }
        Record::Readiness(transition) => {
            let (transition, cause) = match transition {
                Transition::Ready => ("ready", "startup"),
                Transition::NotReady(cause) => ("not_ready", cause.as_str()),
            };
            put("transition", string(transition));
            put("cause", string(cause));
            put("tool", Value::Null);
            put("provider", Value::Null);
        }
        Record::PairNotReady { cause, tool, provider } => {
            put("transition", string("not_ready"));
            put("cause", string(cause.as_str()));
            put("tool", string(tool));
            put("provider", string(provider));
        }
        Record::Transport { tool, provider, fault, exit_status } => {
            put("tool", string(tool));
            put("provider", string(provider));
            put("fault", string(fault.as_str()));
            let status = match exit_status {
                Some(code) if (0..=255).contains(code) => Value::from(*code),
                Some(_) => return None,
                None => Value::Null,
            };
            put("exit_status", status);
        }
        Record::ModelFailure { tool, provider, class, dispatch } => {
            put("tool", string(tool));
            put("provider", string(provider));
            put("class", string(class.as_str()));
            put("dispatch", string(dispatch.as_str()));
        }
        Record::StderrTail { tool, provider, text, truncated } => {
            put("tool", string(tool));
            put("provider", string(provider));
            put("text", string(text));
            put("truncated", Value::Bool(*truncated));
        }
        Record::Counter { kind: _, tool, provider, count: n, interval_ms } => {
            if *n == 0 || !(1..=1_000).contains(interval_ms) {
                return None;
            }
            put("tool", tool_value(tool));
            put("provider", tool_value(provider));
            put("count", count(*n)?);
            put("interval_ms", count(*interval_ms)?);
        }
        Record::AuditRecovered { removed_bytes, removed_empty_files } => {
            if *removed_bytes == 0 && *removed_empty_files == 0 {
                return None;
            }
            put("removed_bytes", count(*removed_bytes)?);
            put("removed_empty_files", count(*removed_empty_files)?);
        }
        Record::ShutdownStage { stage, outcome } => {
            put("stage", string(stage));
            put("outcome", string(outcome.as_str()));
        }
    }
    Some(())
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
        let mut map = Map::new();
        map.insert("kind".to_owned(), string(self.record.kind()));
        map.insert("timestamp".to_owned(), Value::String(event_timestamp(self.at)?));
        members(&self.record, &mut map)?;
        let mut line = to_deterministic_string(&Value::Object(map));
        line.push('\n');
        Some(line)
    }
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
