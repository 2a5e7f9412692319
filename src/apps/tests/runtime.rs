//! execution.md §12.4–§12.6, §14: runs through `run_workflow`: mission handles, `:call`/`:eval`, the
//! crossing by value, `fail`, `tool`, the globals, the round-trip table and isolation between calls.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use super::luau::{build_with, Source};
use super::*;
use crate::apps::luau::budget::INTERRUPT_BUDGET;
use crate::apps::luau::{CompiledLuau, ProbeLimits};
use crate::apps::runtime::{run_workflow, CallLimits, CancelToken, FailCause, LuauError, RunEnd};

/// Mission `m`'s component `a`: one function per behaviour under test.
pub(super) const MISSION_A: &str = r#"
local M = {n = 0}
function M.id(x) return x end
function M.inc() M.n += 1 return M.n end
function M.mutate(t) t.x = 99 return t end
function M.fail(v) fail(v) end
function M.fail_caught(v) pcall(fail, v) return "resumed" end
function M.fail_fn() fail(function() end) end
function M.fail_then_act(v) pcall(fail, v) M.acted = true end
function M.xfail_then_act(v) xpcall(fail, function() M.acted = true end, v) M.acted = true end
function M.acted_get() return M.acted == true end
function M.err() error("deep") end
function M.fn() return function() end end
function M.tool(x) return tool(x.alias, x.args) end
function M.tool_bad() return tool(42, {}) end
function M.global_get() return leaked_m == true end
function M.global_set() leaked_m = true end
function M.spin() while true do end end
function M.hog(n) local s = string.rep("y", n) return #s end
function M.keep(n) M.kept = string.rep("y", n) return #M.kept end
function M.hog_table() local t = {} for i = 1, 1e7 do t[i] = string.rep("x", 64) .. i end return #t end
return M
"#;

/// Mission `m`'s component `lazy`: host functions are refused while it loads (execution.md §12.2), at run
/// time too.
const MISSION_LAZY: &str = r#"
local tool_ok = pcall(tool, "notes.read", {})
local fail_ok = pcall(fail, "x")
return {get = function() return {tool = tool_ok, fail = fail_ok} end}
"#;

pub(super) const MISSION: &[Source] = &[("a", MISSION_A, &[]), ("lazy", MISSION_LAZY, &[])];

/// The workflow's `try(f)`: what a mission invocation gave, as JSON.
const TRY: &str = r#"
local function try(f)
  local ok, e = pcall(f)
  if ok then return {ok = true, value = e} end
  if type(e) ~= "table" then return {ok = false, raised = "plain"} end
  return {ok = false, kind = e.kind, value = e.value}
end
"#;

/// An application whose workflow `app.run(input)` has `body`, with `try` in scope, and mission `m`.
pub(super) fn app(body: &str) -> CompiledLuau {
    let source = format!("{TRY}\nlocal M = {{}}\nfunction M.run(input)\n{body}\nend\nreturn M\n");
    build_with(&[("app", &source, &[])], "app.run", MISSION, ProbeLimits::for_application(16_777_216))
        .unwrap()
}

pub(super) fn limits() -> CallLimits {
    let limits = CallLimits::for_application(16_777_216, Instant::now() + Duration::from_secs(60));
    assert_eq!((limits.memory_bytes, limits.interrupts), (16_777_216, INTERRUPT_BUDGET));
    limits
}

pub(super) fn run(app: &CompiledLuau, input: &str) -> RunEnd {
    bare(run_workflow(app, &parse(input), limits(), &CancelToken::new()))
}

/// `end` without an uncaught error's message and traceback, which `uncaught_errors_name_file_and_line`
/// checks exactly: the other tests compare classes.
pub(super) fn bare(end: RunEnd) -> RunEnd {
    match end {
        RunEnd::Failed { detail, cause, .. } => RunEnd::Failed { detail, cause, error: None },
        other => other,
    }
}

pub(super) fn returned(json: &str) -> RunEnd {
    RunEnd::Returned(parse(json))
}

/// An uncaught error (a mission failure included).
pub(super) fn failed() -> RunEnd {
    failed_by(FailCause::UncaughtError)
}

pub(super) fn failed_by(cause: FailCause) -> RunEnd {
    RunEnd::Failed { detail: None, cause, error: None }
}

fn detail(s: &str) -> RunEnd {
    RunEnd::Failed { detail: Some(s.to_owned()), cause: FailCause::Fail, error: None }
}

#[test]
fn echo_returns_its_input() {
    let echo =
        build_with(&[("app", ECHO_APP, &[])], "app.run", &[], ProbeLimits::for_application(16_777_216))
            .unwrap();
    assert_eq!(run(&echo, r#"{"a":[1,{"b":null}]}"#), returned(r#"{"a":[1,{"b":null}]}"#));
}

/// execution.md §12.5: handles, `:call`, `:eval`, failures, `tool`; execution.md §14.3: values cross by
/// value.
#[test]
fn mission_vectors() {
    let not_granted = r#"{"ok":false,"error":{"code":"tool_not_granted","message":"Tool not granted","retryable":false,"dispatch":"false"}}"#;
    let table: &[(&str, &str, RunEnd)] = &[
        (
            "values cross by value, nulls and array marks kept",
            "return try(function() return mission('m'):call('a.id', {a = json.null, b = json.array(), c = {1, json.null, 3}}) end)",
            returned(r#"{"ok":true,"value":{"a":null,"b":[],"c":[1,null,3]}}"#),
        ),
        ("nil stays nil", "return try(function() return mission('m'):call('a.id') end)", returned(r#"{"ok":true}"#)),
        (
            "arguments are copied, results are fresh tables",
            "local t = {x = 1}\nlocal r = mission('m'):call('a.mutate', t)\nreturn {t = t.x, r = r.x, same = rawequal(t, r)}",
            returned(r#"{"t":1,"r":99,"same":false}"#),
        ),
        (
            "the workflow's own json.null",
            "local v = mission('m'):call('a.id', {json.null})\nreturn {null = v[1] == json.null}",
            returned(r#"{"null":true}"#),
        ),
        (
            "one sandbox per mission per call, shared by handles",
            "local h = mission('m')\nh:call('a.inc')\nmission('m'):call('a.inc')\nreturn {n = h:call('a.inc')}",
            returned(r#"{"n":3}"#),
        ),
        ("undeclared mission raises", "return try(function() return mission('nope') end)", returned(r#"{"ok":false,"raised":"plain"}"#)),
        ("non-string mission name raises", "return try(function() return mission(1) end)", returned(r#"{"ok":false,"raised":"plain"}"#)),
        ("uncaught undeclared mission", "mission('nope')\nreturn {}", failed()),
        ("unknown function", "return try(function() return mission('m'):call('a.missing') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("not a function", "return try(function() return mission('m'):call('a.n') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("unknown component", "return try(function() return mission('m'):call('zz.f') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("target without a dot", "return try(function() return mission('m'):call('a') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("target with two dots", "return try(function() return mission('m'):call('a.id.x') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("non-string target", "return try(function() return mission('m'):call(42) end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("function argument", "return try(function() return mission('m'):call('a.id', function() end) end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("mixed-table argument", "return try(function() return mission('m'):call('a.id', {1, x = 2}) end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("non-convertible result", "return try(function() return mission('m'):call('a.fn') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("mission runtime error", "return try(function() return mission('m'):call('a.err') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("mission fail", "return try(function() return mission('m'):call('a.fail', {x = 1}) end)", returned(r#"{"ok":false,"kind":"fail","value":{"x":1}}"#)),
        ("mission fail is not catchable in the mission", "return try(function() return mission('m'):call('a.fail_caught', 'v') end)", returned(r#"{"ok":false,"kind":"fail","value":"v"}"#)),
        (
            "nothing of the mission runs after its fail, not even after pcall",
            "local h = mission('m')\npcall(h.call, h, 'a.fail_then_act', 1)\npcall(h.call, h, 'a.xfail_then_act', 1)\nreturn {acted = h:call('a.acted_get')}",
            returned(r#"{"acted":false}"#),
        ),
        ("non-convertible fail value is nil", "return try(function() return mission('m'):call('a.fail_fn') end)", returned(r#"{"ok":false,"kind":"fail"}"#)),
        (
            "the mission sandbox is usable after a fail",
            "local h = mission('m')\npcall(h.call, h, 'a.fail', 1)\nreturn try(function() return h:call('a.inc') end)",
            returned(r#"{"ok":true,"value":1}"#),
        ),
        ("an uncaught mission error fails the run", "mission('m'):call('a.err')\nreturn {}", failed()),
        ("an uncaught mission fail adds no detail", "mission('m'):call('a.fail', 'secret')\nreturn {}", failed()),
        (
            "the workflow passes a mission's fail string on",
            "local h = mission('m')\nlocal ok, e = pcall(h.call, h, 'a.fail', 'boom')\nfail(e.value)",
            detail("boom"),
        ),
        ("eval may require any component", "return try(function() return mission('m'):eval(\"return require('a').inc() + 10\") end)", returned(r#"{"ok":true,"value":11}"#)),
        ("eval shares the mission sandbox", "local h = mission('m')\nh:call('a.inc')\nreturn {n = h:eval(\"return require('a').n\")}", returned(r#"{"n":1}"#)),
        (
            "require through pcall in eval",
            "return {ok = mission('m'):eval(\"local ok, a = pcall(require, 'a') return ok and a.inc() == 1\")}",
            returned(r#"{"ok":true}"#),
        ),
        ("eval compile error", "return try(function() return mission('m'):eval('return (') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        (
            "eval chunk name",
            "local h = mission('m')\nlocal ok, e = pcall(h.eval, h, \"error('x')\")\nreturn {named = string.find(e.message, 'mission/m/eval:1: x', 1, true) ~= nil}",
            returned(r#"{"named":true}"#),
        ),
        (
            "eval source of 262,144 bytes",
            "return try(function() return mission('m'):eval(string.rep(' ', 262144 - 8) .. 'return 1') end)",
            returned(r#"{"ok":true,"value":1}"#),
        ),
        (
            "eval source of 262,145 bytes",
            "return try(function() return mission('m'):eval(string.rep(' ', 262145 - 8) .. 'return 1') end)",
            returned(r#"{"ok":false,"kind":"error"}"#),
        ),
        ("non-string eval source", "return try(function() return mission('m'):eval(1) end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("eval fail", "return try(function() return mission('m'):eval('fail(7)') end)", returned(r#"{"ok":false,"kind":"fail","value":7}"#)),
        (
            "tool answers tool_not_granted",
            "return {r = mission('m'):call('a.tool', {alias = 'notes.read', args = {path = 'x'}})}",
            returned(&format!(r#"{{"r":{not_granted}}}"#)),
        ),
        (
            "tool with nil arguments",
            "return {r = mission('m'):call('a.tool', {alias = 'anything'})}",
            returned(&format!(r#"{{"r":{not_granted}}}"#)),
        ),
        ("tool with a non-string alias raises", "return try(function() return mission('m'):call('a.tool_bad') end)", returned(r#"{"ok":false,"kind":"error"}"#)),
        ("host functions raise while a mission module loads", "return mission('m'):call('lazy.get')", returned(r#"{"tool":false,"fail":false}"#)),
        ("a forged handle is refused", "return try(function() local h = mission('m'); return h.call({}, 'a.inc') end)", returned(r#"{"ok":false,"raised":"plain"}"#)),
        ("handles are read-only", "return try(function() local h = mission('m'); h.call = nil end)", returned(r#"{"ok":false,"raised":"plain"}"#)),
    ];
    for (what, body, want) in table {
        assert_eq!(run(&app(body), "{}"), *want, "{what}");
    }
}

/// execution.md §12.2 at run time: a workflow module loaded lazily cannot reach outside while it loads.
#[test]
fn host_functions_raise_while_a_workflow_module_loads() {
    let lazy = "local ok = pcall(mission, 'm')\nlocal okf = pcall(fail, 'x')\nreturn {ok = ok, okf = okf}";
    // Through `pcall`, whose guard (a host chunk) `require` looks past to find the calling component.
    let app_src = "return {run = function() local ok, l = pcall(require, 'lazy') return {required = ok, mission = l.ok, fail = l.okf} end}";
    let compiled = build_with(
        &[("app", app_src, &["lazy"]), ("lazy", lazy, &[])],
        "app.run",
        MISSION,
        ProbeLimits::for_application(16_777_216),
    )
    .unwrap();
    assert_eq!(run(&compiled, "{}"), returned(r#"{"required":true,"mission":false,"fail":false}"#));
}

/// execution.md §7.2, §12.5: which `fail` values become the detail; `fail` cannot be caught.
#[test]
fn fail_detail_vectors() {
    let table: &[(&str, &str, RunEnd)] = &[
        ("1 byte", "fail(string.rep('a', 1))", detail("a")),
        (
            "1024 bytes",
            "fail(string.rep('a', 1024))",
            RunEnd::Failed { detail: Some("a".repeat(1024)), cause: FailCause::Fail, error: None },
        ),
        ("1025 bytes", "fail(string.rep('a', 1025))", failed_by(FailCause::Fail)),
        ("empty", "fail('')", failed_by(FailCause::Fail)),
        ("non-string", "fail(42)", failed_by(FailCause::Fail)),
        ("table", "fail({'x'})", failed_by(FailCause::Fail)),
        ("nil", "fail()", failed_by(FailCause::Fail)),
        ("invalid UTF-8", "fail('\\xff')", failed_by(FailCause::Fail)),
        ("multi-byte UTF-8", "fail('\\u{e9}')", detail("é")),
        ("caught by pcall, still ends the run", "pcall(fail, 'caught')\nreturn {}", detail("caught")),
        ("the first fail wins", "pcall(fail, 'first')\nfail('second')", detail("first")),
        (
            "xpcall's handler does not resume it",
            "xpcall(fail, function() return 1 end, 'x')\nwhile true do end",
            detail("x"),
        ),
        ("uncaught error", "error('not a detail')", failed()),
    ];
    for (what, body, want) in table {
        assert_eq!(run(&app(body), "{}"), *want, "{what}");
    }
}

/// execution.md §14.5 through the runtime: as the entry's input and result, and across `:call` both ways.
#[test]
fn round_trip_vectors() {
    let echo = app("return input");
    let across = app("return mission('m'):call('a.id', input)");
    for (input, output) in super::convert::ROUND_TRIPS {
        for (how, app) in [("echo", &echo), ("across :call", &across)] {
            let RunEnd::Returned(v) = run(app, input) else { panic!("{how} {input}") };
            assert_eq!(crate::json::to_deterministic_string(&v), *output, "{how} {input}");
        }
    }
    let deep = format!("{}{{}}{}", "[".repeat(63), "]".repeat(63));
    let luau_only: &[(&str, Option<&str>)] = &[
        ("{ 1, 2, 3 }", Some("[1,2,3]")),
        ("json.array()", Some("[]")),
        ("{ [1] = 'a', [3] = 'c' }", None),
        ("{ 1, x = 2 }", None),
        ("{ [1.5] = true }", None),
        ("0/0", None),
        ("'\\xff'", None),
        ("-0.0", Some("0")),
        ("1e300", Some("1e300")),
        ("nil", None),
        // Depth 65 (64 arrays around an object) is over the bound of execution.md §8.2; depth 64 is not.
        ("(function() local t = {} for _ = 1, 64 do t = {t} end return t end)()", None),
        ("(function() local t = {} for _ = 1, 63 do t = {t} end return t end)()", Some(&deep)),
    ];
    for (expression, want) in luau_only {
        let got = run(&app(&format!("return {expression}")), "{}");
        let want = match want {
            Some(json) => returned(json),
            None => RunEnd::NotConvertible,
        };
        assert_eq!(got, want, "{expression}");
    }
}

/// execution.md §12.4: the globals of the workflow and of a mission, exactly.
const GLOBALS_CHECK: &str = r#"
local absent = {"io", "os", "debug", "coroutine", "load", "loadstring", "dofile", "loadfile", "collectgarbage",
                "gcinfo", "getfenv", "setfenv", "newproxy", "print", "vector", ABSENT}
local present = {"assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget",
                 "rawlen", "rawset", "select", "setmetatable", "tonumber", "tostring", "type", "typeof", "unpack",
                 "xpcall", "_G", "_VERSION", "string", "table", "utf8", "bit32", "buffer", "math", "require",
                 "json", "fail", PRESENT}
local wrong = json.array()
for _, name in ipairs(absent) do if _G[name] ~= nil then table.insert(wrong, "has " .. name) end end
for _, name in ipairs(present) do if _G[name] == nil then table.insert(wrong, "lacks " .. name) end end
if math.random ~= nil or math.randomseed ~= nil then table.insert(wrong, "has math.random") end
if type(math.floor) ~= "function" then table.insert(wrong, "lacks math.floor") end
if pcall(function() string.upper = nil end) then table.insert(wrong, "string is writable") end
if pcall(function() json.null = 1 end) then table.insert(wrong, "json is writable") end
return wrong
"#;

#[test]
fn globals_are_exactly_those_of_section_12_4() {
    let workflow = GLOBALS_CHECK.replace("ABSENT", "\"tool\"").replace("PRESENT", "\"mission\", \"model\"");
    let mission = GLOBALS_CHECK.replace("ABSENT", "\"mission\", \"model\"").replace("PRESENT", "\"tool\"");
    let body = format!(
        "local function check()\n{workflow}\nend\nreturn {{workflow = check(), mission = mission('m'):eval({})}}",
        lua_string(&mission)
    );
    assert_eq!(run(&app(&body), "{}"), returned(r#"{"workflow":[],"mission":[]}"#));
}

/// A Luau string literal of `s`.
fn lua_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n"))
}

/// execution.md §12.4: no files, clock, environment, randomness or process state, in the workflow or a
/// mission.
#[test]
fn a_program_cannot_reach_outside() {
    let attempts = [
        "io.open('/etc/passwd')",
        "os.time()",
        "os.clock()",
        "os.getenv('HOME')",
        "os.execute('true')",
        "require('/etc/passwd')",
        "require('a')",
        "loadstring('return 1')",
        "load('return 1')",
        "dofile('/etc/passwd')",
        "loadfile('/etc/passwd')",
        "debug.getinfo(1)",
        "getfenv(1)",
        "collectgarbage('count')",
        "gcinfo()",
        "newproxy()",
        "print('x')",
        "math.random()",
        "coroutine.create(function() end)",
        "tool('notes.read', {})",
    ];
    for attempt in attempts {
        assert_eq!(run(&app(&format!("return {{v = {attempt}}}")), "{}"), failed(), "workflow: {attempt}");
        let in_mission =
            format!("return {{v = mission('m'):eval({})}}", lua_string(&format!("return {attempt}")));
        if attempt.starts_with("tool") {
            continue;
        }
        assert_eq!(run(&app(&in_mission), "{}"), failed(), "mission: {attempt}");
    }
}

/// A workflow that reports what a previous call left (a global, a workflow module field, a mission
/// global) and then leaves its own marks, optionally tagged with `input.id` and holding on for a while.
fn marking_app() -> CompiledLuau {
    let source = r#"
local counter = require("counter")
return {run = function(input)
  local seen = {global = leaked ~= nil, module = counter.n, mission = mission("m"):call("a.global_get")}
  leaked = input.id
  counter.n += 1
  counter.owner = input.id
  mission("m"):call("a.global_set")
  for _ = 1, (input.spin or 0) do end
  seen.global_after = leaked
  seen.owner_after = counter.owner
  return seen
end}
"#;
    build_with(
        &[("app", source, &["counter"]), ("counter", "return {n = 0}", &[])],
        "app.run",
        MISSION,
        ProbeLimits::for_application(16_777_216),
    )
    .unwrap()
}

/// execution.md §12.6: nothing a previous or concurrent call created is visible.
#[test]
fn calls_do_not_see_each_other() {
    let compiled = Arc::new(marking_app());
    let fresh = |id: u32| {
        returned(&format!(
            r#"{{"global":false,"module":0,"mission":false,"global_after":{id},"owner_after":{id}}}"#
        ))
    };
    assert_eq!(run(&compiled, r#"{"id":1}"#), fresh(1));
    assert_eq!(run(&compiled, r#"{"id":2}"#), fresh(2));
    // Two calls at once on two threads, each holding on while the other writes.
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (10..12)
        .map(|id| {
            let (compiled, barrier) = (compiled.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                run(&compiled, &format!(r#"{{"id":{id},"spin":300000}}"#))
            })
        })
        .collect();
    for (thread, id) in threads.into_iter().zip(10..12) {
        assert_eq!(thread.join().unwrap(), fresh(id));
    }
}

/// execution.md §12.5: `:eval` compiles source text only; bytecode smuggled in a string is refused (loading
/// untrusted bytecode is unsafe in Luau).
#[test]
fn eval_refuses_bytecode() {
    let bytecode = crate::apps::luau::compile_source(b"return 1").unwrap();
    let escaped: String = bytecode.iter().map(|b| format!("\\x{b:02x}")).collect();
    let body = format!("return try(function() return mission('m'):eval(\"{escaped}\") end)");
    assert_eq!(run(&app(&body), "{}"), returned(r#"{"ok":false,"kind":"error"}"#));
    // The same source as text runs.
    assert_eq!(
        run(&app("return try(function() return mission('m'):eval('return 1') end)"), "{}"),
        returned(r#"{"ok":true,"value":1}"#)
    );
}

/// docs/security.md section 8, execution.md §12.8 (recursion): nesting and recursion that would overflow a
/// native stack (the compiler on deeply nested source, the JSON decoder, a callback that re-enters the
/// pattern matcher, recursive metamethods, `tostring`, `table.sort`) are ordinary errors a script can catch,
/// in the workflow and through `:eval` (every source here within the 262,144-byte bound of `:eval`), never a
/// crash of the gateway.
#[test]
fn deep_nesting_and_native_recursion_are_errors() {
    let attempts = [
        "mission('m'):eval('return ' .. string.rep('(', 100000) .. '1' .. string.rep(')', 100000))",
        "mission('m'):eval('return ' .. string.rep('{', 100000) .. string.rep('}', 100000))",
        "mission('m'):eval('return ' .. string.rep('not ', 60000) .. 'true')",
        "mission('m'):eval(string.rep('do ', 30000) .. string.rep('end ', 30000))",
        "json.decode(string.rep('[', 200000) .. string.rep(']', 200000))",
        "(function() local function f(s) return (string.gsub(s, '.', f)) end return f('ab') end)()",
        "(function() local t t = setmetatable({}, {__index = function(_, k) return t[k] end}) return t.x end)()",
        "(function() local t t = setmetatable({}, {__tostring = function(v) return tostring(v) end}) return tostring(t) end)()",
        "(function() local t = {} for i = 1, 100 do t[i] = i end local function c(a, b) table.sort(t, c) return a < b end table.sort(t, c) end)()",
    ];
    for attempt in attempts {
        let body = format!("local ok = pcall(function() return {attempt} end)\nreturn {{ok = ok}}");
        assert_eq!(run(&app(&body), "{}"), returned(r#"{"ok":false}"#), "{attempt}");
    }
}

/// docs/security.md section 8, execution.md §14.4: `json.decode` takes at most 2,097,152 bytes, 64 levels
/// and 100,000 nodes (the request bounds of http-mcp.md §7.1); one more of each is an error a script can
/// catch.
#[test]
fn json_decode_is_bounded() {
    let cases = [
        ("string.rep(' ', 2097150) .. '{}'", true),
        ("string.rep(' ', 2097151) .. '{}'", false),
        ("string.rep('[', 64) .. string.rep(']', 64)", true),
        ("string.rep('[', 65) .. string.rep(']', 65)", false),
        ("'[' .. string.rep('0,', 99998) .. '0]'", true),
        ("'[' .. string.rep('0,', 99999) .. '0]'", false),
    ];
    for (text, fits) in cases {
        let body = format!("local ok = pcall(json.decode, {text})\nreturn {{ok = ok}}");
        assert_eq!(run(&app(&body), "{}"), returned(&format!(r#"{{"ok":{fits}}}"#)), "{text}");
    }
}

/// What one call of the isolation tools sees of everything a call could try to change, then tries to
/// change all of it. `TAG` tells the two tools apart.
const PROBING_APP: &str = r#"
local shared = require("shared")
local function refused(f) return not pcall(f) end
return {run = function(input)
  local handle = mission("m")
  local seen = {
    global = rawget(_G, "leaked") == nil and leaked == nil,
    module = shared.n == 0 and shared.tag == nil,
    string_meta = getmetatable("").__index == string and ("x").tag == nil and string.tag == nil,
    -- mlua protects the mark: `getmetatable` does not return it.
    array_mark = type(getmetatable(json.array())) ~= "table" and json.array().tag == nil,
    libraries = table.tag == nil and math.tag == nil and json.tag == nil,
    handle_meta = getmetatable(handle).tag == nil,
    mission = handle:call("a.global_get") == false and handle:call("a.inc") == 1,
  }
  leaked = "TAG"
  shared.n += 1
  shared.tag = "TAG"
  local attempts = {
    refused(function() getmetatable("").tag = "TAG" end),
    refused(function() getmetatable("").__index = {tag = "TAG"} end),
    refused(function() string.tag = "TAG" end),
    refused(function() getmetatable(json.array()).tag = "TAG" end),
    refused(function() getmetatable(json.array()).__index = {tag = "TAG"} end),
    refused(function() table.tag = "TAG" end),
    refused(function() math.tag = "TAG" end),
    refused(function() json.tag = "TAG" end),
    refused(function() _G.tag = "TAG" end),
    refused(function() rawset(_G, "leaked", "TAG") end),
    refused(function() setmetatable(_G, {}) end),
    refused(function() getmetatable(handle).tag = "TAG" end),
  }
  handle:call("a.global_set")
  local all = true
  for _, r in ipairs(attempts) do all = all and r end
  seen.attempts_refused = all
  return seen
end}
"#;

/// execution.md §12.6, issue 14: 10,000 calls on one thread (so in one Luau state), alternating two tools;
/// no global, module table or metatable change of one call is visible to any later call.
#[test]
fn ten_thousand_alternating_calls_do_not_see_each_other() {
    let tool = |tag: &str| {
        let source = PROBING_APP.replace("TAG", tag);
        build_with(
            &[("app", &source, &["shared"]), ("shared", "return {n = 0}", &[])],
            "app.run",
            MISSION,
            ProbeLimits::for_application(16_777_216),
        )
        .unwrap()
    };
    let tools = [tool("a"), tool("b")];
    let fresh = returned(
        r#"{"global":true,"module":true,"string_meta":true,"array_mark":true,"libraries":true,
            "handle_meta":true,"mission":true,"attempts_refused":true}"#,
    );
    for i in 0..10_000 {
        assert_eq!(run(&tools[i % 2], "{}"), fresh, "call {i}");
        crate::apps::runtime::tidy_after_run();
    }
}

/// traces.md §5.5 and execution.md §12.9: an uncaught error carries its message and the traceback of the
/// component frames, each naming the component's file as the manifest writes it and the line; an error
/// object that is not a string is a fixed description; `fail` carries none.
#[test]
fn uncaught_errors_name_file_and_line() {
    let end = |body: &str| {
        let source = format!("local M = {{}}\nfunction M.run(input)\n{body}\nend\nreturn M\n");
        let probe = ProbeLimits::for_application(16_777_216);
        let app = build_with(&[("app", &source, &[])], "app.run", MISSION, probe).unwrap();
        run_workflow(&app, &parse("{}"), limits(), &CancelToken::new())
    };
    let at = |line: u32| format!("workflow/app (app.luau):{line}: in function 'run'");
    let table = [
        ("  error('boom')", "workflow/app (app.luau):3: boom".to_owned(), at(3)),
        (
            "  local t = nil\n  return t.x",
            "workflow/app (app.luau):4: attempt to index nil with 'x'".into(),
            at(4),
        ),
        ("  mission('m'):call('a.err')", "(error object is a table, not a string)".into(), at(3)),
        ("  error({1, 2})", "(error object is a table, not a string)".into(), at(3)),
        ("  mission('nope')", "mission: not a declared mission".into(), at(3)),
        ("  error(string.rep('é', 600))", format!("workflow/app (app.luau):3: {}", "é".repeat(498)), at(3)),
    ];
    for (body, message, traceback) in table {
        let want = LuauError { message, traceback: Some(traceback) };
        let got = end(body);
        assert_eq!(
            got,
            RunEnd::Failed { detail: None, cause: FailCause::UncaughtError, error: Some(want) },
            "{body}"
        );
    }
    assert_eq!(
        end("  fail('x')"),
        RunEnd::Failed { detail: Some("x".into()), cause: FailCause::Fail, error: None }
    );
}
