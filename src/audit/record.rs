//! The audit record (audit-events.md §2.3): its exact nine keys, their value domains, the 512-byte bound,
//! its encoding as one deterministic JSON line, and the validation the committer applies to every line.
//!
//! Owns what a record may say. Nothing else can be put in one: the type has no field for arguments,
//! results, credentials, client identity, paths or request ids. Does not own when a record is written
//! (the call driver) or how it is made durable (the committer).

use std::time::SystemTime;

use serde_json::Value;

use crate::codes::outcome::{Dispatch, Outcome};
use crate::json::encode::write_string;
use crate::json::{decode, push_hex, to_deterministic_string, Limits};

use super::time;

/// audit-events.md §2.3: a record is at most this many bytes including its LF.
pub const MAX_RECORD_BYTES: usize = 512;

/// The call id of execution.md §3.4: 16 bytes from a secure random source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallId([u8; 16]);

impl CallId {
    /// A fresh id. `rand`'s thread generator is a CSPRNG seeded from the operating system.
    pub fn random() -> CallId {
        CallId(rand::random())
    }

    /// 32 lowercase hexadecimal characters.
    pub fn hex(&self) -> String {
        let mut hex = String::with_capacity(2 * self.0.len());
        push_hex(&mut hex, &self.0);
        hex
    }
}

/// The outcome codes an audited (dispatched) call can have (audit-events.md §2.3): never
/// `publication_failed`, nor the pre-activation codes.
fn is_audited_outcome(code: &str) -> bool {
    matches!(
        code,
        "success" | "execution_failed" | "invalid_result" | "cancelled" | "cleanup_failed" | "internal_error"
    )
}

/// One audited call as the driver knows it once its outcome is classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    pub call_id: CallId,
    /// The served tool's configured name.
    pub tool_name: String,
    /// The run's activation.
    pub started_at: SystemTime,
    pub outcome: Outcome,
    /// `True` or `Unknown`; a `False` dispatch is never audited.
    pub dispatch: Dispatch,
    /// The client was found gone during the run (execution.md §6.4).
    pub disconnected: bool,
}

impl AuditRecord {
    /// `"uncertain"` for `cleanup_failed` and for an `internal_error` whose settlement is unknown (a run
    /// lost before it settled); otherwise `"complete"`.
    pub fn cleanup_status(&self) -> &'static str {
        let lost = self.outcome == Outcome::InternalError && self.dispatch == Dispatch::Unknown;
        if self.outcome == Outcome::CleanupFailed || lost {
            "uncertain"
        } else {
            "complete"
        }
    }

    /// The line: deterministic JSON and LF. `ended_at` is now, never earlier than `started_at` (a clock
    /// that went backwards yields `started_at`).
    ///
    /// The committer still validates the line (audit-events.md §2.3): a tool name outside its domain makes
    /// an invalid record, a write failure (audit-events.md §2.8), so nothing unaudited passes for audited.
    pub fn encode(&self, now: SystemTime) -> Vec<u8> {
        let ended = if now < self.started_at { self.started_at } else { now };
        // Written member by member in the deterministic encoding's key order (audit-events.md §1.1): the
        // same bytes as `to_deterministic_record` of the nine members (a unit test holds them equal),
        // without building a JSON value first, which was a twentieth of an audited call's CPU (issue 27).
        let mut out = String::with_capacity(MAX_RECORD_BYTES);
        out.push_str("{\"call_id\":\"");
        push_hex(&mut out, &self.call_id.0);
        out.push_str("\",\"cleanup_status\":\"");
        out.push_str(self.cleanup_status());
        out.push_str("\",\"disconnected\":");
        out.push_str(if self.disconnected { "true" } else { "false" });
        out.push_str(",\"dispatch_state\":\"");
        out.push_str(self.dispatch.as_str());
        out.push_str("\",\"ended_at\":\"");
        time::write(&mut out, ended);
        out.push_str("\",\"outcome_code\":\"");
        out.push_str(self.outcome.as_str());
        out.push_str("\",\"started_at\":\"");
        time::write(&mut out, self.started_at);
        out.push_str("\",\"tool_name\":");
        write_string(&mut out, &self.tool_name);
        // True in every record this version writes: only write tools with dispatch not false are audited.
        out.push_str(",\"write_effects_may_have_occurred\":true}\n");
        out.into_bytes()
    }
}

/// One record as the generic deterministic encoder writes it (audit-events.md §2.3): exactly these nine
/// members. The oracle of [`AuditRecord::encode`]'s direct writing.
#[cfg(test)]
#[derive(serde::Serialize)]
struct Line<'a> {
    call_id: String,
    cleanup_status: &'static str,
    disconnected: bool,
    dispatch_state: Dispatch,
    ended_at: String,
    outcome_code: Outcome,
    started_at: String,
    tool_name: &'a str,
    write_effects_may_have_occurred: bool,
}

/// The exact key set, in encoding order.
const KEYS: [&str; 9] = [
    "call_id",
    "cleanup_status",
    "disconnected",
    "dispatch_state",
    "ended_at",
    "outcome_code",
    "started_at",
    "tool_name",
    "write_effects_may_have_occurred",
];

fn is_call_id(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_tool_name(s: &str) -> bool {
    (1..=128).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// Whether `line` is one valid record line (audit-events.md §2.3): at most 512 bytes, one LF at the end and
/// none before, deterministic JSON of an object with exactly the nine keys, each in its domain.
pub fn is_valid_line(line: &[u8]) -> bool {
    let Some(body) = line.strip_suffix(b"\n") else { return false };
    if line.len() > MAX_RECORD_BYTES || body.contains(&b'\n') {
        return false;
    }
    let Ok(value) = decode(body, Limits::REQUEST) else { return false };
    // Deterministic encoding (audit-events.md §1.1): re-encoding gives the same bytes.
    if to_deterministic_string(&value).as_bytes() != body {
        return false;
    }
    let Some(m) = value.as_object() else { return false };
    if m.len() != KEYS.len() || !KEYS.iter().all(|k| m.contains_key(*k)) {
        return false;
    }
    let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
    let b = |k: &str| m.get(k).and_then(Value::as_bool);
    let outcome = s("outcome_code");
    let cleanup = s("cleanup_status");
    let cleanup_ok = match cleanup {
        "uncertain" => matches!(outcome, "cleanup_failed" | "internal_error"),
        "complete" => outcome != "cleanup_failed",
        _ => false,
    };
    is_call_id(s("call_id"))
        && is_tool_name(s("tool_name"))
        && time::is_valid(s("started_at"))
        && time::is_valid(s("ended_at"))
        && s("ended_at") >= s("started_at")
        && is_audited_outcome(outcome)
        && matches!(s("dispatch_state"), "true" | "unknown")
        && b("write_effects_may_have_occurred").is_some()
        && b("disconnected").is_some()
        && cleanup_ok
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
