//! `--print-pins` discovery (pins.md §10): stages 0, 1, 2 and 5 without 5d, the selected provider
//! credentials, every site acquired for real through the serving path and closed again, then every
//! tool's pins on stdout as one deterministic JSON line.
//!
//! Discovery binds nothing, creates nothing, starts no admission and never reads the bearer (pins.md §10.2);
//! it writes no event log. Nothing is printed until every acquisition is confirmed closed (pins.md §10.1 step
//! 7).

use std::io::Write;

use serde_json::{Map, Value};

use crate::cli::GatewayArgs;
use crate::config::credentials;
use crate::events::EventLog;
use crate::explain::{Fact, Refusal};
use crate::json::to_deterministic;
use crate::providers::sites::finish_all;
use crate::startup::providers::{self, Purpose};
use crate::startup::{documents, refusal_facts, templates, StartupCode};

/// A close that could not confirm an upstream process reaped (pins.md §10.4, lifecycle.md §1.5).
fn unreaped() -> Refusal {
    let reason = "an upstream process could not be confirmed reaped after its acquisition was closed";
    Refusal::new(StartupCode::InternalError).with(Fact::Reason, reason)
}

fn pin_map(pins: Option<&std::collections::BTreeMap<String, String>>) -> Value {
    let map: Map<String, Value> =
        pins.into_iter().flatten().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    Value::Object(map)
}

/// Runs discovery and prints every tool's pins (pins.md §10.1 step 8).
pub async fn run(args: &GatewayArgs) -> Result<(), Refusal> {
    let pins = discover(args).await?;
    let mut line = to_deterministic(&pins);
    line.push(b'\n');
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&line)
        .and_then(|_| stdout.flush())
        .map_err(|e| Refusal::because(StartupCode::InternalError, &e))
}

/// Runs discovery and returns every tool's three pins, `{<tool>: {<pin member>: …}}`, once every
/// acquisition is confirmed closed. Shared by `--print-pins` and `ptc pin` (lifecycle.md §1.3).
pub async fn discover(args: &GatewayArgs) -> Result<Value, Refusal> {
    let docs = documents::load(args)?;
    let built = templates::build(&docs, args.mode)?;
    // pins.md §10.1 step 5: the env file once, the selected provider credentials only; never the bearer.
    let bindings = credentials::selected_bindings(&docs.host, &templates::selected_aliases(&built, false));
    let captured = credentials::capture(&docs.host, args.env_file.as_deref(), None, &bindings)
        .map_err(|e| refusal_facts::credential(&docs.host, e))?;
    let events = EventLog::disabled();
    let acquired = providers::acquire_sites(&docs, &built, &captured, &events, Purpose::Discover)
        .await
        .map_err(|refused| refused.refusal)?;
    drop(captured);
    // pins.md §10.1 step 7 and pins.md §10.4: everything is closed before anything is written; a close that
    // could not confirm its child reaped is `internal_error`.
    if !finish_all(&acquired.sites, &events).await {
        return Err(unreaped());
    }
    let mut result = Map::new();
    for template in &built.templates {
        let mut pins = Map::new();
        pins.insert(
            "expected_application_content_digest".into(),
            Value::String(template.content_pin().to_owned()),
        );
        pins.insert(
            "installation_config_pins".into(),
            pin_map(acquired.installation_pins.get(&template.name)),
        );
        pins.insert("provider_snapshot_pins".into(), pin_map(acquired.snapshot_pins.get(&template.name)));
        result.insert(template.name().to_owned(), Value::Object(pins));
    }
    Ok(Value::Object(result))
}
