//! `ptc replay` (replay.md), vectors RP1–RP10 of replay.md §8: recorded runs over the real stdio fixture and
//! the scripted model fixture, replayed with the gateway and the fixtures stopped; the exact texts of
//! every verdict, the `--json` object parsed, the exit codes, no upstream process started, no credential
//! in any output.

use crate::support;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::{json, Value};
use support::openai::OpenAiFixture;
use support::providers::{call, mission_args, structured, Fx};
use support::{content_pin, ptc, run_with_deadline, Gateway};

use crate::traces_replay::digest;

/// A secret only the upstream's environment sees (the `flags` credential); replay reads no credential.
const SENTINEL: &str = "sentinel-replay-cmd-93b1";

/// The fixture deployment's workflow, line by line as the edits below change it.
const APP: &str = "local M = {}\nfunction M.run(input)\n  return mission(\"default\"):call(\"calls.run\", input)\nend\nreturn M\n";

fn deployment(trace: Value) -> Fx {
    let mut fx = Fx::new("modern");
    fx.d.gateway["artifacts"]["trace"] = trace;
    fx.pin();
    fx
}

/// `ptc replay` in the deployment's directory with `args`, the sentinel in its environment (never read).
fn replay(fx: &Fx, args: &[&str]) -> Output {
    let mut cmd = ptc();
    cmd.current_dir(fx.d.dir.path()).arg("replay").args(args).env("FX_FLAGS", SENTINEL);
    let out = run_with_deadline(cmd, Duration::from_secs(60));
    for stream in [&out.stdout, &out.stderr] {
        assert!(!String::from_utf8_lossy(stream).contains(SENTINEL), "a credential in the output");
    }
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("utf-8")
}

/// The records of every trace file, oldest run first.
fn traces(fx: &Fx) -> Vec<Vec<Value>> {
    support::trace_files(&fx.d.path("artifacts/traces")).into_iter().map(|(_, records)| records).collect()
}

fn run_ref(records: &[Value]) -> &str {
    records[0]["run_ref"].as_str().expect("run_ref")
}

/// `ptc pin` after an edit (it starts the fixture for discovery); then the marker is cleared, so it shows
/// only what the replay does.
fn pin(fx: &Fx) {
    let mut cmd = ptc();
    cmd.current_dir(fx.d.dir.path()).args(["pin", "ptc-gateway.json"]).env("FX_FLAGS", "none");
    let out = run_with_deadline(cmd, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let _ = std::fs::remove_file(&fx.marker);
}

/// The `recorded:` line of a `different` run: the recorded result when `run_end` holds it, its digest
/// otherwise (replay.md §6.1).
fn recorded_line(end: &Value) -> String {
    match end.get("result").and_then(|r| r.get("value")) {
        Some(value) => format!("  recorded: {}\n", serde_json::to_string(value).expect("json")),
        None => format!(
            "  recorded: {} (the trace holds only its digest)\n",
            end["result_digest"].as_str().expect("d")
        ),
    }
}

/// RP1–RP5 over one recording of three calls through the stdio fixture with `replay`: replayed as
/// recorded (`same`, no upstream started), after an edit that publishes something else (`different`,
/// the first difference), after one that calls the upstream with other arguments (`diverged`, position
/// and alias and both digests), after one that fails (the Luau error with component and line), and after
/// an edit not re-pinned (78, explained).
#[test]
fn rp1_rp5_three_recorded_calls_replayed_as_recorded_and_after_edits() {
    let fx = deployment(json!({"replay": true}));
    {
        let cmd = fx.command(&format!("none,{SENTINEL}"));
        let _gateway = Gateway::start(cmd, fx.addr());
        for k in 1..=3 {
            let (status, body) = call(fx.addr(), "mission", k, &mission_args("fx.echo", json!({"k": k})));
            assert_eq!(status, 200, "{body}");
            assert_eq!(structured(&body).expect("result")["value"], json!({"k": k}));
        }
    }
    let _ = std::fs::remove_file(&fx.marker);
    let runs = traces(&fx);
    assert_eq!(runs.len(), 3);

    // RP1: three `same`, exit 0, and the fixture was never started (it writes `spawn` when it starts).
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "3 runs: 3 same, 0 different, 0 diverged, 0 not replayable\n");
    assert_eq!(text(&out.stderr), "");
    assert!(!fx.marker.exists(), "replay started the upstream");
    let out = replay(&fx, &["--json", "ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(0));
    let parsed: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let results: Vec<Value> = runs
        .iter()
        .map(|r| {
            json!({"run_ref": run_ref(r), "tool": "mission", "verdict": "same",
                   "detail": {"result_digest": r.last().expect("run_end")["result_digest"]}})
        })
        .collect();
    assert_eq!(
        parsed,
        json!({"runs": 3, "same": 3, "different": 0, "diverged": 0, "not_replayable": 0, "results": results})
    );

    // RP2: the workflow edited and re-pinned to publish something else: three `different`, exit 1.
    let edited = APP.replace(
        "  return mission(\"default\"):call(\"calls.run\", input)\n",
        "  local r = mission(\"default\"):call(\"calls.run\", input)\n  r.edited = true\n  return r\n",
    );
    fx.d.write_file("mission/app.luau", &edited);
    pin(&fx);
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let mut want = String::new();
    for (k, records) in runs.iter().enumerate() {
        let end = records.last().expect("run_end");
        want.push_str(&format!("{} mission: different\n", run_ref(records)));
        want.push_str(&recorded_line(end));
        want.push_str(&format!(
            "  replayed: {{\"content\":[],\"edited\":true,\"ok\":true,\"value\":{{\"k\":{}}}}}\n",
            k + 1
        ));
        if end.get("result").is_some() {
            want.push_str("  first difference: /edited\n");
        }
    }
    want.push_str("3 runs: 0 same, 3 different, 0 diverged, 0 not replayable\n");
    assert_eq!(text(&out.stdout), want);
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let parsed: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!((&parsed["runs"], &parsed["different"]), (&json!(3), &json!(3)));
    let first = &parsed["results"][0];
    assert_eq!(first["verdict"], "different");
    let published = json!({"content": [], "edited": true, "ok": true, "value": {"k": 1}});
    assert_eq!(
        first["detail"]["replayed"],
        json!({"outcome": "success", "result": {"value": published}, "result_digest": digest(&published), "error": null})
    );
    assert_eq!(
        first["detail"]["recorded"]["result_digest"],
        runs[0].last().expect("run_end")["result_digest"]
    );

    // RP3: edited to call the upstream with other arguments: three `diverged` at the first host call.
    let edited =
        APP.replace("function M.run(input)\n", "function M.run(input)\n  input.args = { other = 1 }\n");
    fx.d.write_file("mission/app.luau", &edited);
    pin(&fx);
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let mut want = String::new();
    for (k, records) in runs.iter().enumerate() {
        want.push_str(&format!("{} mission: diverged at host call 1\n", run_ref(records)));
        want.push_str(&format!("  recorded: tool_call fx.echo {}\n", digest(&json!({"k": k + 1}))));
        want.push_str(&format!("  replayed: tool_call fx.echo {}\n", digest(&json!({"other": 1}))));
    }
    want.push_str("3 runs: 0 same, 0 different, 3 diverged, 0 not replayable\n");
    assert_eq!(text(&out.stdout), want);
    let out = replay(&fx, &["--json", "ptc-gateway.json", "artifacts/traces"]);
    let parsed: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(
        parsed["results"][1]["detail"],
        json!({"position": 1, "error": null,
               "recorded": {"kind": "tool_call", "alias": "fx.echo", "digest": digest(&json!({"k": 2}))},
               "replayed": {"kind": "tool_call", "alias": "fx.echo", "digest": digest(&json!({"other": 1}))}})
    );

    // RP4: edited to fail after the upstream call: the replayed run's Luau error, component and line.
    let edited = APP.replace(
        "  return mission(\"default\"):call(\"calls.run\", input)\n",
        "  local r = mission(\"default\"):call(\"calls.run\", input)\n  return r.value.missing.field\n",
    );
    fx.d.write_file("mission/app.luau", &edited);
    pin(&fx);
    let one = fx.d.path("artifacts/traces").join(format!("{}.jsonl", run_ref(&runs[0])));
    let out = replay(&fx, &["ptc-gateway.json", &one.display().to_string()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let end = runs[0].last().expect("run_end");
    let mut want = format!("{} mission: different\n", run_ref(&runs[0]));
    want.push_str(&recorded_line(end));
    want.push_str("  replayed: \"uncaught_error\"\n");
    if end.get("result").is_some() {
        want.push_str("  first difference: (the whole value)\n");
    }
    want.push_str("  error: workflow/app (app.luau):4: attempt to index nil with 'field'\n");
    want.push_str("  traceback: workflow/app (app.luau):4: in function 'run'\n");
    want.push_str("1 runs: 0 same, 1 different, 0 diverged, 0 not replayable\n");
    assert_eq!(text(&out.stdout), want);

    // RP5: an edit not re-pinned: CONFIG does not load, explained as `ptc check` explains it; exit 78.
    fx.d.write_file("mission/app.luau", APP);
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(78));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "{\"error\":\"application_content_digest_mismatch\"}\napplication_content_digest_mismatch: a tool's application changed since it was pinned\n  stage: 5 templates\n"
        ),
        "{stderr}"
    );
    assert!(!fx.marker.exists(), "replay started the upstream");
}

/// RP6: a run whose upstream value was over the value ceiling, recorded without `replay`: not replayable,
/// with the reason its `run_end` gives; exit 1.
#[test]
fn rp6_a_value_over_the_ceiling_without_replay_is_not_replayable() {
    let fx = deployment(json!(true));
    {
        let _gateway = Gateway::start(fx.command("none"), fx.addr());
        let (status, body) =
            call(fx.addr(), "mission", 1, &mission_args("fx.echo", json!({"s": "x".repeat(5_000)})));
        assert_eq!(status, 200, "{body}");
    }
    let runs = traces(&fx);
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "{} mission: not replayable: value_cut\n1 runs: 0 same, 0 different, 0 diverged, 1 not replayable\n",
            run_ref(&runs[0])
        )
    );
    let out = replay(&fx, &["--json", "ptc-gateway.json", "artifacts/traces"]);
    let parsed: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(parsed["results"][0]["detail"], json!({"reason": "value_cut"}));
    assert_eq!(parsed["not_replayable"], json!(1));
}

/// RP7 and RP8: a two-turn agent loop against the scripted model fixture, replayed with the fixture
/// stopped: `same`. An agent whose mission is granted an upstream tool (the stdio fixture's `fx.echo`,
/// which its first turn calls) shows that tool's listed facts in its system message: the trace records
/// them once (`listing`, traces.md §5.8) and the replay shows them again, with neither the model fixture
/// nor the upstream running: `same`. The same trace without its `listing` record: `listing_unknown`.
#[test]
fn rp7_rp8_an_agent_loop_replays_without_its_model() {
    let answers = |source: &str| {
        let usage = json!({"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30});
        [
            json!({"reply": {"content": null, "tool_calls": [{"id": "r1", "name": "run_luau", "arguments": {"source": source}}], "usage": usage}}),
            json!({"reply": {"content": null, "tool_calls": [{"id": "f1", "name": "finish", "arguments": {"value": {"answer": 42}}}], "usage": usage}}),
        ]
    };
    let [a, b] = answers("return 40 + 2");
    let [c, d] = answers("return tool('fx.echo', { n = 42 }).value.n");
    let up = OpenAiFixture::start(&[a, b, c, d]);
    let mut fx = Fx::new("modern");
    fx.d.host["install"]["llm"] = json!({"source": "llm", "installation_revision": "fixture-1",
        "endpoint": up.endpoint(), "allow_insecure_loopback": true, "model": "fixture-model",
        "credential": "model_key", "params": {"temperature": 0}});
    fx.d.host["credentials"]["model_key"] = json!({"env": "MODEL_KEY"});
    let manifest = json!({
        "version": 1, "effect": "write",
        "contracts": {"input_schema": {"path": "open.json"}, "result_schema": {"path": "open.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
        "missions": {"solo": {"components": [{"id": "calls", "path": "calls.luau"}]},
                     "tools": {"components": [{"id": "calls", "path": "calls.luau"}], "providers": ["fx"]}},
        "providers": {"mission": [{"name": "fx", "config": {"allow": ["fx.echo"]}}], "workflow": [{"name": "llm"}]}
    });
    fx.d.write_file("agent/ptc.json", &serde_json::to_string_pretty(&manifest).expect("json"));
    fx.d.write_file("agent/open.json", r#"{"type":"object","additionalProperties":true}"#);
    fx.d.write_file(
        "agent/app.luau",
        "local M = {}\nfunction M.run(input)\n  return mission(input.mission):agent{ goal = input.goal, model = \"llm\", max_turns = 4 }\nend\nreturn M\n",
    );
    fx.d.write_file("agent/calls.luau", "local M = {}\nfunction M.two()\n  return 2\nend\nreturn M\n");
    let tool = json!({"name": "agent", "title": "Agent", "description": "An agent over the model fixture.",
                      "application": {"manifest": "agent/ptc.json"}, "allow_write": true,
                      "expected_application_content_digest": content_pin::of(&fx.d.path("agent/ptc.json")),
                      "installation_config_pins": {}, "provider_snapshot_pins": {}});
    fx.d.gateway["tools"].as_array_mut().expect("tools").push(tool);
    // models.md: a workflow model provider makes the application a write one, which is audited.
    fx.d.gateway["private_audit"] =
        json!({"directory": "audit", "max_file_bytes": 1048576, "max_retained_files": 4});
    fx.d.gateway["artifacts"]["trace"] = json!({"replay": true});
    fx.pin();
    {
        let mut cmd = fx.command("none");
        cmd.env("MODEL_KEY", SENTINEL);
        let _gateway = Gateway::start(cmd, fx.addr());
        for (id, mission) in [(1, "solo"), (2, "tools")] {
            let (status, body) =
                call(fx.addr(), "agent", id, &json!({"mission": mission, "goal": "Answer 42."}));
            assert_eq!(status, 200, "{body}");
            assert_eq!(structured(&body).expect("result")["value"], json!({"answer": 42}));
        }
    }
    assert_eq!(up.requests().len(), 4);
    drop(up);
    let _ = std::fs::remove_file(&fx.marker);
    let runs = traces(&fx);
    assert_eq!(runs.len(), 2);
    let kinds = |records: &[Value]| -> Vec<String> {
        records.iter().map(|r| r["kind"].as_str().expect("kind").to_owned()).collect()
    };
    assert_eq!(kinds(&runs[0]), ["run_start", "model_call", "mission", "model_call", "run_end"]);
    assert_eq!(
        kinds(&runs[1]),
        ["run_start", "listing", "model_call", "tool_call", "mission", "model_call", "run_end"]
    );
    let listing = without(&runs[1][1], &["at"]);
    assert_eq!(
        listing,
        json!({"kind": "listing", "seq": 2, "mission": "tools", "tools": {"value": [{"alias": "fx.echo",
            "description": "echo", "effect": "read", "input_schema": {"type": "object"}, "output_schema": null}]}})
    );
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "2 runs: 2 same, 0 different, 0 diverged, 0 not replayable\n");
    assert!(!fx.marker.exists(), "replay started the upstream");
    let old = without_listing(&fx, &runs[1]);
    let out = replay(&fx, &["ptc-gateway.json", &old]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "{} agent: not replayable: listing_unknown\n1 runs: 0 same, 0 different, 0 diverged, 1 not replayable\n",
            run_ref(&runs[1])
        )
    );
}

/// `record` without the members `keys` (the timestamps a test cannot know).
fn without(record: &Value, keys: &[&str]) -> Value {
    let mut record = record.clone();
    if let Some(members) = record.as_object_mut() {
        for key in keys {
            members.remove(*key);
        }
    }
    record
}

/// The trace `records` as a trace written before `listing` existed (its `listing` records left out), in
/// its own directory `old/`; the path of that file.
fn without_listing(fx: &Fx, records: &[Value]) -> String {
    let lines: String = records
        .iter()
        .filter(|r| r["kind"] != "listing")
        .map(|r| format!("{}\n", serde_json::to_string(r).expect("json")))
        .collect();
    let path = fx.d.path("old").join(format!("{}.jsonl", run_ref(records)));
    std::fs::create_dir_all(fx.d.path("old")).expect("old");
    std::fs::write(&path, lines).expect("write");
    path.display().to_string()
}

/// RP11: a workflow that reads `handle:api()` (twice) and returns what it derived from the listed facts,
/// beside one upstream call: the trace records the facts once (`listing`, traces.md §5.8), whole, and the
/// replay, with the upstream not started, shows them again: `same`, exit 0. Without the record:
/// `listing_unknown`.
#[test]
fn rp11_handle_api_replays_from_the_listing_record() {
    let mut fx = Fx::new("modern");
    fx.d.write_file(
        "mission/app.luau",
        "local M = {}\nfunction M.run(input)\n  local api = mission(\"default\"):api()\n  local aliases, echo = {}, nil\n  for i, t in mission(\"default\"):api().tools do\n    aliases[i] = t.alias\n    if t.alias == \"fx.echo\" then echo = t end\n  end\n  local called = mission(\"default\"):call(\"calls.run\", input)\n  return { mission = api.mission, aliases = aliases, called = called.value,\n    echo = { description = echo.description, effect = echo.effect, input_type = echo.input_schema.type } }\nend\nreturn M\n",
    );
    fx.d.gateway["artifacts"]["trace"] = json!({"replay": true});
    fx.pin();
    let names = ["big", "closein", "crash", "echo", "garbage", "segv", "slow", "stall"];
    let expected = json!({
        "aliases": names.iter().map(|n| format!("fx.{n}")).collect::<Vec<_>>(),
        "called": {"k": 1},
        "echo": {"description": "echo", "effect": "read", "input_type": "object"},
        "mission": "default"
    });
    {
        let _gateway = Gateway::start(fx.command("none"), fx.addr());
        let (status, body) = call(fx.addr(), "mission", 1, &mission_args("fx.echo", json!({"k": 1})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(structured(&body).expect("result"), expected);
    }
    let _ = std::fs::remove_file(&fx.marker);
    let runs = traces(&fx);
    assert_eq!(runs.len(), 1);
    let kinds: Vec<&str> = runs[0].iter().map(|r| r["kind"].as_str().expect("kind")).collect();
    assert_eq!(kinds, ["run_start", "listing", "tool_call", "mission", "run_end"]);
    let tools: Vec<Value> = names
        .iter()
        .map(|n| {
            json!({"alias": format!("fx.{n}"), "description": n, "effect": "read",
                        "input_schema": {"type": "object"}, "output_schema": null})
        })
        .collect();
    assert_eq!(
        without(&runs[0][1], &["at"]),
        json!({"kind": "listing", "seq": 2, "mission": "default", "tools": {"value": tools}})
    );
    assert_eq!(runs[0][4]["result"], json!({"value": expected}));
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1 runs: 1 same, 0 different, 0 diverged, 0 not replayable\n");
    let out = replay(&fx, &["--json", "ptc-gateway.json", "artifacts/traces"]);
    let parsed: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(parsed["results"][0]["verdict"], json!("same"));
    assert_eq!(parsed["results"][0]["detail"], json!({"result_digest": digest(&expected)}));
    assert!(!fx.marker.exists(), "replay started the upstream");
    let old = without_listing(&fx, &runs[0]);
    let out = replay(&fx, &["--json", "ptc-gateway.json", &old]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let parsed: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(parsed["results"][0]["detail"], json!({"reason": "listing_unknown"}));
}

/// RP9: usage. No argument: the usage text, exit 2; CONFIG without a PATH, an unknown option: the usage
/// line, exit 2; a PATH that does not exist, or a file that is not a complete trace: its line, exit 2.
#[test]
fn rp9_usage_errors() {
    let fx = deployment(json!({"replay": true}));
    let out = replay(&fx, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("Usage:\n"), "{}", text(&out.stderr));
    let line = "ptc replay: usage: ptc replay CONFIG PATH… [--env-file FILE] [--json]\n";
    for args in [&["ptc-gateway.json"][..], &["ptc-gateway.json", "t", "--verbose"]] {
        let out = replay(&fx, args);
        assert_eq!(
            (out.status.code(), text(&out.stdout), text(&out.stderr)),
            (Some(2), String::new(), line.to_owned())
        );
    }
    let missing = fx.d.path("nowhere");
    let out = replay(&fx, &["ptc-gateway.json", "nowhere"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr), format!("ptc replay: {}: No such file or directory\n", missing.display()));
    let out = replay(&fx, &["ptc-gateway.json", "ptc-gateway.json"]);
    assert_eq!(out.status.code(), Some(2));
    let config = fx.d.path("ptc-gateway.json");
    assert_eq!(text(&out.stderr), format!("ptc replay: {}: not a complete trace\n", config.display()));
    assert!(Path::new(&config).exists());
}

/// RP10: more than 100 runs: a progress line on stderr after the 100th; the runs of a directory in the byte
/// order of their names.
#[test]
fn rp10_a_long_directory_reports_progress() {
    let fx = deployment(json!({"replay": true}));
    {
        let _gateway = Gateway::start(fx.command("none"), fx.addr());
        // An alias not granted: answered before any upstream, recorded like any `tool` call.
        let (status, body) = call(fx.addr(), "mission", 1, &mission_args("nope", json!({})));
        assert_eq!(status, 200, "{body}");
    }
    let dir = fx.d.path("artifacts/traces");
    let runs = traces(&fx);
    assert_eq!(runs.len(), 1);
    let name = format!("{}.jsonl", run_ref(&runs[0]));
    let (start, _) = name.split_once('-').expect("a run reference");
    for n in 2..=101 {
        std::fs::copy(dir.join(&name), dir.join(format!("{start}-{n:020}.jsonl"))).expect("copy");
    }
    // Not a run reference: ignored.
    std::fs::write(dir.join("notes.txt"), "x").expect("write");
    let out = replay(&fx, &["ptc-gateway.json", "artifacts/traces"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "101 runs: 101 same, 0 different, 0 diverged, 0 not replayable\n");
    assert_eq!(text(&out.stderr), "ptc replay: 100 of 101 runs\n");
}
