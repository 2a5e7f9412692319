//! The gateway document v1 (config.md §4): schema, semantic checks (§4.4), normalisation (§4.3).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};

use super::Mode;
use crate::startup::StartupCode;

/// One of the two literal loopback addresses a listener may bind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopbackAddress {
    /// `127.0.0.1`
    V4,
    /// `::1`
    V6,
}

impl LoopbackAddress {
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
    /// Validated by the origin rule (§4.5); compared byte for byte.
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

/// `artifacts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifacts {
    /// Anchored at the gateway document's directory.
    pub root: PathBuf,
    pub events: Option<EventsConfig>,
}

/// `pcc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pcc {
    pub address: LoopbackAddress,
    pub port: u16,
    /// `server_id` → the served tool names it exposes, in document order.
    pub servers: BTreeMap<String, Vec<String>>,
}

/// The normalised gateway document (§4.3): defaults applied, tools sorted by name bytes, paths anchored.
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
pub fn load(path: &Path, mode: Mode) -> Result<GatewayConfig, StartupCode> {
    let _ = (path, mode);
    Err(StartupCode::InternalError)
}
