//! Tests of the manifest: the structure of config.md §6.2 on the manifests of pins.md §11.1 and §11.2.

use super::*;
use crate::config::schema::testing::{parse as decode, remove, set, to_bytes};

/// `echo/ptc.json` of pins.md §11.1.
const ECHO: &str = r#"{
  "version": 1,
  "effect": "read",
  "contracts": {
    "input_schema": {"path": "schema.json"},
    "result_schema": {"path": "schema.json"}
  },
  "workflow": {
    "components": [{"id": "app", "path": "app.luau"}],
    "entry": "app.run"
  }
}"#;

/// `brief/ptc.json` of pins.md §11.2.
const BRIEF: &str = r#"{
  "version": 1,
  "effect": "read",
  "contracts": {
    "input_schema": {"path": "input.schema.json"},
    "result_schema": {"path": "result.schema.json"}
  },
  "workflow": {
    "components": [{"id": "app", "path": "app.luau"}],
    "entry": "app.run"
  },
  "missions": {
    "default": {
      "components": [{"id": "files", "path": "files.luau"}],
      "providers": ["notes"]
    }
  },
  "providers": {"mission": [{"name": "notes"}]}
}"#;

fn run(base: &str, edit: &dyn Fn(&mut Value)) -> Result<Manifest, Problem> {
    let mut doc = decode(base);
    edit(&mut doc);
    super::parse(&to_bytes(&doc))
}

/// Every refusal of a manifest is `template_invalid` (config.md §2.8): `parse` returns the problem, and
/// its caller, which knows the file, gives it that code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Refused;

type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn structure_vectors() {
    let invalid = Err(Refused);
    let forward = r#"{"forward": {"mission": "default", "tool": "notes.read"}}"#;
    let table: Vec<(&str, &str, Result<(), Refused>, Edit)> = vec![
        ("echo", ECHO, Ok(()), Box::new(|_| {})),
        ("brief", BRIEF, Ok(()), Box::new(|_| {})),
        (
            "$schema",
            ECHO,
            Ok(()),
            Box::new(|d| {
                set(d, "/$schema", r#""https://ptc-gateway.dev/schemas/ptc-application.schema.json""#)
            }),
        ),
        ("other $schema", ECHO, invalid, Box::new(|d| set(d, "/$schema", r#""https://example.com/s.json""#))),
        ("version 2", ECHO, invalid, Box::new(|d| set(d, "/version", "2"))),
        ("version 1.0", ECHO, invalid, Box::new(|d| set(d, "/version", "1.0"))),
        ("effect", ECHO, invalid, Box::new(|d| set(d, "/effect", r#""none""#))),
        ("row 88 effect write", ECHO, Ok(()), Box::new(|d| set(d, "/effect", r#""write""#))),
        ("unknown key", ECHO, invalid, Box::new(|d| set(d, "/extra", "1"))),
        ("unknown component key", ECHO, invalid, Box::new(|d| set(d, "/workflow/components/0/x", "1"))),
        ("no contracts", ECHO, invalid, Box::new(|d| remove(d, "/contracts"))),
        ("contract path empty", ECHO, invalid, Box::new(|d| set(d, "/contracts/input_schema/path", r#""""#))),
        (
            "row 64 policy private (structure ok)",
            ECHO,
            Ok(()),
            Box::new(|d| set(d, "/events", r#"{"policy": "private"}"#)),
        ),
        ("policy unknown", ECHO, invalid, Box::new(|d| set(d, "/events", r#"{"policy": "secret"}"#))),
        (
            "row 71 entry app.missing (structure ok)",
            ECHO,
            Ok(()),
            Box::new(|d| set(d, "/workflow/entry", r#""app.missing""#)),
        ),
        ("entry without dot", ECHO, invalid, Box::new(|d| set(d, "/workflow/entry", r#""app""#))),
        ("entry pattern", ECHO, invalid, Box::new(|d| set(d, "/workflow/entry", r#""App.run""#))),
        ("no components", ECHO, invalid, Box::new(|d| set(d, "/workflow/components", "[]"))),
        (
            "both forms",
            BRIEF,
            invalid,
            Box::new(move |d| set(d, "/workflow/forward", r#"{"mission": "default", "tool": "notes.read"}"#)),
        ),
        ("forward form", BRIEF, Ok(()), Box::new(move |d| set(d, "/workflow", forward))),
        (
            "forward tool pattern",
            BRIEF,
            invalid,
            Box::new(|d| set(d, "/workflow", r#"{"forward": {"mission": "default", "tool": "read"}}"#)),
        ),
        ("entry alone", ECHO, invalid, Box::new(|d| remove(d, "/workflow/components"))),
        (
            "row 72 self dependency (structure ok)",
            ECHO,
            Ok(()),
            Box::new(|d| set(d, "/workflow/components/0/dependencies", r#"["app"]"#)),
        ),
        (
            "duplicate dependency",
            ECHO,
            invalid,
            Box::new(|d| set(d, "/workflow/components/0/dependencies", r#"["a", "a"]"#)),
        ),
        (
            "row 68 ../app.luau (closure, not structure)",
            ECHO,
            Ok(()),
            Box::new(|d| set(d, "/workflow/components/0/path", r#""../app.luau""#)),
        ),
        ("mission name", BRIEF, invalid, Box::new(|d| set(d, "/missions/Default", "{}"))),
        (
            "mission providers duplicate",
            BRIEF,
            invalid,
            Box::new(|d| set(d, "/missions/default/providers", r#"["notes", "notes"]"#)),
        ),
        (
            "mission config allow",
            BRIEF,
            Ok(()),
            Box::new(|d| set(d, "/providers/mission/0/config", r#"{"allow": ["notes.read"]}"#)),
        ),
        (
            "allow empty",
            BRIEF,
            invalid,
            Box::new(|d| set(d, "/providers/mission/0/config", r#"{"allow": []}"#)),
        ),
        (
            "allow duplicate",
            BRIEF,
            invalid,
            Box::new(|d| set(d, "/providers/mission/0/config", r#"{"allow": ["a.b", "a.b"]}"#)),
        ),
        (
            "mission config other member",
            BRIEF,
            invalid,
            Box::new(|d| set(d, "/providers/mission/0/config", r#"{"deny": []}"#)),
        ),
        (
            "workflow config {}",
            BRIEF,
            Ok(()),
            Box::new(|d| set(d, "/providers/workflow", r#"[{"name": "model", "config": {}}]"#)),
        ),
        (
            "workflow config allow",
            BRIEF,
            invalid,
            Box::new(|d| {
                set(d, "/providers/workflow", r#"[{"name": "model", "config": {"allow": ["a.b"]}}]"#)
            }),
        ),
        ("selection name", BRIEF, invalid, Box::new(|d| set(d, "/providers/mission/0/name", r#""Notes""#))),
        (
            "row 84 run_duration_ms 30001 (host check later)",
            ECHO,
            Ok(()),
            Box::new(|d| set(d, "/limits", r#"{"run_duration_ms": 30001}"#)),
        ),
        ("run_duration_ms 0", ECHO, invalid, Box::new(|d| set(d, "/limits", r#"{"run_duration_ms": 0}"#))),
        ("memory below", ECHO, invalid, Box::new(|d| set(d, "/limits", r#"{"memory_bytes": 1048575}"#))),
        (
            "path with LF",
            ECHO,
            invalid,
            Box::new(|d| set(d, "/workflow/components/0/path", r#""a\nb.luau""#)),
        ),
    ];
    for (name, base, want, edit) in &table {
        // The problem itself is shown when a row fails.
        let got = run(base, edit.as_ref()).map(|_| ());
        assert_eq!(got.is_ok(), want.is_ok(), "{name}: {got:?}");
    }
    for bytes in [&b"{"[..], b"[]"] {
        let got = super::parse(bytes).map(|_| ());
        assert_eq!(got.is_ok(), invalid.is_ok(), "{got:?}");
    }
}

#[test]
fn typed_form_of_brief() {
    let m = run(BRIEF, &|_| {}).unwrap();
    assert_eq!(m.document, decode(BRIEF));
    assert_eq!(m.effect, Effect::Read);
    assert_eq!(
        (m.contracts.input_schema.path.as_str(), m.contracts.result_schema.path.as_str()),
        ("input.schema.json", "result.schema.json")
    );
    let app = Component { id: "app".into(), path: "app.luau".into(), dependencies: vec![] };
    let entry = Entry { component: "app".into(), function: "run".into() };
    assert_eq!(m.workflow, Workflow::Luau { components: vec![app], entry });
    let files = Component { id: "files".into(), path: "files.luau".into(), dependencies: vec![] };
    let default = Mission { components: vec![files], providers: vec!["notes".into()] };
    assert_eq!(m.missions.get("default"), Some(&default));
    assert_eq!(m.providers.mission, [Selection { name: "notes".into(), config: SelectionConfig::default() }]);
    assert!(m.providers.workflow.is_empty());
    assert_eq!(
        (m.limits.run_duration_ms, m.limits.memory_bytes, m.events.policy),
        (None, 16_777_216, EventsPolicy::Normal)
    );
}

#[test]
fn typed_form_of_forward_and_options() {
    let m = run(BRIEF, &|d| {
        set(d, "/workflow", r#"{"forward": {"mission": "default", "tool": "notes.read"}}"#);
        set(d, "/providers/mission/0/config", r#"{"allow": ["notes.read"]}"#);
        set(d, "/limits", r#"{"run_duration_ms": 1000, "memory_bytes": 1048576}"#);
        set(d, "/events", r#"{"policy": "private"}"#);
        set(d, "/effect", r#""write""#);
    })
    .unwrap();
    let forward = ForwardTarget { mission: "default".into(), tool: "notes.read".into() };
    assert_eq!(m.workflow, Workflow::Forward { forward });
    let allow = SelectionConfig { allow: Some(vec!["notes.read".into()]), catalog: false };
    assert_eq!(m.providers.mission, [Selection { name: "notes".into(), config: allow }]);
    assert_eq!((m.limits.run_duration_ms, m.limits.memory_bytes), (Some(1000), 1_048_576));
    assert_eq!((m.effect, m.events.policy), (Effect::Write, EventsPolicy::Private));
    // `document` stays as written: no defaults are inserted into it.
    assert_eq!(
        m.document
            .get("missions")
            .and_then(|v| v.get("default"))
            .and_then(|v| v.get("components"))
            .map(|_| ()),
        Some(())
    );
    assert_eq!(m.document.get("limits").and_then(|v| v.get("memory_bytes")), Some(&Value::from(1_048_576)));
    let echo = run(ECHO, &|_| {}).unwrap();
    assert_eq!(echo.document.get("missions"), None);
    assert!(echo.missions.is_empty());
}

/// Replacing any node of `brief` by a value of any type is `template_invalid` or accepted, never a panic.
#[test]
fn every_node_replaced_by_every_type() {
    use crate::config::schema::testing::{pointers, EVERY_TYPE};
    for pointer in pointers(&decode(BRIEF)) {
        for replacement in EVERY_TYPE {
            // The schema refuses whatever the typed reading could not read: never `Shape`.
            if let Err(problem) = run(BRIEF, &|d| set(d, &pointer, replacement)) {
                assert!(!matches!(problem, Problem::Shape), "{pointer} = {replacement}: {problem}");
            }
        }
    }
}

/// The schema and the type are the two places a member is written (`config::typed`): the type reads every
/// shape the schema allows (both workflow forms among them), so no member lacks a field.
#[test]
fn every_member_of_the_schema_has_a_field() {
    use serde::Deserialize;
    let documents = schema::shapes::documents(&APPLICATION.get());
    assert_eq!(documents.len(), 2, "the Luau and the forward workflow");
    for document in documents {
        let read = Manifest::deserialize(&document);
        assert!(read.is_ok(), "{read:?}\nfor {document}");
    }
}

#[test]
fn an_entry_without_a_dot_is_refused_by_the_typed_read() {
    assert_eq!(Entry::try_from("app".to_owned()), Err("an entry is `component.function`"));
    assert_eq!(
        Entry::try_from("app.run".to_owned()),
        Ok(Entry { component: "app".into(), function: "run".into() })
    );
}
