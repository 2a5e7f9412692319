//! Tests of the gateway document: config.md §11 rows, normalisation and reading.

use super::*;
use crate::config::schema::testing::{parse, push, remove, set, set_value, to_bytes};
use serde_json::Value;

/// The baseline gateway document of config.md §10 (the snapshot pin is the value of pins.md §11.6).
pub const BASELINE: &str = r#"{
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

const DOC: &str = "/srv/ptc/ptc-gateway.json";
const AUDIT: &str = r#"{"directory": "audit", "max_file_bytes": 1048576, "max_retained_files": 8}"#;

fn run(edit: &dyn Fn(&mut Value), mode: Mode) -> Result<GatewayConfig, StartupCode> {
    let mut doc = parse(BASELINE);
    edit(&mut doc);
    from_bytes(&to_bytes(&doc), Path::new(DOC), mode).map_err(|e| e.code)
}

type Edit = Box<dyn Fn(&mut Value)>;

/// config.md §11, the rows that concern the gateway document's structure and semantics.
#[test]
fn section_11_vectors() {
    use Mode::{Discovery as D, Serve as S};
    use StartupCode::*;
    let invalid = Err(ConfigInvalid);
    let table: Vec<(u32, Mode, Result<(), StartupCode>, Edit)> = vec![
        (10, S, invalid, Box::new(|d| remove(d, "/version"))),
        (10, S, invalid, Box::new(|d| remove(d, "/listen"))),
        (10, S, invalid, Box::new(|d| remove(d, "/authentication"))),
        (10, S, invalid, Box::new(|d| remove(d, "/host"))),
        (10, S, invalid, Box::new(|d| remove(d, "/admission"))),
        (10, S, invalid, Box::new(|d| remove(d, "/tools"))),
        (11, S, invalid, Box::new(|d| set(d, "/version", "2"))),
        (12, S, invalid, Box::new(|d| set(d, "/listen/address", r#""0.0.0.0""#))),
        (13, S, invalid, Box::new(|d| set(d, "/listen/address", r#""localhost""#))),
        (14, S, invalid, Box::new(|d| set(d, "/listen/port", "0"))),
        (14, S, invalid, Box::new(|d| set(d, "/listen/port", "65536"))),
        (15, S, invalid, Box::new(|d| set(d, "/listen/port", "8765.0"))),
        (16, S, invalid, Box::new(|d| set(d, "/listen/path", r#""/other""#))),
        (17, S, invalid, Box::new(|d| set(d, "/extra", "1"))),
        (18, S, invalid, Box::new(|d| set(d, "/listen/extra", "true"))),
        (19, S, invalid, Box::new(|d| set(d, "/admission/max_concurrent_runs", "0"))),
        (20, S, invalid, Box::new(|d| set(d, "/admission/max_active_provider_calls", "65536"))),
        (21, S, invalid, Box::new(|d| set(d, "/admission/max_waiting_provider_calls", "-1"))),
        (22, S, invalid, Box::new(|d| set(d, "/tools", "[]"))),
        (22, S, invalid, Box::new(|d| set_value(d, "/tools", many_tools(129)))),
        (22, S, Ok(()), Box::new(|d| set_value(d, "/tools", many_tools(128)))),
        (23, S, invalid, Box::new(|d| set(d, "/tools/0/name", r#""bad/name""#))),
        (24, S, invalid, Box::new(|d| set_value(d, "/tools/0/title", "é".repeat(129).into()))),
        (25, S, Ok(()), Box::new(|d| set_value(d, "/tools/0/title", "é".repeat(128).into()))),
        (26, S, Ok(()), Box::new(|d| set(d, "/tools/0/description", r#""one\ntwo""#))),
        (27, S, invalid, Box::new(|d| set_value(d, "/tools/0/expected_application_content_digest", upper()))),
        (28, S, invalid, Box::new(|d| remove(d, "/tools/1/installation_config_pins"))),
        (29, D, Ok(()), Box::new(|d| remove(d, "/tools/1/installation_config_pins"))),
        (29, D, Ok(()), Box::new(strip_pins)),
        (
            29,
            D,
            invalid,
            Box::new(|d| set(d, "/tools/0/expected_application_content_digest", r#""sha256:x""#)),
        ),
        (30, S, invalid, Box::new(|d| set(d, "/tools/1/provider_snapshot_pins", &snapshot_pin("notes")))),
        (30, D, invalid, Box::new(|d| set(d, "/tools/1/provider_snapshot_pins", &snapshot_pin("notes")))),
        (30, S, Ok(()), Box::new(|d| set(d, "/tools/1/provider_snapshot_pins", &snapshot_pin("workflow/m")))),
        (32, S, Err(OriginInvalid), Box::new(|d| origins(d, r#"["https://example.com/"]"#))),
        (33, S, Err(OriginInvalid), Box::new(|d| origins(d, r#"["https://example.com:443"]"#))),
        (34, S, Err(OriginInvalid), Box::new(|d| origins(d, r#"["https://Example.com"]"#))),
        (35, S, Ok(()), Box::new(|d| origins(d, r#"["http://localhost:8080", "http://[::1]:8765"]"#))),
        (35, S, invalid, Box::new(|d| origins(d, r#"["http://a.b", "http://a.b"]"#))),
        (
            36,
            S,
            Err(OriginInvalid),
            Box::new(|d| {
                origins(d, r#"["https://example.com/"]"#);
                duplicate_echo(d);
            }),
        ),
        (37, S, Err(ToolNameDuplicate), Box::new(duplicate_echo)),
        (37, D, Err(ToolNameDuplicate), Box::new(duplicate_echo)),
        (38, S, Err(AuditInvalid), Box::new(|d| set(d, "/private_audit", AUDIT))),
        (39, S, Err(AuditInvalid), Box::new(|d| set(d, "/tools/0/allow_write", "true"))),
        (
            40,
            S,
            Ok(()),
            Box::new(|d| {
                set(d, "/tools/0/allow_write", "true");
                set(d, "/private_audit", AUDIT);
            }),
        ),
        (41, S, invalid, Box::new(|d| set(d, "/pcc/servers/briefs/tools", r#"["nope"]"#))),
        (42, S, invalid, Box::new(|d| set(d, "/pcc/port", "8765"))),
        (
            43,
            S,
            Ok(()),
            Box::new(|d| {
                set(d, "/pcc/address", r#""::1""#);
                set(d, "/pcc/port", "8765");
            }),
        ),
        (44, S, invalid, Box::new(|d| set(d, "/pcc/servers", "{}"))),
        (45, S, invalid, Box::new(|d| set(d, "/pcc/servers/bad id", r#"{"tools": ["brief"]}"#))),
        (124, S, Ok(()), Box::new(|d| set(d, "/artifacts/trace", "true"))),
        (125, S, Ok(()), Box::new(|d| set(d, "/artifacts/inspection", "true"))),
        (126, D, Ok(()), Box::new(|d| set(d, "/artifacts/trace", "true"))),
        (
            127,
            S,
            invalid,
            Box::new(|d| {
                set(d, "/artifacts/trace", r#""yes""#);
                origins(d, r#"["https://example.com/"]"#);
            }),
        ),
        (
            128,
            S,
            Ok(()),
            Box::new(|d| {
                set(d, "/artifacts/trace", "false");
                set(d, "/artifacts/inspection", "false");
            }),
        ),
        (140, S, invalid, Box::new(|d| set(d, "/artifacts/trace", r#"{"max_file_bytes": 16383}"#))),
        (140, S, invalid, Box::new(|d| set(d, "/artifacts/trace", r#"{"max_retained_files": 100001}"#))),
        (140, S, invalid, Box::new(|d| set(d, "/artifacts/inspection", r#"{"stderr": true}"#))),
        (140, S, invalid, Box::new(|d| set(d, "/artifacts/inspection", r#"{"replay": true}"#))),
        (140, S, invalid, Box::new(|d| set(d, "/artifacts/trace", r#"{"replay": "yes"}"#))),
        (140, D, invalid, Box::new(|d| set(d, "/artifacts/trace", "null"))),
        (
            141,
            S,
            Ok(()),
            Box::new(|d| set(d, "/artifacts/trace", r#"{"max_file_bytes": 16384, "max_retained_files": 2}"#)),
        ),
        (141, S, Ok(()), Box::new(|d| set(d, "/artifacts/trace", r#"{"replay": true}"#))),
        (133, S, invalid, Box::new(|d| set(d, "/tools/0/description", r#""one\rtwo""#))),
        (134, S, invalid, Box::new(|d| set(d, "/tools/0/title", r#""one\ntwo""#))),
    ];
    for (row, mode, want, edit) in &table {
        let got = run(edit.as_ref(), *mode).map(|_| ());
        assert_eq!(got, *want, "config.md §11 row {row} ({mode:?})");
    }
}

/// traces.md §2: `true` is the object with both defaults; an object's missing bound takes its default.
#[test]
fn run_artifacts_normalise_to_their_bounds() {
    use crate::config::gateway::RunArtifactsConfig as C;
    let table: [(&str, Option<C>); 7] = [
        ("false", None),
        ("true", Some(C { max_file_bytes: 1_048_576, max_retained_files: 1_000, replay: false })),
        ("{}", Some(C { max_file_bytes: 1_048_576, max_retained_files: 1_000, replay: false })),
        (
            r#"{"max_file_bytes": 16384}"#,
            Some(C { max_file_bytes: 16_384, max_retained_files: 1_000, replay: false }),
        ),
        (
            r#"{"max_retained_files": 100000}"#,
            Some(C { max_file_bytes: 1_048_576, max_retained_files: 100_000, replay: false }),
        ),
        // traces.md §2, §6.3: `replay` defaults to false and keeps the bounds' defaults.
        (
            r#"{"replay": true}"#,
            Some(C { max_file_bytes: 1_048_576, max_retained_files: 1_000, replay: true }),
        ),
        (r#"{"replay": false}"#, Some(C::DEFAULT)),
    ];
    for (value, want) in table {
        let config = run(&|d| set(d, "/artifacts/trace", value), Mode::Serve).expect(value);
        let artifacts = config.artifacts.expect("artifacts");
        assert_eq!(artifacts.trace, want, "{value}");
        assert_eq!(artifacts.inspection, None, "{value}");
    }
}

fn many_tools(n: usize) -> Value {
    let tools = (0..n).map(|i| {
        let mut t = parse(
            r#"{"title": "T", "description": "D", "application": {"manifest": "m/ptc.json"},
               "installation_config_pins": {}, "provider_snapshot_pins": {},
               "expected_application_content_digest": "sha256:128bcc1b3ac8b2e869fe4acc08762a9b77b2e0324e95cf3d4f867ae31976f853"}"#,
        );
        set_value(&mut t, "/name", format!("tool{i:03}").into());
        t
    });
    let mut tools: Vec<Value> = tools.collect();
    // Keep the PCC reference to `brief` valid.
    if let Some(first) = tools.first_mut() {
        set(first, "/name", r#""brief""#);
    }
    Value::Array(tools)
}

fn upper() -> Value {
    "sha256:128BCC1B3AC8B2E869FE4ACC08762A9B77B2E0324E95CF3D4F867AE31976F853".into()
}

fn snapshot_pin(key: &str) -> String {
    format!(r#"{{"{key}": "sha256:2e57eab140487245bd69921ef9fc2676b30842b49eb0ffdbbb1c306fe1d0b24c"}}"#)
}

fn origins(d: &mut Value, list: &str) {
    set(d, "/listen/allowed_origins", list);
}

fn duplicate_echo(d: &mut Value) {
    let echo = d.pointer("/tools").and_then(Value::as_array).and_then(|t| t.first()).cloned().unwrap();
    push(d, "/tools", &String::from_utf8(to_bytes(&echo)).unwrap());
}

fn strip_pins(d: &mut Value) {
    for i in 0..2 {
        for key in
            ["expected_application_content_digest", "installation_config_pins", "provider_snapshot_pins"]
        {
            remove(d, &format!("/tools/{i}/{key}"));
        }
    }
}

#[test]
fn baseline_normalises() {
    let config = run(&|_| {}, Mode::Serve).unwrap();
    assert_eq!(config.document_dir, PathBuf::from("/srv/ptc"));
    assert_eq!(config.listen.address, LoopbackAddress::V4);
    assert_eq!(config.listen.port, 8765);
    assert_eq!(config.listen.authority(), "127.0.0.1:8765");
    assert!(config.listen.allowed_origins.is_empty());
    assert_eq!(config.bearer_binding, "gateway");
    assert_eq!(config.host_path, PathBuf::from("/srv/ptc/ptc-host.json"));
    assert_eq!(
        config.admission,
        Admission {
            max_inflight_requests: 16,
            max_concurrent_runs: 4,
            max_active_provider_calls: 4,
            max_waiting_provider_calls: 0
        }
    );
    let names: Vec<&str> = config.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["brief", "echo"]);
    let brief = &config.tools[0];
    assert_eq!(brief.manifest, PathBuf::from("/srv/ptc/brief/ptc.json"));
    assert!(!brief.allow_write);
    let pins = brief.installation_config_pins.as_ref().unwrap();
    assert_eq!(
        pins.get("notes").map(String::as_str),
        Some("sha256:26b11335d94e95f1936867f2b24ce06cee6e929cfb6e1327619dab108311c4a3")
    );
    assert_eq!(config.tools[1].provider_snapshot_pins, Some(BTreeMap::new()));
    assert_eq!(config.private_audit, None);
    let artifacts = config.artifacts.as_ref().unwrap();
    assert_eq!(artifacts.root, PathBuf::from("/srv/ptc/artifacts"));
    assert_eq!(
        artifacts.events,
        Some(EventsConfig { max_file_bytes: 1_048_576, max_retained_files: 8, stderr: false })
    );
    let pcc = config.pcc.as_ref().unwrap();
    assert_eq!((pcc.address, pcc.port), (LoopbackAddress::V4, 8766));
    assert_eq!(pcc.servers.get("briefs"), Some(&vec!["brief".to_owned()]));
}

#[test]
fn tools_sort_by_name_bytes_and_paths_anchor() {
    let config = run(
        &|d| {
            set(d, "/tools/0/name", r#""a""#);
            set(d, "/tools/1/name", r#""Z""#);
            set(d, "/pcc/servers/briefs/tools", r#"["Z"]"#);
            set(d, "/host/path", r#""../etc//host.json""#);
            set(d, "/tools/0/application/manifest", r#""/abs/./m.json""#);
            set(d, "/tools/0/allow_write", "true");
            set(
                d,
                "/private_audit",
                r#"{"directory": "./audit/", "max_file_bytes": 1024, "max_retained_files": 2}"#,
            );
        },
        Mode::Serve,
    )
    .unwrap();
    let names: Vec<&str> = config.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Z", "a"]);
    assert_eq!(config.host_path, PathBuf::from("/srv/etc/host.json"));
    assert_eq!(config.tools[1].manifest, PathBuf::from("/abs/m.json"));
    assert!(config.tools[1].allow_write);
    assert_eq!(config.private_audit.unwrap().directory, PathBuf::from("/srv/ptc/audit"));
}

#[test]
fn discovery_keeps_absent_pins_absent() {
    let config = run(&strip_pins, Mode::Discovery).unwrap();
    for tool in &config.tools {
        assert_eq!(tool.expected_application_content_digest, None);
        assert_eq!(tool.installation_config_pins, None);
        assert_eq!(tool.provider_snapshot_pins, None);
    }
}

#[test]
fn reading_failures_are_config_unavailable() {
    let dir = std::env::temp_dir().join(format!("ptc-gateway-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Row 1: the file does not exist.
    assert_eq!(
        load(&dir.join("missing.json"), Mode::Serve).map_err(|e| e.code),
        Err(StartupCode::ConfigUnavailable)
    );
    // A directory is not a regular file.
    assert_eq!(load(&dir, Mode::Serve).map_err(|e| e.code), Err(StartupCode::ConfigUnavailable));
    // Row 2: padded with spaces to 1,000,001 bytes.
    let mut padded = BASELINE.as_bytes().to_vec();
    padded.resize(1_000_001, b' ');
    let file = dir.join("ptc-gateway.json");
    std::fs::write(&file, &padded).unwrap();
    assert_eq!(load(&file, Mode::Serve).map_err(|e| e.code), Err(StartupCode::ConfigUnavailable));
    // Exactly 1,000,000 bytes loads, and the directory of the document anchors its paths.
    padded.truncate(1_000_000);
    std::fs::write(&file, &padded).unwrap();
    let config = load(&file, Mode::Serve).unwrap();
    assert_eq!(config.host_path, dir.join("ptc-host.json"));
    // Row 3: not JSON.
    std::fs::write(&file, b"{").unwrap();
    assert_eq!(load(&file, Mode::Serve).map_err(|e| e.code), Err(StartupCode::ConfigUnavailable));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Rows 1–9 of config.md §11 are the decoder's; the gateway's share is the mapping of its refusals
/// (config.md §2.8 table): only a duplicate key has its own code.
#[test]
fn decode_failures_map_to_their_codes() {
    use crate::json::DecodeErrorKind::*;
    let table = [
        (TooLarge, StartupCode::ConfigUnavailable),
        (InvalidUtf8, StartupCode::ConfigUnavailable),
        (ByteOrderMark, StartupCode::ConfigUnavailable),
        (Syntax, StartupCode::ConfigUnavailable),
        (TrailingData, StartupCode::ConfigUnavailable),
        (NumberOutOfRange, StartupCode::ConfigUnavailable),
        (BadSurrogate, StartupCode::ConfigUnavailable),
        (TooDeep, StartupCode::ConfigUnavailable),
        (TooManyNodes, StartupCode::ConfigUnavailable),
        (DuplicateKey, StartupCode::DuplicateJsonKey),
    ];
    for (kind, code) in table {
        assert_eq!(decode_failure(kind), code, "{kind:?}");
    }
}

/// Replacing any node of the baseline by a value of any type yields a stage-1 answer, never a panic and
/// never a code of a later stage.
#[test]
fn every_node_replaced_by_every_type() {
    use crate::config::schema::testing::{pointers, EVERY_TYPE};
    let stage_1 = [
        StartupCode::ConfigInvalid,
        StartupCode::OriginInvalid,
        StartupCode::ToolNameDuplicate,
        StartupCode::AuditInvalid,
    ];
    for pointer in pointers(&parse(BASELINE)) {
        for replacement in EVERY_TYPE {
            for mode in [Mode::Serve, Mode::Discovery] {
                match run(&|d| set(d, &pointer, replacement), mode) {
                    Ok(_) => {}
                    Err(code) => assert!(stage_1.contains(&code), "{pointer} = {replacement}: {code}"),
                }
            }
        }
    }
}

/// The schema and the type are the two places a member is written (`config::typed`): the type reads every
/// shape the schema allows, so no member lacks a field or is spelled differently.
#[test]
fn every_member_of_the_schema_has_a_field() {
    let documents = schema::shapes::documents(&GATEWAY.get());
    assert_eq!(documents.len(), 2, "the trace/inspection alternatives: a boolean and an object");
    for document in documents {
        let read = GatewayConfig::deserialize(&document);
        assert!(read.is_ok(), "{read:?}\nfor {document}");
    }
}

/// A member the type does not know is refused even if the schema let it through: the typed read is a
/// second closed door, never a silent drop.
#[test]
fn the_typed_read_refuses_an_unknown_member() {
    let mut document = schema::shapes::documents(&GATEWAY.get()).remove(0);
    document["listen"]["extra"] = serde_json::json!(true);
    let refused = GatewayConfig::deserialize(&document).unwrap_err().to_string();
    assert!(refused.starts_with("unknown field `extra`"), "{refused}");
}

#[test]
fn the_schema_reference_and_version_are_read_as_written() {
    let config =
        run(&|d| set(d, "/$schema", r#""../schemas/ptc-gateway-config.schema.json""#), Mode::Serve).unwrap();
    assert_eq!(config.schema_reference.as_deref(), Some("../schemas/ptc-gateway-config.schema.json"));
    assert_eq!((config.version, config.listen.path.as_str()), (1, "/mcp"));
}
