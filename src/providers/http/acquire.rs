//! Acquisition of one Streamable HTTP declaration (providers.md §6, §7.1–§7.4, §5.4 re-initialisation):
//! probe or `initialize` on the same client, the legacy session id, the tool listing, the mapped-tool and
//! `x-mcp-header` checks, all within `start_timeout_ms` from the first request.
//!
//! This file orchestrates over `wire.rs` and the handshake (`handshake.rs`); the rules are `negotiate.rs`,
//! `listing.rs` and `status.rs`. It does not own the live transport (`transport.rs`) and does not compute
//! pins or order acquisitions.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::super::acquire::{AcquireError, Facts, TransportKind};
use super::super::failure::FailureClass;
use super::endpoint::Endpoint;
use super::exchange::Ctx;
use super::handshake::{list, negotiate, HttpSpec};
use super::headers::StaticHeaders;
use ptc_actors::TaskGroup;

use super::pool::Pool;
use super::transport::HttpTransport;
use super::wire::Wire;
use crate::apps::header::project;
use crate::mcp_param::HeaderParam;

/// A live HTTP acquisition.
pub struct HttpAcquired {
    pub transport: HttpTransport,
    pub facts: Facts,
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
