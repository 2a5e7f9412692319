//! `ptc check` (lifecycle.md §1.5): every startup stage that needs no port and creates nothing, and the
//! first refusal explained for a person.
//!
//! Owns: which stages run and in which order (those of serve mode, lifecycle.md §3.2, minus the actors,
//! the locks and the listeners), the stage names, the one sentence per startup code, and the printed text.
//! Does not own the stages' rules (each stage's own module) or the facts they note (`crate::explain`).
//!
//! Why no lock and no port: an operator checks a changed configuration while the old gateway still runs,
//! holding the store locks and the port; refusing for those would make the command useless exactly when
//! it is needed (docs/decisions.md, "`ptc check`").

use std::net::SocketAddr;
use std::path::Path;

use crate::cli::GatewayArgs;
use crate::config::credentials;
use crate::config::host::CredentialSource;
use crate::config::{gateway, host, Mode};
use crate::events::EventLog;
use crate::explain::{self, Fact, Facts};
use crate::providers::sites::finish_all;
use crate::startup::documents::Documents;
use crate::startup::fault::{self, FaultPoint};
use crate::startup::providers::{self, Purpose};
use crate::startup::{budget, refusal_facts, templates, StartupCode};
use crate::storage::ancestry::probe_store_dir;
use crate::storage::artifact_root::{EVENTS_DIR, INSPECTION_DIR, METRICS_DIR, TRACES_DIR};
use crate::storage::StorageError;

/// What `ptc check` ends with: the names of the tools that would be served, or the refusal and its facts.
pub(crate) type Outcome = Result<Vec<String>, (StartupCode, Facts)>;

/// Runs the checks, gathering the facts of the first refusal.
pub(crate) async fn run(args: &GatewayArgs) -> Outcome {
    let (result, facts) = explain::gather(stages(args)).await;
    result.map_err(|code| (code, facts))
}

/// Marks the start of a stage: the facts of the stages before it passed and are forgotten.
fn enter(stage: &str) {
    explain::clear_except(&[]);
    explain::note(Fact::Stage, stage);
}

async fn stages(args: &GatewayArgs) -> Result<Vec<String>, StartupCode> {
    enter("1 gateway document");
    explain::note_with(Fact::Document, || args.config.display().to_string());
    let gateway = gateway::load(&args.config, Mode::Serve)?;
    enter("2 host document");
    explain::note_with(Fact::Document, || gateway.host_path.display().to_string());
    let host = host::load(&gateway.host_path, &gateway.bearer_binding)?;
    enter("3 bearer binding");
    explain::note_with(Fact::Document, || gateway.host_path.display().to_string());
    host::check_bearer_binding(&host, &gateway.bearer_binding)?;
    let docs = Documents { gateway, host };
    if let Some(artifacts) = &docs.gateway.artifacts {
        enter("4 artifact root");
        let subdirs = [EVENTS_DIR, TRACES_DIR, INSPECTION_DIR, METRICS_DIR];
        probe(&artifacts.root, &subdirs).map_err(|_| StartupCode::ArtifactRootUnavailable)?;
    }
    enter("5 templates");
    let built = templates::build(&docs, Mode::Serve)?;
    if fault::injected(FaultPoint::PanicInStage) {
        panic!("injected fault: a panic inside a stage");
    }
    enter("6 listener capacity");
    budget::stage(&docs, &built)?;
    if let Some(audit) = &docs.gateway.private_audit {
        enter("7 audit");
        probe(&audit.directory, &[]).map_err(|_| StartupCode::AuditUnavailable)?;
    }
    enter("9 warm providers");
    warm_providers(args, &docs, &built).await?;
    enter("11 listeners");
    probe_listeners(&docs.gateway).await?;
    Ok(built.templates.iter().map(|t| t.name().to_owned()).collect())
}

/// How long a connect probe of stage 11 waits: loopback answers at once, so this only bounds a stuck
/// kernel.
const CONNECT_PROBE: std::time::Duration = std::time::Duration::from_secs(1);

/// Stage 11 without binding: a connect to each listen address (the `/mcp` listener, then PCC's). One that
/// is accepted means something already listens there, and serving would be `listener_unavailable`. A
/// refused or failed connect says nothing more, so it passes: a port held by a process of another user
/// that does not accept is left to serving (lifecycle.md §1.5).
async fn probe_listeners(gateway: &gateway::GatewayConfig) -> Result<(), StartupCode> {
    let mut addresses = vec![SocketAddr::new(gateway.listen.address.ip(), gateway.listen.port)];
    if let Some(pcc) = &gateway.pcc {
        addresses.push(SocketAddr::new(pcc.address.ip(), pcc.port));
    }
    for address in addresses {
        let connect = tokio::time::timeout(CONNECT_PROBE, tokio::net::TcpStream::connect(address)).await;
        if let Ok(Ok(_connection)) = connect {
            explain::note(Fact::Address, address.to_string());
            explain::note(Fact::Reason, "something already listens on this address");
            return Err(StartupCode::ListenerUnavailable);
        }
    }
    Ok(())
}

/// Stages 4 and 7 without creating anything: R-ANC and R-DIR (audit-events.md §1.2–§1.3) on the store
/// directory and those of its subdirectories that exist.
fn probe(dir: &Path, subdirs: &[&str]) -> Result<(), StorageError> {
    probe_store_dir(dir, subdirs).inspect_err(|e| refusal_facts::note_store(dir, e))
}

/// Stage 9 as serving runs it, except provider-call admission (9c, an actor): the environment file and
/// every credential once, bearer included (9a–9b); the pin passes and every site acquired (9d); then every
/// acquisition closed again. Nothing captured leaves this function.
async fn warm_providers(
    args: &GatewayArgs,
    docs: &Documents,
    built: &crate::apps::Built,
) -> Result<(), StartupCode> {
    let bindings = credentials::selected_bindings(&docs.host, &templates::selected_aliases(built, true));
    let bearer = Some(docs.gateway.bearer_binding.as_str());
    let captured =
        credentials::capture(&docs.host, args.env_file.as_deref(), bearer, &bindings).map_err(|e| {
            if let Some(source) = e.binding.as_ref().and_then(|b| docs.host.credentials.get(b)) {
                note_source(source);
            }
            StartupCode::from(e)
        })?;
    providers::check_installation_pins(docs, built)?;
    let events = EventLog::disabled();
    let acquired = providers::acquire_sites(docs, built, &captured, &events, Purpose::Serve)
        .await
        .map_err(|refused| refused.code)?;
    drop(captured);
    if !finish_all(&acquired.sites, &events).await {
        explain::clear_except(&[Fact::Stage]);
        explain::note(Fact::Reason, "an upstream process could not be confirmed reaped after the check");
        return Err(StartupCode::InternalError);
    }
    Ok(())
}

/// Where a refused binding is read from; a literal's value is never shown.
fn note_source(source: &CredentialSource) {
    explain::note_with(Fact::Source, || match source {
        CredentialSource::Env(variable) => format!("env {variable}"),
        CredentialSource::File(path) => format!("file {}", path.display()),
        CredentialSource::Literal(_) => "literal".to_owned(),
    });
}

/// The text `ptc check` prints on stdout (lifecycle.md §1.5).
pub(crate) fn render(outcome: &Outcome) -> String {
    match outcome {
        Ok(tools) => format!("ok: serving would start with {} tool(s): {}\n", tools.len(), tools.join(", ")),
        Err((code, facts)) => {
            let mut text = format!("{}: {}\n", code.as_str(), meaning(*code));
            let pin_mismatch = matches!(
                code,
                StartupCode::ApplicationContentDigestMismatch
                    | StartupCode::InstallationPinMismatch
                    | StartupCode::ProviderPinMismatch
            );
            if pin_mismatch && !facts.contains_key(&Fact::Hint) {
                let mut facts = facts.clone();
                let hint = "if the change was intended, `ptc pin CONFIG` writes the computed pins";
                facts.insert(Fact::Hint, hint.to_owned());
                text.push_str(&render_facts(&facts));
            } else {
                text.push_str(&render_facts(facts));
            }
            text
        }
    }
}

/// The facts, one indented `key: value` line each, in the order of [`Fact`]; a value of several lines (an
/// excerpt and its caret) continues under its first character.
pub(crate) fn render_facts(facts: &Facts) -> String {
    let mut text = String::new();
    for (fact, value) in facts {
        let key = fact.as_str();
        let mut lines = value.split('\n');
        text.push_str(&format!("  {key}: {}\n", lines.next().unwrap_or_default()));
        for line in lines {
            text.push_str(&format!("  {:width$}  {line}\n", "", width = key.len()));
        }
    }
    text
}

/// One sentence per startup code (lifecycle.md §4), for a person reading `ptc check`.
fn meaning(code: StartupCode) -> &'static str {
    use StartupCode as C;
    match code {
        C::ConfigUnavailable => "the gateway document cannot be read or is not strict JSON",
        C::DuplicateJsonKey => "the gateway document repeats a key in one object",
        C::ConfigInvalid => "the gateway document is not valid",
        C::OriginInvalid => "an allowed origin is not a valid origin",
        C::ToolNameDuplicate => "two tools have the same name",
        C::AuditInvalid => "private_audit and the write tools disagree",
        C::HostInvalid => "the host document is not valid",
        C::CredentialUnavailable => "a credential cannot be read",
        C::ArtifactRootUnavailable => "the artifact root cannot be used",
        C::TemplateInvalid => "a tool's application is not valid",
        C::ApplicationContentDigestMismatch => "a tool's application changed since it was pinned",
        C::ProviderSourceUnsupported => "a tool selects a provider source that is not served",
        C::WriteForbidden => "a write application is configured without allow_write",
        C::CatalogTooLarge => "the tools listing is too large",
        C::ListenerCapacityExceeded => "the descriptor budget exceeds the descriptor limit",
        C::ListenerCapacityUnavailable => "the descriptor limit cannot be read",
        C::AuditUnavailable => "the audit directory cannot be used",
        C::RunAdmissionUnavailable => "run admission could not start",
        C::ProviderAdmissionUnavailable => "provider-call admission could not start",
        C::InstallationPinMismatch => "a tool's installation pins differ from the host document",
        C::ProviderPinMismatch => "a tool's provider snapshot pins differ from what its upstreams list",
        C::ProviderPinUnavailable => "a provider pin cannot be computed",
        C::ProviderRuntimeUnavailable => "an upstream could not be started",
        C::ListenerUnavailable => "a listener cannot be bound",
        C::InternalError => "the check failed inside the gateway",
    }
}
