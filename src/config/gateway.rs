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

use serde_json::Value;

use super::schema::access::{
    array_at, at, bool_at, int_at, object_at, str_at, string_at, string_map, strings_at,
};
use super::schema::{self, fill_defaults, GATEWAY};
use super::{explained, origin, paths, Mode};
use crate::codes::StartupCode;
use crate::explain::{self, Fact};
use crate::json::{self, DecodeErrorKind, Limits};

/// One of the two literal loopback addresses a listener may bind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopbackAddress {
    /// `127.0.0.1`
    V4,
    /// `::1`
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listen {
    pub address: LoopbackAddress,
    pub port: u16,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    pub max_inflight_requests: u32,
    pub max_concurrent_runs: u32,
    pub max_active_provider_calls: u32,
    pub max_waiting_provider_calls: u32,
}

/// One entry of `tools[]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolConfig {
    pub name: String,
    pub title: String,
    pub description: String,
    /// `application.manifest`, anchored at the gateway document's directory.
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrivateAudit {
    /// Anchored at the gateway document's directory.
    pub directory: PathBuf,
    pub max_file_bytes: u64,
    pub max_retained_files: u32,
}

/// `artifacts.events`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventsConfig {
    pub max_file_bytes: u64,
    pub max_retained_files: u32,
    pub stderr: bool,
}

/// `artifacts.trace` or `artifacts.inspection` when enabled (traces.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunArtifactsConfig {
    pub max_file_bytes: u64,
    pub max_retained_files: u32,
}

impl RunArtifactsConfig {
    /// traces.md §2: what `true` means.
    pub const DEFAULT: RunArtifactsConfig =
        RunArtifactsConfig { max_file_bytes: 1_048_576, max_retained_files: 1_000 };
}

/// `artifacts.metrics` (audit-events.md §3.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetricsConfig {
    /// How often the metrics file is replaced.
    pub interval_ms: u64,
}

/// `artifacts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifacts {
    /// Anchored at the gateway document's directory.
    pub root: PathBuf,
    pub events: Option<EventsConfig>,
    /// `artifacts.trace` (traces.md §2): `None` when absent or `false`.
    pub trace: Option<RunArtifactsConfig>,
    /// `artifacts.inspection` (traces.md §2): `None` when absent or `false`.
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pcc {
    pub address: LoopbackAddress,
    pub port: u16,
    /// `server_id` → the served tool names it exposes, in document order.
    pub servers: BTreeMap<String, Vec<String>>,
}

/// The normalised gateway document (config.md §4.3): defaults applied, tools sorted by name bytes, paths
/// anchored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewayConfig {
    /// The lexically normalised directory of the document (config.md §3.2).
    pub document_dir: PathBuf,
    pub listen: Listen,
    /// `authentication.bearer.binding`.
    pub bearer_binding: String,
    /// `host.path`, anchored.
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
pub fn load(path: &Path, mode: Mode) -> Result<GatewayConfig, StartupCode> {
    let bytes = paths::read_document(path, Limits::DOCUMENT.max_bytes)
        .map_err(explained::read_as(StartupCode::ConfigUnavailable))?;
    from_bytes(&bytes, path, mode)
}

/// Stage 1 on bytes already read from `path` (which only fixes the document's directory, config.md §3.2):
/// strict decoding (decode failure → `config_unavailable`, duplicate key → `duplicate_json_key`), structure
/// (→ `config_invalid`), the semantic checks of config.md §4.4 in order, then normalisation (config.md §4.3).
pub fn from_bytes(bytes: &[u8], path: &Path, mode: Mode) -> Result<GatewayConfig, StartupCode> {
    let mut doc =
        json::decode(bytes, Limits::DOCUMENT).map_err(|e| decode_failure(explained::decode(e).kind))?;
    // config.md §4.1, §4.2, §4.6, §4.8 and the byte-bound rules of config.md §2.8.
    schema::validate(&GATEWAY, &doc, mode).map_err(explained::schema_as(StartupCode::ConfigInvalid))?;
    // Defaults change no semantic check, so the checks can read the filled document.
    fill_defaults(&GATEWAY, &mut doc);
    let mut config = build(&doc, paths::document_dir(path)).ok_or(StartupCode::ConfigInvalid)?;
    check(&config)?;
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
fn check(config: &GatewayConfig) -> Result<(), StartupCode> {
    // Each refusal notes its pointer and rule for `ptc check` (lifecycle.md §1.5).
    let refuse = |code: StartupCode, pointer: String, reason: &str| {
        explain::note(Fact::Pointer, pointer);
        explain::note(Fact::Reason, reason);
        Err(code)
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
        explain::note(Fact::Tool, name);
        return refuse(
            StartupCode::ToolNameDuplicate,
            format!("/tools/{last}/name"),
            "an earlier tool has this name",
        );
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

/// The typed form of a validated, default-filled document, with the four paths of config.md §3.1 anchored at
/// `dir`. `None` only if the document does not have the validated shape.
fn build(doc: &Value, dir: PathBuf) -> Option<GatewayConfig> {
    let anchored = |p: &[&str]| str_at(doc, p).map(|s| paths::anchor(Path::new(s), &dir));
    let listen = Listen {
        address: address(str_at(doc, &["listen", "address"])?)?,
        port: int_at(doc, &["listen", "port"])?,
        allowed_origins: strings_at(doc, &["listen", "allowed_origins"])?,
    };
    let admission = Admission {
        max_inflight_requests: int_at(doc, &["admission", "max_inflight_requests"])?,
        max_concurrent_runs: int_at(doc, &["admission", "max_concurrent_runs"])?,
        max_active_provider_calls: int_at(doc, &["admission", "max_active_provider_calls"])?,
        max_waiting_provider_calls: int_at(doc, &["admission", "max_waiting_provider_calls"])?,
    };
    let tools = array_at(doc, &["tools"])?.iter().map(|t| tool(t, &dir)).collect::<Option<Vec<_>>>()?;
    let private_audit = match at(doc, &["private_audit"]) {
        None => None,
        Some(audit) => Some(PrivateAudit {
            directory: anchored(&["private_audit", "directory"])?,
            max_file_bytes: int_at(audit, &["max_file_bytes"])?,
            max_retained_files: int_at(audit, &["max_retained_files"])?,
        }),
    };
    let artifacts = match at(doc, &["artifacts"]) {
        None => None,
        Some(artifacts) => Some(Artifacts {
            root: anchored(&["artifacts", "root"])?,
            events: match at(artifacts, &["events"]) {
                None => None,
                Some(events) => Some(EventsConfig {
                    max_file_bytes: int_at(events, &["max_file_bytes"])?,
                    max_retained_files: int_at(events, &["max_retained_files"])?,
                    stderr: bool_at(events, &["stderr"])?,
                }),
            },
            trace: run_artifacts(at(artifacts, &["trace"]))?,
            inspection: run_artifacts(at(artifacts, &["inspection"]))?,
            metrics: match at(artifacts, &["metrics"]) {
                None => None,
                Some(metrics) => Some(MetricsConfig { interval_ms: int_at(metrics, &["interval_ms"])? }),
            },
        }),
    };
    let pcc = match at(doc, &["pcc"]) {
        None => None,
        Some(pcc) => Some(Pcc {
            address: address(str_at(pcc, &["address"])?)?,
            port: int_at(pcc, &["port"])?,
            servers: object_at(pcc, &["servers"])?
                .iter()
                .map(|(id, server)| Some((id.clone(), strings_at(server, &["tools"])?)))
                .collect::<Option<_>>()?,
        }),
    };
    Some(GatewayConfig {
        listen,
        bearer_binding: string_at(doc, &["authentication", "bearer", "binding"])?,
        host_path: anchored(&["host", "path"])?,
        admission,
        tools,
        private_audit,
        artifacts,
        pcc,
        document_dir: dir,
    })
}

fn address(text: &str) -> Option<LoopbackAddress> {
    match text {
        "127.0.0.1" => Some(LoopbackAddress::V4),
        "::1" => Some(LoopbackAddress::V6),
        _ => None,
    }
}

fn tool(t: &Value, dir: &Path) -> Option<ToolConfig> {
    // Absent pin members (discovery mode, config.md §4.6) stay `None`; present ones must be string maps.
    let pins = |key: &str| match at(t, &[key]) {
        None => Some(None),
        Some(v) => string_map(v.as_object()?).map(Some),
    };
    Some(ToolConfig {
        name: string_at(t, &["name"])?,
        title: string_at(t, &["title"])?,
        description: string_at(t, &["description"])?,
        manifest: paths::anchor(Path::new(str_at(t, &["application", "manifest"])?), dir),
        allow_write: bool_at(t, &["allow_write"])?,
        expected_application_content_digest: match at(t, &["expected_application_content_digest"]) {
            None => None,
            Some(v) => Some(v.as_str()?.to_owned()),
        },
        installation_config_pins: pins("installation_config_pins")?,
        provider_snapshot_pins: pins("provider_snapshot_pins")?,
    })
}

/// `artifacts.trace` or `artifacts.inspection`, already valid against the schema (traces.md §2): `Some(None)`
/// when absent or `false`, the defaults for `true`, the object's bounds (each defaulted) otherwise.
fn run_artifacts(value: Option<&Value>) -> Option<Option<RunArtifactsConfig>> {
    let defaults = RunArtifactsConfig::DEFAULT;
    match value {
        None | Some(Value::Bool(false)) => Some(None),
        Some(Value::Bool(true)) => Some(Some(defaults)),
        Some(object @ Value::Object(_)) => Some(Some(RunArtifactsConfig {
            max_file_bytes: match at(object, &["max_file_bytes"]) {
                None => defaults.max_file_bytes,
                Some(_) => int_at(object, &["max_file_bytes"])?,
            },
            max_retained_files: match at(object, &["max_retained_files"]) {
                None => defaults.max_retained_files,
                Some(_) => int_at(object, &["max_retained_files"])?,
            },
        })),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests;
