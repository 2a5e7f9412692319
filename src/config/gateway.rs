//! The gateway document v1 (config.md §4): loading (stage 1 of lifecycle.md §3.2), the semantic checks of
//! config.md §4.4 in their order, and the normalised typed form of config.md §4.3 that the rest of the
//! startup sees.
//!
//! The structure (every key, bound and default) is defined once in `schema::gateway`; this module maps
//! read, decode and schema failures to their startup codes and owns the checks that span several members.
//! It reads exactly one file, the document itself: the paths it names are anchored here but used by later
//! stages.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use super::document_error::{DocumentError, Problem, Text};
use super::schema::{self, fill_defaults, GATEWAY};
use super::{origin, paths, typed, Mode};
use crate::codes::StartupCode;
use crate::json::{self, DecodeErrorKind, Limits};

/// One of the two literal loopback addresses a listener may bind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum LoopbackAddress {
    /// `127.0.0.1`
    #[serde(rename = "127.0.0.1")]
    V4,
    /// `::1`
    #[serde(rename = "::1")]
    V6,
}

impl LoopbackAddress {
    /// The address the listener binds (never a wildcard, config.md §4.2).
    pub fn ip(self) -> IpAddr {
        match self {
            LoopbackAddress::V4 => IpAddr::V4(Ipv4Addr::LOCALHOST),
            LoopbackAddress::V6 => IpAddr::V6(Ipv6Addr::LOCALHOST),
        }
    }

    /// The host part of the configured authority (http-mcp.md §1): `127.0.0.1` or `[::1]`.
    pub fn authority_host(self) -> &'static str {
        match self {
            LoopbackAddress::V4 => "127.0.0.1",
            LoopbackAddress::V6 => "[::1]",
        }
    }
}

/// `listen`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listen {
    pub address: LoopbackAddress,
    pub port: u16,
    /// Always `/mcp` (config.md §4.2): the one path the front serves.
    pub path: String,
    /// Validated by the origin rule (config.md §4.5); compared byte for byte.
    pub allowed_origins: Vec<String>,
}

impl Listen {
    /// The configured authority of http-mcp.md §1 (`127.0.0.1:8765`, `[::1]:8765`, `127.0.0.1` for port 80).
    pub fn authority(&self) -> String {
        if self.port == 80 {
            self.address.authority_host().to_owned()
        } else {
            format!("{}:{}", self.address.authority_host(), self.port)
        }
    }
}

/// `admission`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Admission {
    pub max_inflight_requests: u32,
    pub max_concurrent_runs: u32,
    pub max_active_provider_calls: u32,
    pub max_waiting_provider_calls: u32,
}

/// One entry of `tools[]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    pub name: String,
    pub title: String,
    pub description: String,
    /// `application.manifest`, anchored at the gateway document's directory.
    #[serde(rename = "application", deserialize_with = "application_manifest")]
    pub manifest: PathBuf,
    pub allow_write: bool,
    /// Absent only in discovery mode.
    pub expected_application_content_digest: Option<String>,
    /// Absent only in discovery mode.
    pub installation_config_pins: Option<BTreeMap<String, String>>,
    /// Absent only in discovery mode.
    pub provider_snapshot_pins: Option<BTreeMap<String, String>>,
}

/// `private_audit`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivateAudit {
    /// Anchored at the gateway document's directory.
    pub directory: PathBuf,
    pub max_file_bytes: u64,
    pub max_retained_files: u32,
}

/// `artifacts.events`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsConfig {
    pub max_file_bytes: u64,
    pub max_retained_files: u32,
    pub stderr: bool,
}

/// `artifacts.trace` or `artifacts.inspection` when enabled (traces.md §2). The object form's members are
/// each optional, with the defaults of `true`; `replay` belongs to `artifacts.trace` only (the schema
/// refuses it under `artifacts.inspection`, so it is `false` there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunArtifactsConfig {
    #[serde(default = "RunArtifactsConfig::default_max_file_bytes")]
    pub max_file_bytes: u64,
    #[serde(default = "RunArtifactsConfig::default_max_retained_files")]
    pub max_retained_files: u32,
    /// traces.md §2, §6.3: the trace keeps whole what a replay answers from.
    #[serde(default)]
    pub replay: bool,
}

impl RunArtifactsConfig {
    /// traces.md §2: what `true` means.
    pub const DEFAULT: RunArtifactsConfig =
        RunArtifactsConfig { max_file_bytes: 1_048_576, max_retained_files: 1_000, replay: false };

    fn default_max_file_bytes() -> u64 {
        Self::DEFAULT.max_file_bytes
    }

    fn default_max_retained_files() -> u32 {
        Self::DEFAULT.max_retained_files
    }
}

/// `artifacts.metrics` (audit-events.md §3.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// How often the metrics file is replaced.
    pub interval_ms: u64,
}

/// `artifacts`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Artifacts {
    /// Anchored at the gateway document's directory.
    pub root: PathBuf,
    pub events: Option<EventsConfig>,
    /// `artifacts.trace` (traces.md §2): `None` when absent or `false`.
    #[serde(default, deserialize_with = "run_artifacts")]
    pub trace: Option<RunArtifactsConfig>,
    /// `artifacts.inspection` (traces.md §2): `None` when absent or `false`.
    #[serde(default, deserialize_with = "run_artifacts")]
    pub inspection: Option<RunArtifactsConfig>,
    /// `artifacts.metrics` (audit-events.md §3.12).
    pub metrics: Option<MetricsConfig>,
}

#[cfg(test)]
impl Artifacts {
    /// A root at `root` with only the event log (`events`): the storage and event-log tests.
    pub fn events_only(root: &Path, events: Option<EventsConfig>) -> Artifacts {
        Artifacts { root: root.to_path_buf(), events, trace: None, inspection: None, metrics: None }
    }
}

/// `pcc`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pcc {
    pub address: LoopbackAddress,
    pub port: u16,
    /// `server_id` → the served tool names it exposes, in document order.
    #[serde(deserialize_with = "pcc_servers")]
    pub servers: BTreeMap<String, Vec<String>>,
}

/// The normalised gateway document (config.md §4.3): defaults applied, tools sorted by name bytes, paths
/// anchored.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// The lexically normalised directory of the document (config.md §3.2); not a member, set by the loader.
    #[serde(skip)]
    pub document_dir: PathBuf,
    /// `$schema`: the editor's hint (config.md §9.7); checked by the schema, not interpreted.
    #[serde(rename = "$schema")]
    pub schema_reference: Option<String>,
    /// Always 1 (config.md §4.2).
    pub version: u8,
    pub listen: Listen,
    /// `authentication.bearer.binding`.
    #[serde(rename = "authentication", deserialize_with = "bearer_binding")]
    pub bearer_binding: String,
    /// `host.path`, anchored.
    #[serde(rename = "host", deserialize_with = "host_path")]
    pub host_path: PathBuf,
    pub admission: Admission,
    /// Sorted by ascending byte order of `name`.
    pub tools: Vec<ToolConfig>,
    pub private_audit: Option<PrivateAudit>,
    pub artifacts: Option<Artifacts>,
    pub pcc: Option<Pcc>,
}

/// Stage 1: read, decode, validate, check and normalise the gateway document at `path` (already anchored).
///
/// An unreadable or oversized file is `config_unavailable` (config.md §2.8); everything after the read is
/// [`from_bytes`].
pub fn load(path: &Path, mode: Mode) -> Result<GatewayConfig, DocumentError> {
    let bytes = paths::read_document(path, Limits::DOCUMENT.max_bytes)
        .map_err(|e| DocumentError::new(StartupCode::ConfigUnavailable, path, Problem::Unreadable(e)))?;
    from_bytes(&bytes, path, mode)
}

/// Stage 1 on bytes already read from `path` (which only fixes the document's directory, config.md §3.2):
/// strict decoding (decode failure → `config_unavailable`, duplicate key → `duplicate_json_key`), structure
/// (→ `config_invalid`), the semantic checks of config.md §4.4 in order, then normalisation (config.md §4.3).
pub fn from_bytes(bytes: &[u8], path: &Path, mode: Mode) -> Result<GatewayConfig, DocumentError> {
    let refuse = |code: StartupCode, problem: Problem| DocumentError::new(code, path, problem);
    let mut doc = json::decode(bytes, Limits::DOCUMENT)
        .map_err(|e| refuse(decode_failure(e.kind), Problem::not_json(bytes, e, Text::Shown)))?;
    // config.md §4.1, §4.2, §4.6, §4.8 and the byte-bound rules of config.md §2.8.
    let definition = GATEWAY.get();
    schema::validate(&definition, &doc, mode)
        .map_err(|e| refuse(StartupCode::ConfigInvalid, Problem::Schema(e)))?;
    // Defaults change no semantic check, so the checks can read the filled document.
    fill_defaults(&definition, &mut doc);
    let mut config: GatewayConfig = typed::read(&doc)
        .map_err(|typed::ShapeMismatch| refuse(StartupCode::ConfigInvalid, Problem::Shape))?;
    config.anchor_paths(paths::document_dir(path));
    check(&config).map_err(|(code, problem)| refuse(code, problem))?;
    // config.md §4.3: tools in ascending byte order of their names (`String`'s order is byte order).
    config.tools.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(config)
}

/// The code of a refused decode (config.md §2.8 table): a duplicate key has its own code, every other decode
/// failure is `config_unavailable`.
fn decode_failure(kind: DecodeErrorKind) -> StartupCode {
    match kind {
        DecodeErrorKind::DuplicateKey => StartupCode::DuplicateJsonKey,
        DecodeErrorKind::TooLarge
        | DecodeErrorKind::InvalidUtf8
        | DecodeErrorKind::ByteOrderMark
        | DecodeErrorKind::Syntax
        | DecodeErrorKind::TrailingData
        | DecodeErrorKind::NumberOutOfRange
        | DecodeErrorKind::BadSurrogate
        | DecodeErrorKind::TooDeep
        | DecodeErrorKind::TooManyNodes
        | DecodeErrorKind::UnexpectedEnd
        | DecodeErrorKind::ControlCharacter
        | DecodeErrorKind::InvalidEscape => StartupCode::ConfigUnavailable,
    }
}

/// The semantic checks of config.md §4.4, in their order; the first failure decides.
fn check(config: &GatewayConfig) -> Result<(), (StartupCode, Problem)> {
    // Each refusal names its pointer and rule for a person (lifecycle.md §1.5).
    let refuse = |code: StartupCode, pointer: String, reason: &'static str| {
        Err((code, Problem::rule(pointer, reason)))
    };
    // 1. Origins, in array order (config.md §4.5).
    for (i, entry) in config.listen.allowed_origins.iter().enumerate() {
        if origin::check_origin(entry).is_err() {
            let reason = "not an origin: scheme://host[:port], lowercase, no path, no default port";
            return refuse(StartupCode::OriginInvalid, format!("/listen/allowed_origins/{i}"), reason);
        }
    }
    // 2. Tool names (case-sensitive).
    let mut names: Vec<&str> = config.tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    if let Some(pair) = names.windows(2).find(|pair| pair.first() == pair.get(1)) {
        let name = pair.first().copied().unwrap_or_default();
        let last = config.tools.iter().rposition(|t| t.name == name).unwrap_or_default();
        let problem = Problem::Rule {
            pointer: Some(format!("/tools/{last}/name")),
            reason: "an earlier tool has this name",
            tool: Some(name.to_owned()),
            binding: None,
        };
        return Err((StartupCode::ToolNameDuplicate, problem));
    }
    // 3. Audit presence, both directions.
    let writer = config.tools.iter().position(|t| t.allow_write);
    match (writer, &config.private_audit) {
        (Some(i), None) => {
            let reason = "a tool with allow_write needs private_audit";
            return refuse(StartupCode::AuditInvalid, format!("/tools/{i}/allow_write"), reason);
        }
        (None, Some(_)) => {
            let reason = "private_audit is configured but no tool has allow_write";
            return refuse(StartupCode::AuditInvalid, "/private_audit".into(), reason);
        }
        _ => {}
    }
    // 4. PCC cross-references.
    if let Some(pcc) = &config.pcc {
        if pcc.address == config.listen.address && pcc.port == config.listen.port {
            let reason = "the PCC listener has the address and port of the /mcp listener";
            return refuse(StartupCode::ConfigInvalid, "/pcc/port".into(), reason);
        }
        let known = |name: &String| names.binary_search(&name.as_str()).is_ok();
        for (server, tools) in &pcc.servers {
            if let Some(i) = tools.iter().position(|t| !known(t)) {
                let reason = "names no tool of the document";
                return refuse(
                    StartupCode::ConfigInvalid,
                    format!("/pcc/servers/{server}/tools/{i}"),
                    reason,
                );
            }
        }
    }
    // 5. The metrics file needs the event log: its counters are the log's, and the events lock is what
    // makes this gateway the root's only writer (audit-events.md §3.12).
    if let Some(artifacts) = &config.artifacts {
        if artifacts.metrics.is_some() && artifacts.events.is_none() {
            let reason = "artifacts.metrics needs artifacts.events";
            return refuse(StartupCode::ConfigInvalid, "/artifacts/metrics".into(), reason);
        }
    }
    Ok(())
}

impl GatewayConfig {
    /// Anchors the four paths of config.md §3.1 at `dir`, the document's directory, and keeps `dir`.
    fn anchor_paths(&mut self, dir: PathBuf) {
        self.host_path = paths::anchor(&self.host_path, &dir);
        for tool in &mut self.tools {
            tool.manifest = paths::anchor(&tool.manifest, &dir);
        }
        if let Some(audit) = &mut self.private_audit {
            audit.directory = paths::anchor(&audit.directory, &dir);
        }
        if let Some(artifacts) = &mut self.artifacts {
            artifacts.root = paths::anchor(&artifacts.root, &dir);
        }
        self.document_dir = dir;
    }
}

// The members whose typed form is flatter than the document: each reads the document's nesting with a
// private type of that exact shape (unknown members refused there too) and keeps the one value.

/// `authentication`: `{"bearer": {"binding": "…"}}` → the binding.
fn bearer_binding<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Authentication {
        bearer: Bearer,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Bearer {
        binding: String,
    }
    Authentication::deserialize(d).map(|a| a.bearer.binding)
}

/// `{"path": "…"}` → the path (`host`).
fn host_path<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Host {
        path: PathBuf,
    }
    Host::deserialize(d).map(|h| h.path)
}

/// `{"manifest": "…"}` → the path (`tools[].application`).
fn application_manifest<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Application {
        manifest: PathBuf,
    }
    Application::deserialize(d).map(|a| a.manifest)
}

/// `artifacts.trace` or `artifacts.inspection` (traces.md §2): `false` is off, `true` the defaults, an
/// object its bounds (each defaulted).
fn run_artifacts<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RunArtifactsConfig>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        Switch(bool),
        Bounds(RunArtifactsConfig),
    }
    Ok(match Form::deserialize(d)? {
        Form::Switch(false) => None,
        Form::Switch(true) => Some(RunArtifactsConfig::DEFAULT),
        Form::Bounds(bounds) => Some(bounds),
    })
}

/// `pcc.servers`: `{"<server_id>": {"tools": [...]}}` → server id → its tool names.
fn pcc_servers<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Server {
        tools: Vec<String>,
    }
    let servers = BTreeMap::<String, Server>::deserialize(d)?;
    Ok(servers.into_iter().map(|(id, server)| (id, server.tools)).collect())
}

#[cfg(test)]
mod tests;
