//! The `POST /mcp` front (http-mcp.md §5): the ordered validation table, from the method check (M1) to
//! the `tools/call` readiness check (C4), then the answer of `server/discover` or `tools/list`, or the
//! hand-over of a `tools/call` to the [`CallExecutor`].
//!
//! Owns the order of the steps and what flows between them: the request lease taken at request admission
//! (http-mcp.md §6.8) and held until the answer is written (or moved into the admitted call), the body read
//! (http-mcp.md §6.9), the id echoed once the envelope check validated it (http-mcp.md §7.2), and the 500
//! answer to a defect. Each step's rule lives in its own module; this file only sequences them. It does
//! not own the transport (`crate::http`) or anything after the readiness check (http-mcp.md §8.4).

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use hyper::body::{Body, Incoming};
use hyper::{HeaderMap, Request, Response, Version};
use ptc_actors::{AdmissionPool, Refusal as PoolRefusal};
use serde_json::{Map, Value};

use crate::apps::{catalog, Built, ServedTool};
use crate::codes::domain::Readiness;
use crate::http::connection::CloseSignal;
use crate::http::fields::authority_matches;
use crate::http::mcp::{method_rule, McpEndpoint, ResponseFuture};
use crate::http::progress::WriteProgress;
use crate::http::response::ResponseBody;
use crate::json::to_deterministic_string;
use crate::mcp::bearer::{self, BearerDigest};
use crate::mcp::body::{self, BodyFailure, BodyLimits};
use crate::mcp::call::{AdmittedCall, CallExecutor};
use crate::mcp::envelope::{self, Envelope};
use crate::mcp::method::{self, Method};
use crate::mcp::refusal::Refusal;
use crate::mcp::rpc::{RequestId, RpcError, StaticResult, PROTOCOL_VERSION};
use crate::mcp::step::{self as log, Refused, Step};
use crate::mcp::{accept, consistency, earlier, leased, media, meta, origin, params, size, tool};
use crate::support::fault::{self, FaultPoint};

/// Everything the front is built with (fixed at startup).
pub struct FrontSettings {
    /// The configured authority (http-mcp.md §1), compared with `Host` by the authority check
    /// (http-mcp.md §6.3).
    pub authority: String,
    /// `listen.allowed_origins`, for the Origin check (http-mcp.md §6.4).
    pub allowed_origins: Vec<String>,
    /// The digest of the captured bearer, for the bearer check (http-mcp.md §6.5).
    pub bearer: BearerDigest,
    /// The domain's readiness, for `tools/list` and `tools/call` (http-mcp.md §7.8, §8.4).
    pub readiness: Readiness,
    /// The `/mcp` request pool of request admission (http-mcp.md §6.8).
    pub requests: AdmissionPool,
    /// The built templates and the encoded catalog: the `tools/list` answer, the tool lookup and the
    /// `Mcp-Param-*` check (http-mcp.md §10.3, §8.2, §8.3).
    pub built: Arc<Built>,
}

/// The MCP front: an [`McpEndpoint`] for the router.
pub struct McpFront {
    settings: FrontSettings,
    executor: Arc<dyn CallExecutor>,
    /// The `server/discover` answer (http-mcp.md §10.2), encoded once but for the id.
    discover: StaticResult,
    /// The `tools/list` answer (http-mcp.md §10.3), encoded once but for the id: the served tools are
    /// fixed when the front is built.
    listing: StaticResult,
}

/// What the checks on the body decided, strict JSON through readiness (http-mcp.md §7.1–§8.4).
enum Decision {
    /// A JSON answer (an error, or the discover or list result).
    Answer(Response<ResponseBody>),
    /// A `tools/call` that passed every check of the front (http-mcp.md §8.1–§8.4).
    Call { tool: ServedTool, arguments: Value, id: RequestId },
}

impl McpFront {
    /// A front over `settings` that hands admitted calls to `executor` (explicit, so the integrator
    /// passes the real executor; `crate::mcp::call::Unavailable` until it exists).
    pub fn new(settings: FrontSettings, executor: Arc<dyn CallExecutor>) -> McpFront {
        let discover = StaticResult::new(&discover_result());
        let listing = StaticResult::new(settings.built.catalog.result_json());
        McpFront { settings, executor, discover, listing }
    }

    /// The checks of the head, header size through `Accept` (http-mcp.md §6.2–§6.7), in order; the first
    /// failure answers and no later check runs (so the bearer is not even hashed for a foreign `Host`).
    /// None reads the body.
    fn check_head(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let s = &self.settings;
        head_steps(headers, &s.authority, &s.allowed_origins, &s.bearer)
    }

    /// The whole table for one request.
    async fn serve(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        if let Some(answer) = method_rule(&request) {
            log::log_fixed(Step::M1, answer.status(), "method_not_allowed");
            return answer;
        }
        let (parts, body) = request.into_parts();
        let declared = !body.is_end_stream();
        if let Err(refusal) = self.check_head(&parts.headers) {
            log::log_refusal(refusal);
            return refusal.response(declared);
        }
        // Request admission (http-mcp.md §6.8): no id (the body is unread); the connection closes
        // (http-mcp.md §2.5 and the step's rule).
        let lease = match self.settings.requests.try_reserve() {
            Ok(lease) => lease,
            Err(refusal) => {
                let error = match refusal {
                    PoolRefusal::Exhausted => RpcError::RequestCapacityExhausted,
                    PoolRefusal::Unavailable | PoolRefusal::Quiescing => RpcError::Unavailable,
                };
                log::log_rpc(Step::M8, &error);
                return error.response(None, true);
            }
        };
        // The body read (http-mcp.md §6.9): size, progress, framing.
        let bytes = match body::read(body, BodyLimits::SPEC, parts.extensions.get()).await {
            Ok(bytes) => bytes,
            Err(BodyFailure::Refused(refusal)) => {
                log::log_refusal(refusal);
                return leased::hold_until_written(refusal.response(true), lease);
            }
            Err(BodyFailure::HalfClosed) => {
                log::log_half_closed();
                return close_without_response(parts.extensions.get()).await;
            }
        };
        let http10 = parts.version == Version::HTTP_10;
        // http-mcp.md §5: a defect answers 500 `-32603`, with the id once the envelope check
        // (http-mcp.md §7.2) has validated one.
        let validated = RefCell::new(None);
        let decided = catch_unwind(AssertUnwindSafe(|| self.decide(&parts.headers, &bytes, &validated)));
        match decided {
            Ok(Decision::Answer(answer)) => leased::hold_until_written(answer, lease),
            Ok(Decision::Call { tool, arguments, id }) => {
                let progress = parts.extensions.get::<Arc<WriteProgress>>().cloned();
                let answer = self
                    .executor
                    .execute(AdmittedCall { tool, arguments, id, lease, http10, progress })
                    .await;
                log_run_admission(answer.status());
                answer
            }
            Err(_) => {
                tracing::error!("defect while validating a /mcp request");
                let id = validated.into_inner();
                leased::hold_until_written(RpcError::Internal.response(id.as_ref(), false), lease)
            }
        }
    }

    /// The checks from strict JSON to readiness (http-mcp.md §7.1–§8.4) over the head and the complete body;
    /// `validated` receives the id once the envelope check (http-mcp.md §7.2) passed.
    fn decide(&self, headers: &HeaderMap, body: &[u8], validated: &RefCell<Option<RequestId>>) -> Decision {
        let Envelope { id, method, params } = match envelope::parse(body) {
            Ok(envelope) => envelope,
            Err(failure) => {
                let step = if failure.error == RpcError::ParseError { Step::M10 } else { Step::M11 };
                log::log_rpc(step, &failure.error);
                return Decision::Answer(failure.error.response(failure.id.as_ref(), false));
            }
        };
        validated.replace(Some(id.clone()));
        if fault::injected(FaultPoint::FrontDefect) {
            panic!("injected fault: a defect in the MCP front");
        }
        let fail = |refused: Refused| {
            log::log_rpc(refused.step, &refused.error);
            Decision::Answer(refused.error.response(Some(&id), false))
        };
        let resolved = method_steps(headers, &method, params);
        let ready = self.settings.readiness.is_ready();
        match resolved {
            Err(refused) => fail(refused),
            // http-mcp.md §5: discover is answered whatever the readiness.
            Ok(Method::Discover) => Decision::Answer(self.discover.response(&id)),
            Ok(Method::List) if !ready => fail(Refused::new(Step::M17, RpcError::Unavailable)),
            Ok(Method::List) => Decision::Answer(self.listing.response(&id)),
            Ok(Method::Call { name, arguments }) => self.check_call(headers, id, &name, arguments),
        }
    }

    /// The `tools/call` checks: `Mcp-Name`, tool lookup, `Mcp-Param-*` headers, readiness
    /// (http-mcp.md §8.1–§8.4).
    fn check_call(&self, headers: &HeaderMap, id: RequestId, name: &str, arguments: Value) -> Decision {
        let fail = |step: Step, error: RpcError| {
            log::log_rpc(step, &error);
            Decision::Answer(error.response(Some(&id), false))
        };
        if !tool::name_matches(headers, name) {
            return fail(Step::C1, RpcError::HeaderMismatch);
        }
        let Some(tool) = tool::find(&self.settings.built, name) else {
            return fail(Step::C2, RpcError::InvalidParams);
        };
        if !params::matches(headers, &tool.header_params, &arguments) {
            return fail(Step::C3, RpcError::HeaderMismatch);
        }
        if !self.settings.readiness.is_ready() {
            return fail(Step::C4, RpcError::Unavailable);
        }
        Decision::Call { tool, arguments, id }
    }
}

/// The checks of the head, header size through `Accept` (http-mcp.md §6.2–§6.7), in order; the first
/// failure is the answer (a free function so that the generated inputs of `chain_props.rs` run this very
/// sequence).
pub(crate) fn head_steps(
    headers: &HeaderMap,
    authority: &str,
    allowed_origins: &[String],
    digest: &BearerDigest,
) -> Result<(), Refusal> {
    let steps: [(&dyn Fn() -> bool, Refusal); 6] = [
        (&|| size::within_bound(headers), Refusal::HeadersTooLarge),
        (&|| authority_matches(headers, authority), Refusal::InvalidAuthority),
        (&|| origin::allowed(headers, allowed_origins), Refusal::OriginForbidden),
        (&|| bearer::authorized(headers, digest), Refusal::Unauthorized),
        (&|| media::acceptable(headers), Refusal::UnsupportedMediaType),
        (&|| accept::acceptable(headers), Refusal::NotAcceptable),
    ];
    match steps.iter().find(|(passes, _)| !passes()) {
        Some((_, refusal)) => Err(*refusal),
        None => Ok(()),
    }
}

/// The checks from `_meta` to the method parameters (http-mcp.md §7.3–§7.7) over a request whose envelope
/// passed: the served method with its validated parameters, or the error of the first step that fails and
/// its row (readiness for `tools/list`, http-mcp.md §7.8, is the caller's).
pub(crate) fn method_steps(
    headers: &HeaderMap,
    method: &str,
    params: Option<Map<String, Value>>,
) -> Result<Method, Refused> {
    // `params._meta` (http-mcp.md §7.3); a request of an earlier revision is told the served revision
    // instead (http-mcp.md §7.3.1).
    let Some(version) = meta::check(params.as_ref()).map(str::to_owned) else {
        let error = match earlier::requested(headers, method, params.as_ref()) {
            Some(requested) => RpcError::UnsupportedProtocolVersion { requested },
            None => RpcError::InvalidMeta,
        };
        return Err(Refused::new(Step::M12, error));
    };
    // Header and body consistency, then the protocol version (http-mcp.md §7.4, §7.5).
    if !consistency::consistent(headers, method, &version) {
        return Err(Refused::new(Step::M13, RpcError::HeaderMismatch));
    }
    method::version(&version).map_err(|error| Refused::new(Step::M14, error))?;
    // The method, then its parameters (http-mcp.md §7.6, §7.7).
    method::resolve(method, params.unwrap_or_default()).map_err(|error| {
        let step = if error == RpcError::MethodNotFound { Step::M15 } else { Step::M16 };
        Refused::new(step, error)
    })
}

/// Run admission refuses an admitted call inside the executor (http-mcp.md §8.6); the front sees only the
/// answer, whose status names the refusal (429 `-31999`, 503 `-31998`). The committed stream is 200.
fn log_run_admission(status: hyper::StatusCode) {
    let error = match status.as_u16() {
        429 => RpcError::RunCapacityExhausted,
        503 => RpcError::Unavailable,
        _ => return,
    };
    log::log_rpc(Step::C6, &error);
}

/// http-mcp.md §6.9 half-close: nothing is written; the connection layer closes the socket and drops this
/// future.
async fn close_without_response(signal: Option<&CloseSignal>) -> Response<ResponseBody> {
    match signal {
        Some(signal) => {
            signal.close_now();
            std::future::pending().await
        }
        // Every connection inserts the signal; without one (a defect), close with the 400 of the body read
        // (http-mcp.md §6.9).
        None => Refusal::RequestInvalid.response(true),
    }
}

/// The static `server/discover` result of http-mcp.md §10.2.
fn discover_result() -> String {
    let mut tools = Map::new();
    tools.insert("listChanged".into(), Value::Bool(false));
    let mut capabilities = Map::new();
    capabilities.insert("tools".into(), Value::Object(tools));
    let mut result = Map::new();
    result.insert("_meta".into(), catalog::server_meta());
    result.insert("cacheScope".into(), Value::from("private"));
    result.insert("capabilities".into(), Value::Object(capabilities));
    result.insert("resultType".into(), Value::from("complete"));
    result.insert("supportedVersions".into(), Value::Array(vec![Value::from(PROTOCOL_VERSION)]));
    result.insert("ttlMs".into(), Value::from(0));
    to_deterministic_string(&Value::Object(result))
}

impl McpEndpoint for McpFront {
    fn handle(&self, request: Request<Incoming>) -> ResponseFuture<'_> {
        Box::pin(self.serve(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::rpc::result_body;

    #[test]
    fn the_discover_result_is_exact() {
        // http-mcp.md §10.2, with this package's version.
        let expected = format!(
            r#"{{"id":1,"jsonrpc":"2.0","result":{{"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"ptc-gateway","version":"{}"}}}},"cacheScope":"private","capabilities":{{"tools":{{"listChanged":false}}}},"resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0}}}}"#,
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(result_body(&RequestId::Integer(1), &discover_result()), expected);
    }
}
