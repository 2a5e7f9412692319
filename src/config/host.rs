//! The host document (config.md §5): credentials and installations, with the semantic checks of §5.7.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::json::Value;
use crate::startup::StartupCode;

/// Where one credential's value comes from (§5.2). A literal's value is a secret and is never printed.
#[derive(Clone, PartialEq, Eq)]
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

/// `install.<alias>.source` (§5.3).
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

    /// Reserved sources have no defined shape in this version (§5.3).
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

/// `effect` of a mapped upstream tool (§5.4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolEffect {
    Read,
    Write,
}

/// `tools.<upstream name>` of an `mcp` installation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolMapping {
    /// The gateway-visible alias.
    pub alias: String,
    pub effect: ToolEffect,
    pub description: Option<String>,
}

/// `protocol` of a transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolEra {
    Auto,
    Modern,
    Legacy,
}

/// A stdio transport (§5.4.1). Paths are kept as written; `cwd` is also given anchored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StdioTransport {
    pub command: String,
    pub args: Vec<String>,
    /// `cwd` anchored at the host document's directory.
    pub cwd: PathBuf,
    pub inherit_environment: bool,
    /// Child variable → credential binding.
    pub env: BTreeMap<String, String>,
    pub start_timeout_ms: u64,
    pub protocol: ProtocolEra,
}

/// `headers[].scheme`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderScheme {
    Raw,
    Bearer,
    Basic,
}

/// One static credential header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticHeader {
    pub name: String,
    pub binding: String,
    pub scheme: HeaderScheme,
}

/// A Streamable HTTP transport (§5.4.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpTransport {
    pub endpoint: String,
    pub allow_insecure_loopback: bool,
    pub headers: Vec<StaticHeader>,
    pub protocol: ProtocolEra,
    /// `oauth` present: selecting the installation is `provider_source_unsupported` (§6.5 S10).
    pub oauth: bool,
}

/// `transport`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpTransport {
    Stdio(StdioTransport),
    StreamableHttp(HttpTransport),
}

/// `ceilings` (§5.4.4), defaults applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ceilings {
    pub timeout_ms: u64,
    pub max_result_bytes: u64,
}

/// An `mcp` installation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpInstallation {
    pub transport: McpTransport,
    /// Upstream tool name → mapping.
    pub tools: BTreeMap<String, ToolMapping>,
    pub ceilings: Ceilings,
}

/// The part of an installation that depends on its source.
#[derive(Clone, Debug, PartialEq)]
pub enum InstallationKind {
    Mcp(McpInstallation),
    /// Validated now, served later (§5.5). Only what startup needs is kept.
    Llm {
        credential: String,
    },
    /// Validated now, served later (§5.6).
    TraceSnapshot {
        directory: PathBuf,
    },
    /// A reserved source: accepted, never validated, refused when selected.
    Reserved,
}

/// `install.<alias>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Installation {
    pub source: Source,
    pub kind: InstallationKind,
    /// The decoded object exactly as written, the input of the installation pin (pins.md §7).
    pub declaration: Value,
}

/// The validated host document.
#[derive(Clone, Debug, PartialEq)]
pub struct HostConfig {
    /// The lexically normalised directory of the document.
    pub document_dir: PathBuf,
    pub credentials: BTreeMap<String, CredentialSource>,
    pub install: BTreeMap<String, Installation>,
    /// `limits.run_duration_ms`, default 30,000.
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
                InstallationKind::Llm { credential } => out.push(credential.clone()),
                InstallationKind::TraceSnapshot { .. } | InstallationKind::Reserved => {}
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Stage 2: read, decode, validate and check the host document at `path` (already anchored).
/// `bearer_binding` is the gateway document's `authentication.bearer.binding` (§5.7 rule 3).
pub fn load(path: &Path, bearer_binding: &str) -> Result<HostConfig, StartupCode> {
    let _ = (path, bearer_binding);
    Err(StartupCode::InternalError)
}

/// The projection `P(a)` of pins.md §7.1: the declaration with every absent default inserted at every
/// depth and `installation_revision` removed.
pub fn installation_projection(installation: &Installation) -> Value {
    installation.declaration.clone()
}
