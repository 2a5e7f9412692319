//! The refusal of a store or a listener (lifecycle.md §1.5), for `ptc check` and serve mode's `startup
//! refused` log line: which path or address, and why, with the operating system's own reason and, for a
//! held lock, the process that holds it.
//!
//! A refused credential, too: its source as the host document declares it.
//!
//! Owns the wording of those facts. Does not own the rules that refused (`crate::storage`, the listener
//! binding of `listeners`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::codes::StartupCode;
use crate::config::credentials::CredentialError;
use crate::config::host::{CredentialSource, HostConfig};
use crate::explain::{Fact, Refusal};
use crate::storage::lock::{holder_pid, LOCK_DIR};
use crate::storage::{ErrorKind, StorageError};

/// A refusal `code` of the store directory `dir`: its path (the lock's, for a held lock) and the rule with
/// the system error and the holder's pid when they are known.
pub(crate) fn store(code: StartupCode, dir: &Path, cause: &StorageError) -> Refusal {
    let held = cause.kind == ErrorKind::LockHeld;
    let path = if held { dir.join(LOCK_DIR) } else { dir.to_path_buf() };
    let mut reason = cause.kind.describe().to_owned();
    if let Some(errno) = cause.errno {
        reason.push_str(&format!(" ({})", errno.desc()));
    }
    if held {
        if let Some(pid) = holder_pid(&path) {
            reason.push_str(&format!(" (pid {pid})"));
        }
    }
    Refusal::new(code).with(Fact::Path, path.display().to_string()).with(Fact::Reason, reason)
}

/// A listener that could not be bound: its address and the failed step with the operating system's
/// reason.
pub(crate) fn bind(address: SocketAddr, error: &crate::http::BindError) -> Refusal {
    Refusal::new(StartupCode::ListenerUnavailable)
        .with(Fact::Address, address.to_string())
        .with(Fact::Reason, error.to_string())
}

/// A credential that could not be captured: the binding and the rule, and where the binding is read from
/// (a literal's value is never shown).
pub(crate) fn credential(host: &HostConfig, error: CredentialError) -> Refusal {
    let source = error.binding.as_ref().and_then(|b| host.credentials.get(b)).map(|source| match source {
        CredentialSource::Env(variable) => format!("env {variable}"),
        CredentialSource::File(path) => format!("file {}", path.display()),
        CredentialSource::Literal(_) => "literal".to_owned(),
    });
    let refusal = Refusal::from(error);
    match source {
        Some(source) => refusal.with(Fact::Source, source),
        None => refusal,
    }
}

/// The store directory of an artifact step, below the artifact root.
pub(crate) fn artifact_store(root: &Path, step: crate::storage::artifact_root::ArtifactStep) -> PathBuf {
    use crate::storage::artifact_root::{
        ArtifactStep as S, EVENTS_DIR, INSPECTION_DIR, METRICS_DIR, TRACES_DIR,
    };
    match step {
        S::Root => root.to_path_buf(),
        S::EventsDirectory | S::EventsLock | S::EventsInventory => root.join(EVENTS_DIR),
        S::Traces => root.join(TRACES_DIR),
        S::Inspection => root.join(INSPECTION_DIR),
        S::Metrics => root.join(METRICS_DIR),
    }
}
