//! execution.md §12: compilation, the startup probe, `require`, the globals of a sandbox and the limits.

use std::time::{Duration, Instant};

use super::*;
use crate::apps::closure;
use crate::apps::error::{AppDetail, AppError, AppErrorKind};
use crate::apps::luau::budget::{Budget, Exhaustion};
use crate::apps::luau::sandbox::{Sandbox, SandboxState};
use crate::apps::luau::vm::{HostGlobals, Role, Vm};
use crate::apps::luau::{self, CompiledLuau, ProbeLimits};
use crate::config::manifest;

/// Writes `sources` (id, source, dependencies) as the workflow of a manifest with `entry`, plus the
/// mission components in `mission`, and builds it under `limits`.
pub(super) fn build_with(
    workflow: &[Source],
    entry: &str,
    mission: &[Source],
    limits: ProbeLimits,
) -> Result<CompiledLuau, AppError> {
    let f = Fixture::new("luau");
    f.write("app/schema.json", OBJECT_SCHEMA);
    let component = |prefix: &str, (id, source, deps): &(&str, &str, &[&str])| {
        let path = format!("{prefix}{id}.luau");
        f.write(&format!("app/{path}"), source);
        let deps: Vec<Value> = deps.iter().map(|d| Value::from(*d)).collect();
        let mut c = parse(&format!(r#"{{"id":"{id}","path":"{path}"}}"#));
        set(&mut c, &["dependencies"], Value::Array(deps));
        c
    };
    let mut m = parse(ECHO_MANIFEST);
    set(
        &mut m,
        &["workflow", "components"],
        Value::Array(workflow.iter().map(|c| component("", c)).collect()),
    );
    set(&mut m, &["workflow", "entry"], Value::from(entry));
    if !mission.is_empty() {
        set(
            &mut m,
            &["missions", "m", "components"],
            Value::Array(mission.iter().map(|c| component("m_", c)).collect()),
        );
    }
    f.write_json("app/ptc.json", &m);
    let manifest = manifest::parse(&std::fs::read(f.path("app/ptc.json")).unwrap()).unwrap();
    let closure = closure::read(&f.path("app"), &manifest).unwrap();
    luau::build(&manifest, &closure, limits)
}

/// `(id, source, dependencies)` of one component.
pub(super) type Source<'a> = (&'a str, &'a str, &'a [&'a str]);

/// (what, workflow components, entry, expected).
type ProbeRow<'a> = (&'a str, &'a [Source<'a>], &'a str, Result<(), AppError>);

fn limits() -> ProbeLimits {
    ProbeLimits::for_application(16_777_216)
}

fn build(workflow: &[Source], entry: &str) -> Result<(), AppError> {
    build_with(workflow, entry, &[], limits()).map(|_| ())
}

fn err(kind: AppErrorKind) -> Result<(), AppError> {
    Err(AppError::new(kind))
}

#[test]
fn echo_compiles_and_probes() {
    let compiled = build_with(&[("app", ECHO_APP, &[])], "app.run", &[], limits()).unwrap();
    let workflow = compiled.workflow.unwrap();
    let app = workflow.component("app").unwrap();
    assert_eq!(app.chunk_name, "workflow/app (app.luau)");
    assert!(!app.bytecode.is_empty());
}

#[test]
fn probe_vectors() {
    use AppErrorKind as K;
    let table: &[ProbeRow] = &[
        (
            "type annotations are accepted",
            &[("app", "local M = {}\nfunction M.run(x: {[string]: any}): any return x end\nreturn M", &[])],
            "app.run",
            Ok(()),
        ),
        // config.md §11 row 70.
        ("syntax error", &[("app", "local M = {\nreturn M", &[])], "app.run", err(K::LuauSyntax)),
        // config.md §11 row 71.
        ("entry function missing", &[("app", ECHO_APP, &[])], "app.missing", err(K::LuauEntryMissing)),
        ("entry is not a function", &[("app", "return {run = 1}", &[])], "app.run", err(K::LuauEntryMissing)),
        ("entry component unknown", &[("app", ECHO_APP, &[])], "other.run", err(K::EntryComponentUnknown)),
        ("chunk returns a non-table", &[("app", "return 1", &[])], "app.run", err(K::LuauProbeFailed)),
        ("chunk returns nothing", &[("app", "local x = 1", &[])], "app.run", err(K::LuauProbeFailed)),
        ("chunk raises", &[("app", "error('no')", &[])], "app.run", err(K::LuauProbeFailed)),
        (
            "host functions raise while loading",
            &[("app", "mission('default')\nreturn {run = function() end}", &[])],
            "app.run",
            err(K::LuauProbeFailed),
        ),
        (
            "fail raises while loading",
            &[("app", "fail('x')\nreturn {run = function() end}", &[])],
            "app.run",
            err(K::LuauProbeFailed),
        ),
        (
            "json constants are usable while loading",
            &[(
                "app",
                "local N = json.null\nlocal A = json.array()\nreturn {run = function() return N, A end}",
                &[],
            )],
            "app.run",
            Ok(()),
        ),
        (
            "json.encode is pure and usable while loading",
            &[(
                "app",
                "assert(json.encode(json.decode('[1,{}]')) == '[1,{}]')\nreturn {run = function() end}",
                &[],
            )],
            "app.run",
            Ok(()),
        ),
        (
            "entry through a metatable",
            &[("app", "return setmetatable({}, {__index = {run = function() end}})", &[])],
            "app.run",
            Ok(()),
        ),
        (
            "declared dependency",
            &[
                ("app", "local u = require('util')\nreturn {run = u.f}", &["util"]),
                ("util", "return {f = function() end}", &[]),
            ],
            "app.run",
            Ok(()),
        ),
        (
            "undeclared dependency",
            &[
                ("app", "local u = require('util')\nreturn {run = u.f}", &[]),
                ("util", "return {f = function() end}", &[]),
            ],
            "app.run",
            err(K::LuauProbeFailed),
        ),
        (
            "require through pcall keeps the caller",
            &[
                ("app", "local ok, u = pcall(require, 'util')\nassert(ok)\nreturn {run = u.f}", &["util"]),
                ("util", "return {f = function() end}", &[]),
            ],
            "app.run",
            Ok(()),
        ),
        ("unknown dependency", &[("app", ECHO_APP, &["nope"])], "app.run", err(K::DependencyUnknown)),
        // config.md §11 row 72.
        ("depends on itself", &[("app", ECHO_APP, &["app"])], "app.run", err(K::DependencySelf)),
        (
            "cycle",
            &[("app", ECHO_APP, &["b"]), ("b", "return {}", &["app"])],
            "app.run",
            err(K::DependencyCycle),
        ),
        (
            "non-entry components are compiled",
            &[("app", ECHO_APP, &[]), ("other", "this is not luau", &[])],
            "app.run",
            err(K::LuauSyntax),
        ),
        (
            "non-entry components are not run",
            &[("app", ECHO_APP, &[]), ("other", "error('not run')", &[])],
            "app.run",
            Ok(()),
        ),
    ];
    for (what, workflow, entry, want) in table {
        assert_eq!(build(workflow, entry).map_err(|e| e.kind), want.clone().map_err(|e| e.kind), "{what}");
    }
}

/// A component that does not compile is named with Luau's line and message (lifecycle.md §1.5), as the
/// manifest names its file.
#[test]
fn a_syntax_error_names_the_component_line_and_message() {
    let workflow: &[(&str, &str, &[&str])] =
        &[("app", ECHO_APP, &[]), ("other", "local x = 1\nreturn return", &[])];
    let detail = AppDetail::Compile {
        file: "other.luau".to_owned(),
        line: Some(2),
        message: "Expected identifier when parsing expression, got 'return'".to_owned(),
    };
    assert_eq!(
        build(workflow, "app.run"),
        Err(AppError::with_detail(AppErrorKind::LuauSyntax, detail.clone()))
    );
    assert_eq!(detail.place().as_deref(), Some("other.luau:2"));
}

#[test]
fn missions_are_probed() {
    let ok_app: &[Source] = &[("app", ECHO_APP, &[])];
    let table: &[(&str, &[Source], Result<(), AppError>)] = &[
        ("brief's files", &[("files", BRIEF_FILES, &[])], Ok(())),
        (
            "every mission component runs",
            &[("a", "return {}", &[]), ("b", "error('b')", &[])],
            err(AppErrorKind::LuauProbeFailed),
        ),
        (
            "tool raises while loading",
            &[("a", "tool('notes.read', {})\nreturn {}", &[])],
            err(AppErrorKind::LuauProbeFailed),
        ),
        ("mission has no `mission` global", &[("a", "assert(mission == nil)\nreturn {}", &[])], Ok(())),
        (
            "shared module state within the probe",
            &[
                ("a", "return {n = 1}", &[]),
                ("b", "local a = require('a')\na.n += 1\nassert(a.n == 2)\nreturn {}", &["a"]),
            ],
            Ok(()),
        ),
        (
            "mission cycle",
            &[("a", "return {}", &["b"]), ("b", "return {}", &["a"])],
            err(AppErrorKind::DependencyCycle),
        ),
    ];
    for (what, mission, want) in table {
        let got = build_with(ok_app, "app.run", mission, limits()).map(|_| ()).map_err(|e| e.kind);
        assert_eq!(got, want.clone().map_err(|e| e.kind), "{what}");
    }
    // lifecycle.md §1.5: the load failure's message names the component's chunk, file and line.
    let raising: &[Source] = &[("a", "return {}", &[]), ("b", "error('b')", &[])];
    let detail = AppDetail::Load { message: "mission/m/b (m_b.luau):1: b".to_owned() };
    let want = Err(AppError::with_detail(AppErrorKind::LuauProbeFailed, detail));
    assert_eq!(build_with(ok_app, "app.run", raising, limits()).map(|_| ()), want);
}

/// execution.md §12.4: what a sandbox holds.
#[test]
fn globals_of_a_sandbox() {
    let source = r#"
        for _, name in ipairs({"io", "os", "debug", "coroutine", "load", "loadstring", "dofile", "loadfile",
                               "collectgarbage", "gcinfo", "getfenv", "setfenv", "newproxy", "print",
                               "vector", "tool"}) do
          assert(rawget(_G, name) == nil, name)
        end
        assert(math.random == nil and math.randomseed == nil)
        for _, name in ipairs({"assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall",
                               "rawequal", "rawget", "rawlen", "rawset", "select", "setmetatable",
                               "tonumber", "tostring", "type", "typeof", "unpack", "xpcall", "require",
                               "json", "fail", "mission", "model"}) do
          assert(_G[name] ~= nil, name)
        end
        assert(type(string.format) == "function" and type(table.insert) == "function")
        assert(type(utf8.char) == "function" and type(bit32.band) == "function")
        assert(type(buffer.create) == "function" and type(math.floor) == "function")
        assert(_VERSION ~= nil)
        -- Built-ins are read-only; new globals are allowed.
        assert(not pcall(function() string.upper = nil end))
        assert(not pcall(function() math.pi = 3 end))
        created = 1
        return {run = function() end}
    "#;
    assert_eq!(build(&[("app", source, &[])], "app.run"), Ok(()));
}

/// execution.md §12.8 at startup: the interrupt budget, the 5,000 ms bound and the memory limit bound
/// the probe; a swallowed budget error still refuses.
#[test]
fn probe_limits() {
    let spin: &[Source] = &[("app", "while true do end\nreturn {}", &[])];
    let small = ProbeLimits { interrupts: 10_000, ..limits() };
    assert_eq!(build_with(spin, "app.run", &[], small).map(|_| ()), err(AppErrorKind::LuauBudgetExhausted));
    let swallowed: &[Source] =
        &[("app", "pcall(function() while true do end end)\nreturn {run = function() end}", &[])];
    assert_eq!(
        build_with(swallowed, "app.run", &[], small).map(|_| ()),
        err(AppErrorKind::LuauBudgetExhausted)
    );
    let short = ProbeLimits { time: Duration::from_millis(50), ..limits() };
    let started = Instant::now();
    assert_eq!(build_with(spin, "app.run", &[], short).map(|_| ()), err(AppErrorKind::LuauTimeExceeded));
    assert!(started.elapsed() < Duration::from_secs(5));
    let hog: &[Source] = &[(
        "app",
        "local t = {}\nfor i = 1, 1e7 do t[i] = string.rep('x', 64) .. i end\nreturn {run = function() end}",
        &[],
    )];
    let tight = ProbeLimits { memory_bytes: 1_048_576, ..limits() };
    let detail = AppDetail::Load { message: "not enough memory".to_owned() };
    let want = Err(AppError::with_detail(AppErrorKind::LuauProbeFailed, detail));
    assert_eq!(build_with(hog, "app.run", &[], tight).map(|_| ()), want);
}

/// The spec's own bounds end a non-terminating module too (within the 5,000 ms of execution.md §12.7).
#[test]
fn default_probe_limits_end_an_infinite_loop() {
    let started = Instant::now();
    let got =
        build_with(&[("app", "while true do end\nreturn {}", &[])], "app.run", &[], limits()).map(|_| ());
    assert!(
        matches!(got, Err(e) if matches!(e.kind, AppErrorKind::LuauBudgetExhausted | AppErrorKind::LuauTimeExceeded))
    );
    assert!(started.elapsed() < Duration::from_secs(7), "{:?}", started.elapsed());
}

#[test]
fn budget_is_sticky() {
    let b = Budget::new(2, None);
    assert_eq!(b.charge(), Ok(()));
    assert_eq!(b.charge(), Ok(()));
    assert_eq!(b.charge(), Err(Exhaustion::Interrupts));
    assert_eq!(b.charge(), Err(Exhaustion::Interrupts));
    assert_eq!(b.exhausted(), Some(Exhaustion::Interrupts));
    let past = Budget::new(100, Some(Instant::now()));
    assert_eq!(past.charge(), Err(Exhaustion::Deadline));
    assert_eq!(past.exhausted(), Some(Exhaustion::Deadline));
}

/// A state whose sandboxes have no host globals but `extra`.
fn bare_vm(extra: impl Fn(&mlua::Lua) -> mlua::Result<Vec<(&'static str, mlua::Value)>>) -> Vm {
    Vm::new(|lua| Ok(HostGlobals { workflow: extra(lua)?, mission: extra(lua)? })).unwrap()
}

fn no_hosts(_: &mlua::Lua) -> mlua::Result<Vec<(&'static str, mlua::Value)>> {
    Ok(Vec::new())
}

/// execution.md §12.6: every sandbox starts fresh from the same bytecode; module state does not leak, from
/// one call to the next in the same state nor between two sandboxes of one call.
#[test]
fn sandboxes_are_fresh_and_require_is_restricted() {
    let compiled = build_with(
        &[
            (
                "app",
                "local c = require('counter')\nreturn {run = function() c.n += 1; return c.n end}",
                &["counter"],
            ),
            ("counter", "return {n = 0}", &[]),
        ],
        "app.run",
        &[("a", "return {}", &[]), ("b", "return {get = function() return require('a') end}", &["a"])],
        limits(),
    )
    .unwrap();
    let workflow = compiled.workflow.clone().unwrap();
    let mut vm = bare_vm(no_hosts);
    for _ in 0..2 {
        let scope = vm.begin(Budget::new(1_000_000, None), 16_777_216).unwrap();
        for _ in 0..2 {
            let sandbox = Sandbox::new(&scope, workflow.clone(), Role::Workflow).unwrap();
            let app = sandbox.require("app").unwrap();
            let run: mlua::Function = app.get("run").unwrap();
            let _entered = sandbox.enter().unwrap();
            assert_eq!(run.call::<i64>(()).unwrap(), 1);
            assert_eq!(run.call::<i64>(()).unwrap(), 2);
            // A global created by one sandbox is not seen by the next.
            let leak =
                sandbox.load_text(b"local seen = leaked; leaked = 1; return seen", "workflow/app").unwrap();
            assert_eq!(leak.call::<Option<i64>>(()).unwrap(), None);
            assert_eq!(leak.call::<Option<i64>>(()).unwrap(), Some(1));
        }
    }
    let mission = compiled.missions.get("m").unwrap().clone();
    assert!(mission.may_require("mission/m/b (m_b.luau)", "a"));
    assert!(!mission.may_require("mission/m/a (m_a.luau)", "b"));
    assert!(!mission.may_require("mission/m/b", "a"), "the chunk name carries the file");
    // The `:eval` chunk may require any component of its mission.
    assert!(mission.may_require("mission/m/eval", "b"));
    assert!(!mission.may_require("mission/m/eval", "nope"));
    assert!(!mission.may_require("workflow/app (app.luau)", "a"));
    let scope = vm.begin(Budget::new(1_000_000, None), 16_777_216).unwrap();
    let sandbox = Sandbox::new(&scope, mission, Role::Mission).unwrap();
    let _entered = sandbox.enter().unwrap();
    let eval = sandbox.load_text(b"return require('b').get()", "mission/m/eval").unwrap();
    assert!(eval.call::<mlua::Table>(()).is_ok());
    let stranger = sandbox.load_text(b"return require('a')", "somewhere").unwrap();
    assert!(stranger.call::<mlua::Table>(()).is_err());
    assert!(!sandbox.state().is_loading());
}

/// execution.md §12.6 with the state's loaded templates (`apps::luau::chunks`): a component loaded once per
/// state and cloned into each sandbox gives every sandbox its own functions (never one a constant closure
/// of the shared prototype handed to another sandbox) running against its own globals, in one call and
/// across calls.
#[test]
fn cloned_modules_share_no_function_and_no_global() {
    let app = "local M = {}\nfunction M.set(v) shared = v end\nfunction M.get() return shared end\nreturn M";
    let compiled = build_with(&[("app", app, &[])], "app.get", &[], limits()).unwrap();
    let workflow = compiled.workflow.clone().unwrap();
    let mut vm = bare_vm(no_hosts);
    let mut seen: Vec<mlua::Function> = Vec::new();
    for _ in 0..2 {
        let scope = vm.begin(Budget::new(1_000_000, None), 16_777_216).unwrap();
        for _ in 0..2 {
            let sandbox = Sandbox::new(&scope, workflow.clone(), Role::Workflow).unwrap();
            let module = sandbox.require("app").unwrap();
            let (set, get): (mlua::Function, mlua::Function) =
                (module.get("set").unwrap(), module.get("get").unwrap());
            let _entered = sandbox.enter().unwrap();
            assert_eq!(get.call::<Option<i64>>(()).unwrap(), None, "a global of another sandbox is not seen");
            set.call::<()>(7).unwrap();
            assert_eq!(get.call::<Option<i64>>(()).unwrap(), Some(7));
            assert!(seen.iter().all(|f| f != &get), "each sandbox has functions of its own");
            seen.push(get);
        }
    }
}

/// Module loading is pure: host functions can ask whether a chunk is running.
#[test]
fn load_state_is_visible_to_host_functions() {
    let hooked = "assert(is_loading() == true)\nreturn {run = function() return is_loading() end}";
    // The probe has no `is_loading`, so the chunk fails to load there: it is compiled but not run.
    let compiled =
        build_with(&[("app", ECHO_APP, &[]), ("hooked", hooked, &[])], "app.run", &[], limits()).unwrap();
    let workflow = compiled.workflow.unwrap();
    let mut vm = bare_vm(|lua| {
        let is_loading =
            lua.create_function(|lua, ()| Ok(SandboxState::current(lua).is_some_and(|s| s.is_loading())))?;
        Ok(vec![("is_loading", mlua::Value::Function(is_loading))])
    });
    let scope = vm.begin(Budget::new(1_000_000, None), 16_777_216).unwrap();
    let sandbox = Sandbox::new(&scope, workflow, Role::Workflow).unwrap();
    assert!(!sandbox.state().is_loading());
    let run: mlua::Function = sandbox.require("hooked").unwrap().get("run").unwrap();
    let _entered = sandbox.enter().unwrap();
    assert!(!run.call::<bool>(()).unwrap());
}

/// execution.md §12.2: error messages name their chunks, with the component's file as the manifest writes
/// it (they never reach clients).
#[test]
fn errors_name_their_chunks() {
    let compiled = build_with(
        &[("app", "local M = {}\nfunction M.run()\n  error('boom')\nend\nreturn M", &[])],
        "app.run",
        &[("files", "return {f = function() error('deep') end}", &[])],
        limits(),
    )
    .unwrap();
    let mut vm = bare_vm(no_hosts);
    let scope = vm.begin(Budget::new(1_000_000, None), 16_777_216).unwrap();
    let sandbox = Sandbox::new(&scope, compiled.workflow.unwrap(), Role::Workflow).unwrap();
    let run: mlua::Function = sandbox.require("app").unwrap().get("run").unwrap();
    let message = run.call::<()>(()).unwrap_err().to_string();
    assert!(message.contains("workflow/app (app.luau):3: boom"), "{message}");
    let mission = compiled.missions["m"].clone();
    let sandbox = Sandbox::new(&scope, mission, Role::Mission).unwrap();
    let f: mlua::Function = sandbox.require("files").unwrap().get("f").unwrap();
    let message = f.call::<()>(()).unwrap_err().to_string();
    assert!(message.contains("mission/m/files (m_files.luau):1: deep"), "{message}");
}

/// Templates are shared by concurrent calls.
#[test]
fn compiled_forms_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<crate::apps::Template>();
    assert_send_sync::<crate::apps::Built>();
    fn assert_send<T: Send>() {}
    assert_send::<Sandbox>();
}
