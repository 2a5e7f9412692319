//! pins.md §11.4's identity and pin built from its facts, and the pins.md §8.7 table as vectors.

use super::*;
use crate::config::host::ToolEffect;
use crate::config::schema::testing::{parse, push, remove, set};
use crate::json::{sha256_qualified, to_deterministic_string};

/// The 30 bytes `mcp-server-fs` resolves to in pins.md §11.4.
const EXECUTABLE: &[u8] = b"\x7fELF-example-executable-bytes\n";

/// The facts document providers.md §7.4 records for the pins.md §11.4 upstream (`Facts::to_value`): only the
/// mapped `read_text_file`, the server information reduced to `name`, `title`, `version`; `title` and
/// `outputSchema` absent, so `null`.
fn facts() -> Value {
    let mut facts = parse(
        r#"{"transport": "stdio", "era": "modern", "protocol_version": "2026-07-28",
            "server_info": {"name": "mcp-server-fs", "title": "Filesystem", "version": "1.0.0"},
            "tools": [{"name": "read_text_file", "as": "notes.read", "effect": "read", "title": null,
                       "description": "Read a UTF-8 text file below the root.",
                       "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                                        "required": ["path"]},
                       "output_schema": null, "annotations": {"readOnlyHint": true}}]}"#,
    );
    set(&mut facts, "/executable_digest", &format!("{:?}", sha256_qualified(EXECUTABLE)));
    facts
}

fn granted(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

const PIN: &str = "sha256:2e57eab140487245bd69921ef9fc2676b30842b49eb0ffdbbb1c306fe1d0b24c";

/// pins.md §11.4 from the facts: the identity's deterministic JSON and the pin. The field hashes, the
/// 796-byte `TCJ` and the 837-byte hash input of the same example are `json::canonical_tests::snapshot_pin_11_4`.
#[test]
fn worked_example_mission_notes() {
    const IDENTITY: &str = r#"{"era":"modern","executable_sha256":"sha256:0f7faba14cdad6a1f2c0e85553b7edd0de79bf1f367df2904a06fe80f4a380d7","protocol_version":"2026-07-28","server_identity_sha256":"sha256:38e0f86fdcd4310715372b3a065a7c21a16f77f42ecc90cb67f64a7b7bd69704","source":"mcp","tools":[{"annotations_sha256":"sha256:705db0cd01003f925e6b676f19451c230e423f22b08db70f6927898b6f5d82dc","description_sha256":"sha256:1abf526f70c5d0b1cc9ef24fe999e591984c1b9a89f99fc55ec1416df3ac0a08","input_schema_sha256":"sha256:0f7e50b46d183ca32d23015b38cbc438d8468f6b1beb9c5fae8004131740b346","name":"read_text_file","output_schema_sha256":null}],"transport":"stdio"}"#;
    let identity = identity(&facts(), &granted(&["read_text_file"])).unwrap();
    assert_eq!(to_deterministic_string(&identity), IDENTITY);
    assert_eq!(snapshot_pin(&identity), PIN);
    assert_eq!(site_key("notes"), "mission/notes");
}

/// A second mapped tool, so that the pins.md §8.7 rows about ungranted tools and `config.allow` have one.
fn with_write_tool(facts: &mut Value) {
    push(
        facts,
        "/tools",
        r#"{"name": "write_text_file", "as": "notes.write", "effect": "write", "title": null,
            "description": "Write a file.", "input_schema": {"type": "object"},
            "output_schema": null, "annotations": null}"#,
    );
}

type Edit = Box<dyn Fn(&mut Value)>;

/// Removes `tools[i]` from a facts document.
fn drop_tool(facts: &mut Value, i: usize) {
    let mut tools = facts.get("tools").and_then(Value::as_array).unwrap().to_vec();
    tools.remove(i);
    crate::config::schema::testing::set_value(facts, "/tools", Value::Array(tools));
}

/// pins.md §8.7: each row is a change of the facts (or of the granted set), and whether the pin of
/// `mission/notes` changes. The base grants `read_text_file` out of two mapped tools.
#[test]
fn what_changes_the_snapshot_pin() {
    let read = ["read_text_file"];
    let both = ["read_text_file", "write_text_file"];
    let rows: Vec<(&str, &[&str], bool, Edit)> = vec![
        ("granted description", &read, true, Box::new(|f| set(f, "/tools/0/description", r#""Read.""#))),
        ("granted description removed", &read, true, Box::new(|f| set(f, "/tools/0/description", "null"))),
        ("granted inputSchema", &read, true, Box::new(|f| set(f, "/tools/0/input_schema/required", "[]"))),
        (
            "inputSchema member order",
            &read,
            false,
            Box::new(|f| {
                set(
                    f,
                    "/tools/0/input_schema",
                    r#"{"required": ["path"], "type": "object",
                "properties": {"path": {"type": "string"}}}"#,
                );
            }),
        ),
        (
            "granted outputSchema added",
            &read,
            true,
            Box::new(|f| set(f, "/tools/0/output_schema", r#"{"type": "object"}"#)),
        ),
        (
            "granted annotations",
            &read,
            true,
            Box::new(|f| set(f, "/tools/0/annotations/readOnlyHint", "false")),
        ),
        ("granted annotations removed", &read, true, Box::new(|f| set(f, "/tools/0/annotations", "null"))),
        ("server name", &read, true, Box::new(|f| set(f, "/server_info/name", r#""fs""#))),
        ("server version", &read, true, Box::new(|f| set(f, "/server_info/version", r#""1.0.1""#))),
        ("server information absent", &read, true, Box::new(|f| set(f, "/server_info", "null"))),
        ("era", &read, true, Box::new(|f| set(f, "/era", r#""legacy""#))),
        ("protocol version", &read, true, Box::new(|f| set(f, "/protocol_version", r#""2025-11-25""#))),
        (
            "executable",
            &read,
            true,
            Box::new(|f| {
                set(f, "/executable_digest", &format!("{:?}", sha256_qualified(b"other bytes")));
            }),
        ),
        ("config.allow widened", &both, true, Box::new(|_| {})),
        ("ungranted tool changed", &read, false, Box::new(|f| set(f, "/tools/1/description", r#""Write!""#))),
        (
            "ungranted tool's schema changed",
            &read,
            false,
            Box::new(|f| set(f, "/tools/1/input_schema/x", "1")),
        ),
        ("ungranted tool removed", &read, false, Box::new(|f| drop_tool(f, 1))),
        ("server title", &read, false, Box::new(|f| set(f, "/server_info/title", r#""Files""#))),
        ("tool title", &read, false, Box::new(|f| set(f, "/tools/0/title", r#""Read""#))),
        (
            "operator as and effect",
            &read,
            false,
            Box::new(|f| {
                set(f, "/tools/0/as", r#""notes.cat""#);
                set(f, "/tools/0/effect", r#""write""#);
            }),
        ),
        (
            "listing order",
            &read,
            false,
            Box::new(|f| {
                let tools = f.get("tools").and_then(Value::as_array).unwrap().iter().rev().cloned().collect();
                crate::config::schema::testing::set_value(f, "/tools", Value::Array(tools));
            }),
        ),
    ];
    let mut base = facts();
    with_write_tool(&mut base);
    let base_pin = snapshot_pin(&identity(&base, &granted(&read)).unwrap());
    assert_eq!(base_pin, PIN, "an ungranted mapped tool does not enter the identity");
    for (row, grant, changes, edit) in rows {
        let mut changed = base.clone();
        edit(&mut changed);
        let pin = snapshot_pin(&identity(&changed, &granted(grant)).unwrap());
        assert_eq!(pin != base_pin, changes, "{row}");
    }
}

/// pins.md §8.2, §8.5, §9.3 step 3: facts that cannot yield an identity, each with its error and startup
/// code.
#[test]
fn facts_without_an_identity() {
    use crate::codes::StartupCode::ProviderPinUnavailable;
    let read = ["read_text_file"];
    let rows: Vec<(&str, &[&str], PinError, Edit)> = vec![
        ("granted tool missing", &read, PinError::GrantedToolMissing, Box::new(|f| drop_tool(f, 0))),
        ("granted name unknown", &["nope"], PinError::GrantedToolMissing, Box::new(|_| {})),
        (
            "a name twice",
            &read,
            PinError::FactsMalformed,
            Box::new(|f| {
                let tool = crate::json::to_deterministic_string(
                    &f.get("tools").and_then(Value::as_array).unwrap()[0],
                );
                push(f, "/tools", &tool);
            }),
        ),
        (
            "no input schema",
            &read,
            PinError::FactsMalformed,
            Box::new(|f| set(f, "/tools/0/input_schema", "null")),
        ),
        ("tool without name", &read, PinError::FactsMalformed, Box::new(|f| remove(f, "/tools/0/name"))),
        ("no tools", &read, PinError::FactsMalformed, Box::new(|f| remove(f, "/tools"))),
        ("unknown era", &read, PinError::FactsMalformed, Box::new(|f| set(f, "/era", r#""future""#))),
        ("unknown transport", &read, PinError::FactsMalformed, Box::new(|f| set(f, "/transport", r#""ws""#))),
        (
            "no protocol version",
            &read,
            PinError::FactsMalformed,
            Box::new(|f| remove(f, "/protocol_version")),
        ),
        (
            "server info not an object",
            &read,
            PinError::FactsMalformed,
            Box::new(|f| set(f, "/server_info", "[]")),
        ),
        (
            "stdio without digest",
            &read,
            PinError::ExecutableDigestMissing,
            Box::new(|f| set(f, "/executable_digest", "null")),
        ),
        (
            "digest not qualified",
            &read,
            PinError::ExecutableDigestMissing,
            Box::new(|f| {
                set(f, "/executable_digest", &format!("{:?}", "sha256:ABC"));
            }),
        ),
        (
            "HTTP with a digest",
            &read,
            PinError::FactsMalformed,
            Box::new(|f| set(f, "/transport", r#""streamable_http""#)),
        ),
        ("not an object", &read, PinError::FactsMalformed, Box::new(|f| *f = Value::Array(Vec::new()))),
    ];
    for (row, grant, error, edit) in rows {
        let mut changed = facts();
        edit(&mut changed);
        assert_eq!(identity(&changed, &granted(grant)), Err(error), "{row}");
        assert_eq!(crate::explain::Explain::code(&error), ProviderPinUnavailable, "{row}");
    }
}

/// pins.md §8.2: an HTTP site has `executable_sha256: null`; a member of the server information that is
/// absent or not a string is `null` inside the hashed object.
#[test]
fn http_site_and_partial_server_information() {
    let mut f = facts();
    set(&mut f, "/transport", r#""streamable_http""#);
    set(&mut f, "/executable_digest", "null");
    set(&mut f, "/server_info", r#"{"name": "fs", "version": 7}"#);
    let identity = identity(&f, &granted(&["read_text_file"])).unwrap();
    assert_eq!(identity.get("executable_sha256"), Some(&Value::Null));
    assert_eq!(identity.get("transport").and_then(Value::as_str), Some("streamable_http"));
    let want = field_hash(&parse(r#"{"name": "fs", "version": null}"#));
    assert_eq!(identity.get("server_identity_sha256").and_then(Value::as_str), Some(want.as_str()));
    // No granted tool at all: `tools` is `[]`.
    let empty = super::identity(&f, &BTreeSet::new()).unwrap();
    assert_eq!(empty.get("tools"), Some(&Value::Array(Vec::new())));
}

/// pins.md §8.4: the granted names are the mapped upstream names whose alias `config.allow` lists, or all of
/// them.
#[test]
fn granted_names_from_allow() {
    let mapping =
        |alias: &str| ToolMapping { alias: alias.to_owned(), effect: ToolEffect::Read, description: None };
    let tools = BTreeMap::from([
        ("read_text_file".to_owned(), mapping("notes.read")),
        ("write_text_file".to_owned(), mapping("notes.write")),
    ]);
    let allow = |aliases: &[&str]| aliases.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let rows: [(Option<Vec<String>>, &[&str]); 4] = [
        (None, &["read_text_file", "write_text_file"]),
        (Some(allow(&["notes.read"])), &["read_text_file"]),
        (Some(allow(&["notes.write", "notes.read"])), &["read_text_file", "write_text_file"]),
        (Some(allow(&["other.alias"])), &[]),
    ];
    for (allow, want) in rows {
        assert_eq!(granted_upstream_names(allow.as_deref(), &tools), granted(want), "{allow:?}");
    }
}

/// The facts the stdio layer really records (`Listing::mapped_facts`, `Facts::to_value`) for the
/// pins.md §11.4 `tools/list` page give the pins.md §11.4 pin: this module reads exactly what
/// providers.md §7.4 writes.
#[test]
fn facts_from_the_stdio_layer() {
    use crate::providers::acquire::{Facts, TransportKind};
    use crate::providers::framing::parse_message;
    use crate::providers::listing::{Era, Listing};
    let page = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[
      {"name":"write_text_file","description":"Write a file.","inputSchema":{"type":"object"}},
      {"name":"read_text_file","description":"Read a UTF-8 text file below the root.",
       "inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},
       "annotations":{"readOnlyHint":true}}]}}"#
        .replace('\n', "");
    let mut listing = Listing::default();
    listing.sending(None);
    assert_eq!(listing.accept(parse_message(page.as_bytes()).unwrap()), Ok(None));
    let mapping = ToolMapping { alias: "notes.read".into(), effect: ToolEffect::Read, description: None };
    let tools = BTreeMap::from([("read_text_file".to_owned(), mapping)]);
    let facts = Facts {
        transport: TransportKind::Stdio,
        era: Era::Modern,
        protocol_version: "2026-07-28".into(),
        server_info: parse(r#"{"name":"mcp-server-fs","title":"Filesystem","version":"1.0.0"}"#),
        executable_digest: Some(sha256_qualified(EXECUTABLE)),
        tools: listing.mapped_facts(&tools).unwrap(),
    };
    let granted = granted_upstream_names(None, &tools);
    assert_eq!(snapshot_pin(&identity(&facts.to_value(), &granted).unwrap()), PIN);
}
