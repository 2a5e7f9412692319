//! The staleness gate of config.md §9.5 and the agreement of the published schemas with the gateway.
//!
//! `generated_schemas_are_fresh` regenerates the three published schemas in memory and compares them
//! byte for byte with the committed files under `schemas/`; with `PTC_UPDATE_SCHEMAS=1` it rewrites them
//! instead. The other tests check that the files are valid draft 2020-12 schemas and that a generic
//! validator accepts the baseline documents of config.md §10 and pins.md §11 exactly as the gateway does.

use std::path::{Path, PathBuf};

use ptc_gateway::testing::config::schema::{application_schema, gateway_schema, host_schema};
use ptc_gateway::testing::config::{gateway, host, manifest, Mode};
use ptc_gateway::testing::json;
use serde_json::Value;

const REGENERATE: &str =
    "run `PTC_UPDATE_SCHEMAS=1 cargo test --features fault-injection --test repo schemas::` to regenerate";

/// The three generated files (config.md §9.1) and the values they must hold.
fn generated() -> [(&'static str, Value); 3] {
    [
        ("ptc-gateway-config.schema.json", gateway_schema()),
        ("ptc-host-config.schema.json", host_schema()),
        ("ptc-application.schema.json", application_schema()),
    ]
}

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

/// Deterministic JSON laid out for a person, followed by one LF (§9.3).
fn file_bytes(value: &Value) -> Vec<u8> {
    let mut text = json::to_deterministic_pretty(value);
    text.push('\n');
    text.into_bytes()
}

#[test]
fn generated_schemas_are_fresh() {
    let update = std::env::var_os("PTC_UPDATE_SCHEMAS").is_some_and(|v| v == "1");
    let dir = schemas_dir();
    let mut stale = Vec::new();
    for (name, value) in generated() {
        let want = file_bytes(&value);
        let path = dir.join(name);
        if update {
            std::fs::create_dir_all(&dir).expect("create schemas/");
            std::fs::write(&path, &want).unwrap_or_else(|e| panic!("write schemas/{name}: {e}"));
            continue;
        }
        match std::fs::read(&path) {
            Ok(have) if have == want => {}
            Ok(_) => stale.push(format!("schemas/{name} is stale")),
            Err(e) => stale.push(format!("schemas/{name} cannot be read ({e})")),
        }
    }
    assert!(stale.is_empty(), "{}; {REGENERATE}", stale.join("; "));
}

/// The published schema `name` as a generic validator sees it: the bytes the gate compares with the
/// committed file, decoded by `serde_json` (so the test does not race the gate's rewrite).
fn published(name: &str) -> serde_json::Value {
    let (_, value) = generated().into_iter().find(|(n, _)| *n == name).expect("known schema file");
    serde_json::from_slice(&file_bytes(&value)).expect("published schema is JSON")
}

#[test]
fn published_schemas_are_draft_2020_12() {
    for (name, _) in generated() {
        let schema = published(name);
        if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
            panic!("{name} is not a valid draft 2020-12 schema: {e}");
        }
    }
}

const GATEWAY: &str = r#"{
  "$schema": "https://ptc-gateway.dev/schemas/ptc-gateway-config.schema.json",
  "version": 1,
  "listen": {"address": "127.0.0.1", "port": 8765, "path": "/mcp"},
  "authentication": {"bearer": {"binding": "gateway"}},
  "host": {"path": "ptc-host.json"},
  "admission": {"max_inflight_requests": 16, "max_concurrent_runs": 4,
                "max_active_provider_calls": 4, "max_waiting_provider_calls": 0},
  "artifacts": {"root": "artifacts",
                "events": {"max_file_bytes": 1048576, "max_retained_files": 8}},
  "pcc": {"address": "127.0.0.1", "port": 8766,
          "servers": {"briefs": {"tools": ["brief"]}}},
  "tools": [
    {"name": "echo", "title": "Echo", "description": "Return the input object unchanged.",
     "application": {"manifest": "echo/ptc.json"},
     "expected_application_content_digest": "sha256:128bcc1b3ac8b2e869fe4acc08762a9b77b2e0324e95cf3d4f867ae31976f853",
     "installation_config_pins": {}, "provider_snapshot_pins": {}},
    {"name": "brief", "title": "Brief", "description": "Read the published brief.",
     "application": {"manifest": "brief/ptc.json"},
     "expected_application_content_digest": "sha256:f478b324e6ac3f0d3784c1f71588f4f1132436a4013f16ee251589bb3211333d",
     "installation_config_pins": {"notes": "sha256:26b11335d94e95f1936867f2b24ce06cee6e929cfb6e1327619dab108311c4a3"},
     "provider_snapshot_pins": {"mission/notes": "sha256:2e57eab140487245bd69921ef9fc2676b30842b49eb0ffdbbb1c306fe1d0b24c"}}
  ]
}"#;

const HOST: &str = r#"{
  "credentials": {"gateway": {"env": "GATEWAY_TOKEN"}, "remote_token": {"file": "remote.token"}},
  "install": {
    "notes": {
      "source": "mcp",
      "installation_revision": "fs-1.0.0",
      "transport": {"type": "stdio", "command": "mcp-server-fs", "args": ["--root", "notes"]},
      "tools": {"read_text_file": {"as": "notes.read", "effect": "read",
                                   "description": "Read a file.\nUTF-8 only."}}
    },
    "remote": {
      "source": "mcp",
      "installation_revision": "r1",
      "transport": {"type": "streamable_http", "endpoint": "https://mcp.example.com/mcp",
                    "headers": [{"name": "Authorization", "binding": "remote_token", "scheme": "bearer"}],
                    "oauth": {}},
      "tools": {"echo": {"as": "remote.echo", "effect": "read"}}
    },
    "replay": {"source": "llm_replay", "model": 7, "anything": {"x": true}}
  }
}"#;

const BRIEF: &str = r#"{
  "version": 1,
  "effect": "read",
  "contracts": {"input_schema": {"path": "input.schema.json"}, "result_schema": {"path": "result.schema.json"}},
  "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
  "missions": {"default": {"components": [{"id": "files", "path": "files.luau"}], "providers": ["notes"]}},
  "providers": {"mission": [{"name": "notes"}]}
}"#;

const FORWARD: &str = r#"{
  "version": 1,
  "effect": "read",
  "contracts": {"input_schema": {"path": "s.json"}, "result_schema": {"path": "s.json"}},
  "workflow": {"forward": {"mission": "default", "tool": "notes.read"}},
  "missions": {"default": {"providers": ["notes"]}},
  "providers": {"mission": [{"name": "notes", "config": {"allow": ["notes.read"]}}]}
}"#;

/// Whether the gateway's own loader accepts the document (structure and semantics).
fn gateway_accepts(file: &str, text: &str) -> bool {
    let path = Path::new("/srv/ptc/doc.json");
    match file {
        "ptc-gateway-config.schema.json" => gateway::from_bytes(text.as_bytes(), path, Mode::Serve).is_ok(),
        "ptc-host-config.schema.json" => host::from_bytes(text.as_bytes(), path, "gateway").is_ok(),
        _ => manifest::parse(text.as_bytes()).is_ok(),
    }
}

#[test]
fn generic_validator_agrees_on_documents() {
    let port_zero = GATEWAY.replace("\"port\": 8765", "\"port\": 0");
    let unknown = GATEWAY.replace("\"version\": 1,", "\"version\": 1, \"extra\": 1,");
    let no_pins = GATEWAY.replace("\"installation_config_pins\": {}, ", "");
    let bad_source = HOST.replace("\"llm_replay\"", "\"ptc_debug_snapshot\"");
    let two_members = HOST.replace("{\"env\": \"GATEWAY_TOKEN\"}", "{\"env\": \"A\", \"file\": \"b\"}");
    let both_forms = BRIEF.replace("\"entry\": \"app.run\"", "\"entry\": \"app.run\", \"forward\": {}");
    let workflow_allow = FORWARD.replace(
        "\"providers\": {\"mission\"",
        "\"providers\": {\"workflow\": [{\"name\": \"m\", \"config\": {\"allow\": [\"a.b\"]}}], \"mission\"",
    );
    let table: Vec<(&str, &str, bool)> = vec![
        ("ptc-gateway-config.schema.json", GATEWAY, true),
        ("ptc-gateway-config.schema.json", &port_zero, false),
        ("ptc-gateway-config.schema.json", &unknown, false),
        ("ptc-gateway-config.schema.json", &no_pins, false),
        ("ptc-host-config.schema.json", HOST, true),
        ("ptc-host-config.schema.json", &bad_source, false),
        ("ptc-host-config.schema.json", &two_members, false),
        ("ptc-application.schema.json", BRIEF, true),
        ("ptc-application.schema.json", FORWARD, true),
        ("ptc-application.schema.json", &both_forms, false),
        ("ptc-application.schema.json", &workflow_allow, false),
    ];
    for (file, text, valid) in table {
        let validator = jsonschema::draft202012::new(&published(file)).expect("schema compiles");
        let instance: serde_json::Value = serde_json::from_str(text).expect("test document is JSON");
        assert_eq!(validator.is_valid(&instance), valid, "{file}: generic validator on {text}");
        assert_eq!(gateway_accepts(file, text), valid, "{file}: gateway on {text}");
    }
}
