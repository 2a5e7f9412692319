//! The typed form of a validated host document: credentials, installations by source, transports,
//! mappings and ceilings, with the paths of config.md §3.1 anchored at the document's directory.
//!
//! It reads a document that already passed validation and default insertion, so every accessor's `None`
//! (which validation rules out) becomes `host_invalid` in the caller. It checks no cross-member rule.

use std::path::{Path, PathBuf};

use super::*;
use crate::config::schema::access::{
    array_at, at, bool_at, int_at, object_at, str_at, string_at, strings_at,
};
use crate::json::as_integer;

/// The typed form. `declared` is the document as written (the source of each `declaration`), `filled`
/// the same document with defaults inserted (the source of every typed field).
pub(super) fn build(declared: &Value, filled: &Value, dir: PathBuf) -> Option<HostConfig> {
    let credentials = object_at(filled, &["credentials"])?
        .iter()
        .map(|(binding, c)| Some((binding.clone(), credential(c, &dir)?)))
        .collect::<Option<_>>()?;
    let install = object_at(filled, &["install"])?
        .iter()
        .map(|(alias, inst)| {
            let declaration = at(declared, &["install", alias])?.clone();
            Some((alias.clone(), installation(inst, declaration, &dir)?))
        })
        .collect::<Option<_>>()?;
    Some(HostConfig {
        credentials,
        install,
        run_duration_ms: int_at(filled, &["limits", "run_duration_ms"])?,
        document_dir: dir,
    })
}

/// `credentials.<binding>`: exactly one member (config.md §5.2, §5.7 rule 1).
fn credential(c: &Value, dir: &Path) -> Option<CredentialSource> {
    let map = c.as_object()?;
    if map.len() != 1 {
        return None;
    }
    let (kind, value) = map.iter().next()?;
    let value = value.as_str()?;
    match kind.as_str() {
        "env" => Some(CredentialSource::Env(value.to_owned())),
        "file" => Some(CredentialSource::File(paths::anchor(Path::new(value), dir))),
        "literal" => Some(CredentialSource::Literal(value.to_owned())),
        _ => None,
    }
}

fn source(text: &str) -> Option<Source> {
    Some(match text {
        "mcp" => Source::Mcp,
        "llm" => Source::Llm,
        "ptc_trace_snapshot" => Source::PtcTraceSnapshot,
        "llm_replay" => Source::LlmReplay,
        "decision" => Source::Decision,
        "ptc_private_trace_snapshot" => Source::PtcPrivateTraceSnapshot,
        "ptc_inspection_snapshot" => Source::PtcInspectionSnapshot,
        _ => return None,
    })
}

fn installation(inst: &Value, declaration: Value, dir: &Path) -> Option<Installation> {
    let source = source(str_at(inst, &["source"])?)?;
    let kind = match source {
        Source::Mcp => InstallationKind::Mcp(mcp(inst, dir)?),
        Source::Llm => InstallationKind::Llm(LlmInstallation {
            credential: string_at(inst, &["credential"])?,
            endpoint: string_at(inst, &["endpoint"])?,
            allow_insecure_loopback: bool_at(inst, &["allow_insecure_loopback"])?,
            model: string_at(inst, &["model"])?,
            temperature: at(inst, &["params", "temperature"]).cloned(),
            max_tokens: at(inst, &["params", "max_tokens"]).and_then(as_integer),
            timeout_ms: int_at(inst, &["ceilings", "timeout_ms"])?,
        }),
        Source::PtcTraceSnapshot => InstallationKind::TraceSnapshot {
            directory: paths::anchor(Path::new(str_at(inst, &["directory"])?), dir),
        },
        _ => InstallationKind::Reserved,
    };
    Some(Installation { source, kind, declaration })
}

fn protocol(text: &str) -> Option<ProtocolEra> {
    match text {
        "auto" => Some(ProtocolEra::Auto),
        "2026-07-28" => Some(ProtocolEra::Modern),
        "legacy" => Some(ProtocolEra::Legacy),
        _ => None,
    }
}

fn mcp(inst: &Value, dir: &Path) -> Option<McpInstallation> {
    let t = at(inst, &["transport"])?;
    let transport = match str_at(t, &["type"])? {
        "stdio" => McpTransport::Stdio(StdioTransport {
            command: string_at(t, &["command"])?,
            args: strings_at(t, &["args"])?,
            cwd: paths::anchor(Path::new(str_at(t, &["cwd"])?), dir),
            inherit_environment: bool_at(t, &["inherit_environment"])?,
            env: object_at(t, &["env"])?
                .iter()
                .map(|(var, b)| Some((var.clone(), string_at(b, &["binding"])?)))
                .collect::<Option<_>>()?,
            start_timeout_ms: int_at(t, &["start_timeout_ms"])?,
            protocol: protocol(str_at(t, &["protocol"])?)?,
        }),
        "streamable_http" => McpTransport::StreamableHttp(HttpTransport {
            endpoint: string_at(t, &["endpoint"])?,
            allow_insecure_loopback: bool_at(t, &["allow_insecure_loopback"])?,
            headers: array_at(t, &["headers"])?.iter().map(header).collect::<Option<_>>()?,
            protocol: protocol(str_at(t, &["protocol"])?)?,
            oauth: at(t, &["oauth"]).is_some(),
        }),
        _ => return None,
    };
    let tools = object_at(inst, &["tools"])?
        .iter()
        .map(|(upstream, m)| {
            let effect = match str_at(m, &["effect"])? {
                "read" => ToolEffect::Read,
                "write" => ToolEffect::Write,
                _ => return None,
            };
            let mapping = ToolMapping {
                alias: string_at(m, &["as"])?,
                effect,
                description: at(m, &["description"]).and_then(Value::as_str).map(str::to_owned),
            };
            Some((upstream.clone(), mapping))
        })
        .collect::<Option<_>>()?;
    let ceilings = Ceilings {
        timeout_ms: int_at(inst, &["ceilings", "timeout_ms"])?,
        max_result_bytes: int_at(inst, &["ceilings", "max_result_bytes"])?,
    };
    Some(McpInstallation { transport, tools, ceilings })
}

fn header(h: &Value) -> Option<StaticHeader> {
    let scheme = match str_at(h, &["scheme"])? {
        "raw" => HeaderScheme::Raw,
        "bearer" => HeaderScheme::Bearer,
        "basic" => HeaderScheme::Basic,
        _ => return None,
    };
    Some(StaticHeader { name: string_at(h, &["name"])?, binding: string_at(h, &["binding"])?, scheme })
}
