//! config.md §9.6: every gateway, host and application document under `config-examples/` passes the
//! real structural and semantic checks (pins excepted: they are machine-specific for providers), and
//! validates against the committed generated schemas.

use std::path::{Path, PathBuf};

use ptc_gateway::testing::config::{gateway, host, manifest, Mode};

/// Every directory below `config-examples/` that holds a gateway document (`debug/main` and
/// `debug/analysis` included).
fn examples() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        if dir.join("ptc-gateway.json").is_file() {
            found.push(dir.to_path_buf());
        }
        for entry in std::fs::read_dir(dir).expect("a directory of config-examples/").flatten() {
            if entry.path().is_dir() {
                walk(&entry.path(), found);
            }
        }
    }
    let mut found = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples"), &mut found);
    found.sort();
    assert!(found.len() >= 6, "config-examples/ holds its six gateways: {found:?}");
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

/// Every gateway, host and application document of every example, in order.
fn documents() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in examples() {
        let config_path = dir.join("ptc-gateway.json");
        let config = gateway::load(&config_path, Mode::Discovery).expect("gateway document");
        out.push(config_path);
        out.push(config.host_path.clone());
        out.extend(config.tools.iter().map(|t| t.manifest.clone()));
    }
    out
}

fn python_validator(paths: &[PathBuf]) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The examples' upstream venv: `jsonschema` is in the pinned closure of the `mcp` SDK there.
    let python = root.join("config-examples/upstreams/.venv/bin/python");
    assert!(python.is_file(), "{} is missing: run `bash tests/third_party/install.sh`", python.display());
    let mut cmd = std::process::Command::new(python);
    cmd.arg(root.join("tests/fixtures/validate_documents.py")).args(paths);
    cmd.output().expect("run the validator")
}

/// config.md §9.7: an editor validates every example without configuration. Each document's `$schema` is a
/// relative path that resolves, from the document's directory, to its schema in `schemas/`, and the
/// Python `jsonschema` package (Draft 2020-12, independent of the gateway and of the Rust crate) accepts
/// the document against it; a document with an unknown member is refused by the same run.
#[test]
fn an_editor_validates_every_example_through_its_relative_schema() {
    let documents = documents();
    assert!(documents.len() >= 19, "{documents:?}");
    let out = python_validator(&documents);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.lines().filter(|l| l.starts_with("ok ")).count(), documents.len(), "{stdout}");
    // The same validator refuses a document the schema refuses.
    let dir = tempfile::tempdir_in(Path::new(env!("CARGO_MANIFEST_DIR")).join("config-examples/quickstart"))
        .expect("tempdir");
    let bad = dir.path().join("ptc-host.json");
    let text = std::fs::read_to_string(documents[1].clone()).expect("host");
    let text = text.replacen("{", "{\"surprise\": 1,", 1).replace("../../schemas/", "../../../schemas/");
    std::fs::write(&bad, text).expect("write");
    let out = python_validator(std::slice::from_ref(&bad));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("surprise"));
}

/// Issue 25: every example runs beside every other. No two gateway documents under `config-examples/`
/// listen on the same address and port (the MCP listener and, where configured, the PCC listener), and
/// no two write state into the same directory (`artifacts.root`, `private_audit.directory`, each anchored
/// at its document's directory, config.md §3).
#[test]
fn no_two_examples_share_a_listen_address_or_a_state_directory() {
    use std::collections::BTreeMap;
    let mut listeners: BTreeMap<String, String> = BTreeMap::new();
    let mut states: BTreeMap<PathBuf, String> = BTreeMap::new();
    for dir in examples() {
        let path = dir.join("ptc-gateway.json");
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
        let name = dir.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&dir).display().to_string();
        for listener in ["listen", "pcc"] {
            let Some(section) = doc.get(listener) else { continue };
            let address = section["address"].as_str().unwrap_or_else(|| panic!("{name}: {listener}.address"));
            let port = section["port"].as_u64().unwrap_or_else(|| panic!("{name}: {listener}.port"));
            let at = format!("{address}:{port}");
            let user = format!("{name} ({listener})");
            if let Some(other) = listeners.insert(at.clone(), user.clone()) {
                panic!("{other} and {user} both listen on {at}");
            }
        }
        for pointer in ["/artifacts/root", "/private_audit/directory"] {
            let Some(rel) = doc.pointer(pointer).and_then(serde_json::Value::as_str) else { continue };
            let state = dir.join(rel);
            let user = format!("{name} ({pointer})");
            if let Some(other) = states.insert(state.clone(), user.clone()) {
                panic!("{other} and {user} both keep state in {}", state.display());
            }
        }
    }
    assert!(listeners.len() >= 7, "every example's listener was read: {listeners:?}");
}
