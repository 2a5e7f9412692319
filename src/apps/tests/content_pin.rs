//! pins.md §6 and §11.1–§11.2: exact pins from files on disk, the stream layout, the pins.md §6.3
//! invariances, the duplicate-record rule and the stream bound.

use super::*;
use crate::apps::closure;
use crate::apps::content_pin::{self, MAX_STREAM_BYTES};
use crate::apps::error::{AppError, AppErrorKind};
use crate::config::manifest::{self, Manifest};

fn load(f: &Fixture, app: &str) -> (Manifest, closure::Closure) {
    let manifest = manifest::parse(&std::fs::read(f.path(&format!("{app}/ptc.json"))).unwrap()).unwrap();
    let closure = closure::read(&f.path(app), &manifest).unwrap();
    (manifest, closure)
}

fn pin_of(f: &Fixture, app: &str) -> Result<String, AppError> {
    let (manifest, closure) = load(f, app);
    content_pin::digest(&manifest, &closure)
}

#[test]
fn echo_pin_and_stream_layout() {
    let f = Fixture::new("pin-echo");
    write_echo(&f);
    let (manifest, closure) = load(&f, "echo");
    let stream = content_pin::stream(&manifest, &closure).unwrap();
    assert_eq!(stream.len(), 629);
    assert_eq!(&stream[..35], b"ptc-gateway.application-content.v1\0");
    assert_eq!(&stream[35..39], &[0, 0, 0, 5]);
    // (offset, kind, name) of pins.md §11.1.
    let table: &[(usize, u8, &str, u64)] = &[
        (39, 0x01, "", 377),
        (429, 0x02, "workflow/app", 65),
        (519, 0x04, "input", 18),
        (555, 0x05, "result", 18),
        (592, 0x06, "workflow/app", 12),
    ];
    for &(offset, kind, name, payload) in table {
        assert_eq!(stream[offset], kind, "kind at {offset}");
        let name_len = u32::from_be_bytes(stream[offset + 1..offset + 5].try_into().unwrap()) as usize;
        assert_eq!(&stream[offset + 5..offset + 5 + name_len], name.as_bytes());
        let at = offset + 5 + name_len;
        assert_eq!(
            u64::from_be_bytes(stream[at..at + 8].try_into().unwrap()),
            payload,
            "payload of {name:?}"
        );
    }
    assert_eq!(&stream[617..], b"[\"array\",[]]");
    assert_eq!(content_pin::digest(&manifest, &closure).unwrap(), ECHO_PIN);
    assert_eq!(crate::json::sha256_qualified(&stream), ECHO_PIN);
}

#[test]
fn brief_pin_and_record_order() {
    let f = Fixture::new("pin-brief");
    write_brief(&f);
    let (manifest, closure) = load(&f, "brief");
    let stream = content_pin::stream(&manifest, &closure).unwrap();
    assert_eq!(stream.len(), 1307);
    assert_eq!(&stream[35..39], &[0, 0, 0, 7]);
    // `mission/…` sorts before `workflow/…` (pins.md §11.2).
    for (offset, kind) in
        [(39, 0x01), (729, 0x02), (932, 0x02), (1089, 0x04), (1125, 0x05), (1224, 0x06), (1270, 0x06)]
    {
        assert_eq!(stream[offset], kind, "record at {offset}");
    }
    assert_eq!(&stream[734..755], b"mission/default/files");
    assert_eq!(content_pin::digest(&manifest, &closure).unwrap(), BRIEF_PIN);
}

/// pins.md §6.3: what does and does not change the pin.
#[test]
fn invariances() {
    type Change = fn(&Fixture);
    let table: &[(&str, Change, bool)] = &[
        (
            "manifest reformatted and reordered",
            |f| {
                f.write("echo/ptc.json", crate::json::to_deterministic(&parse(ECHO_MANIFEST)));
            },
            false,
        ),
        (
            "manifest renamed and directory moved",
            |f| {
                let to = f.path("moved");
                std::fs::rename(f.path("echo"), &to).unwrap();
                std::fs::rename(to.join("ptc.json"), to.join("app.json")).unwrap();
                std::fs::create_dir_all(f.path("echo")).unwrap();
                for name in ["app.json", "app.luau", "schema.json"] {
                    std::fs::rename(to.join(name), f.path(&format!("echo/{name}"))).unwrap();
                }
                std::fs::rename(f.path("echo/app.json"), f.path("echo/ptc.json")).unwrap();
            },
            false,
        ),
        ("a final newline added to the source", |f| f.write("echo/app.luau", format!("{ECHO_APP}\n")), true),
        ("one byte of the source", |f| f.write("echo/app.luau", ECHO_APP.replace("input", "inpux")), true),
        ("contract formatting", |f| f.write("echo/schema.json", "{ \"type\": \"object\" }\n"), true),
        (
            "an explicit default",
            |f| {
                let mut m = parse(ECHO_MANIFEST);
                set(&mut m, &["events", "policy"], Value::from("normal"));
                f.write_json("echo/ptc.json", &m);
            },
            true,
        ),
        (
            "explicit empty dependencies",
            |f| {
                let mut m = parse(ECHO_MANIFEST);
                set(
                    &mut m,
                    &["workflow", "components"],
                    parse(r#"[{"id":"app","path":"app.luau","dependencies":[]}]"#),
                );
                f.write_json("echo/ptc.json", &m);
            },
            true,
        ),
    ];
    for (what, change, changes) in table {
        let f = Fixture::new("pin-inv");
        write_echo(&f);
        change(&f);
        let pin = pin_of(&f, "echo").unwrap();
        assert_eq!(pin != ECHO_PIN, *changes, "{what}");
    }
}

#[test]
fn forward_form_has_three_records() {
    let f = Fixture::new("pin-forward");
    write_brief(&f);
    let mut m = parse(BRIEF_MANIFEST);
    set(&mut m, &["workflow"], parse(r#"{"forward":{"mission":"default","tool":"notes.read"}}"#));
    set(&mut m, &["missions", "default", "components"], parse("[]"));
    f.write_json("brief/ptc.json", &m);
    let (manifest, closure) = load(&f, "brief");
    let stream = content_pin::stream(&manifest, &closure).unwrap();
    assert_eq!(&stream[35..39], &[0, 0, 0, 3]);
}

#[test]
fn duplicate_component_ids_are_refused() {
    let f = Fixture::new("pin-dup");
    write_echo(&f);
    let mut m = parse(ECHO_MANIFEST);
    set(
        &mut m,
        &["workflow", "components"],
        parse(r#"[{"id":"app","path":"app.luau"},{"id":"app","path":"app.luau"}]"#),
    );
    f.write_json("echo/ptc.json", &m);
    assert_eq!(pin_of(&f, "echo"), Err(AppError::new(AppErrorKind::ContentRecordDuplicate)));
}

/// config.md §6.3: the stream is at most 8,388,608 bytes; exactly that is accepted.
#[test]
fn stream_bound() {
    const EXTRA: usize = 16;
    let f = Fixture::new("pin-bound");
    write_echo(&f);
    let mut m = parse(ECHO_MANIFEST);
    let mut comps = vec![parse(r#"{"id":"app","path":"app.luau"}"#)];
    for i in 0..EXTRA {
        comps.push(parse(&format!(r#"{{"id":"c{i}","path":"c{i}.luau"}}"#)));
        f.write(&format!("echo/c{i}.luau"), "");
    }
    set(&mut m, &["workflow", "components"], Value::Array(comps));
    f.write_json("echo/ptc.json", &m);
    let empty = {
        let (m, c) = load(&f, "echo");
        content_pin::stream(&m, &c).unwrap().len()
    };
    // Spread the remaining room (plus `extra`) over the extra sources, each well under 1,000,000 bytes.
    let fill = |extra: usize| {
        let total = MAX_STREAM_BYTES - empty + extra;
        for i in 0..EXTRA {
            let n = total / EXTRA + usize::from(i < total % EXTRA);
            f.write(&format!("echo/c{i}.luau"), "-".repeat(n));
        }
    };
    fill(0);
    let (m, c) = load(&f, "echo");
    assert_eq!(content_pin::stream(&m, &c).unwrap().len(), MAX_STREAM_BYTES);
    assert!(content_pin::digest(&m, &c).is_ok());
    fill(1);
    let (m, c) = load(&f, "echo");
    assert_eq!(content_pin::digest(&m, &c), Err(AppError::new(AppErrorKind::ContentStreamTooLarge)));
}

#[test]
fn comparison_is_byte_equality_and_skipped_without_expectation() {
    assert_eq!(content_pin::compare(ECHO_PIN, Some(ECHO_PIN)), Ok(()));
    assert_eq!(content_pin::compare(ECHO_PIN, None), Ok(()));
    let upper = ECHO_PIN.to_uppercase();
    assert_eq!(
        content_pin::compare(ECHO_PIN, Some(&upper)),
        Err(AppError::with_detail(
            AppErrorKind::ContentDigestMismatch,
            crate::apps::AppDetail::Digest {
                expected: upper.clone(),
                computed: ECHO_PIN.to_owned(),
                broken: None
            }
        ))
    );
}
