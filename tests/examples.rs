//! config.md §9.6: every gateway, host and application document under `config-examples/` passes the
//! real structural and semantic checks (pins excepted: they are machine-specific for providers), and
//! validates against the committed generated schemas.

use std::path::{Path, PathBuf};

use ptc_gateway::testing::config::{gateway, host, manifest, Mode};

fn examples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&root).expect("config-examples/") {
        let dir = entry.expect("entry").path();
        if dir.join("ptc-gateway.json").is_file() {
            found.push(dir);
        }
    }
    found.sort();
    assert!(!found.is_empty(), "config-examples/ holds at least the quickstart");
    found
}

fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas").join(name);
    let value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("schema")).expect("json");
    jsonschema::draft202012::new(&value).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn validate(validator: &jsonschema::Validator, path: &Path) {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{}: {errors:?}", path.display());
}

#[test]
fn every_example_passes_the_real_checks_and_the_published_schemas() {
    let gateway_schema = schema("ptc-gateway-config.schema.json");
    let host_schema = schema("ptc-host-config.schema.json");
    let application_schema = schema("ptc-application.schema.json");
    for dir in examples() {
        let config_path = dir.join("ptc-gateway.json");
        // Discovery mode: the pins are validated structurally but not compared.
        let config = gateway::load(&config_path, Mode::Discovery)
            .unwrap_or_else(|code| panic!("{}: {code}", config_path.display()));
        validate(&gateway_schema, &config_path);
        let host = host::load(&config.host_path, &config.bearer_binding)
            .unwrap_or_else(|code| panic!("{}: {code}", config.host_path.display()));
        host::check_bearer_binding(&host, &config.bearer_binding).expect("bearer binding");
        validate(&host_schema, &config.host_path);
        for tool in &config.tools {
            let bytes = std::fs::read(&tool.manifest).expect("manifest");
            manifest::parse(&bytes).unwrap_or_else(|code| panic!("{}: {code}", tool.manifest.display()));
            validate(&application_schema, &tool.manifest);
        }
    }
}
