//! pins.md §11.3 byte for byte and the pins.md §7.3 table as vectors.

use std::path::Path;

use serde_json::Value;

use super::*;
use crate::config::host::{self, installation_projection};
use crate::config::schema::testing::{parse, remove, set, to_bytes};
use crate::json::{labelled_hash, qualified, to_deterministic_string, typed_canonical};

/// The baseline host document of config.md §10, plus an env binding, a second mapping and an HTTP
/// installation so that the pins.md §7.3 rows about bindings and mappings have something to change.
const HOST: &str = r#"{
  "credentials": {"gateway": {"env": "GATEWAY_TOKEN"}, "tz": {"literal": "UTC"}, "key": {"env": "KEY"}},
  "install": {
    "notes": {
      "source": "mcp",
      "installation_revision": "fs-1.0.0",
      "transport": {"type": "stdio", "command": "mcp-server-fs", "args": ["--root", "notes"]},
      "tools": {"read_text_file": {"as": "notes.read", "effect": "read"}}
    },
    "timer": {
      "source": "mcp",
      "installation_revision": "t-1",
      "transport": {"type": "stdio", "command": "mcp-server-time", "env": {"TZ": {"binding": "tz"}}},
      "tools": {"now": {"as": "time.now", "effect": "read"}, "zone": {"as": "time.zone", "effect": "read"}}
    },
    "remote": {
      "source": "mcp",
      "installation_revision": "r1",
      "transport": {"type": "streamable_http", "endpoint": "https://mcp.example.com/mcp",
                    "headers": [{"name": "Authorization", "binding": "key", "scheme": "bearer"}]},
      "tools": {"echo": {"as": "remote.echo", "effect": "read"}}
    }
  }
}"#;

fn host_of(doc: &Value) -> HostConfig {
    host::from_bytes(&to_bytes(doc), Path::new("/srv/ptc/ptc-host.json"), "gateway").unwrap()
}

fn pin(doc: &Value, alias: &str) -> String {
    installation_pin(&host_of(doc), alias).unwrap()
}

const PIN_NOTES: &str = "sha256:26b11335d94e95f1936867f2b24ce06cee6e929cfb6e1327619dab108311c4a3";

/// pins.md §11.3: the projection's deterministic JSON, its 569-byte `TCJ`, the 612-byte hash input and the
/// pin.
#[test]
fn worked_example_notes() {
    const PROJECTION: &str = r#"{"ceilings":{"max_result_bytes":262144,"timeout_ms":5000},"source":"mcp","tools":{"read_text_file":{"as":"notes.read","effect":"read"}},"transport":{"args":["--root","notes"],"command":"mcp-server-fs","cwd":".","env":{},"inherit_environment":false,"protocol":"auto","start_timeout_ms":5000,"type":"stdio"}}"#;
    const TCJ: &str = r#"["object",[["ceilings",["object",[["max_result_bytes",["integer","262144"]],["timeout_ms",["integer","5000"]]]]],["source",["string","mcp"]],["tools",["object",[["read_text_file",["object",[["as",["string","notes.read"]],["effect",["string","read"]]]]]]]],["transport",["object",[["args",["array",[["string","--root"],["string","notes"]]]],["command",["string","mcp-server-fs"]],["cwd",["string","."]],["env",["object",[]]],["inherit_environment",["boolean",false]],["protocol",["string","auto"]],["start_timeout_ms",["integer","5000"]],["type",["string","stdio"]]]]]]]"#;
    let host = host_of(&parse(HOST));
    let projection = installation_projection(&host.install["notes"]);
    assert_eq!(to_deterministic_string(&projection), PROJECTION);
    let payload = typed_canonical(&projection);
    assert_eq!(String::from_utf8(payload.clone()).unwrap(), TCJ);
    assert_eq!(payload.len(), 569);
    // The hash input: the 35-byte label with its 0x00, then u64_be(569) = 00 00 00 00 00 00 02 39.
    let mut input = b"ptc-gateway.installation-config.v1\0".to_vec();
    input.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x02, 0x39]);
    input.extend_from_slice(&payload);
    assert_eq!(input.len(), 612);
    assert_eq!(qualified(&crate::json::sha256(&input)), PIN_NOTES);
    assert_eq!(qualified(&labelled_hash(LABEL_INSTALLATION_CONFIG, &payload)), PIN_NOTES);
    assert_eq!(installation_pin(&host, "notes").unwrap(), PIN_NOTES);
}

type Edit = Box<dyn Fn(&mut Value)>;

/// pins.md §7.3 (and the pins.md §11.3 sentences): each row is a change of the host document, the
/// installation whose pin is observed, and whether that pin changes.
#[test]
fn what_changes_the_installation_pin() {
    let rows: Vec<(&str, &str, bool, Edit)> = vec![
        (
            "installation_revision",
            "notes",
            false,
            Box::new(|d| set(d, "/install/notes/installation_revision", r#""fs-2""#)),
        ),
        (
            "cwd default written",
            "notes",
            false,
            Box::new(|d| set(d, "/install/notes/transport/cwd", r#"".""#)),
        ),
        (
            "ceilings default written",
            "notes",
            false,
            Box::new(|d| set(d, "/install/notes/ceilings", r#"{"timeout_ms": 5000}"#)),
        ),
        (
            "every default written",
            "notes",
            false,
            Box::new(|d| {
                set(d, "/install/notes/transport/inherit_environment", "false");
                set(d, "/install/notes/transport/env", "{}");
                set(d, "/install/notes/transport/start_timeout_ms", "5000");
                set(d, "/install/notes/transport/protocol", r#""auto""#);
                set(d, "/install/notes/ceilings", r#"{"timeout_ms": 5000, "max_result_bytes": 262144}"#);
            }),
        ),
        ("args default removed", "notes", true, Box::new(|d| remove(d, "/install/notes/transport/args"))),
        (
            "allow_insecure_loopback default written",
            "remote",
            false,
            Box::new(|d| {
                set(d, "/install/remote/transport/allow_insecure_loopback", "false");
            }),
        ),
        (
            "explicit scheme removed (bearer is not the default)",
            "remote",
            true,
            Box::new(|d| {
                remove(d, "/install/remote/transport/headers/0/scheme");
            }),
        ),
        (
            "args reordered",
            "notes",
            true,
            Box::new(|d| set(d, "/install/notes/transport/args", r#"["notes", "--root"]"#)),
        ),
        (
            "args changed",
            "notes",
            true,
            Box::new(|d| set(d, "/install/notes/transport/args", r#"["--root", "docs"]"#)),
        ),
        (
            "command changed",
            "notes",
            true,
            Box::new(|d| set(d, "/install/notes/transport/command", r#""./mcp-server-fs""#)),
        ),
        ("cwd changed", "notes", true, Box::new(|d| set(d, "/install/notes/transport/cwd", r#""notes""#))),
        (
            "tools mapping added",
            "notes",
            true,
            Box::new(|d| {
                set(d, "/install/notes/tools/list", r#"{"as": "notes.list", "effect": "read"}"#);
            }),
        ),
        ("tools mapping removed", "timer", true, Box::new(|d| remove(d, "/install/timer/tools/zone"))),
        (
            "as changed",
            "notes",
            true,
            Box::new(|d| set(d, "/install/notes/tools/read_text_file/as", r#""notes.cat""#)),
        ),
        (
            "effect changed",
            "notes",
            true,
            Box::new(|d| set(d, "/install/notes/tools/read_text_file/effect", r#""write""#)),
        ),
        (
            "description added",
            "notes",
            true,
            Box::new(|d| set(d, "/install/notes/tools/read_text_file/description", r#""Read.""#)),
        ),
        (
            "ceilings value changed",
            "notes",
            true,
            Box::new(|d| set(d, "/install/notes/ceilings", r#"{"timeout_ms": 5001}"#)),
        ),
        (
            "env binding renamed",
            "timer",
            true,
            Box::new(|d| {
                set(d, "/credentials/zone", r#"{"literal": "UTC"}"#);
                set(d, "/install/timer/transport/env/TZ/binding", r#""zone""#);
            }),
        ),
        (
            "headers binding renamed",
            "remote",
            true,
            Box::new(|d| {
                set(d, "/credentials/token", r#"{"env": "KEY"}"#);
                set(d, "/install/remote/transport/headers/0/binding", r#""token""#);
            }),
        ),
        (
            "credential source changed",
            "timer",
            false,
            Box::new(|d| set(d, "/credentials/tz", r#"{"file": "a.key"}"#)),
        ),
        ("secret rotated", "timer", false, Box::new(|d| set(d, "/credentials/tz", r#"{"literal": "CET"}"#))),
        (
            "another installation changed",
            "notes",
            false,
            Box::new(|d| set(d, "/install/timer/transport/args", r#"["-v"]"#)),
        ),
    ];
    let base = parse(HOST);
    for (row, alias, changes, edit) in rows {
        let mut doc = base.clone();
        edit(&mut doc);
        assert_eq!(pin(&doc, alias) != pin(&base, alias), changes, "{row}");
    }
}

/// pins.md §7.3: members reordered in the source text give the same pin; renaming the installation keeps its
/// pin and changes only the map's key.
#[test]
fn order_and_alias_do_not_matter() {
    let reordered = HOST.replace(
        r#""source": "mcp",
      "installation_revision": "fs-1.0.0",
      "transport": {"type": "stdio", "command": "mcp-server-fs", "args": ["--root", "notes"]},"#,
        r#""transport": {"args": ["--root", "notes"], "command": "mcp-server-fs", "type": "stdio"},
      "installation_revision": "fs-1.0.0",
      "source": "mcp","#,
    );
    assert_ne!(reordered, HOST);
    assert_eq!(pin(&parse(&reordered), "notes"), PIN_NOTES);
    let mut moved = parse(HOST);
    let notes = moved.pointer("/install/notes").unwrap().clone();
    remove(&mut moved, "/install/notes");
    crate::config::schema::testing::set_value(&mut moved, "/install/files", notes);
    assert_eq!(pin(&moved, "files"), PIN_NOTES);
    let map = expected_installation_map(["files"], &host_of(&moved)).unwrap();
    assert_eq!(map, PinMap::from([("files".to_owned(), PIN_NOTES.to_owned())]));
}

/// pins.md §7.2: one member per distinct alias of both lists; `{}` for a tool that selects nothing; an alias
/// the host does not define is refused (stage 5 rules it out first).
#[test]
fn expected_map() {
    let host = host_of(&parse(HOST));
    let manifest = |providers: &str| {
        let mut doc = parse(
            r#"{"version": 1, "effect": "read",
                "contracts": {"input_schema": {"path": "s.json"}, "result_schema": {"path": "s.json"}},
                "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"}}"#,
        );
        if !providers.is_empty() {
            set(&mut doc, "/providers", providers);
        }
        crate::config::manifest::parse(&to_bytes(&doc)).unwrap()
    };
    let none = manifest("");
    assert_eq!(expected_installation_map(selected_aliases(&none), &host).unwrap(), PinMap::new());
    let both = manifest(
        r#"{"mission": [{"name": "notes"}, {"name": "timer", "config": {"allow": ["time.now"]}}],
            "workflow": [{"name": "notes"}, {"name": "remote"}]}"#,
    );
    assert_eq!(selected_aliases(&both).into_iter().collect::<Vec<_>>(), ["notes", "remote", "timer"]);
    let map = expected_installation_map(selected_aliases(&both), &host).unwrap();
    let want: PinMap = ["notes", "remote", "timer"]
        .into_iter()
        .map(|a| (a.to_owned(), installation_pin(&host, a).unwrap()))
        .collect();
    assert_eq!(map, want);
    assert_eq!(map["notes"], PIN_NOTES);
    assert_eq!(expected_installation_map(["nope"], &host), Err(PinError::UnknownInstallation));
    assert_eq!(
        crate::explain::Explain::code(&PinError::UnknownInstallation),
        crate::codes::StartupCode::InternalError
    );
}
