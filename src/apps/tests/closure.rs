//! config.md §6.3: closure paths, confinement, file kinds, sizes, the reference count and UTF-8.

use std::os::unix::fs::symlink;

use super::*;
use crate::apps::closure::{self, check_path, MAX_FILE_BYTES};
use crate::apps::error::{AppDetail, AppError, AppErrorKind};
use crate::config::manifest::{self, Manifest};

fn manifest_with_component_path(path: &str) -> Manifest {
    let mut m = parse(ECHO_MANIFEST);
    set(
        &mut m,
        &["workflow", "components"],
        Value::Array(vec![parse(&format!(r#"{{"id":"app","path":{}}}"#, json_str(path)))]),
    );
    manifest::parse(&crate::json::to_deterministic(&m)).unwrap()
}

fn json_str(s: &str) -> String {
    crate::json::to_deterministic_string(&Value::from(s))
}

fn read(f: &Fixture, m: &Manifest) -> Result<closure::Closure, AppError> {
    closure::read(&f.path("echo"), m)
}

const INVALID: Result<(), AppError> = Err(AppError::new(AppErrorKind::ClosurePathInvalid));

#[test]
fn path_syntax_vectors() {
    let table: &[(&str, Result<(), AppError>)] = &[
        ("app.luau", Ok(())),
        ("lib/app.luau", Ok(())),
        ("a/b/c/d.luau", Ok(())),
        (".hidden.luau", Ok(())),
        ("..app.luau", Ok(())),
        ("a\\b.luau", Ok(())),
        ("", INVALID),
        ("/abs/app.luau", INVALID),
        ("../app.luau", INVALID),
        ("lib/../app.luau", INVALID),
        ("./app.luau", INVALID),
        ("lib/./app.luau", INVALID),
        ("lib//app.luau", INVALID),
        ("lib/", INVALID),
        ("lib/.", INVALID),
        ("..", INVALID),
        (".", INVALID),
    ];
    for (path, want) in table {
        assert_eq!(check_path(path), *want, "{path:?}");
    }
}

/// Each row: a setup below `echo/`, the component path, and the expected result.
#[test]
fn confinement_and_kinds() {
    type Setup = fn(&Fixture);
    let ok = || Ok(());
    let kind = Err;
    let table: Vec<(&str, Setup, &str, Result<(), AppErrorKind>)> = vec![
        ("plain file", |_| {}, "app.luau", ok()),
        ("file in a subdirectory", |f| f.write("echo/lib/app.luau", ECHO_APP), "lib/app.luau", ok()),
        // config.md §11 row 69.
        (
            "file is a symlink to a copy",
            |f| {
                f.write("echo/copy.luau", ECHO_APP);
                std::fs::remove_file(f.path("echo/app.luau")).unwrap();
                symlink("copy.luau", f.path("echo/app.luau")).unwrap();
            },
            "app.luau",
            kind(AppErrorKind::ClosureNotConfined),
        ),
        (
            "directory on the way is a symlink",
            |f| {
                f.write("echo/real/app.luau", ECHO_APP);
                symlink("real", f.path("echo/lib")).unwrap();
            },
            "lib/app.luau",
            kind(AppErrorKind::ClosureNotConfined),
        ),
        (
            "symlink to a directory outside",
            |f| {
                f.write("outside/app.luau", ECHO_APP);
                symlink(f.path("outside"), f.path("echo/lib")).unwrap();
            },
            "lib/app.luau",
            kind(AppErrorKind::ClosureNotConfined),
        ),
        ("segment is a file", |_| {}, "app.luau/x", kind(AppErrorKind::ClosureNotConfined)),
        ("missing file", |_| {}, "nope.luau", kind(AppErrorKind::ClosureUnreadable)),
        ("missing directory", |_| {}, "nope/app.luau", kind(AppErrorKind::ClosureUnreadable)),
        (
            "a directory",
            |f| std::fs::create_dir_all(f.path("echo/dir")).unwrap(),
            "dir",
            kind(AppErrorKind::ClosureNotRegularFile),
        ),
        (
            "a FIFO does not block",
            |f| {
                nix::unistd::mkfifo(&f.path("echo/fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600))
                    .unwrap();
            },
            "fifo",
            kind(AppErrorKind::ClosureNotRegularFile),
        ),
        (
            "exactly 1,000,000 bytes",
            |f| f.write("echo/big.luau", "-".repeat(MAX_FILE_BYTES)),
            "big.luau",
            ok(),
        ),
        (
            "1,000,001 bytes",
            |f| f.write("echo/big.luau", "-".repeat(MAX_FILE_BYTES + 1)),
            "big.luau",
            kind(AppErrorKind::ClosureFileTooLarge),
        ),
        (
            "component source not UTF-8",
            |f| f.write("echo/bad.luau", b"return {}\xff"),
            "bad.luau",
            kind(AppErrorKind::ComponentSourceNotUtf8),
        ),
        // config.md §11 row 68: refused before anything is opened.
        (
            "path leaves the directory",
            |f| f.write("app.luau", ECHO_APP),
            "../app.luau",
            kind(AppErrorKind::ClosurePathInvalid),
        ),
    ];
    for (what, setup, path, want) in table {
        let f = Fixture::new("closure");
        write_echo(&f);
        setup(&f);
        let got = read(&f, &manifest_with_component_path(path)).map(|_| ()).map_err(|e| {
            // Every refusal of a closure file names it, as the manifest does (lifecycle.md §1.5).
            assert_eq!(e.detail.as_deref().and_then(AppDetail::place).as_deref(), Some(path), "{what}");
            e.kind
        });
        assert_eq!(got, want, "{what}");
    }
}

/// A closure file the system refuses is named with the system's reason, for a person.
#[test]
fn a_missing_component_is_named_with_the_system_reason() {
    use crate::explain::{Explain, Facts};
    let f = Fixture::new("closure-missing");
    write_echo(&f);
    let e = read(&f, &manifest_with_component_path("lib/nope.luau")).map(|_| ()).unwrap_err();
    let mut facts = Facts::new();
    e.explain(&mut facts);
    let got: Vec<(&str, &str)> = facts.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        got,
        [
            ("component", "lib/nope.luau"),
            ("reason", "a closure file cannot be read (No such file or directory)")
        ]
    );
}

#[test]
fn manifest_directory_itself_may_be_a_symlink() {
    let f = Fixture::new("closure-dirlink");
    write_echo(&f);
    symlink(f.path("echo"), f.path("alias")).unwrap();
    let m = manifest::parse(ECHO_MANIFEST.as_bytes()).unwrap();
    assert!(closure::read(&f.path("alias"), &m).is_ok());
}

#[test]
fn contracts_need_not_be_utf8_for_the_closure() {
    // The decoder refuses them later (5e); the closure only bounds their size.
    let f = Fixture::new("closure-contract");
    write_echo(&f);
    f.write("echo/schema.json", b"\xff");
    let m = manifest::parse(ECHO_MANIFEST.as_bytes()).unwrap();
    assert!(closure::read(&f.path("echo"), &m).is_ok());
}

#[test]
fn shared_file_is_read_once_and_kept() {
    let f = Fixture::new("closure-once");
    write_echo(&f);
    let m = manifest::parse(ECHO_MANIFEST.as_bytes()).unwrap();
    let c = closure::read(&f.path("echo"), &m).unwrap();
    assert_eq!(c.file_count(), 2);
    // Later changes on disk have no effect on what was read (config.md §6.3).
    f.write("echo/app.luau", "changed");
    assert_eq!(c.bytes("app.luau"), Some(ECHO_APP.as_bytes()));
    assert_eq!(c.bytes("schema.json"), Some(OBJECT_SCHEMA.as_bytes()));
}

/// config.md §6.3: the manifest, two contract references and every component reference: at most 512.
#[test]
fn reference_count_bound() {
    let f = Fixture::new("closure-count");
    write_echo(&f);
    let build = |components: usize| {
        let mut m = parse(ECHO_MANIFEST);
        let workflow: Vec<Value> = (0..components.min(64))
            .map(|i| parse(&format!(r#"{{"id":"c{i}","path":"app.luau"}}"#)))
            .collect();
        set(&mut m, &["workflow", "components"], Value::Array(workflow));
        let mut rest = components.saturating_sub(64);
        let mut missions = serde_json::Map::new();
        let mut n = 0;
        while rest > 0 {
            let k = rest.min(64);
            let comps: Vec<Value> =
                (0..k).map(|i| parse(&format!(r#"{{"id":"c{i}","path":"app.luau"}}"#))).collect();
            let mut mission = serde_json::Map::new();
            mission.insert("components".into(), Value::Array(comps));
            missions.insert(format!("m{n}"), Value::Object(mission));
            n += 1;
            rest -= k;
        }
        set(&mut m, &["missions"], Value::Object(missions));
        manifest::parse(&crate::json::to_deterministic(&m)).unwrap()
    };
    // 1 + 2 + 509 = 512 references.
    assert!(closure::read(&f.path("echo"), &build(509)).is_ok());
    assert_eq!(
        closure::read(&f.path("echo"), &build(510)).map(|_| ()),
        Err(AppError::new(AppErrorKind::ClosureTooManyReferences))
    );
}
