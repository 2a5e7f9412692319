//! `--print-pins` discovery (pins.md §10): stages 0, 1, 2 and 5 without 5d, then every tool's pins on
//! stdout as one deterministic JSON line.
//!
//! Discovery binds nothing, creates nothing, starts no admission and never reads the bearer (§10.2).

use std::io::Write;

use crate::cli::GatewayArgs;
use crate::json::{to_deterministic, Map, Value};
use crate::startup::{documents, templates, StartupCode};

/// Runs discovery and returns the exit status (0 printed, 78 refused).
pub async fn run(args: &GatewayArgs) -> Result<(), StartupCode> {
    let docs = documents::load(args)?;
    let built = templates::build(&docs, args.mode)?;
    let mut result = Map::new();
    for template in &built.templates {
        let mut pins = Map::new();
        pins.insert(
            "expected_application_content_digest".into(),
            Value::String(template.content_pin().to_owned()),
        );
        // Provider-free tools have empty maps (§10.3). Provider-bearing tools are refused at stage 5 until
        // providers are served, so no acquisition happens here yet.
        pins.insert("installation_config_pins".into(), Value::Object(Map::new()));
        pins.insert("provider_snapshot_pins".into(), Value::Object(Map::new()));
        result.insert(template.name().to_owned(), Value::Object(pins));
    }
    let mut line = to_deterministic(&Value::Object(result));
    line.push(b'\n');
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&line).and_then(|_| stdout.flush()).map_err(|_| StartupCode::InternalError)
}
