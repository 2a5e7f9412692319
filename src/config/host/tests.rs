//! Tests of the host document: config.md §11 rows, the typed form, the projection of pins.md §11.3 and
//! the bearer-binding check.

use super::*;
use crate::config::schema::testing::{parse, remove, set, to_bytes};

/// The baseline host document of config.md §10.
const BASELINE: &str = r#"{
  "credentials": {"gateway": {"env": "GATEWAY_TOKEN"}},
  "install": {
    "notes": {
      "source": "mcp",
      "installation_revision": "fs-1.0.0",
      "transport": {"type": "stdio", "command": "mcp-server-fs", "args": ["--root", "notes"]},
      "tools": {"read_text_file": {"as": "notes.read", "effect": "read"}}
    }
  }
}"#;

const DOC: &str = "/srv/ptc/ptc-host.json";

/// The unused `streamable_http` installation `remote` of config.md §11 row 52, with `endpoint`.
fn remote(endpoint: &str) -> String {
    format!(
        r#"{{"source": "mcp", "installation_revision": "r1",
            "transport": {{"type": "streamable_http", "endpoint": "{endpoint}"}},
            "tools": {{"echo": {{"as": "remote.echo", "effect": "read"}}}}}}"#
    )
}

fn run(edit: &dyn Fn(&mut Value)) -> Result<HostConfig, StartupCode> {
    let mut doc = parse(BASELINE);
    edit(&mut doc);
    from_bytes(&to_bytes(&doc), Path::new(DOC), "gateway").map_err(|e| e.code)
}

type Edit = Box<dyn Fn(&mut Value)>;

/// config.md §11, the rows that concern the host document's structure and semantics, plus the
/// endpoint, header, reference and shape rules of config.md §5 they stand for.
#[test]
fn section_11_vectors() {
    let invalid = Err(StartupCode::HostInvalid);
    let table: Vec<(&str, Result<(), StartupCode>, Edit)> = vec![
        ("row 48", invalid, Box::new(|d| remove(d, "/install"))),
        ("install {}", Ok(()), Box::new(|d| set(d, "/install", "{}"))),
        ("row 49", invalid, Box::new(|d| set(d, "/credentials/gateway", r#"{"env": "A", "file": "b"}"#))),
        ("empty credential", invalid, Box::new(|d| set(d, "/credentials/gateway", "{}"))),
        (
            "row 50",
            invalid,
            Box::new(|d| set(d, "/install/notes/transport/env", r#"{"TZ": {"binding": "tz"}}"#)),
        ),
        (
            "row 50 with tz",
            Ok(()),
            Box::new(|d| {
                set(d, "/install/notes/transport/env", r#"{"TZ": {"binding": "tz"}}"#);
                set(d, "/credentials/tz", r#"{"literal": "UTC"}"#);
            }),
        ),
        (
            "row 51",
            invalid,
            Box::new(|d| set(d, "/install/notes/transport/env", r#"{"TOKEN": {"binding": "gateway"}}"#)),
        ),
        ("row 52", invalid, Box::new(|d| set(d, "/install/remote", &remote("http://localhost:9000/mcp")))),
        ("row 53", invalid, Box::new(|d| set(d, "/install/remote", &remote("http://127.0.0.1:9000/mcp")))),
        (
            "row 53 allowed",
            Ok(()),
            Box::new(|d| {
                set(d, "/install/remote", &remote("http://127.0.0.1:9000/mcp"));
                set(d, "/install/remote/transport/allow_insecure_loopback", "true");
            }),
        ),
        (
            "https with allow_insecure_loopback",
            invalid,
            Box::new(|d| {
                set(d, "/install/remote", &remote("https://mcp.example.com/mcp"));
                set(d, "/install/remote/transport/allow_insecure_loopback", "true");
            }),
        ),
        ("row 54", invalid, Box::new(|d| remote_with_header(d, "Mcp-Session-Id"))),
        ("row 54 lowercase", invalid, Box::new(|d| remote_with_header(d, "mcp-session-id"))),
        ("Mcp-Param- prefix", invalid, Box::new(|d| remote_with_header(d, "MCP-PARAM-x"))),
        ("TE", invalid, Box::new(|d| remote_with_header(d, "te"))),
        ("Authorization", Ok(()), Box::new(|d| remote_with_header(d, "Authorization"))),
        (
            "duplicate header names",
            invalid,
            Box::new(|d| {
                remote_with_header(d, "X-Key");
                set(
                    d,
                    "/install/remote/transport/headers/1",
                    r#"{"name": "x-key", "binding": "remote_token"}"#,
                );
            }),
        ),
        ("header name not a token", invalid, Box::new(|d| remote_with_header(d, "X Key"))),
        (
            "header binding missing",
            invalid,
            Box::new(|d| {
                remote_with_header(d, "X-Key");
                remove(d, "/credentials/remote_token");
            }),
        ),
        (
            "header binding is the bearer",
            invalid,
            Box::new(|d| {
                remote_with_header(d, "Authorization");
                set(d, "/install/remote/transport/headers/0/binding", r#""gateway""#);
            }),
        ),
        ("row 56", invalid, Box::new(|d| set(d, "/install/notes/transport/args", r#"["--root", "a\nb"]"#))),
        (
            "row 57",
            Ok(()),
            Box::new(|d| {
                set(d, "/install/remote", &remote("https://mcp.example.com/mcp"));
                set(d, "/install/remote/transport/oauth", "{}");
            }),
        ),
        (
            "oauth members byte-bounded",
            invalid,
            Box::new(|d| {
                set(d, "/install/remote", &remote("https://mcp.example.com/mcp"));
                set(d, "/install/remote/transport/oauth", r#"{"issuer": {"x": "a\rb"}}"#);
            }),
        ),
        (
            "oauth members uninterpreted",
            Ok(()),
            Box::new(|d| {
                set(d, "/install/remote", &remote("https://mcp.example.com/mcp"));
                set(
                    d,
                    "/install/remote/transport/oauth",
                    r#"{"issuer": "https://id.example.com", "n": [1, 2.5]}"#,
                );
            }),
        ),
        ("oauth on stdio", invalid, Box::new(|d| set(d, "/install/notes/transport/oauth", "{}"))),
        (
            "row 123",
            invalid,
            Box::new(|d| {
                set(d, "/install/notes/tools/read_other", r#"{"as": "notes.read", "effect": "read"}"#);
            }),
        ),
        (
            "row 129",
            Ok(()),
            Box::new(|d| {
                set(d, "/install/replay", r#"{"source": "llm_replay", "model": 7, "anything": {"x": true}}"#);
            }),
        ),
        (
            "reserved, byte bounds",
            invalid,
            Box::new(|d| {
                set(d, "/install/replay", r#"{"source": "decision", "note": "a\nb"}"#);
            }),
        ),
        ("row 132", invalid, Box::new(|d| set(d, "/install/x", r#"{"source": "ptc_debug_snapshot"}"#))),
        ("source missing", invalid, Box::new(|d| set(d, "/install/x", r#"{"installation_revision": "r"}"#))),
        (
            "row 135",
            Ok(()),
            Box::new(|d| {
                set(d, "/install/notes/tools/read_text_file/description", r#""Read a file.\nUTF-8 only.""#);
            }),
        ),
        (
            "row 136",
            invalid,
            Box::new(|d| {
                set(d, "/install/notes/tools/read_text_file/description", r#""Read a file.\r\nUTF-8 only.""#);
            }),
        ),
        (
            "installation_revision missing",
            invalid,
            Box::new(|d| remove(d, "/install/notes/installation_revision")),
        ),
        ("unknown key in an mcp installation", invalid, Box::new(|d| set(d, "/install/notes/extra", "1"))),
        ("tools map empty", invalid, Box::new(|d| set(d, "/install/notes/tools", "{}"))),
        (
            "alias pattern",
            invalid,
            Box::new(|d| set(d, "/install/notes/tools/read_text_file/as", r#""notes""#)),
        ),
        (
            "start_timeout_ms float",
            invalid,
            Box::new(|d| set(d, "/install/notes/transport/start_timeout_ms", "5000.0")),
        ),
        ("limits", Ok(()), Box::new(|d| set(d, "/limits", r#"{"run_duration_ms": 3600000}"#))),
        ("limits above", invalid, Box::new(|d| set(d, "/limits", r#"{"run_duration_ms": 3600001}"#))),
        ("llm", Ok(()), Box::new(llm)),
        (
            "llm endpoint rule",
            invalid,
            Box::new(|d| {
                llm(d);
                set(d, "/install/model/endpoint", r#""http://localhost:8000/v1""#);
            }),
        ),
        (
            "llm credential missing",
            invalid,
            Box::new(|d| {
                llm(d);
                remove(d, "/credentials/model_key");
            }),
        ),
        (
            "llm temperature",
            invalid,
            Box::new(|d| {
                llm(d);
                set(d, "/install/model/params/temperature", "2.5");
            }),
        ),
        (
            "trace snapshot",
            Ok(()),
            Box::new(|d| {
                set(
                    d,
                    "/install/snap",
                    r#"{"source": "ptc_trace_snapshot", "installation_revision": "s1", "directory": "snap"}"#,
                );
            }),
        ),
    ];
    for (name, want, edit) in &table {
        assert_eq!(run(edit.as_ref()).map(|_| ()), *want, "{name}");
    }
}

const LLM: &str = r#"{"source": "llm", "installation_revision": "m1", "endpoint": "https://api.example.com/v1",
    "model": "m", "credential": "model_key", "params": {"temperature": 0.5, "max_tokens": 10}}"#;

fn remote_with_header(d: &mut Value, name: &str) {
    set(d, "/install/remote", &remote("https://mcp.example.com/mcp"));
    set(d, "/credentials/remote_token", r#"{"env": "REMOTE_TOKEN"}"#);
    let headers = format!(
        r#"[{{"name": "{name}", "binding": "remote_token"}},
            {{"name": "X-Second", "binding": "remote_token", "scheme": "bearer"}}]"#
    );
    set(d, "/install/remote/transport/headers", &headers);
}

fn llm(d: &mut Value) {
    set(d, "/install/model", LLM);
    set(d, "/credentials/model_key", r#"{"file": "keys/model.key"}"#);
}

#[test]
fn baseline_typed_form() {
    let host = run(&|_| {}).unwrap();
    assert_eq!(host.document_dir, PathBuf::from("/srv/ptc"));
    assert_eq!(host.run_duration_ms, 30_000);
    assert_eq!(host.credentials.get("gateway"), Some(&CredentialSource::Env("GATEWAY_TOKEN".into())));
    let notes = host.install.get("notes").unwrap();
    assert_eq!(notes.source, Source::Mcp);
    assert_eq!(notes.declaration, parse(BASELINE).pointer("/install/notes").cloned().unwrap());
    let InstallationKind::Mcp(mcp) = &notes.kind else { panic!("mcp") };
    let McpTransport::Stdio(stdio) = &mcp.transport else { panic!("stdio") };
    assert_eq!(stdio.command, "mcp-server-fs");
    assert_eq!(stdio.args, ["--root", "notes"]);
    assert_eq!(stdio.cwd, PathBuf::from("/srv/ptc"));
    assert!(!stdio.inherit_environment);
    assert!(stdio.env.is_empty());
    assert_eq!((stdio.start_timeout_ms, stdio.protocol), (5000, ProtocolEra::Auto));
    assert_eq!(mcp.ceilings, Ceilings { timeout_ms: 5000, max_result_bytes: 262_144 });
    let mapping = mcp.tools.get("read_text_file").unwrap();
    assert_eq!(
        (mapping.alias.as_str(), mapping.effect, &mapping.description),
        ("notes.read", ToolEffect::Read, &None)
    );
    assert!(host.bindings_of("notes").is_empty());
}

#[test]
fn typed_form_of_other_shapes() {
    let host = run(&|d| {
        remote_with_header(d, "Authorization");
        llm(d);
        set(d, "/credentials/lit", r#"{"literal": "s3cret"}"#);
        set(d, "/install/notes/transport/env", r#"{"B": {"binding": "lit"}, "A": {"binding": "lit"}}"#);
        set(d, "/install/notes/transport/cwd", r#""../work""#);
        set(
            d,
            "/install/snap",
            r#"{"source": "ptc_trace_snapshot", "installation_revision": "s1", "directory": "snap"}"#,
        );
        set(d, "/install/replay", r#"{"source": "llm_replay"}"#);
    })
    .unwrap();
    assert_eq!(
        host.credentials.get("model_key"),
        Some(&CredentialSource::File("/srv/ptc/keys/model.key".into()))
    );
    assert_eq!(format!("{:?}", host.credentials.get("lit").unwrap()), "Literal(<redacted>)");
    assert_eq!(host.bindings_of("notes"), ["lit"]);
    assert_eq!(host.bindings_of("remote"), ["remote_token"]);
    assert_eq!(host.bindings_of("model"), ["model_key"]);
    let InstallationKind::Mcp(notes) = &host.install["notes"].kind else { panic!("mcp") };
    let McpTransport::Stdio(stdio) = &notes.transport else { panic!("stdio") };
    assert_eq!(stdio.cwd, PathBuf::from("/srv/work"));
    let InstallationKind::Mcp(remote) = &host.install["remote"].kind else { panic!("mcp") };
    let McpTransport::StreamableHttp(http) = &remote.transport else { panic!("http") };
    assert_eq!(http.endpoint, "https://mcp.example.com/mcp");
    assert!(!http.oauth && !http.allow_insecure_loopback);
    let schemes: Vec<HeaderScheme> = http.headers.iter().map(|h| h.scheme).collect();
    assert_eq!(schemes, [HeaderScheme::Raw, HeaderScheme::Bearer]);
    assert_eq!(
        host.install["snap"].kind,
        InstallationKind::TraceSnapshot { directory: "/srv/ptc/snap".into() }
    );
    assert_eq!(host.install["replay"].source, Source::LlmReplay);
    assert!(host.install["replay"].source.is_reserved());
    assert_eq!(host.install["replay"].kind, InstallationKind::Reserved);
}

/// pins.md §11.3: the projection of `notes`, and its invariances.
#[test]
fn installation_projection_of_notes() {
    const PROJECTION: &str = r#"{"ceilings":{"max_result_bytes":262144,"timeout_ms":5000},"source":"mcp","tools":{"read_text_file":{"as":"notes.read","effect":"read"}},"transport":{"args":["--root","notes"],"command":"mcp-server-fs","cwd":".","env":{},"inherit_environment":false,"protocol":"auto","start_timeout_ms":5000,"type":"stdio"}}"#;
    let project = |edit: &dyn Fn(&mut Value)| installation_projection(&run(edit).unwrap().install["notes"]);
    let projection = project(&|_| {});
    assert_eq!(projection, parse(PROJECTION));
    assert_eq!(json::to_deterministic(&projection), PROJECTION.as_bytes());
    assert_eq!(project(&|d| set(d, "/install/notes/transport/cwd", r#"".""#)), projection);
    assert_eq!(project(&|d| set(d, "/install/notes/ceilings", r#"{"timeout_ms": 5000}"#)), projection);
    assert_eq!(project(&|d| set(d, "/install/notes/installation_revision", r#""fs-2""#)), projection);
    assert_ne!(project(&|d| set(d, "/install/notes/transport/args", r#"["notes", "--root"]"#)), projection);
}

#[test]
fn projection_of_other_sources() {
    let host = run(&|d| {
        remote_with_header(d, "Authorization");
        llm(d);
        set(d, "/install/replay", r#"{"source": "decision", "installation_revision": "x", "k": [1]}"#);
    })
    .unwrap();
    let want = r#"{"ceilings":{"max_result_bytes":262144,"timeout_ms":5000},"source":"mcp",
        "tools":{"echo":{"as":"remote.echo","effect":"read"}},
        "transport":{"allow_insecure_loopback":false,"endpoint":"https://mcp.example.com/mcp",
          "headers":[{"binding":"remote_token","name":"Authorization","scheme":"raw"},
                     {"binding":"remote_token","name":"X-Second","scheme":"bearer"}],
          "protocol":"auto","type":"streamable_http"}}"#;
    assert_eq!(installation_projection(&host.install["remote"]), parse(want));
    let want = r#"{"allow_insecure_loopback":false,"ceilings":{"timeout_ms":60000},"credential":"model_key",
        "endpoint":"https://api.example.com/v1","model":"m","params":{"max_tokens":10,"temperature":0.5},
        "source":"llm"}"#;
    assert_eq!(installation_projection(&host.install["model"]), parse(want));
    let want = r#"{"source":"decision","k":[1]}"#;
    assert_eq!(installation_projection(&host.install["replay"]), parse(want));
}

/// config.md §5.8 (stage 3) and config.md §11 rows 58–60.
#[test]
fn bearer_binding_check() {
    let host = |edit: &dyn Fn(&mut Value)| run(edit).unwrap();
    assert_eq!(check_bearer_binding(&host(&|_| {}), "gateway"), Ok(()));
    let file = host(&|d| set(d, "/credentials/gateway", r#"{"file": "token"}"#));
    assert_eq!(check_bearer_binding(&file, "gateway"), Ok(()));
    // Row 58: `credentials` removed (the default is `{}`).
    let none = host(&|d| remove(d, "/credentials"));
    assert_eq!(
        check_bearer_binding(&none, "gateway").map_err(|e| e.code),
        Err(StartupCode::CredentialUnavailable)
    );
    // Rows 59 and 60: a literal bearer is refused here, which discovery never runs.
    let literal =
        host(&|d| set(d, "/credentials/gateway", &format!(r#"{{"literal": "{}"}}"#, "a".repeat(32))));
    assert_eq!(
        check_bearer_binding(&literal, "gateway").map_err(|e| e.code),
        Err(StartupCode::CredentialUnavailable)
    );
}

#[test]
fn unreadable_or_malformed_is_host_invalid() {
    // Row 46: `host.path` names a missing file.
    assert_eq!(
        load(Path::new("/nonexistent/ptc-host.json"), "gateway").map_err(|e| e.code),
        Err(StartupCode::HostInvalid)
    );
    assert_eq!(
        from_bytes(b"{", Path::new(DOC), "gateway").map_err(|e| e.code),
        Err(StartupCode::HostInvalid)
    );
    assert_eq!(
        from_bytes(b"[]", Path::new(DOC), "gateway").map_err(|e| e.code),
        Err(StartupCode::HostInvalid)
    );
}

/// Replacing any node of a host document by a value of any type is `host_invalid` or accepted, never a
/// panic.
#[test]
fn every_node_replaced_by_every_type() {
    use crate::config::schema::testing::{pointers, EVERY_TYPE};
    let mut base = parse(BASELINE);
    remote_with_header(&mut base, "Authorization");
    llm(&mut base);
    set(&mut base, "/install/replay", r#"{"source": "decision", "k": {"x": [1]}}"#);
    for pointer in pointers(&base) {
        for replacement in EVERY_TYPE {
            let mut doc = base.clone();
            set(&mut doc, &pointer, replacement);
            if let Err(e) = from_bytes(&to_bytes(&doc), Path::new(DOC), "gateway") {
                assert_eq!(e.code, StartupCode::HostInvalid, "{pointer} = {replacement}");
            }
        }
    }
}

/// The schema and the type are the two places a member is written (`config::typed`): the type reads every
/// shape the schema allows (each source, both transports, each reserved source with members it does not
/// interpret, each credential form), so no member lacks a field.
#[test]
fn every_member_of_the_schema_has_a_field() {
    let documents = schema::shapes::documents(&HOST.get());
    assert_eq!(documents.len(), 4, "one document per variant of the install union");
    let mut sources = std::collections::BTreeSet::new();
    for document in documents {
        let read = HostConfig::deserialize(&document);
        let Ok(host) = read else { panic!("{read:?}\nfor {document}") };
        sources.extend(host.install.values().map(|i| i.source.as_str()));
    }
    // The four variants of the union, the reserved one with the tag its document takes.
    let expected = ["llm", "mcp", "ptc_inspection_snapshot", "ptc_trace_snapshot"];
    assert_eq!(sources, expected.into_iter().collect(), "{sources:?}");
}

/// The typed read refuses a member its type does not know, inside a tagged installation too.
#[test]
fn the_typed_read_refuses_an_unknown_member_of_an_installation() {
    let mut document = schema::shapes::documents(&HOST.get()).remove(0);
    let alias = document["install"].as_object().and_then(|m| m.keys().next().cloned()).unwrap();
    document["install"][&alias]["extra"] = serde_json::json!(1);
    let refused = HostConfig::deserialize(&document).unwrap_err().to_string();
    assert!(refused.contains("unknown field `extra`"), "{refused}");
}
