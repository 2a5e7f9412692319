//! The host document (config.md §5): loading (stage 2 of lifecycle.md §3.2), the semantic checks of
//! config.md §5.7, the bearer-binding check of config.md §5.8 (stage 3), the typed form, and the installation
//! projection of pins.md §7.1.
//!
//! The structure (every key, bound and default) is defined once in `schema::host`; this module owns the
//! rules that span members (references, aliases, endpoints, headers). Every failure of stage 2 is
//! `host_invalid`. Nothing here reads a credential's value, touches another file or the network.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::document_error::{DocumentError, Problem, Text};
use super::schema::{self, fill_defaults, HOST};
use super::{origin, paths, typed, Mode};
use crate::codes::StartupCode;
use crate::json::{self, Limits};

/// Where one credential's value comes from (config.md §5.2). A literal's value is a secret and is never
/// printed.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CredentialSource {
    /// `{"env": "VAR"}`.
    Env(String),
    /// `{"file": "path"}`, anchored at the host document's directory.
    File(PathBuf),
    /// `{"literal": "value"}`.
    Literal(String),
}

impl std::fmt::Debug for CredentialSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CredentialSource::Env(var) => f.debug_tuple("Env").field(var).finish(),
            CredentialSource::File(path) => f.debug_tuple("File").field(path).finish(),
            CredentialSource::Literal(_) => f.write_str("Literal(<redacted>)"),
        }
    }
}

/// `install.<alias>.source` (config.md §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Mcp,
    Llm,
    PtcTraceSnapshot,
    LlmReplay,
    Decision,
    PtcPrivateTraceSnapshot,
    PtcInspectionSnapshot,
}

impl Source {
    /// The spelling of `source` in the host document (config.md §5.3).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Mcp => "mcp",
            Source::Llm => "llm",
            Source::PtcTraceSnapshot => "ptc_trace_snapshot",
            Source::LlmReplay => "llm_replay",
            Source::Decision => "decision",
            Source::PtcPrivateTraceSnapshot => "ptc_private_trace_snapshot",
            Source::PtcInspectionSnapshot => "ptc_inspection_snapshot",
        }
    }

    /// Reserved sources have no defined shape in this version (config.md §5.3).
    pub fn is_reserved(self) -> bool {
        matches!(
            self,
            Source::LlmReplay
                | Source::Decision
                | Source::PtcPrivateTraceSnapshot
                | Source::PtcInspectionSnapshot
        )
    }
}

/// `effect` of a mapped upstream tool (config.md §5.4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolEffect {
    Read,
    Write,
}

/// `tools.<upstream name>` of an `mcp` installation.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolMapping {
    /// The gateway-visible alias (`as`).
    #[serde(rename = "as")]
    pub alias: String,
    pub effect: ToolEffect,
    pub description: Option<String>,
}

/// `protocol` of a transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum ProtocolEra {
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "2026-07-28")]
    Modern,
    #[serde(rename = "legacy")]
    Legacy,
}

/// A stdio transport (config.md §5.4.1). Paths are kept as written; `cwd` is also given anchored.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StdioTransport {
    pub command: String,
    pub args: Vec<String>,
    /// `cwd` anchored at the host document's directory.
    pub cwd: PathBuf,
    pub inherit_environment: bool,
    /// Child variable → credential binding (`env.<VAR>.binding`).
    #[serde(deserialize_with = "env_bindings")]
    pub env: BTreeMap<String, String>,
    pub start_timeout_ms: u64,
    pub protocol: ProtocolEra,
}

/// `headers[].scheme`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeaderScheme {
    Raw,
    Bearer,
    Basic,
}

/// One static credential header.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticHeader {
    pub name: String,
    pub binding: String,
    pub scheme: HeaderScheme,
}

/// A Streamable HTTP transport (config.md §5.4.2).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpTransport {
    pub endpoint: String,
    pub allow_insecure_loopback: bool,
    pub headers: Vec<StaticHeader>,
    pub protocol: ProtocolEra,
    /// `oauth` present: selecting the installation is `provider_source_unsupported` (config.md §6.5 S10).
    /// Its members are not interpreted (config.md §5.4.2).
    #[serde(default, deserialize_with = "present")]
    pub oauth: bool,
}

/// `transport`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "type")]
pub enum McpTransport {
    #[serde(rename = "stdio")]
    Stdio(StdioTransport),
    #[serde(rename = "streamable_http")]
    StreamableHttp(HttpTransport),
}

/// `ceilings` (config.md §5.4.4), defaults applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ceilings {
    pub timeout_ms: u64,
    pub max_result_bytes: u64,
}

/// An `mcp` installation.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpInstallation {
    /// The operator's revision label (config.md §5.3); not part of the installation pin (pins.md §7.1).
    pub installation_revision: String,
    pub transport: McpTransport,
    /// Upstream tool name → mapping.
    pub tools: BTreeMap<String, ToolMapping>,
    pub ceilings: Ceilings,
}

/// The part of an installation that depends on its source.
#[derive(Clone, Debug, PartialEq)]
pub enum InstallationKind {
    Mcp(McpInstallation),
    /// A model endpoint (config.md §5.5, models.md).
    Llm(LlmInstallation),
    /// Validated now, served later (config.md §5.6).
    TraceSnapshot {
        directory: PathBuf,
    },
    /// A reserved source: accepted, never validated, refused when selected.
    Reserved,
}

/// An `llm` installation (config.md §5.5), defaults filled.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmInstallation {
    /// The operator's revision label (config.md §5.3); not part of the installation pin (pins.md §7.1).
    pub installation_revision: String,
    /// The binding of the model credential.
    pub credential: String,
    /// Checked by the endpoint rule (config.md §5.5, §5.7 rule 5).
    pub endpoint: String,
    pub allow_insecure_loopback: bool,
    pub model: String,
    pub params: LlmParams,
    pub ceilings: LlmCeilings,
}

/// `params` of an `llm` installation: the request defaults the gateway adds (models.md).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmParams {
    /// `temperature` (a JSON number 0..2) when configured, sent as written.
    pub temperature: Option<Value>,
    /// `max_tokens` when configured.
    pub max_tokens: Option<u64>,
}

/// `ceilings` of an `llm` installation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmCeilings {
    /// Default 60,000.
    pub timeout_ms: u64,
}

/// `install.<alias>`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(from = "InstallationShape")]
pub struct Installation {
    pub source: Source,
    pub kind: InstallationKind,
    /// The decoded object exactly as written, the input of the installation pin (pins.md §7); set by the
    /// loader from the document before defaults were inserted.
    pub declaration: Value,
}

/// An installation as the document writes it: discriminated by `source` (config.md §5.3). The reserved
/// sources' members are not interpreted.
#[derive(Deserialize)]
#[serde(tag = "source", deny_unknown_fields)]
enum InstallationShape {
    #[serde(rename = "mcp")]
    Mcp(McpInstallation),
    #[serde(rename = "llm")]
    Llm(LlmInstallation),
    #[serde(rename = "ptc_trace_snapshot")]
    TraceSnapshot {
        #[serde(rename = "installation_revision")]
        _revision: String,
        directory: PathBuf,
    },
    #[serde(rename = "llm_replay")]
    LlmReplay(IgnoredAny),
    #[serde(rename = "decision")]
    Decision(IgnoredAny),
    #[serde(rename = "ptc_private_trace_snapshot")]
    PtcPrivateTraceSnapshot(IgnoredAny),
    #[serde(rename = "ptc_inspection_snapshot")]
    PtcInspectionSnapshot(IgnoredAny),
}

impl From<InstallationShape> for Installation {
    fn from(shape: InstallationShape) -> Installation {
        let (source, kind) = match shape {
            InstallationShape::Mcp(mcp) => (Source::Mcp, InstallationKind::Mcp(mcp)),
            InstallationShape::Llm(llm) => (Source::Llm, InstallationKind::Llm(llm)),
            InstallationShape::TraceSnapshot { directory, .. } => {
                (Source::PtcTraceSnapshot, InstallationKind::TraceSnapshot { directory })
            }
            InstallationShape::LlmReplay(_) => (Source::LlmReplay, InstallationKind::Reserved),
            InstallationShape::Decision(_) => (Source::Decision, InstallationKind::Reserved),
            InstallationShape::PtcPrivateTraceSnapshot(_) => {
                (Source::PtcPrivateTraceSnapshot, InstallationKind::Reserved)
            }
            InstallationShape::PtcInspectionSnapshot(_) => {
                (Source::PtcInspectionSnapshot, InstallationKind::Reserved)
            }
        };
        Installation { source, kind, declaration: Value::Null }
    }
}

/// The validated host document.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// The lexically normalised directory of the document; not a member, set by the loader.
    #[serde(skip)]
    pub document_dir: PathBuf,
    /// The document's own path as the gateway document names it, anchored; not a member, set by the
    /// loader, for the refusals that name it (lifecycle.md §1.5).
    #[serde(skip)]
    pub document_path: PathBuf,
    /// `$schema`: the editor's hint (config.md §9.7); checked by the schema, not interpreted.
    #[serde(rename = "$schema")]
    pub schema_reference: Option<String>,
    pub credentials: BTreeMap<String, CredentialSource>,
    pub install: BTreeMap<String, Installation>,
    /// `limits.run_duration_ms`, default 30,000.
    #[serde(rename = "limits", deserialize_with = "run_duration")]
    pub run_duration_ms: u64,
}

impl HostConfig {
    /// Every credential binding the installation references (stdio `env`, HTTP `headers`, `llm`
    /// `credential`), sorted and without repetition.
    pub fn bindings_of(&self, alias: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(inst) = self.install.get(alias) {
            match &inst.kind {
                InstallationKind::Mcp(mcp) => match &mcp.transport {
                    McpTransport::Stdio(stdio) => out.extend(stdio.env.values().cloned()),
                    McpTransport::StreamableHttp(http) => {
                        out.extend(http.headers.iter().map(|h| h.binding.clone()))
                    }
                },
                InstallationKind::Llm(llm) => out.push(llm.credential.clone()),
                InstallationKind::TraceSnapshot { .. } | InstallationKind::Reserved => {}
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Stage 2: read, decode, validate and check the host document at `path` (already anchored).
/// `bearer_binding` is the gateway document's `authentication.bearer.binding` (config.md §5.7 rule 3).
pub fn load(path: &Path, bearer_binding: &str) -> Result<HostConfig, DocumentError> {
    let bytes = paths::read_document(path, Limits::DOCUMENT.max_bytes)
        .map_err(|e| invalid(path, Problem::Unreadable(e)))?;
    from_bytes(&bytes, path, bearer_binding)
}

/// Every refusal of the host document is `host_invalid` (config.md §2.8), except stage 3's.
fn invalid(path: &Path, problem: Problem) -> DocumentError {
    DocumentError::new(StartupCode::HostInvalid, path, problem)
}

/// Stage 2 on bytes already read from `path` (which only fixes the document's directory, config.md §3.2).
/// Every refusal is `host_invalid` (config.md §2.8): decoding, structure, and the semantic checks of
/// config.md §5.7.
pub fn from_bytes(bytes: &[u8], path: &Path, bearer_binding: &str) -> Result<HostConfig, DocumentError> {
    // The host document's text is never shown: it may hold literal credentials (config.md §5.5).
    let declared = json::decode(bytes, Limits::DOCUMENT)
        .map_err(|e| invalid(path, Problem::not_json(bytes, e, Text::Withheld)))?;
    // The host document has no mode-dependent members.
    let definition = HOST.get();
    schema::validate(&definition, &declared, Mode::Serve).map_err(|e| invalid(path, Problem::Schema(e)))?;
    let mut filled = declared.clone();
    fill_defaults(&definition, &mut filled);
    let mut config: HostConfig =
        typed::read(&filled).map_err(|typed::ShapeMismatch| invalid(path, Problem::Shape))?;
    config.keep_declarations(&declared);
    config.anchor_paths(paths::document_dir(path));
    config.document_path = path.to_path_buf();
    check(&config, bearer_binding).map_err(|problem| invalid(path, problem))?;
    Ok(config)
}

impl HostConfig {
    /// Gives every installation its declaration as written (`declared` is the document before defaults).
    fn keep_declarations(&mut self, declared: &Value) {
        for (alias, installation) in &mut self.install {
            installation.declaration =
                declared.get("install").and_then(|all| all.get(alias)).cloned().unwrap_or(Value::Null);
        }
    }

    /// Anchors the paths of config.md §3.1 (credential files, stdio `cwd`, snapshot directories) at `dir`,
    /// the document's directory, and keeps `dir`.
    fn anchor_paths(&mut self, dir: PathBuf) {
        for source in self.credentials.values_mut() {
            if let CredentialSource::File(path) = source {
                *path = paths::anchor(path, &dir);
            }
        }
        for installation in self.install.values_mut() {
            match &mut installation.kind {
                InstallationKind::Mcp(McpInstallation { transport: McpTransport::Stdio(stdio), .. }) => {
                    stdio.cwd = paths::anchor(&stdio.cwd, &dir);
                }
                InstallationKind::TraceSnapshot { directory } => *directory = paths::anchor(directory, &dir),
                InstallationKind::Mcp(_) | InstallationKind::Llm(_) | InstallationKind::Reserved => {}
            }
        }
        self.document_dir = dir;
    }
}

// The members whose typed form is flatter than the document: each reads the document's nesting with a
// private type of that exact shape (unknown members refused there too) and keeps what the gateway uses.

/// `limits`: `{"run_duration_ms": …}` → the duration.
fn run_duration<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct HostLimits {
        run_duration_ms: u64,
    }
    HostLimits::deserialize(d).map(|l| l.run_duration_ms)
}

/// A stdio transport's `env`: `{"VAR": {"binding": "…"}}` → variable → binding.
fn env_bindings<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Binding {
        binding: String,
    }
    let env = BTreeMap::<String, Binding>::deserialize(d)?;
    Ok(env.into_iter().map(|(var, b)| (var, b.binding)).collect())
}

/// `oauth`: present (with members that are not interpreted) or absent.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

/// Stage 3, serve mode only (config.md §5.8): the bearer binding exists and is an `env` or `file` credential.
/// Its value is not read here. A refusal is `credential_unavailable` and names the host document
/// (`host.document_path`) and the binding.
pub fn check_bearer_binding(host: &HostConfig, binding: &str) -> Result<(), DocumentError> {
    let reason = match host.credentials.get(binding) {
        Some(CredentialSource::Env(_) | CredentialSource::File(_)) => return Ok(()),
        Some(CredentialSource::Literal(_)) => {
            "the bearer binding is a literal; the bearer must come from env or file"
        }
        None => "the bearer binding is not in the host document's credentials",
    };
    let problem = Problem::Rule { pointer: None, reason, tool: None, binding: Some(binding.to_owned()) };
    Err(DocumentError::new(StartupCode::CredentialUnavailable, &host.document_path, problem))
}

/// The projection `P(a)` of pins.md §7.1: the declaration with every absent default inserted at every
/// depth and `installation_revision` removed. Defaults come from the same definition that validated the
/// document, so the projection cannot disagree with the published schema.
pub fn installation_projection(installation: &Installation) -> Value {
    let mut projection = installation.declaration.clone();
    let host = HOST.get();
    if let Some(schema) = schema::installation_schema(&host) {
        fill_defaults(schema, &mut projection);
    }
    if let Value::Object(map) = &mut projection {
        map.remove("installation_revision");
    }
    projection
}

/// Header names the gateway sets itself (config.md §5.4.2, providers.md §5.2), compared case-insensitively.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "content-type",
    "accept",
    "user-agent",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-connection",
    "traceparent",
    "tracestate",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-session-id",
    "last-event-id",
];

/// The semantic checks of config.md §5.7 over every installation of a defined source; any failure is
/// `host_invalid`. Rule 1 (one member per credential) is already structural (`minProperties` and
/// `maxProperties` 1) and is enforced again by [`credential`].
fn check(config: &HostConfig, bearer_binding: &str) -> Result<(), Problem> {
    // Each refusal names the installation and the rule for a person (lifecycle.md §1.5).
    let invalid = |alias: &str, member: &str, reason: &'static str| {
        Err(Problem::rule(format!("/install/{alias}{member}"), reason))
    };
    for (alias, installation) in &config.install {
        for binding in config.bindings_of(alias) {
            // Rule 2: references exist. Rule 3: the inbound bearer is never forwarded upstream.
            if !config.credentials.contains_key(&binding) {
                return invalid(alias, "", "a credential binding it names is not in credentials");
            }
            if binding == bearer_binding {
                return invalid(alias, "", "it names the gateway's bearer binding, which is never forwarded");
            }
        }
        match &installation.kind {
            InstallationKind::Mcp(mcp) => {
                // Rule 4: aliases unique within the installation.
                let mut aliases: Vec<&str> = mcp.tools.values().map(|t| t.alias.as_str()).collect();
                aliases.sort_unstable();
                if aliases.windows(2).any(|pair| pair.first() == pair.get(1)) {
                    return invalid(alias, "/tools", "two upstream tools map to the same alias");
                }
                if let McpTransport::StreamableHttp(http) = &mcp.transport {
                    // Rule 5.
                    if origin::check_endpoint(&http.endpoint, http.allow_insecure_loopback).is_err() {
                        return invalid(
                            alias,
                            "/endpoint",
                            "the endpoint is not https (or allowed loopback http)",
                        );
                    }
                    // Rule 6.
                    if !headers_follow_the_rules(&http.headers) {
                        return invalid(
                            alias,
                            "/headers",
                            "a header repeats, is set by the gateway, or is Mcp-Param-*",
                        );
                    }
                }
            }
            InstallationKind::Llm(LlmInstallation { endpoint, allow_insecure_loopback, .. }) => {
                if origin::check_endpoint(endpoint, *allow_insecure_loopback).is_err() {
                    return invalid(
                        alias,
                        "/endpoint",
                        "the endpoint is not https (or allowed loopback http)",
                    );
                }
            }
            InstallationKind::TraceSnapshot { .. } | InstallationKind::Reserved => {}
        }
    }
    Ok(())
}

/// The header rules of config.md §5.4.2: names unique case-insensitively, none that the gateway sets itself,
/// none beginning with `Mcp-Param-`.
fn headers_follow_the_rules(headers: &[StaticHeader]) -> bool {
    let mut names: Vec<String> = headers.iter().map(|h| h.name.to_ascii_lowercase()).collect();
    if names.iter().any(|n| RESERVED_HEADERS.contains(&n.as_str()) || n.starts_with("mcp-param-")) {
        return false;
    }
    names.sort_unstable();
    !names.windows(2).any(|pair| pair.first() == pair.get(1))
}

#[cfg(test)]
mod tests;
