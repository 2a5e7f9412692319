//! `ptc check` (lifecycle.md §1.5): every startup stage that needs no port and creates nothing, and the
//! first refusal explained for a person.
//!
//! Owns: which stages run and in which order (those of serve mode, lifecycle.md §3.2, minus the actors,
//! the locks and the listeners), the stage names, the one sentence per startup code, and the printed text.
//! Does not own the stages' rules (each stage's own module) or the facts of a refusal (each layer's error,
//! through `crate::explain`).
//!
//! Why no lock and no port: an operator checks a changed configuration while the old gateway still runs,
//! holding the store locks and the port; refusing for those would make the command useless exactly when
//! it is needed (docs/decisions.md, "`ptc check`").

use std::net::SocketAddr;
use std::path::Path;

use crate::cli::GatewayArgs;
use crate::config::credentials;
use crate::config::{gateway, host, Mode};
use crate::events::EventLog;
use crate::explain::{Fact, Facts, Refusal};
use crate::providers::sites::finish_all;
use crate::startup::documents::Documents;
use crate::startup::fault::{self, FaultPoint};
use crate::startup::providers::{self, Purpose};
use crate::startup::{budget, refusal_facts, templates, StartupCode};
use crate::storage::ancestry::probe_store_dir;
use crate::storage::artifact_root::{EVENTS_DIR, INSPECTION_DIR, METRICS_DIR, TRACES_DIR};

/// What `ptc check` ends with: the names of the tools that would be served, or the first refusal.
pub(crate) type Outcome = Result<Vec<String>, Refusal>;

/// Runs the checks to the first refusal.
pub(crate) async fn run(args: &GatewayArgs) -> Outcome {
    stages(args).await
}

/// The refusal of a stage, naming the stage (lifecycle.md §1.5).
pub(crate) fn at<E: Into<Refusal>>(stage: &'static str) -> impl FnOnce(E) -> Refusal {
    move |error| error.into().context(Fact::Stage, stage)
}

/// Stages 1, 2 and 3 of serve mode (the bearer binding declared, its value not read), each refusal naming
/// its stage: what `ptc check` and `ptc replay` (replay.md §2) both run first.
pub(crate) fn documents(config: &Path) -> Result<Documents, Refusal> {
    let gateway = gateway::load(config, Mode::Serve).map_err(at("1 gateway document"))?;
    let host = host::load(&gateway.host_path, &gateway.bearer_binding).map_err(at("2 host document"))?;
    host::check_bearer_binding(&host, &gateway.bearer_binding).map_err(at("3 bearer binding"))?;
    Ok(Documents { gateway, host })
}

async fn stages(args: &GatewayArgs) -> Result<Vec<String>, Refusal> {
    let docs = documents(&args.config)?;
    if let Some(artifacts) = &docs.gateway.artifacts {
        let subdirs = [EVENTS_DIR, TRACES_DIR, INSPECTION_DIR, METRICS_DIR];
        probe(StartupCode::ArtifactRootUnavailable, &artifacts.root, &subdirs)
            .map_err(at("4 artifact root"))?;
    }
    let built = templates::build(&docs, Mode::Serve).map_err(at("5 templates"))?;
    if fault::injected(FaultPoint::PanicInStage) {
        panic!("injected fault: a panic inside a stage");
    }
    budget::stage(&docs, &built).map_err(at("6 listener capacity"))?;
    if let Some(audit) = &docs.gateway.private_audit {
        probe(StartupCode::AuditUnavailable, &audit.directory, &[]).map_err(at("7 audit"))?;
    }
    warm_providers(args, &docs, &built).await.map_err(at("9 warm providers"))?;
    probe_listeners(&docs.gateway).await.map_err(at("11 listeners"))?;
    Ok(built.templates.iter().map(|t| t.name().to_owned()).collect())
}

/// How long a connect probe of stage 11 waits: loopback answers at once, so this only bounds a stuck
/// kernel.
const CONNECT_PROBE: std::time::Duration = std::time::Duration::from_secs(1);

/// Stage 11 without binding: a connect to each listen address (the `/mcp` listener, then PCC's). One that
/// is accepted means something already listens there, and serving would be `listener_unavailable`. A
/// refused or failed connect says nothing more, so it passes: a port held by a process of another user
/// that does not accept is left to serving (lifecycle.md §1.5).
async fn probe_listeners(gateway: &gateway::GatewayConfig) -> Result<(), Refusal> {
    let mut addresses = vec![SocketAddr::new(gateway.listen.address.ip(), gateway.listen.port)];
    if let Some(pcc) = &gateway.pcc {
        addresses.push(SocketAddr::new(pcc.address.ip(), pcc.port));
    }
    for address in addresses {
        let connect = tokio::time::timeout(CONNECT_PROBE, tokio::net::TcpStream::connect(address)).await;
        if let Ok(Ok(_connection)) = connect {
            return Err(Refusal::new(StartupCode::ListenerUnavailable)
                .with(Fact::Address, address.to_string())
                .with(Fact::Reason, "something already listens on this address"));
        }
    }
    Ok(())
}

/// Stages 4 and 7 without creating anything: R-ANC and R-DIR (audit-events.md §1.2–§1.3) on the store
/// directory and those of its subdirectories that exist.
fn probe(code: StartupCode, dir: &Path, subdirs: &[&str]) -> Result<(), Refusal> {
    probe_store_dir(dir, subdirs).map_err(|e| refusal_facts::store(code, dir, &e))
}

/// Stage 9 as serving runs it, except provider-call admission (9c, an actor): the environment file and
/// every credential once, bearer included (9a–9b); the pin passes and every site acquired (9d); then every
/// acquisition closed again. Nothing captured leaves this function.
async fn warm_providers(
    args: &GatewayArgs,
    docs: &Documents,
    built: &crate::apps::Built,
) -> Result<(), Refusal> {
    let bindings = credentials::selected_bindings(&docs.host, &templates::selected_aliases(built, true));
    let bearer = Some(docs.gateway.bearer_binding.as_str());
    let captured = credentials::capture(&docs.host, args.env_file.as_deref(), bearer, &bindings)
        .map_err(|e| refusal_facts::credential(&docs.host, e))?;
    providers::check_installation_pins(docs, built)?;
    let events = EventLog::disabled();
    let acquired = providers::acquire_sites(docs, built, &captured, &events, Purpose::Serve)
        .await
        .map_err(|refused| refused.refusal)?;
    drop(captured);
    if !finish_all(&acquired.sites, &events).await {
        let reason = "an upstream process could not be confirmed reaped after the check";
        return Err(Refusal::new(StartupCode::InternalError).with(Fact::Reason, reason));
    }
    Ok(())
}

/// The text `ptc check` prints on stdout (lifecycle.md §1.5).
pub(crate) fn render(outcome: &Outcome) -> String {
    match outcome {
        Ok(tools) => format!("ok: serving would start with {} tool(s): {}\n", tools.len(), tools.join(", ")),
        Err(Refusal { code, facts }) => {
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
