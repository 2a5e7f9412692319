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
        // The refusal prints the class only (lifecycle.md §1.5); which tool and which header rule is for
        // the debug log (the rule's fixed text, no schema value).
        let params = project(schema).map_err(|error| {
            tracing::debug!(upstream_tool = name, %error, "the tool's x-mcp-header annotations refused");
            FailureClass::ProviderToolMissing
        })?;
        out.insert(name.to_owned(), params);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // providers.md §7.3: a mapped tool whose `x-mcp-header` annotations do not project is
    // `provider_tool_missing`, as before; the debug log names the upstream tool and the rule, and no
    // schema value.
    #[test]
    fn a_refused_header_annotation_names_its_tool_and_rule_in_the_debug_log() {
        let tools = [
            serde_json::json!({"name": "ok", "input_schema": {"type": "object"}}),
            serde_json::json!({"name": "lookup", "input_schema": {"type": "object", "properties": {
                "q": {"type": "object", "x-mcp-header": "sk-not-logged"}
            }}}),
        ];
        let log = crate::support::log_capture::capture();
        assert_eq!(project_tools(&tools).err(), Some(FailureClass::ProviderToolMissing));
        assert_eq!(
            log.lines_with("x-mcp-header"),
            ["DEBUG the tool's x-mcp-header annotations refused upstream_tool=\"lookup\" \
                 error=an x-mcp-header property is not a string, integer or boolean"]
        );
        assert_eq!(log.lines_with("sk-not-logged"), Vec::<String>::new());
    }
}
