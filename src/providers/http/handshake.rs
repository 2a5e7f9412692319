//! The handshake of one Streamable HTTP declaration (providers.md §6.2, §6.3, §7.2, §5.4): what an
//! acquisition needs ([`HttpSpec`]), the probe or `initialize` on one client, the legacy handshake with
//! its session id and the tool listing, with what they settle ([`Negotiated`]).
//!
//! Its own file because both the first acquisition (`acquire.rs`) and the live transport's single
//! re-initialisation after a lost legacy session (`transport.rs`, providers.md §5.4) run it; neither of
//! those imports the other for it. The rules are `negotiate.rs`, `listing.rs` and `status.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::time::Instant;

use super::super::acquire::probe_window;
use super::super::failure::FailureClass;
use super::super::listing::{page_params, Era, Listing};
use super::super::negotiate::{
    self, check_initialize_for, classify_probe_for, ProbeEvent, ProbeVerdict, LEGACY_ACCEPTED_HTTP, MODERN,
};
use super::exchange::Answer;
use super::headers::{CredentialHeader, EraHeaders};
use super::session::session_id;
use super::status::probe_status;
use super::wire::{LegacyHeaders, Wire};
use crate::config::host::{ProtocolEra, ToolMapping};
use serde_json::Value;

/// What one HTTP acquisition needs.
#[derive(Clone)]
pub struct HttpSpec {
    pub endpoint: String,
    pub allow_insecure_loopback: bool,
    /// The configured static headers with their captured values, in configured order.
    pub headers: Vec<CredentialHeader>,
    pub protocol: ProtocolEra,
    /// The acquisition bound; the `streamable_http` schema has no key for it, so the default 5,000.
    pub start_timeout_ms: u64,
    pub tools: BTreeMap<String, ToolMapping>,
    /// The gateway version (`clientInfo.version`, `User-Agent`).
    pub version: String,
}

/// The acquisition bound when the transport has no `start_timeout_ms` key (config.md §5.4.1 default).
pub const DEFAULT_START_TIMEOUT_MS: u64 = 5_000;

impl HttpSpec {
    /// The spec of one installation: its `streamable_http` transport with each header's captured
    /// credential. `None` when a binding was not captured (capture refuses that first, config.md §8).
    pub fn from_config(
        transport: &crate::config::host::HttpTransport,
        credentials: &crate::config::credentials::CapturedCredentials,
        tools: BTreeMap<String, ToolMapping>,
        version: &str,
    ) -> Option<HttpSpec> {
        let headers = transport
            .headers
            .iter()
            .map(|h| {
                let value = credentials.get(&h.binding)?.clone();
                Some(CredentialHeader { name: h.name.clone(), scheme: h.scheme, value })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(HttpSpec {
            endpoint: transport.endpoint.clone(),
            allow_insecure_loopback: transport.allow_insecure_loopback,
            headers,
            protocol: transport.protocol,
            start_timeout_ms: DEFAULT_START_TIMEOUT_MS,
            tools,
            version: version.to_owned(),
        })
    }
}

/// What negotiation settled.
pub(super) struct Negotiated {
    pub era: Era,
    pub protocol_version: String,
    pub server_info: Value,
    pub session: Option<Arc<str>>,
}

/// Negotiation (providers.md §6.2): the probe, or the legacy handshake when the era is fixed to it or
/// the probe falls back.
pub(super) async fn negotiate(
    wire: &Wire,
    spec: &HttpSpec,
    deadline: Instant,
) -> Result<Negotiated, FailureClass> {
    if spec.protocol == ProtocolEra::Legacy {
        return legacy(wire, spec, deadline).await;
    }
    let window = (Instant::now() + probe_window(spec.start_timeout_ms)).min(deadline);
    let until = if spec.protocol == ProtocolEra::Auto { window } else { deadline };
    let era = EraHeaders::Modern { method: "server/discover", name: None, params: &[] };
    let probe = wire.request("server/discover", Some(negotiate::probe_params(&spec.version)), era, true);
    let verdict = match tokio::time::timeout_at(until, probe).await {
        // Silent until the window: the legacy fallback, or (not `Auto`) the acquisition's deadline.
        Err(elapsed) => match classify_probe_for(spec.protocol, ProbeEvent::Silent, &LEGACY_ACCEPTED_HTTP) {
            ProbeVerdict::Fail(FailureClass::ProviderAcquisitionTimeout) => {
                ProbeVerdict::Fail(deadline_passed("server/discover")(elapsed))
            }
            verdict => verdict,
        },
        Ok(Answer::Reply(reply, _)) => {
            classify_probe_for(spec.protocol, ProbeEvent::Answer(reply.message), &LEGACY_ACCEPTED_HTTP)
        }
        Ok(Answer::Status(code, body)) => probe_status(spec.protocol, code, body),
        Ok(Answer::Failed { failure, .. }) => ProbeVerdict::Fail(failure.class),
        Ok(Answer::Accepted) => ProbeVerdict::Fail(FailureClass::McpProtocolError),
    };
    match verdict {
        ProbeVerdict::Modern { server_info } => Ok(Negotiated {
            era: Era::Modern,
            protocol_version: MODERN.to_owned(),
            server_info,
            session: None,
        }),
        // providers.md §6.2 HTTP fallback: the same client POSTs `initialize`; no second probe, no retry.
        ProbeVerdict::Fallback => legacy(wire, spec, deadline).await,
        ProbeVerdict::Fail(class) => Err(class),
    }
}

/// The legacy handshake (providers.md §6.3) with the session id rule (providers.md §5.4); also the first half
/// of a re-initialisation.
pub(super) async fn legacy(
    wire: &Wire,
    spec: &HttpSpec,
    deadline: Instant,
) -> Result<Negotiated, FailureClass> {
    let params = Some(negotiate::initialize_params(&spec.version));
    let answer =
        tokio::time::timeout_at(deadline, wire.request("initialize", params, EraHeaders::Initialize, false))
            .await
            .map_err(deadline_passed("initialize"))?;
    let (reply, headers) = match answer {
        Answer::Reply(reply, headers) => (reply, headers),
        Answer::Failed { failure, .. } => return Err(failure.class),
        Answer::Status(..) | Answer::Accepted => return Err(FailureClass::McpProtocolError),
    };
    let (version, server_info) = check_initialize_for(reply.message, &LEGACY_ACCEPTED_HTTP)?;
    let session = session_id(&headers).map_err(|error| {
        tracing::debug!(%error, "the legacy session id refused");
        FailureClass::McpProtocolError
    })?;
    let era = LegacyHeaders { version: &version, session: session.as_deref() }.era();
    let notified = tokio::time::timeout_at(deadline, wire.notify("notifications/initialized", era))
        .await
        .map_err(deadline_passed("notifications/initialized"))?;
    if let Answer::Failed { failure, .. } = notified {
        return Err(failure.class);
    }
    Ok(Negotiated { era: Era::Legacy, protocol_version: version, server_info, session })
}

/// providers.md §7.1: the acquisition's deadline passed during `step`. The timer's error holds nothing
/// more; which request the deadline ended is the cause, for the debug log (providers.md §12.2).
fn deadline_passed(step: &'static str) -> impl FnOnce(tokio::time::error::Elapsed) -> FailureClass {
    move |_| {
        tracing::debug!(step, "the acquisition deadline passed");
        FailureClass::ProviderAcquisitionTimeout
    }
}

/// Every listing page (providers.md §7.2) and the mapped-tool facts (providers.md §7.3, §7.4).
pub(super) async fn list(
    wire: &Wire,
    spec: &HttpSpec,
    negotiated: &Negotiated,
    deadline: Instant,
) -> Result<Vec<Value>, FailureClass> {
    let mut listing = Listing::default();
    let mut cursor: Option<String> = None;
    loop {
        listing.sending(cursor.as_deref());
        let params = page_params(negotiated.era, &spec.version, cursor.as_deref());
        let era = match negotiated.era {
            Era::Modern => EraHeaders::Modern { method: "tools/list", name: None, params: &[] },
            Era::Legacy => LegacyHeaders {
                version: &negotiated.protocol_version,
                session: negotiated.session.as_deref(),
            }
            .era(),
        };
        let answer = tokio::time::timeout_at(deadline, wire.request("tools/list", params, era, false))
            .await
            .map_err(deadline_passed("tools/list"))?;
        let reply = match answer {
            Answer::Reply(reply, _) => reply,
            Answer::Failed { failure, .. } => return Err(failure.class),
            Answer::Status(..) | Answer::Accepted => return Err(FailureClass::McpProtocolError),
        };
        match listing.accept(reply.message)? {
            Some(next) => cursor = Some(next),
            None => return listing.mapped_facts(&spec.tools),
        }
    }
}
