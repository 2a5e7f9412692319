//! config.md §6.5: S1–S12 in their order, over `brief` of pins.md §11.2 and variations of the baseline
//! host document; and the grants they leave.

use super::*;
use crate::apps::error::{AppError, AppErrorKind};
use crate::apps::selection::{self, Grant, Selections};
use crate::config::host::ToolEffect;
use crate::config::manifest;

type Edit = fn(&mut Value);

fn run(host_edit: Edit, manifest_edit: Edit) -> Result<Selections, AppError> {
    let dir = std::env::temp_dir();
    let mut host = baseline_host();
    host_edit(&mut host);
    let mut m = parse(BRIEF_MANIFEST);
    manifest_edit(&mut m);
    let manifest = manifest::parse(&crate::json::to_deterministic(&m)).unwrap();
    selection::check(&manifest, &host_config(&host, &dir))
}

fn none(_: &mut Value) {}

/// `remote`, an HTTPS installation mapping `remote.echo` (config.md §11 row 52 made valid).
fn add_remote(h: &mut Value) {
    set(
        h,
        &["install", "remote"],
        parse(
            r#"{"source":"mcp","installation_revision":"r-1",
        "transport":{"type":"streamable_http","endpoint":"https://mcp.example.com/mcp"},
        "tools":{"echo":{"as":"remote.echo","effect":"read"}}}"#,
        ),
    );
}

fn add_model(h: &mut Value) {
    set(h, &["credentials", "key"], parse(r#"{"env":"MODEL_KEY"}"#));
    set(
        h,
        &["install", "model"],
        parse(
            r#"{"source":"llm","installation_revision":"m-1",
        "endpoint":"https://api.example.com/v1","model":"small","credential":"key"}"#,
        ),
    );
}

fn add_notes_write(h: &mut Value) {
    set(
        h,
        &["install", "notes", "tools", "write_text_file"],
        parse(r#"{"as":"notes.write","effect":"write"}"#),
    );
}

fn add_snap(h: &mut Value) {
    let snap = r#"{"source":"ptc_trace_snapshot","installation_revision":"s-1","directory":"snap"}"#;
    set(h, &["install", "snap"], parse(snap));
}

fn grant(m: &mut Value, names: &[&str]) {
    let list: Vec<Value> = names.iter().map(|n| parse(&format!(r#"{{"name":"{n}"}}"#))).collect();
    set(m, &["providers", "mission"], Value::Array(list));
    set(
        m,
        &["missions", "default", "providers"],
        Value::Array(names.iter().map(|n| Value::from(*n)).collect()),
    );
}

#[test]
fn rule_vectors() {
    use AppErrorKind as K;
    let table: &[(&str, Edit, Edit, Result<(), AppErrorKind>)] = &[
        ("baseline brief", none, none, Ok(())),
        // S1 (config.md §11 rows 120, 121, 130, 131).
        (
            "mcp in the workflow list (row 120)",
            none,
            |m| set(m, &["providers", "workflow"], parse(r#"[{"name":"notes"}]"#)),
            Err(K::SelectionSourceRefused),
        ),
        (
            "llm in the mission list (row 121)",
            add_model,
            |m| grant(m, &["notes", "model"]),
            Err(K::SelectionSourceRefused),
        ),
        (
            "reserved source in the mission list (row 130)",
            |h| set(h, &["install", "replay"], parse(r#"{"source":"llm_replay","model":7}"#)),
            |m| grant(m, &["notes", "replay"]),
            Err(K::SelectionSourceRefused),
        ),
        (
            "reserved source in the workflow list (row 131)",
            |h| set(h, &["install", "replay"], parse(r#"{"source":"llm_replay"}"#)),
            |m| set(m, &["providers", "workflow"], parse(r#"[{"name":"replay"}]"#)),
            Err(K::SelectionSourceRefused),
        ),
        // S1 accepts a snapshot in the mission list; S11 refuses it beside a live provider (traces.md §9.1).
        (
            "trace snapshot mixed with mcp (row 147)",
            add_snap,
            |m| grant(m, &["notes", "snap"]),
            Err(K::SnapshotMixed),
        ),
        ("trace snapshot alone (row 144)", add_snap, |m| grant(m, &["snap"]), Ok(())),
        (
            "allow names no hist alias (row 149)",
            add_snap,
            |m| {
                grant(m, &["snap"]);
                set(
                    m,
                    &["providers", "mission"],
                    parse(r#"[{"name":"snap","config":{"allow":["hist.nope"]}}]"#),
                );
            },
            Err(K::AllowNotMapped),
        ),
        // Rule S1 before rule S2: a wrong source wins over an unknown name.
        (
            "S1 precedes S2",
            add_model,
            |m| {
                grant(m, &["notes", "nomodel"]);
                set(m, &["providers", "workflow"], parse(r#"[{"name":"notes"}]"#));
            },
            Err(K::SelectionSourceRefused),
        ),
        // Rule S2, every declaration names an installation (rows 80, 122).
        (
            "unknown installation (row 80)",
            none,
            |m| grant(m, &["notes2"]),
            Err(K::SelectionInstallationUnknown),
        ),
        (
            "unknown name (row 122)",
            add_model,
            |m| grant(m, &["notes", "nomodel"]),
            Err(K::SelectionInstallationUnknown),
        ),
        (
            "unknown workflow name",
            none,
            |m| set(m, &["providers", "workflow"], parse(r#"[{"name":"nomodel"}]"#)),
            Err(K::SelectionInstallationUnknown),
        ),
        // Rule S3, unique declaration names.
        (
            "duplicate mission declaration",
            none,
            |m| set(m, &["providers", "mission"], parse(r#"[{"name":"notes"},{"name":"notes"}]"#)),
            Err(K::SelectionDuplicate),
        ),
        (
            "duplicate llm workflow declaration",
            add_model,
            |m| set(m, &["providers", "workflow"], parse(r#"[{"name":"model"},{"name":"model"}]"#)),
            Err(K::SelectionDuplicate),
        ),
        // Rule S4, grants and declarations match.
        (
            "mission grants an undeclared provider",
            add_remote,
            |m| set(m, &["missions", "default", "providers"], parse(r#"["notes","remote"]"#)),
            Err(K::MissionProviderUnknown),
        ),
        (
            "declaration granted to no mission",
            add_remote,
            |m| set(m, &["providers", "mission"], parse(r#"[{"name":"notes"},{"name":"remote"}]"#)),
            Err(K::DeclarationNotGranted),
        ),
        // Rule S5, `allow` names mapped aliases.
        (
            "allow names an unmapped alias",
            none,
            |m| {
                set(
                    m,
                    &["providers", "mission"],
                    parse(r#"[{"name":"notes","config":{"allow":["notes.other"]}}]"#),
                )
            },
            Err(K::AllowNotMapped),
        ),
        // Rule S6, a write tool needs `allow` (row 81), and its fix (row 82).
        ("write tool without allow (row 81)", add_notes_write, none, Err(K::AllowRequired)),
        (
            "write tool with allow of the read alias (row 82)",
            add_notes_write,
            |m| {
                set(
                    m,
                    &["providers", "mission"],
                    parse(r#"[{"name":"notes","config":{"allow":["notes.read"]}}]"#),
                )
            },
            Ok(()),
        ),
        (
            "S6 applies to write applications too",
            add_notes_write,
            |m| set(m, &["effect"], Value::from("write")),
            Err(K::AllowRequired),
        ),
        // Rule S8, reachable aliases are distinct within a mission (row 55).
        (
            "two declarations reach notes.read (row 55)",
            |h| {
                add_remote(h);
                set(h, &["install", "remote", "tools", "echo", "as"], Value::from("notes.read"));
            },
            |m| grant(m, &["notes", "remote"]),
            Err(K::AliasCollision),
        ),
        (
            "different missions may reach the same alias",
            |h| {
                add_remote(h);
                set(h, &["install", "remote", "tools", "echo", "as"], Value::from("notes.read"));
            },
            |m| {
                set(m, &["providers", "mission"], parse(r#"[{"name":"notes"},{"name":"remote"}]"#));
                set(m, &["missions", "other", "providers"], parse(r#"["remote"]"#));
            },
            Ok(()),
        ),
        // Rule S9, a read application grants no write alias (row 83), and a write application granting write.
        (
            "read application grants write (row 83)",
            add_notes_write,
            |m| {
                set(
                    m,
                    &["providers", "mission"],
                    parse(r#"[{"name":"notes","config":{"allow":["notes.write"]}}]"#),
                )
            },
            Err(K::ReadGrantsWrite),
        ),
        (
            "write application grants write",
            add_notes_write,
            |m| {
                set(m, &["effect"], Value::from("write"));
                set(
                    m,
                    &["providers", "mission"],
                    parse(r#"[{"name":"notes","config":{"allow":["notes.write"]}}]"#),
                );
            },
            Ok(()),
        ),
        // Rule S10, no selected OAuth installation (row 85), and an unselected OAuth installation (row 57).
        (
            "selected oauth (row 85)",
            |h| {
                add_remote(h);
                set(h, &["install", "remote", "transport", "oauth"], parse("{}"));
            },
            |m| grant(m, &["notes", "remote"]),
            Err(K::OauthSelected),
        ),
        (
            "unselected oauth (row 57)",
            |h| {
                add_remote(h);
                set(h, &["install", "remote", "transport", "oauth"], parse("{}"));
            },
            none,
            Ok(()),
        ),
        // Rule S10: the catalog form of a workflow selection (row 150); `false` is the default.
        (
            "catalog workflow selection (row 150)",
            add_model,
            |m| {
                set(m, &["effect"], Value::from("write"));
                set(m, &["providers", "workflow"], parse(r#"[{"name":"model","config":{"catalog":true}}]"#));
            },
            Err(K::CatalogSelected),
        ),
        (
            "catalog false (row 151)",
            add_model,
            |m| {
                set(m, &["effect"], Value::from("write"));
                set(m, &["providers", "workflow"], parse(r#"[{"name":"model","config":{"catalog":false}}]"#));
            },
            Ok(()),
        ),
        // Rule S11: a snapshot beside a model (row 152).
        (
            "trace snapshot mixed with a model (row 152)",
            |h| {
                add_snap(h);
                add_model(h);
            },
            |m| {
                set(m, &["effect"], Value::from("write"));
                grant(m, &["snap"]);
                set(m, &["providers", "workflow"], parse(r#"[{"name":"model"}]"#));
            },
            Err(K::SnapshotMixed),
        ),
        // Rule S12 (row 87): a model makes the application's effect unknown, so it must be `write` (row 153).
        (
            "llm workflow declaration in a read application (row 87)",
            add_model,
            |m| set(m, &["providers", "workflow"], parse(r#"[{"name":"model"}]"#)),
            Err(K::ModelInReadApplication),
        ),
        (
            "llm workflow declaration in a forward application (row 154)",
            add_model,
            |m| {
                set(m, &["effect"], Value::from("write"));
                set(m, &["workflow"], parse(r#"{"forward":{"mission":"default","tool":"notes.read"}}"#));
                set(m, &["missions", "default", "components"], parse("[]"));
                set(m, &["providers", "workflow"], parse(r#"[{"name":"model"}]"#));
            },
            Err(K::ModelInForward),
        ),
        (
            "llm workflow declaration in a write application (row 151)",
            add_model,
            |m| {
                set(m, &["effect"], Value::from("write"));
                set(m, &["providers", "workflow"], parse(r#"[{"name":"model"}]"#));
            },
            Ok(()),
        ),
    ];
    for (what, host_edit, manifest_edit, want) in table {
        let got = run(*host_edit, *manifest_edit).map(|_| ()).map_err(|e| e.kind);
        assert_eq!(got, *want, "{what}");
    }
}

#[test]
fn codes_of_the_rules() {
    use crate::codes::StartupCode as C;
    use AppErrorKind as K;
    for (kind, code) in [
        (K::SelectionSourceRefused, C::ProviderSourceUnsupported),
        (K::SelectionInstallationUnknown, C::TemplateInvalid),
        (K::SelectionDuplicate, C::TemplateInvalid),
        (K::SelectionTooMany, C::TemplateInvalid),
        (K::MissionProviderUnknown, C::TemplateInvalid),
        (K::DeclarationNotGranted, C::TemplateInvalid),
        (K::AllowNotMapped, C::TemplateInvalid),
        (K::AllowRequired, C::TemplateInvalid),
        (K::AliasCollision, C::TemplateInvalid),
        (K::ReadGrantsWrite, C::TemplateInvalid),
        (K::OauthSelected, C::ProviderSourceUnsupported),
        (K::CatalogSelected, C::ProviderSourceUnsupported),
        (K::SnapshotMixed, C::ProviderSourceUnsupported),
        (K::ModelInReadApplication, C::TemplateInvalid),
        (K::ModelInForward, C::TemplateInvalid),
    ] {
        assert_eq!(AppError::new(kind).code(), code, "{kind:?}");
    }
}

#[test]
fn grants_of_brief() {
    let s = run(add_notes_write, |m| {
        set(m, &["effect"], Value::from("write"));
        set(m, &["missions", "empty"], parse("{}"));
        set(
            m,
            &["providers", "mission"],
            parse(r#"[{"name":"notes","config":{"allow":["notes.write","notes.read"]}}]"#),
        );
    })
    .unwrap();
    assert_eq!(s.declarations, vec!["notes".to_string()]);
    let default = s.missions.get("default").unwrap();
    assert_eq!(
        default.get("notes.read"),
        Some(&Grant {
            declaration: "notes".into(),
            upstream_tool: "read_text_file".into(),
            effect: ToolEffect::Read
        })
    );
    assert_eq!(default.get("notes.write").map(|g| g.upstream_tool.as_str()), Some("write_text_file"));
    assert_eq!(s.missions.get("empty").map(|g| g.len()), Some(0));
}

#[test]
fn forward_target_lookup_is_lenient() {
    let dir = std::env::temp_dir();
    let host = host_config(&baseline_host(), &dir);
    let manifest = manifest::parse(BRIEF_MANIFEST.as_bytes()).unwrap();
    assert!(selection::forward_target_granted(&manifest, &host, "default", "notes.read"));
    assert!(!selection::forward_target_granted(&manifest, &host, "default", "notes.write"));
    assert!(!selection::forward_target_granted(&manifest, &host, "nope", "notes.read"));
    let mut m = parse(BRIEF_MANIFEST);
    grant(&mut m, &["notes2"]);
    let manifest = manifest::parse(&crate::json::to_deterministic(&m)).unwrap();
    assert!(!selection::forward_target_granted(&manifest, &host, "default", "notes.read"));
}

/// traces.md §9.1: a snapshot declaration reaches the four `hist` aliases (or those `config.allow` keeps),
/// all `read`, is no acquired site, and carries its anchored directory.
#[test]
fn grants_of_a_snapshot() {
    let s = run(add_snap, |m| grant(m, &["snap"])).unwrap();
    assert_eq!(s.declarations, Vec::<String>::new());
    assert_eq!(s.all_declarations(), vec!["snap"]);
    assert_eq!(s.snapshots.keys().collect::<Vec<_>>(), vec!["snap"]);
    assert!(s.snapshots["snap"].ends_with("snap"), "{:?}", s.snapshots);
    let default = &s.missions["default"];
    let got: Vec<(&str, &str)> =
        default.iter().map(|(alias, g)| (alias.as_str(), g.upstream_tool.as_str())).collect();
    assert_eq!(
        got,
        [("hist.counters", "counters"), ("hist.open", "open"), ("hist.read", "read"), ("hist.runs", "runs")]
    );
    assert!(default.values().all(|g| g.effect == ToolEffect::Read && g.declaration == "snap"));
    let s = run(add_snap, |m| {
        grant(m, &["snap"]);
        set(m, &["providers", "mission"], parse(r#"[{"name":"snap","config":{"allow":["hist.runs"]}}]"#));
    })
    .unwrap();
    assert_eq!(s.missions["default"].keys().collect::<Vec<_>>(), vec!["hist.runs"]);
}
