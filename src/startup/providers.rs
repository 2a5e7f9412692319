//! Stage 9d of lifecycle.md §3.2 for provider-bearing tools (pins.md §9.2–§9.3, providers.md §7.5) and
//! the same acquisition path for `--print-pins` (pins.md §10.1 step 6, providers.md A5).
//!
//! Owns: the first pass (every tool's installation pins, before anything is spawned), then the sites one
//! at a time in (tool, declaration) byte order — launch spec from the start environment and the captured
//! credentials, acquisition, identity, snapshot-pin comparison — and "the first failure closes every
//! acquisition made so far before it is reported", with the failed transport's records and the
//! providers.md §14 reason class. Does not own the transports (`providers`), the digests and comparisons
//! (`crate::pins`) or provider-call admission (stage 9c in `serve.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use crate::apps::{Built, Template};
use crate::config::credentials::CapturedCredentials;
use crate::config::host::{CredentialSource, HostConfig, InstallationKind, McpInstallation, McpTransport};
use crate::events::{EventLog, ReasonClass};
use crate::explain::{Fact, Refusal};
use crate::pins::{self, PinMap};
use crate::providers::acquire::{self, AcquireError, AcquireSpec};
use crate::providers::child::LaunchSpec;
use crate::providers::env::{child_environment, EnvInputs};
use crate::providers::http::endpoint::Endpoint;
use crate::providers::http::{acquire_http, HttpSpec};
use crate::providers::listing::listed_tools;
use crate::providers::model::chat::ModelDefaults;
use crate::providers::model::{ModelSite, ModelSpec};
use crate::providers::sites::{finish_all, Site};
use crate::providers::upstream::Upstream;
use crate::providers::FailureClass;
use crate::startup::documents::Documents;
use crate::startup::StartupCode;

/// Whether configured snapshot pins are compared (serving) or collected (discovery).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Serve,
    Discover,
}

/// The acquired sites and, per tool name, the two maps discovery prints.
#[derive(Default)]
pub struct Acquired {
    pub sites: Vec<Arc<Site>>,
    /// The model sites (serving only: discovery makes none, models.md §3.1).
    pub models: Vec<Arc<ModelSite>>,
    pub installation_pins: BTreeMap<String, BTreeMap<String, String>>,
    pub snapshot_pins: BTreeMap<String, BTreeMap<String, String>>,
}

/// A stage-9d failure: the refusal, and the event log's finer class.
pub struct Refused {
    pub refusal: Refusal,
    pub reason: Option<ReasonClass>,
}

impl Refused {
    /// The same failure, with context its site did not know (the tool, the installation).
    fn context(mut self, fact: Fact, value: &str) -> Refused {
        self.refusal = self.refusal.context(fact, value);
        self
    }
}

impl From<Refusal> for Refused {
    fn from(refusal: Refusal) -> Refused {
        Refused { refusal, reason: None }
    }
}

impl From<StartupCode> for Refused {
    fn from(code: StartupCode) -> Refused {
        Refusal::new(code).into()
    }
}

impl From<pins::PinError> for Refused {
    fn from(error: pins::PinError) -> Refused {
        Refusal::from(error).into()
    }
}

impl From<pins::PinMismatch> for Refused {
    fn from(error: pins::PinMismatch) -> Refused {
        Refusal::from(error).into()
    }
}

/// The gateway's environment at process start (providers.md §4.1). The env-file overlay never writes
/// the process environment, so reading it now is reading it as it was; non-UTF-8 entries are skipped.
fn start_environment() -> BTreeMap<String, String> {
    std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect()
}

/// `installation_config_pins` expected for `template` (pins.md §7.2).
fn expected_installation_pins(host: &HostConfig, template: &Template) -> Result<PinMap, Refusal> {
    // A cold tool's snapshot installations are pinned like any other (pins.md §9.4).
    pins::expected_installation_map(template.selections.all_declarations(), host)
        .map_err(|e| Refusal::from(e).context(Fact::Tool, template.name.as_str()))
}

/// pins.md §9.2 and §9.3 step 1, for every tool in name order, before any site is acquired.
pub fn check_installation_pins(docs: &Documents, built: &Built) -> Result<(), Refusal> {
    for template in &built.templates {
        let Some(tool) = docs.gateway.tools.iter().find(|t| t.name == template.name) else {
            return Err(StartupCode::InternalError.into());
        };
        let expected = expected_installation_pins(&docs.host, template)?;
        pins::check_tool_first_pass(
            tool.installation_config_pins.as_ref(),
            tool.provider_snapshot_pins.as_ref(),
            &expected,
        )
        .map_err(|e| Refusal::from(e).context(Fact::Tool, template.name.as_str()))?;
    }
    Ok(())
}

/// The upstream names a site grants (pins.md §8.4): the union of its grants over the missions
/// (selection rule S4, config.md §6.5, grants every declaration to some mission).
fn granted(template: &Template, declaration: &str) -> BTreeSet<String> {
    template
        .selections
        .missions
        .values()
        .flat_map(|grants| grants.values())
        .filter(|g| g.declaration == declaration)
        .map(|g| g.upstream_tool.clone())
        .collect()
}

/// What spawning a stdio installation needs (providers.md §4.1).
fn acquire_spec(
    host: &HostConfig,
    mcp: &McpInstallation,
    credentials: &CapturedCredentials,
) -> Option<AcquireSpec> {
    let McpTransport::Stdio(stdio) = &mcp.transport else { return None };
    let start = start_environment();
    let credential_vars: BTreeSet<String> = host
        .credentials
        .values()
        .filter_map(|c| match c {
            CredentialSource::Env(var) => Some(var.clone()),
            _ => None,
        })
        .collect();
    let mut bindings = BTreeMap::new();
    for (name, binding) in &stdio.env {
        bindings.insert(name.clone(), credentials.get(binding)?.expose().to_owned());
    }
    let env = child_environment(&EnvInputs {
        start: &start,
        credential_vars: &credential_vars,
        inherit: stdio.inherit_environment,
        bindings: &bindings,
    });
    Some(AcquireSpec {
        launch: LaunchSpec {
            command: stdio.command.clone(),
            args: stdio.args.clone(),
            cwd: stdio.cwd.clone(),
            env,
        },
        protocol: stdio.protocol,
        start_timeout_ms: stdio.start_timeout_ms,
        tools: mcp.tools.clone(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    })
}

/// pins.md §9.3 step 2 (serving) or pins.md §10.1 step 6 (discovery). On failure every acquisition made so
/// far has been closed, with its records, before this returns.
pub async fn acquire_sites(
    docs: &Documents,
    built: &Built,
    credentials: &CapturedCredentials,
    events: &EventLog,
    purpose: Purpose,
) -> Result<Acquired, Refused> {
    let mut acquired = Acquired::default();
    match acquire_into(docs, built, credentials, events, purpose, &mut acquired).await {
        Ok(()) => Ok(acquired),
        Err(refused) => {
            // providers.md §7.5: the first failure closes everything opened so far (concurrently).
            finish_all(&acquired.sites, events).await;
            Err(refused)
        }
    }
}

async fn acquire_into(
    docs: &Documents,
    built: &Built,
    credentials: &CapturedCredentials,
    events: &EventLog,
    purpose: Purpose,
    acquired: &mut Acquired,
) -> Result<(), Refused> {
    for (index, template) in built.templates.iter().enumerate() {
        // lifecycle.md §1.5: every refusal below names its tool and, per site, its installation.
        acquire_tool(docs, credentials, events, purpose, acquired, (template, index))
            .await
            .map_err(|refused| refused.context(Fact::Tool, &template.name))?;
    }
    Ok(())
}

/// The sites and model sites of one tool, then its snapshot pins' key set.
async fn acquire_tool(
    docs: &Documents,
    credentials: &CapturedCredentials,
    events: &EventLog,
    purpose: Purpose,
    acquired: &mut Acquired,
    (template, index): (&Template, usize),
) -> Result<(), Refused> {
    let tool = docs.gateway.tools.iter().find(|t| t.name == template.name);
    let configured = tool.and_then(|t| t.provider_snapshot_pins.as_ref());
    let mut actual = BTreeMap::new();
    for declaration in &template.selections.declarations {
        let in_site = |refused: Refused| refused.context(Fact::Installation, declaration);
        let (site, facts) =
            acquire_site(docs, credentials, events, (template, index), declaration).await.map_err(in_site)?;
        acquired.sites.push(site);
        // pins.md §9.3 steps 3–4: the identity, then the configured pin.
        let identity = pins::identity(&facts.to_value(), &granted(template, declaration))
            .map_err(|e| in_site(e.into()))?;
        let pin = pins::snapshot_pin(&identity);
        let key = pins::site_key(declaration);
        if purpose == Purpose::Serve {
            pins::check_site_snapshot(configured, &key, &pin).map_err(|e| in_site(e.into()))?;
        }
        actual.insert(key, pin);
    }
    // models.md §3.1: a model site contacts nothing at startup and has no snapshot pin.
    if purpose == Purpose::Serve {
        for declaration in &template.selections.models {
            let site = model_site(docs, credentials, events, (template, index), declaration)
                .map_err(|refused| refused.context(Fact::Installation, declaration))?;
            acquired.models.push(site);
        }
    }
    // pins.md §9.3: after the tool's last site, no configured key may name none of its sites. A cold
    // tool has none, so its map must be `{}` (pins.md §9.4).
    if purpose == Purpose::Serve {
        pins::check_no_extra_sites(configured, actual.keys().map(String::as_str))?;
        validate_snapshots(template)?;
    }
    let expected = expected_installation_pins(&docs.host, template)?;
    acquired.installation_pins.insert(template.name.clone(), expected);
    acquired.snapshot_pins.insert(template.name.clone(), actual);
    Ok(())
}

/// traces.md §9.2: every snapshot directory of a cold tool is a directory that opens and lists, before
/// any listener is bound; nothing of it is kept.
fn validate_snapshots(template: &Template) -> Result<(), Refused> {
    for directory in template.selections.snapshots.values() {
        if let Err(error) = crate::traces::hist::validate_directory(directory) {
            tracing::debug!(tool = %template.name, %error, "snapshot directory refused");
            let refusal = Refusal::new(StartupCode::ProviderRuntimeUnavailable)
                .with(Fact::Path, directory.display().to_string())
                .with(
                    Fact::Reason,
                    format!("the trace snapshot directory cannot be opened and listed: {error}"),
                );
            return Err(refusal.into());
        }
    }
    Ok(())
}

/// One model site (models.md §3.1): the endpoint parsed, the captured credential in its header, the warm
/// pool made empty. Nothing is sent.
fn model_site(
    docs: &Documents,
    credentials: &CapturedCredentials,
    events: &EventLog,
    (template, index): (&Template, usize),
    declaration: &str,
) -> Result<Arc<ModelSite>, Refused> {
    let Some(InstallationKind::Llm(llm)) = docs.host.install.get(declaration).map(|i| &i.kind) else {
        return Err(StartupCode::InternalError.into());
    };
    let endpoint =
        Endpoint::parse(&llm.endpoint, llm.allow_insecure_loopback).ok_or(StartupCode::InternalError)?;
    let credential = credentials.get(&llm.credential).ok_or(StartupCode::CredentialUnavailable)?;
    let spec = ModelSpec {
        tool: (&template.name, index),
        declaration,
        endpoint,
        credential: credential.expose(),
        defaults: ModelDefaults {
            model: llm.model.clone(),
            temperature: llm.params.temperature.clone(),
            max_tokens: llm.params.max_tokens.map(i128::from),
        },
        timeout: Duration::from_millis(llm.ceilings.timeout_ms),
        max_idle: usize::try_from(docs.gateway.admission.max_active_provider_calls).unwrap_or(usize::MAX),
        gateway_version: env!("CARGO_PKG_VERSION"),
    };
    let counters = events.pair(&template.name, declaration);
    ModelSite::new(spec, counters).map(Arc::new).ok_or_else(|| StartupCode::CredentialUnavailable.into())
}

fn runtime_unavailable(class: FailureClass) -> Refused {
    let refusal = Refusal::new(StartupCode::ProviderRuntimeUnavailable)
        .with(Fact::Class, class.as_str())
        .with(Fact::Reason, "the upstream could not be acquired (started, initialised and listed)");
    Refused { refusal, reason: Some(ReasonClass::Provider(class)) }
}

/// One site: resolve and digest, spawn, negotiate, list (providers.md §7.5 steps 1–2).
async fn acquire_site(
    docs: &Documents,
    credentials: &CapturedCredentials,
    events: &EventLog,
    (template, index): (&Template, usize),
    declaration: &str,
) -> Result<(Arc<Site>, acquire::Facts), Refused> {
    let mcp = match docs.host.install.get(declaration).map(|i| &i.kind) {
        Some(InstallationKind::Mcp(mcp)) => mcp,
        _ => return Err(StartupCode::InternalError.into()),
    };
    match acquire_upstream(&docs.host, mcp, credentials).await {
        Ok((upstream, facts)) => {
            let counters = events.pair(&template.name, declaration);
            // execution.md §12.5: what `handle:api()` shows of each tool, kept from the listing.
            let listed = listed_tools(&facts.tools);
            let (era, ceilings) = (facts.era, mcp.ceilings);
            let site =
                Site::new((&template.name, index), declaration, upstream, era, ceilings, listed, counters);
            Ok((Arc::new(site), facts))
        }
        Err(AcquireError::PinUnavailable) => {
            let reason = "the installation's command cannot be resolved and read to compute its digest";
            Err(Refusal::new(StartupCode::ProviderPinUnavailable).with(Fact::Reason, reason).into())
        }
        Err(AcquireError::Failed { class, end }) => {
            // providers.md §7.5: the failed transport's `transport` record and, when enabled, its stderr tail
            // (stdio only: HTTP transports have no stderr, audit-events.md §3.8).
            if let Some(end) = end {
                events.transport(&template.name, declaration, end.fault, end.exit_status);
                if matches!(mcp.transport, McpTransport::Stdio(_)) {
                    events.stderr_tail(&template.name, declaration, &end.stderr, end.stderr_truncated);
                }
            }
            Err(runtime_unavailable(class))
        }
    }
}

/// Acquires one installation over its configured transport (providers.md §7.5 steps 1–2): spawn a stdio
/// child, or open a Streamable HTTP client with the static headers' captured credentials (providers.md §5.1).
/// A binding that was not captured cannot happen here (capture refuses it first, config.md §8); it is
/// reported as a transport error, nothing having been sent.
async fn acquire_upstream(
    host: &HostConfig,
    mcp: &McpInstallation,
    credentials: &CapturedCredentials,
) -> Result<(Upstream, acquire::Facts), AcquireError> {
    let unsent = AcquireError::Failed { class: FailureClass::McpTransportError, end: None };
    match &mcp.transport {
        McpTransport::Stdio(_) => {
            let spec = acquire_spec(host, mcp, credentials).ok_or(unsent)?;
            let ok = acquire::acquire(&spec).await?;
            Ok((Upstream::Stdio(Box::new(ok.transport)), ok.facts))
        }
        McpTransport::StreamableHttp(http) => {
            let version = env!("CARGO_PKG_VERSION");
            let spec = HttpSpec::from_config(http, credentials, mcp.tools.clone(), version).ok_or(unsent)?;
            let ok = acquire_http(&spec).await?;
            Ok((Upstream::Http(ok.transport), ok.facts))
        }
    }
}
