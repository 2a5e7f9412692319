//! config.md §11: the rows that concern stage 5 (63–90, 120–122 and neighbours), run through
//! `template::build_all` over the baseline of config.md §10 written to a temporary directory.

use std::os::unix::fs::symlink;

use super::*;
use crate::apps::template::{build_all, load_manifest, Built};
use crate::apps::{closure, content_pin};
use crate::codes::StartupCode;
use crate::config::gateway::ToolConfig;
use crate::config::paths;
use crate::config::Mode;

const NOTES_INSTALLATION_PIN: &str =
    "sha256:26b11335d94e95f1936867f2b24ce06cee6e929cfb6e1327619dab108311c4a3";

/// The baseline deployment, and the edits rows make to it.
pub(super) struct Deployment {
    pub f: Fixture,
    pub host: Value,
    pub tools: Vec<ToolConfig>,
    /// Recompute every content pin before building ("pin updated" in config.md §11).
    pub update_pins: bool,
}

impl Deployment {
    pub fn baseline() -> Deployment {
        let f = Fixture::new("rows");
        write_echo(&f);
        write_brief(&f);
        let mut brief = tool("brief", f.path("brief/ptc.json"), BRIEF_PIN);
        brief.installation_config_pins =
            Some([("notes".to_string(), NOTES_INSTALLATION_PIN.to_string())].into());
        let echo = tool("echo", f.path("echo/ptc.json"), ECHO_PIN);
        Deployment { f, host: baseline_host(), tools: vec![brief, echo], update_pins: false }
    }

    pub fn manifest(&self, app: &str) -> Value {
        parse(&std::fs::read_to_string(self.f.path(&format!("{app}/ptc.json"))).unwrap())
    }

    pub fn edit_manifest(&self, app: &str, edit: impl FnOnce(&mut Value)) {
        let mut m = self.manifest(app);
        edit(&mut m);
        self.f.write_json(&format!("{app}/ptc.json"), &m);
    }

    pub fn tool_mut(&mut self, name: &str) -> &mut ToolConfig {
        self.tools.iter_mut().find(|t| t.name == name).unwrap()
    }

    /// The content pin of the application at `manifest`, when it can be computed.
    pub fn current_pin(manifest: &std::path::Path) -> Option<String> {
        let m = load_manifest(manifest).ok()?;
        let c = closure::read(&paths::document_dir(manifest), &m).ok()?;
        content_pin::digest(&m, &c).ok()
    }

    pub fn build(&mut self, mode: Mode) -> Result<Built, StartupCode> {
        if self.update_pins {
            for t in &mut self.tools {
                if let Some(pin) = Self::current_pin(&t.manifest) {
                    t.expected_application_content_digest = Some(pin);
                }
            }
        }
        let host = host_config(&self.host, &self.f.dir);
        build_all(&self.tools, &host, mode).map_err(|e| e.code())
    }

    /// The worst-case `tools/list` response size of the current deployment.
    pub fn worst_case(&mut self) -> usize {
        let built = self.build(Mode::Discovery).unwrap();
        built.catalog.result_json().len() + crate::apps::catalog::WORST_CASE_ENVELOPE_BYTES
    }
}

pub(super) fn change_echo_source(d: &mut Deployment) {
    d.f.write("echo/app.luau", ECHO_APP.replace("return input", "return  input"));
}

pub(super) fn set_echo_input(d: &mut Deployment, schema: &str) {
    d.f.write("echo/input.json", schema);
    d.edit_manifest("echo", |m| set(m, &["contracts", "input_schema", "path"], Value::from("input.json")));
}

pub(super) fn add_notes_write(d: &mut Deployment) {
    set(
        &mut d.host,
        &["install", "notes", "tools", "write_text_file"],
        parse(r#"{"as":"notes.write","effect":"write"}"#),
    );
}

pub(super) fn add_model(d: &mut Deployment) {
    set(&mut d.host, &["credentials", "key"], parse(r#"{"env":"MODEL_KEY"}"#));
    set(
        &mut d.host,
        &["install", "model"],
        parse(
            r#"{"source":"llm","installation_revision":"m-1","endpoint":"https://api.example.com/v1","model":"small","credential":"key"}"#,
        ),
    );
}

pub(super) fn add_remote(d: &mut Deployment, alias: &str, oauth: bool) {
    let mut remote = parse(
        r#"{"source":"mcp","installation_revision":"r-1","transport":{"type":"streamable_http","endpoint":"https://mcp.example.com/mcp"},"tools":{"echo":{"as":"remote.echo","effect":"read"}}}"#,
    );
    set(&mut remote, &["tools", "echo", "as"], Value::from(alias));
    if oauth {
        set(&mut remote, &["transport", "oauth"], parse("{}"));
    }
    set(&mut d.host, &["install", "remote"], remote);
}

pub(super) fn brief_grants(d: &Deployment, names: &[&str]) {
    d.edit_manifest("brief", |m| {
        let list: Vec<Value> = names.iter().map(|n| parse(&format!(r#"{{"name":"{n}"}}"#))).collect();
        set(m, &["providers", "mission"], Value::Array(list));
        set(
            m,
            &["missions", "default", "providers"],
            Value::Array(names.iter().map(|n| Value::from(*n)).collect()),
        );
    });
}

pub(super) fn row_88(d: &mut Deployment) {
    d.edit_manifest("echo", |m| set(m, &["effect"], Value::from("write")));
}

/// The x-mcp-header of row 77 on `brief`'s input.
pub(super) fn row_77(d: &mut Deployment) {
    d.f.write(
        "brief/input.schema.json",
        r#"{"type":"object","properties":{"filter":{"type":"object","x-mcp-header":"Filter"}}}"#,
    );
}

pub(super) type Edit = fn(&mut Deployment);
/// (row, edit, pins updated, mode, expected).
pub(super) type Row = (&'static str, Edit, bool, Mode, Result<(), StartupCode>);
const SERVE: Mode = Mode::Serve;
const DISCOVERY: Mode = Mode::Discovery;

#[test]
fn config_rows() {
    use StartupCode as C;
    let starts = Ok(());
    // (row, edit, pins updated, mode, expected).
    let table: Vec<Row> = vec![
        ("baseline", |_| {}, false, SERVE, starts),
        ("baseline, D", |_| {}, false, DISCOVERY, starts),
        (
            "55",
            |d| {
                add_remote(d, "notes.read", false);
                brief_grants(d, &["notes", "remote"]);
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        ("57", |d| add_remote(d, "remote.echo", true), false, SERVE, starts),
        (
            "63",
            |d| std::fs::remove_file(d.f.path("echo/ptc.json")).unwrap(),
            false,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "63, not a file",
            |d| {
                std::fs::remove_file(d.f.path("echo/ptc.json")).unwrap();
                std::fs::create_dir(d.f.path("echo/ptc.json")).unwrap();
            },
            false,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "63, invalid manifest",
            |d| d.f.write("echo/ptc.json", "{\"version\":2}"),
            false,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "64",
            |d| d.edit_manifest("echo", |m| set(m, &["events", "policy"], Value::from("private"))),
            false,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "64, before the closure",
            |d| {
                d.edit_manifest("echo", |m| set(m, &["events", "policy"], Value::from("private")));
                std::fs::remove_file(d.f.path("echo/app.luau")).unwrap();
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        ("65", change_echo_source, false, SERVE, Err(C::ApplicationContentDigestMismatch)),
        (
            "66",
            |d| {
                change_echo_source(d);
                d.tool_mut("brief").installation_config_pins =
                    Some([("notes".to_string(), ECHO_PIN.to_string())].into());
            },
            false,
            SERVE,
            Err(C::ApplicationContentDigestMismatch),
        ),
        ("67", change_echo_source, false, DISCOVERY, starts),
        (
            "68",
            |d| {
                d.edit_manifest("echo", |m| {
                    set(m, &["workflow", "components"], parse(r#"[{"id":"app","path":"../app.luau"}]"#))
                })
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "69",
            |d| {
                d.f.write("echo/copy.luau", ECHO_APP);
                std::fs::remove_file(d.f.path("echo/app.luau")).unwrap();
                symlink("copy.luau", d.f.path("echo/app.luau")).unwrap();
            },
            false,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        ("70", |d| d.f.write("echo/app.luau", "local M = {\n"), true, SERVE, Err(C::TemplateInvalid)),
        (
            "71",
            |d| d.edit_manifest("echo", |m| set(m, &["workflow", "entry"], Value::from("app.missing"))),
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "72",
            |d| {
                d.edit_manifest("echo", |m| {
                    set(
                        m,
                        &["workflow", "components"],
                        parse(r#"[{"id":"app","path":"app.luau","dependencies":["app"]}]"#),
                    )
                })
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        ("73", |d| set_echo_input(d, r#"{"type": "array"}"#), true, SERVE, Err(C::TemplateInvalid)),
        (
            "74",
            |d| set_echo_input(d, r#"{"type":"object","$ref":"other.json"}"#),
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "75",
            |d| {
                set_echo_input(
                    d,
                    &format!(r#"{{"type":"object","description":"{}"}}"#, "a".repeat(65_536 - 62)),
                )
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "76",
            |d| {
                set_echo_input(
                    d,
                    &format!(r#"{{"type":"object","description":"{}"}}"#, "a".repeat(65_536 - 63)),
                )
            },
            true,
            SERVE,
            starts,
        ),
        ("77", row_77, true, SERVE, Err(C::TemplateInvalid)),
        (
            "78",
            |d| {
                row_77(d);
                let pin = Deployment::current_pin(&d.f.path("brief/ptc.json")).unwrap();
                d.tool_mut("brief").expected_application_content_digest = Some(pin);
                change_echo_source(d);
            },
            false,
            SERVE,
            Err(C::ApplicationContentDigestMismatch),
        ),
        ("80", |d| brief_grants(d, &["notes2"]), true, SERVE, Err(C::TemplateInvalid)),
        ("81", add_notes_write, false, SERVE, Err(C::TemplateInvalid)),
        (
            "82",
            |d| {
                add_notes_write(d);
                d.edit_manifest("brief", |m| {
                    set(
                        m,
                        &["providers", "mission"],
                        parse(r#"[{"name":"notes","config":{"allow":["notes.read"]}}]"#),
                    )
                });
            },
            true,
            SERVE,
            starts,
        ),
        (
            "83",
            |d| {
                add_notes_write(d);
                d.edit_manifest("brief", |m| {
                    set(
                        m,
                        &["providers", "mission"],
                        parse(r#"[{"name":"notes","config":{"allow":["notes.write"]}}]"#),
                    )
                });
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "84",
            |d| d.edit_manifest("brief", |m| set(m, &["limits", "run_duration_ms"], Value::from(30_001))),
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "84, at the host value",
            |d| d.edit_manifest("brief", |m| set(m, &["limits", "run_duration_ms"], Value::from(30_000))),
            true,
            SERVE,
            starts,
        ),
        (
            "85",
            |d| {
                add_remote(d, "remote.echo", true);
                brief_grants(d, &["notes", "remote"]);
            },
            true,
            SERVE,
            Err(C::ProviderSourceUnsupported),
        ),
        (
            "86",
            |d| {
                add_remote(d, "remote.echo", true);
                brief_grants(d, &["notes", "remote"]);
            },
            true,
            DISCOVERY,
            Err(C::ProviderSourceUnsupported),
        ),
        (
            "87",
            |d| {
                add_model(d);
                d.edit_manifest("brief", |m| {
                    set(m, &["providers", "workflow"], parse(r#"[{"name":"model"}]"#))
                });
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        ("88", row_88, true, SERVE, Err(C::WriteForbidden)),
        ("88, D", row_88, true, DISCOVERY, Err(C::WriteForbidden)),
        (
            "89",
            |d| {
                row_88(d);
                d.tool_mut("echo").allow_write = true;
            },
            true,
            SERVE,
            starts,
        ),
        ("90", row_88, false, SERVE, Err(C::ApplicationContentDigestMismatch)),
        (
            "120",
            |d| {
                d.edit_manifest("brief", |m| {
                    set(m, &["providers", "workflow"], parse(r#"[{"name":"notes"}]"#))
                })
            },
            true,
            SERVE,
            Err(C::ProviderSourceUnsupported),
        ),
        (
            "121",
            |d| {
                add_model(d);
                brief_grants(d, &["notes", "model"]);
            },
            true,
            SERVE,
            Err(C::ProviderSourceUnsupported),
        ),
        (
            "122",
            |d| {
                add_model(d);
                brief_grants(d, &["notes", "nomodel"]);
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "130",
            |d| {
                set(
                    &mut d.host,
                    &["install", "replay"],
                    parse(r#"{"source":"llm_replay","model":7,"anything":{"x":true}}"#),
                );
                brief_grants(d, &["notes", "replay"]);
            },
            true,
            SERVE,
            Err(C::ProviderSourceUnsupported),
        ),
        (
            "forward form",
            |d| {
                d.edit_manifest("brief", |m| {
                    set(m, &["workflow"], parse(r#"{"forward":{"mission":"default","tool":"notes.read"}}"#));
                    set(m, &["missions", "default", "components"], parse("[]"));
                })
            },
            true,
            SERVE,
            starts,
        ),
        (
            "forward to an unknown mission",
            |d| {
                d.edit_manifest("brief", |m| {
                    set(m, &["workflow"], parse(r#"{"forward":{"mission":"other","tool":"notes.read"}}"#))
                })
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
        (
            "forward to an ungranted alias",
            |d| {
                d.edit_manifest("brief", |m| {
                    set(m, &["workflow"], parse(r#"{"forward":{"mission":"default","tool":"notes.other"}}"#))
                })
            },
            true,
            SERVE,
            Err(C::TemplateInvalid),
        ),
    ];
    for (row, edit, update_pins, mode, want) in table {
        let mut d = Deployment::baseline();
        d.update_pins = update_pins;
        edit(&mut d);
        let got = d.build(mode).map(|_| ());
        assert_eq!(got, want, "row {row}");
    }
}

/// Row 67: discovery prints the new pin of the changed application; the baseline's pins are those of
/// pins.md §11.
#[test]
fn discovery_reports_the_computed_pins() {
    let mut d = Deployment::baseline();
    let built = d.build(Mode::Serve).unwrap();
    let pins: Vec<(&str, &str)> =
        built.templates.iter().map(|t| (t.name.as_str(), t.content_pin.as_str())).collect();
    assert_eq!(pins, vec![("brief", BRIEF_PIN), ("echo", ECHO_PIN)]);
    change_echo_source(&mut d);
    let fresh = Deployment::current_pin(&d.f.path("echo/ptc.json")).unwrap();
    assert_ne!(fresh, ECHO_PIN);
    let built = d.build(Mode::Discovery).unwrap();
    assert_eq!(built.templates[1].content_pin, fresh);
}

#[test]
fn built_templates_carry_what_execution_needs() {
    let mut d = Deployment::baseline();
    d.f.write(
        "brief/input.schema.json",
        r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#,
    );
    d.update_pins = true;
    let built = d.build(Mode::Serve).unwrap();
    let brief = &built.templates[0];
    assert_eq!(brief.header_params.len(), 1);
    assert_eq!(brief.run_duration_ms, 30_000);
    assert_eq!(brief.memory_bytes, 16_777_216);
    assert_eq!(brief.selections.declarations, vec!["notes".to_string()]);
    assert!(brief.selections.missions["default"].contains_key("notes.read"));
    assert!(brief.luau.missions["default"].component("files").is_some());
    assert_eq!(
        brief.result.encoded(),
        r#"{"additionalProperties":false,"properties":{"value":{"type":"string"}},"required":["value"],"type":"object"}"#
    );
    assert!(built.catalog.tools_json().contains(r#""x-mcp-header":"Region""#));
    assert!(matches!(built.templates[1].run, crate::apps::Run::Luau));
}

/// Rows 79 and its neighbour: the worst-case listing of 4,194,305 bytes is `catalog_too_large`; one byte
/// less starts. Copies of `echo` with a large schema fill the listing; `filler` takes the remainder.
#[test]
fn row_79_catalog_bound() {
    const TARGET: usize = 4_194_304;
    let mut d = Deployment::baseline();
    d.update_pins = true;
    d.f.write("echo/schema.json", format!(r#"{{"type":"object","description":"{}"}}"#, "e".repeat(65_000)));
    d.f.write(
        "filler/ptc.json",
        r#"{"version":1,"effect":"read","contracts":{"input_schema":{"path":"in.json"},"result_schema":{"path":"out.json"}},"workflow":{"components":[{"id":"app","path":"app.luau"}],"entry":"app.run"}}"#,
    );
    d.f.write("filler/app.luau", ECHO_APP);
    let filler = |d: &mut Deployment, a: usize, b: usize| {
        d.f.write("filler/in.json", format!(r#"{{"type":"object","description":"{}"}}"#, "i".repeat(a)));
        d.f.write("filler/out.json", format!(r#"{{"type":"object","description":"{}"}}"#, "o".repeat(b)));
    };
    filler(&mut d, 0, 0);
    d.tools.push(tool("filler", d.f.path("filler/ptc.json"), ECHO_PIN));
    let base = d.worst_case();
    d.tools.push(tool("echo_c00", d.f.path("echo/ptc.json"), ECHO_PIN));
    let per_copy = d.worst_case() - base;
    d.tools.pop();
    let copies = (TARGET - base) / per_copy;
    for i in 0..copies {
        d.tools.push(tool(&format!("echo_c{i:02}"), d.f.path("echo/ptc.json"), ECHO_PIN));
    }
    let remainder = TARGET - d.worst_case();
    let a = remainder.min(65_000);
    filler(&mut d, a, remainder - a);
    assert_eq!(d.worst_case(), TARGET);
    assert!(d.build(Mode::Serve).is_ok());
    filler(&mut d, a, remainder - a + 1);
    assert_eq!(d.build(Mode::Serve).map(|_| ()), Err(StartupCode::CatalogTooLarge));
}
