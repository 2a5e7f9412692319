//! Acquisition of one Streamable HTTP declaration (providers.md §6, §7.1–§7.4, §5.4 re-initialisation):
//! probe or `initialize` on the same client, the legacy session id, the tool listing, the mapped-tool and
//! `x-mcp-header` checks, all within `start_timeout_ms` from the first request.
//!
//! This file orchestrates over `wire.rs`; the rules are `negotiate.rs`, `listing.rs` and `status.rs`. It
//! does not own the live transport (`transport.rs`) and does not compute pins or order acquisitions.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::super::acquire::{probe_window, AcquireError, Facts, TransportKind};
use super::super::failure::FailureClass;
use super::super::listing::{page_params, Era, Listing};
use super::super::negotiate::{
    self, check_initialize_for, classify_probe_for, ProbeEvent, ProbeVerdict, LEGACY_ACCEPTED_HTTP, MODERN,
};
use super::endpoint::Endpoint;
use super::exchange::{Answer, Ctx};
use super::headers::{CredentialHeader, EraHeaders, StaticHeaders};
use ptc_actors::TaskGroup;

use super::pool::Pool;
use super::session::session_id;
use super::status::probe_status;
use super::transport::HttpTransport;
use super::wire::{LegacyHeaders, Wire};
use crate::apps::header::project;
use crate::config::host::{ProtocolEra, ToolMapping};
use crate::mcp_param::HeaderParam;

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

/// A live HTTP acquisition.
pub struct HttpAcquired {
    pub transport: HttpTransport,
    pub facts: Facts,
}

/// What negotiation settled.
pub(super) struct Negotiated {
    pub era: Era,
    pub protocol_version: String,
    pub server_info: Value,
    pub session: Option<Arc<str>>,
}

/// Acquire one declaration (providers.md §7). On failure the client is dropped (and a legacy session
/// deleted).
pub async fn acquire_http(spec: &HttpSpec) -> Result<HttpAcquired, AcquireError> {
    let failed = |class| AcquireError::Failed { class, end: None };
    let endpoint = Endpoint::parse(&spec.endpoint, spec.allow_insecure_loopback)
        .ok_or(failed(FailureClass::McpTransportError))?;
    let statics = StaticHeaders::build(&spec.headers).ok_or(failed(FailureClass::McpTransportError))?;
    let wire = Wire::new(Ctx {
        pool: Arc::new(Pool::new(endpoint, TaskGroup::new())),
        statics,
        gateway_version: spec.version.clone(),
    });
    // providers.md §7.1: measured from the first request.
    let deadline = Instant::now() + Duration::from_millis(spec.start_timeout_ms);
    let negotiated = match negotiate(&wire, spec, deadline).await {
        Ok(negotiated) => negotiated,
        Err(class) => return Err(HttpTransport::fail_acquisition(wire, None, class).await),
    };
    let listed = list(&wire, spec, &negotiated, deadline).await;
    let (tools, params) = match listed.and_then(|tools| project_tools(&tools).map(|p| (tools, p))) {
        Ok(listed) => listed,
        Err(class) => return Err(HttpTransport::fail_acquisition(wire, negotiated.session, class).await),
    };
    let facts = Facts {
        transport: TransportKind::StreamableHttp,
        era: negotiated.era,
        protocol_version: negotiated.protocol_version.clone(),
        server_info: negotiated.server_info.clone(),
        executable_digest: None,
        tools,
    };
    let transport = HttpTransport::start(wire, spec.clone(), &facts, negotiated, params);
    Ok(HttpAcquired { transport, facts })
}

async fn negotiate(wire: &Wire, spec: &HttpSpec, deadline: Instant) -> Result<Negotiated, FailureClass> {
    if spec.protocol == ProtocolEra::Legacy {
        return legacy(wire, spec, deadline).await;
    }
    let window = (Instant::now() + probe_window(spec.start_timeout_ms)).min(deadline);
    let until = if spec.protocol == ProtocolEra::Auto { window } else { deadline };
    let era = EraHeaders::Modern { method: "server/discover", name: None, params: &[] };
    let probe = wire.request("server/discover", Some(negotiate::probe_params(&spec.version)), era, true);
    let verdict = match tokio::time::timeout_at(until, probe).await {
        Err(_) => classify_probe_for(spec.protocol, ProbeEvent::Silent, &LEGACY_ACCEPTED_HTTP),
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
    let timeout = FailureClass::ProviderAcquisitionTimeout;
    let params = Some(negotiate::initialize_params(&spec.version));
    let answer =
        tokio::time::timeout_at(deadline, wire.request("initialize", params, EraHeaders::Initialize, false))
            .await
            .map_err(|_| timeout)?;
    let (reply, headers) = match answer {
        Answer::Reply(reply, headers) => (reply, headers),
        Answer::Failed { failure, .. } => return Err(failure.class),
        Answer::Status(..) | Answer::Accepted => return Err(FailureClass::McpProtocolError),
    };
    let (version, server_info) = check_initialize_for(reply.message, &LEGACY_ACCEPTED_HTTP)?;
    let session = session_id(&headers).map_err(|_| FailureClass::McpProtocolError)?;
    let era = LegacyHeaders { version: &version, session: session.as_deref() }.era();
    let notified = tokio::time::timeout_at(deadline, wire.notify("notifications/initialized", era))
        .await
        .map_err(|_| timeout)?;
    if let Answer::Failed { failure, .. } = notified {
        return Err(failure.class);
    }
    Ok(Negotiated { era: Era::Legacy, protocol_version: version, server_info, session })
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
            .map_err(|_| FailureClass::ProviderAcquisitionTimeout)?;
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

/// providers.md §7.3 for HTTP: every mapped tool's `x-mcp-header` annotations project (http-mcp.md §9.1); the
/// projection is what `Mcp-Param-*` mirrors on each modern call.
fn project_tools(tools: &[Value]) -> Result<BTreeMap<String, Vec<HeaderParam>>, FailureClass> {
    let mut out = BTreeMap::new();
    for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).ok_or(FailureClass::ProviderToolMissing)?;
        let schema = tool.get("input_schema").ok_or(FailureClass::ProviderToolMissing)?;
        let params = project(schema).map_err(|_| FailureClass::ProviderToolMissing)?;
        out.insert(name.to_owned(), params);
    }
    Ok(out)
}
