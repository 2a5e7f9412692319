//! execution.md §12.5 `handle:api()`: the vectors API1–API7 and API9 through `run_workflow` and
//! `run_workflow_with` (the exact value, its order, the bounds, the tools part, and that no mission code
//! runs for it). API8 is the gateway's (`tests/black_box/providers_gateway.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::luau::{build_with, Source};
use super::parse;
use crate::apps::luau::{CompiledLuau, ProbeLimits};
use crate::apps::runtime::{
    run_workflow, run_workflow_with, ApiTool, CallLimits, CancelToken, FailCause, RunEnd, RunPorts,
    ToolAnswer, ToolPort, ToolReply,
};
use crate::codes::provider::{Dispatch, FailureClass};
use crate::config::host::ToolEffect;
use crate::json::to_deterministic_string;

/// Component `b`: every documented form of execution.md §12.5, and lines that are not docs.
const B: &str = r#"local M = {}
--- Reads one file.
-- Returns its text.   
function M.read(args) return args end

function M.undocumented() end

-- Not a doc: a blank line follows.

function M.spaced() end
--  Keeps one extra space.
M.assigned = function() end
-- The local's doc.
local function helper() end
M.alias = helper
--[[ a block comment is not a doc ]]
function M.blocked() end
---
-- Method form; empty lines at the ends drop.
--
function M:method() end
M.value = 42
M["not.a.name"] = function() end
return M
"#;

/// Component `a`: byte order puts `Zeta` before `_private` before `alpha`; a function reachable only
/// through a metatable is not listed.
const A: &str = r#"local M = {}
function M.alpha() end
function M._private() end
-- Upper case sorts first.
function M.Zeta() end
return setmetatable(M, {__index = {hidden = function() end}})
"#;

/// Component `spin`: its top-level code spends 50,000 interrupt points whenever it runs.
const SPIN: &str = "for _ = 1, 50000 do end\nreturn {f = function() return 1 end}\n";

/// Component `a` with 300 exported functions `f000`…`f299`, made in a loop (so none has a doc).
const MANY: &str =
    "local M = {}\nfor i = 299, 0, -1 do M[string.format('f%03d', i)] = function() end end\nreturn M\n";

/// Builds an application whose workflow runs `body` (a mission `m` of `mission`), with component `lib`
/// in the workflow for the loading vector.
fn app(body: &str, mission: &[Source]) -> CompiledLuau {
    let source = format!("local M = {{}}\nfunction M.run(input)\n{body}\nend\nreturn M\n");
    let lib = "local ok, e = pcall(function() return H:api() end)\nreturn {ok = ok, table = type(e) == \"table\"}\n";
    let workflow: &[Source] = &[("app", &source, &["lib"]), ("lib", lib, &[])];
    build_with(workflow, "app.run", mission, ProbeLimits::for_application(16_777_216)).unwrap()
}

fn limits(interrupts: u64) -> CallLimits {
    CallLimits {
        interrupts,
        ..CallLimits::for_application(16_777_216, Instant::now() + Duration::from_secs(60))
    }
}

/// The exact JSON of what the run returned, or the run's end when it did not return.
fn json_of(end: RunEnd) -> Result<String, RunEnd> {
    match end {
        RunEnd::Returned(value) => Ok(to_deterministic_string(&value)),
        other => Err(other),
    }
}

fn run(app: &CompiledLuau, interrupts: u64) -> Result<String, RunEnd> {
    json_of(run_workflow(app, &parse("{}"), limits(interrupts), &CancelToken::new()))
}

const API1: &str = concat!(
    r#"{"functions":[{"doc":"Upper case sorts first.","name":"a.Zeta"},{"name":"a._private"},"#,
    r#"{"name":"a.alpha"},{"doc":"The local's doc.","name":"b.alias"},"#,
    r#"{"doc":" Keeps one extra space.","name":"b.assigned"},{"name":"b.blocked"},"#,
    r#"{"doc":"Method form; empty lines at the ends drop.","name":"b.method"},"#,
    r#"{"doc":"Reads one file.\nReturns its text.","name":"b.read"},{"name":"b.spaced"},"#,
    r#"{"name":"b.undocumented"}],"mission":"m","tools":[]}"#
);

/// (what, workflow body, mission components, interrupt budget, exact JSON returned or how the run ended).
type Row<'a> = (&'a str, &'a str, Vec<Source<'a>>, u64, Result<String, RunEnd>);

/// API1–API3, API5–API7, API9: the value without a provider port (no tools), and how it is obtained.
#[test]
fn api_vectors() {
    let two: &[Source] = &[("b", B, &[]), ("a", A, &[])];
    let ordered: &[Source] =
        &[("a_b", "return {x = function() end}", &[]), ("a", "return {x = function() end}", &[])];
    let long = format!("-- a{}\nfunction M.f() end", "é".repeat(2100));
    let long = format!("local M = {{}}\n{long}\nreturn M\n");
    let cut = format!(
        r#"{{"functions":[{{"doc":"a{}","name":"c.f"}}],"mission":"m","tools":[]}}"#,
        "é".repeat(2047)
    );
    let spin: &[Source] = &[("spin", SPIN, &[])];
    let table: Vec<Row> = vec![
        ("API1 the exact value", "return mission('m'):api()", two.to_vec(), 100_000_000, Ok(API1.into())),
        (
            "API2 byte order of whole names ('.' before '_')",
            "return mission('m'):api()",
            ordered.to_vec(),
            100_000_000,
            Ok(r#"{"functions":[{"name":"a.x"},{"name":"a_b.x"}],"mission":"m","tools":[]}"#.into()),
        ),
        ("API3 a doc over 4,096 bytes is cut", "return mission('m'):api()", vec![("c", long.as_str(), &[])], 100_000_000, Ok(cut)),
        (
            "API5 no mission code runs: api() fits a budget the component's loading does not",
            "return mission('m'):api()",
            spin.to_vec(),
            10_000,
            Ok(r#"{"functions":[{"name":"spin.f"}],"mission":"m","tools":[]}"#.into()),
        ),
        (
            "API5 (control) :call loads the component and runs out",
            "return mission('m'):call('spin.f')",
            spin.to_vec(),
            10_000,
            Err(RunEnd::Failed { detail: None, cause: FailCause::InterruptBudget, error: None }),
        ),
        (
            "API6 extra arguments are ignored; every call gives a fresh table",
            "local h = mission('m')\nlocal x, y = h:api(1, 'two'), h:api()\nx.mission = 'changed'\nreturn {same = rawequal(x, y), y = y.mission, equal = json.encode(h:api(1)) == json.encode(h:api())}",
            spin.to_vec(),
            100_000_000,
            Ok(r#"{"equal":true,"same":false,"y":"m"}"#.into()),
        ),
        (
            "API6 api is a method of a handle only",
            "local ok = pcall(function() return mission('m').api({}) end)\nreturn {ok = ok}",
            spin.to_vec(),
            100_000_000,
            Ok(r#"{"ok":false}"#.into()),
        ),
        (
            "API7 raises while a module loads",
            "H = mission('m')\nreturn require('lib')",
            spin.to_vec(),
            100_000_000,
            Ok(r#"{"ok":false,"table":false}"#.into()),
        ),
        (
            "API9 at most 256 functions, the first in byte order",
            "local f = mission('m'):api().functions\nreturn {n = #f, first = f[1].name, last = f[256].name}",
            vec![("a", MANY, &[])],
            100_000_000,
            Ok(r#"{"first":"a.f000","last":"a.f255","n":256}"#.into()),
        ),
    ];
    for (what, body, mission, interrupts, want) in table {
        assert_eq!(run(&app(body, &mission), interrupts), want, "{what}");
    }
}

/// A port that grants `tools` to mission `m` (in the order given) and answers no call.
struct Granting(Vec<ApiTool>);

impl ToolPort for Granting {
    fn call(&self, _: &str, _: &str, _: Option<Value>) -> ToolAnswer {
        ToolAnswer {
            reply: ToolReply::failed(FailureClass::ToolNotGranted, Dispatch::False),
            request_id: None,
        }
    }

    fn granted_tools(&self, mission: &str) -> Vec<ApiTool> {
        if mission == "m" {
            self.0.clone()
        } else {
            Vec::new()
        }
    }
}

fn granted(alias: &str, description: Option<&str>, schema: &str, effect: ToolEffect) -> ApiTool {
    ApiTool {
        alias: alias.into(),
        description: description.map(str::to_owned),
        input_schema: Arc::new(parse(schema)),
        output_schema: None,
        effect,
    }
}

/// API4: the granted aliases with description, input schema and effect, sorted by alias whatever order
/// the port gave; a missing description is absent; nulls and arrays of the schema survive.
#[test]
fn api_lists_granted_tools() {
    let schema =
        r#"{"type":"object","properties":{"path":{"type":"string","default":null}},"required":["path"]}"#;
    let port = Granting(vec![
        granted("notes.write", None, r#"{"type":"object"}"#, ToolEffect::Write),
        granted("notes.read", Some("Read a note."), schema, ToolEffect::Read),
        granted("notes.Read", Some(""), r#"{"type":"object","properties":{}}"#, ToolEffect::Read),
    ]);
    let app = app("return mission('m'):api().tools", &[("a", "return {}", &[])]);
    let ports = RunPorts { tools: Some(Arc::new(port)), models: None, observer: None };
    let end = run_workflow_with(&app, &parse("{}"), limits(100_000_000), &CancelToken::new(), ports);
    let want = concat!(
        r#"[{"alias":"notes.Read","description":"","effect":"read","input_schema":{"properties":{},"type":"object"}},"#,
        r#"{"alias":"notes.read","description":"Read a note.","effect":"read","input_schema":{"properties":"#,
        r#"{"path":{"default":null,"type":"string"}},"required":["path"],"type":"object"}},"#,
        r#"{"alias":"notes.write","effect":"write","input_schema":{"type":"object"}}]"#
    );
    assert_eq!(json_of(end), Ok(want.to_owned()));
}

/// Hears only the listings (traces.md §5.8).
#[derive(Default)]
struct Listings(std::sync::Mutex<Vec<crate::apps::runtime::ToolsListed>>);

impl crate::apps::runtime::RunObserver for Listings {
    fn mission_ended(&self, _: crate::apps::runtime::MissionEnded) {}
    fn tool_returned(&self, _: crate::apps::runtime::ToolReturned) {}
    fn model_returned(&self, _: crate::apps::runtime::ModelReturned) {}
    fn tools_listed(&self, listed: crate::apps::runtime::ToolsListed) {
        self.0.lock().unwrap().push(listed);
    }
}

/// traces.md §5.8: a traced run's observer hears a mission's granted tools once per run, sorted by alias
/// as `handle:api()` shows them, however often it is asked; a mission granted nothing is not reported.
#[test]
fn the_listing_is_reported_once_per_mission() {
    let listed = |tools: Vec<ApiTool>| {
        let app =
            app("return #mission('m'):api().tools + #mission('m'):api().tools", &[("a", "return {}", &[])]);
        let observer = Arc::new(Listings::default());
        let ports = RunPorts {
            tools: Some(Arc::new(Granting(tools))),
            models: None,
            observer: Some(observer.clone()),
        };
        let end = run_workflow_with(&app, &parse("{}"), limits(100_000_000), &CancelToken::new(), ports);
        let heard = std::mem::take(&mut *observer.0.lock().unwrap());
        (json_of(end), heard)
    };
    let (end, heard) = listed(vec![
        granted("notes.write", None, r#"{"type":"object"}"#, ToolEffect::Write),
        granted("notes.read", Some("Read a note."), r#"{"type":"object"}"#, ToolEffect::Read),
    ]);
    assert_eq!(end, Ok("4".to_owned()));
    let missions: Vec<_> = heard.iter().map(|l| l.mission.as_str()).collect();
    assert_eq!(missions, ["m"]);
    let order: Vec<_> = heard[0].tools.iter().map(|t| t.alias.as_str()).collect();
    assert_eq!(order, ["notes.read", "notes.write"]);
    let (end, heard) = listed(Vec::new());
    assert_eq!((end, heard.len()), (Ok("0".to_owned()), 0));
}
