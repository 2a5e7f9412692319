//! Acquisition of one stdio declaration (providers.md §6, §7.1–§7.4): resolve and digest, spawn,
//! negotiate the era (with the fresh-process fallback of providers.md §6.2), list the tools, check the mapped
//! tools, and return the transport with its facts — all within `start_timeout_ms`.
//!
//! This file orchestrates; the rules are in `negotiate.rs` and `listing.rs`. It does not compute pins,
//! emit event records or order acquisitions across tools (startup's job, providers.md §7.5).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::child::{self, LaunchSpec};
use super::failure::FailureClass;
use super::listing::{page_params, Era, Listing};
use super::negotiate::{self, ProbeEvent, ProbeVerdict};
use super::transport::{LossFault, StdioTransport, TransportEnd, Waited};
use crate::config::host::{ProtocolEra, ToolMapping};

/// The probe window bound (providers.md §6.2, §15).
const PROBE_WINDOW_CAP_MS: u64 = 10_000;

/// What one acquisition needs.
#[derive(Clone, Debug)]
pub struct AcquireSpec {
    pub launch: LaunchSpec,
    pub protocol: ProtocolEra,
    pub start_timeout_ms: u64,
    /// The installation's `tools` map: every mapped tool must be listed (providers.md §7.3).
    pub tools: BTreeMap<String, ToolMapping>,
    /// The gateway version sent as `clientInfo.version`.
    pub version: String,
}

/// The `transport` fact (providers.md §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    Stdio,
    StreamableHttp,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::StreamableHttp => "streamable_http",
        }
    }
}

/// The facts of providers.md §7.4 of one acquisition (stdio or Streamable HTTP).
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    pub transport: TransportKind,
    pub era: Era,
    pub protocol_version: String,
    pub server_info: Value,
    /// stdio: `sha256:` + hex of the resolved executable; HTTP: `None` (`null`).
    pub executable_digest: Option<String>,
    pub tools: Vec<Value>,
}

impl Facts {
    /// The facts document of providers.md §7.4 (the input of the snapshot pin).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("era".to_owned(), Value::String(self.era.as_str().to_owned()));
        let digest = self.executable_digest.clone().map_or(Value::Null, Value::String);
        map.insert("executable_digest".to_owned(), digest);
        map.insert("protocol_version".to_owned(), Value::String(self.protocol_version.clone()));
        map.insert("server_info".to_owned(), self.server_info.clone());
        map.insert("tools".to_owned(), Value::Array(self.tools.clone()));
        map.insert("transport".to_owned(), Value::String(self.transport.as_str().to_owned()));
        Value::Object(map)
    }
}

/// A live acquisition.
pub struct Acquired {
    pub transport: StdioTransport,
    pub facts: Facts,
    /// Processes spawned, the discarded probe process included (1 or 2).
    pub spawns: u32,
}

/// Why an acquisition failed.
#[derive(Debug)]
pub enum AcquireError {
    /// The resolved executable could not be read for its digest: `provider_pin_unavailable`
    /// (providers.md §7.5 step 1).
    PinUnavailable,
    /// A failure class of providers.md §14, reported publicly as `provider_runtime_unavailable`; with the
    /// failed transport's end when one was started (for its `transport` and `stderr_tail` records).
    Failed { class: FailureClass, end: Option<TransportEnd> },
}

impl AcquireError {
    pub fn class(&self) -> Option<FailureClass> {
        match self {
            AcquireError::PinUnavailable => None,
            AcquireError::Failed { class, .. } => Some(*class),
        }
    }
}

fn failed(class: FailureClass) -> AcquireError {
    AcquireError::Failed { class, end: None }
}

async fn fail_closing(transport: StdioTransport, class: FailureClass) -> AcquireError {
    let end = transport.close(false).await;
    AcquireError::Failed { class, end: Some(end) }
}

/// The probe window: `min(floor(start_timeout_ms / 2), 10000)` ms (providers.md §6.2).
pub fn probe_window(start_timeout_ms: u64) -> Duration {
    Duration::from_millis((start_timeout_ms / 2).min(PROBE_WINDOW_CAP_MS))
}

fn start(spec: &AcquireSpec) -> Result<(StdioTransport, String), AcquireError> {
    let resolved = child::resolve(&spec.launch).map_err(failed)?;
    // config.md §11 row 116 (*F*): the one test seam of this layer, so that the row runs as root too.
    let unreadable = crate::support::fault::injected(crate::support::fault::FaultPoint::ExecutableUnreadable);
    let digest = if unreadable { None } else { child::digest_executable(&resolved) };
    let digest = digest.ok_or(AcquireError::PinUnavailable)?;
    let (child, pipes) = child::spawn(&spec.launch, &resolved).map_err(failed)?;
    Ok((StdioTransport::start(child, pipes), digest))
}

/// Acquire one declaration (providers.md §7). On failure every started process has been closed and reaped.
pub async fn acquire(spec: &AcquireSpec) -> Result<Acquired, AcquireError> {
    let deadline = Instant::now() + Duration::from_millis(spec.start_timeout_ms);
    let (transport, digest) = start(spec)?;
    let (transport, digest, negotiated, spawns) = match spec.protocol {
        ProtocolEra::Legacy => {
            let negotiated = legacy(&transport, spec, deadline).await;
            (transport, digest, negotiated, 1)
        }
        ProtocolEra::Auto | ProtocolEra::Modern => {
            let window = (Instant::now() + probe_window(spec.start_timeout_ms)).min(deadline);
            let probe_until = if spec.protocol == ProtocolEra::Auto { window } else { deadline };
            let event = probe(&transport, &spec.version, probe_until).await;
            match negotiate::classify_probe(spec.protocol, event) {
                ProbeVerdict::Modern { server_info } => {
                    (transport, digest, Ok((Era::Modern, negotiate::MODERN.to_owned(), server_info)), 1)
                }
                ProbeVerdict::Fail(class) => return Err(fail_closing(transport, class).await),
                ProbeVerdict::Fallback => {
                    // The probe never shares a process with a legacy handshake (providers.md §6.2): fast
                    // close, then a fresh process under the same rules; the time counts against the deadline
                    // (providers.md §13.2).
                    transport.close(true).await;
                    let (fresh, digest) = start(spec)?;
                    let negotiated = legacy(&fresh, spec, deadline).await;
                    (fresh, digest, negotiated, 2)
                }
            }
        }
    };
    let (era, protocol_version, server_info) = match negotiated {
        Ok(negotiated) => negotiated,
        Err(class) => return Err(fail_closing(transport, class).await),
    };
    match list(&transport, spec, era, deadline).await {
        Ok(tools) => Ok(Acquired {
            transport,
            facts: Facts {
                transport: TransportKind::Stdio,
                era,
                protocol_version,
                server_info,
                executable_digest: Some(digest),
                tools,
            },
            spawns,
        }),
        Err(class) => Err(fail_closing(transport, class).await),
    }
}

// Waiting without cancellation: acquisition requests are never cancelled; at the deadline the transport
// is closed instead (providers.md §6.3 step 2, providers.md §7.1).
async fn ask(
    transport: &StdioTransport,
    method: &str,
    params: Option<Value>,
    probe: bool,
    until: Instant,
) -> Result<Option<super::table::Reply>, FailureClass> {
    let pending = transport.send(method, params, probe).map_err(|f| f.class)?;
    // The wait's own deadline lies beyond `until`, so it never abandons (and never sends a cancellation);
    // dropping it at `until` leaves the entry to the close that follows.
    let never = until + Duration::from_secs(1);
    tokio::select! {
        waited = transport.wait(pending, never, std::future::pending()) => match waited {
            Waited::Answered(reply) => Ok(Some(reply)),
            Waited::Failed(failure) | Waited::Detached(failure, _) => Err(failure.class),
        },
        () = tokio::time::sleep_until(until) => Ok(None),
    }
}

async fn probe(transport: &StdioTransport, version: &str, until: Instant) -> ProbeEvent {
    let params = negotiate::probe_params(version);
    match ask(transport, "server/discover", Some(params), true, until).await {
        Ok(Some(reply)) => ProbeEvent::Answer(reply.message),
        Ok(None) => ProbeEvent::Silent,
        Err(FailureClass::McpProtocolError) => ProbeEvent::Violation,
        Err(_) => {
            // Distinguish a violation recorded by the loss from an exit or end of file.
            match transport.life().fault() {
                Some(LossFault::ProtocolError) => ProbeEvent::Violation,
                _ => ProbeEvent::Exited,
            }
        }
    }
}

async fn legacy(
    transport: &StdioTransport,
    spec: &AcquireSpec,
    deadline: Instant,
) -> Result<(Era, String, Value), FailureClass> {
    let params = negotiate::initialize_params(&spec.version);
    let reply = ask(transport, "initialize", Some(params), false, deadline)
        .await?
        .ok_or(FailureClass::ProviderAcquisitionTimeout)?;
    let (version, server_info) = negotiate::check_initialize(reply.message)?;
    transport.notify("notifications/initialized").map_err(|f| f.class)?;
    Ok((Era::Legacy, version, server_info))
}

async fn list(
    transport: &StdioTransport,
    spec: &AcquireSpec,
    era: Era,
    deadline: Instant,
) -> Result<Vec<Value>, FailureClass> {
    let mut listing = Listing::default();
    let mut cursor: Option<String> = None;
    loop {
        listing.sending(cursor.as_deref());
        let params = page_params(era, &spec.version, cursor.as_deref());
        let reply = ask(transport, "tools/list", params, false, deadline)
            .await?
            .ok_or(FailureClass::ProviderAcquisitionTimeout)?;
        match listing.accept(reply.message)? {
            Some(next) => cursor = Some(next),
            None => return listing.mapped_facts(&spec.tools),
        }
    }
}
