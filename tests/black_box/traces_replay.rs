//! Replayable traces (traces.md §5.5.2, §6.3; vectors R1, R3, R6) through the real gateway over the stdio
//! fixture: with `replay`, every value a host call returned whole with its digests; `result_digest` in every
//! trace, checked against a digest computed here from the published response; without `replay`, the
//! reason a run cannot be replayed; no credential in any file.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::providers::{call, mission_args, structured, Fx};
use support::Gateway;

/// The mission component of the fixture's `mission` tool, made to call `alias` twice when `twice` is set
/// (the second time with `{"second": true}`).
const CALLS: &str = "local M = {}\nfunction M.run(input)\n  local first = tool(input.alias, input.args)\n  if input.twice then return tool(input.alias, { second = true }) end\n  return first\nend\nreturn M\n";

/// A secret only the upstream's environment sees (through the `flags` credential).
const SENTINEL: &str = "sentinel-replay-51c7e0";

/// `sha256:` and the hex of SHA-256 over the deterministic encoding (pins.md §2). `serde_json` writes
/// the values of these tests (ASCII strings, integers, booleans, objects with sorted members) exactly so.
pub(crate) fn digest(value: &Value) -> String {
    let bytes = serde_json::to_vec(value).expect("json");
    format!("sha256:{}", Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>())
}

fn deployment(trace: Value) -> Fx {
    let mut fx = Fx::new("modern");
    fx.d.write_file("mission/calls.luau", CALLS);
    fx.d.gateway["artifacts"]["trace"] = trace;
    fx.pin();
    fx
}

/// The records of every trace file, oldest run first.
fn traces(fx: &Fx) -> Vec<Vec<Value>> {
    let path = fx.d.path("artifacts/traces");
    let mut names: Vec<_> = std::fs::read_dir(&path)
        .expect("traces")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            let text = std::fs::read_to_string(path.join(n)).expect("trace");
            text.lines().map(|l| serde_json::from_str(l).expect("record")).collect()
        })
        .collect()
}

fn kinds(records: &[Value]) -> Vec<&str> {
    records.iter().map(|r| r["kind"].as_str().expect("kind")).collect()
}

/// One call of the `mission` tool: its structured result.
fn run(fx: &Fx, id: usize, arguments: &Value) -> Value {
    let (status, body) = call(fx.addr(), "mission", id, arguments);
    assert_eq!(status, 200, "{body}");
    structured(&body).unwrap_or_else(|| panic!("no structured result in {body}"))
}

fn assert_absent(dir: &Path, secret: &str) {
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let text = String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap_or_default()).into_owned();
        assert!(!text.contains(secret), "{} holds the secret", entry.path().display());
    }
}

/// R1 and R6 over stdio: with `replay`, each upstream call's whole answer (the table the script received)
/// and its arguments digest; the mission's input digest and whole result; the whole input; `result_digest`
/// is the digest of the published structured result; the refused call's table has no content; no secret.
#[test]
fn r1_r6_a_replay_trace_keeps_every_answer_whole() {
    let fx = deployment(json!({"replay": true}));
    let mut cmd = fx.command(&format!("none,{SENTINEL}"));
    cmd.env("FX_FLAGS", format!("none,{SENTINEL}"));
    let gateway = Gateway::start(cmd, fx.addr());
    // Over the value ceiling of 4,096 bytes: a trace without `replay` would cut it.
    let long = "L".repeat(6_000);
    let first_args = json!({"k": 1, "long": long});
    let mut input = mission_args("fx.echo", first_args.clone());
    input["twice"] = json!(true);
    let published = run(&fx, 1, &input);
    assert_eq!(published, json!({"content": [], "ok": true, "value": {"second": true}}));
    let refused_input = mission_args("nope", json!({}));
    let refused = run(&fx, 2, &refused_input);
    assert_eq!(refused["ok"], false);
    drop(gateway);

    let runs = traces(&fx);
    assert_eq!(runs.len(), 2);
    let records = &runs[0];
    assert_eq!(kinds(records), ["run_start", "tool_call", "tool_call", "mission", "run_end"]);
    assert_eq!(records[0]["input"], json!({"value": input}));
    let second_args = json!({"second": true});
    for (record, args) in [(&records[1], &first_args), (&records[2], &second_args)] {
        let answered = json!({
            "alias": "fx.echo", "mission": "default", "ok": true, "class": null, "dispatch": "true",
            "arguments": {"value": args}, "arguments_digest": digest(args),
            "value": {"value": args}, "content": []
        });
        let mut got = record.clone();
        for volatile in ["at", "seq", "started_at", "duration_us", "request_id", "kind"] {
            got.as_object_mut().expect("record").remove(volatile);
        }
        assert_eq!(got, answered);
    }
    let mission = &records[3];
    assert_eq!(mission["input"], json!({"value": input}));
    assert_eq!(mission["input_digest"], json!(digest(&input)));
    assert_eq!(mission["result"], json!({"value": published}));
    let end = &records[4];
    assert_eq!(
        (&end["outcome"], &end["result_digest"], &end["replayable"], &end["replay_blocked"]),
        (&json!("success"), &json!(digest(&published)), &json!(true), &Value::Null)
    );
    // The alias not granted: refused before dispatch, a table without `content`.
    let refused_call = &runs[1][1];
    assert_eq!(
        [&refused_call["class"], &refused_call["content"], &refused_call["arguments_digest"]],
        [&json!("tool_not_granted"), &Value::Null, &json!(digest(&json!({})))]
    );
    assert_eq!(runs[1].last().expect("run_end")["result_digest"], json!(digest(&refused)));
    assert_absent(&fx.d.path("artifacts/traces"), SENTINEL);
}

/// R3 over stdio: without `replay`, an upstream value over the value ceiling is cut, and the run says
/// so (`value_cut`); a run whose values fit still made a call whose answer the trace does not hold whole
/// (`not_recorded`). `result_digest` is there all the same, and no replay member is.
#[test]
fn r3_without_replay_a_cut_value_blocks_replay() {
    let fx = deployment(json!(true));
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    let big = run(&fx, 1, &mission_args("fx.echo", json!({"s": "x".repeat(5_000)})));
    let small = run(&fx, 2, &mission_args("fx.echo", json!({"k": 1})));
    drop(gateway);
    let runs = traces(&fx);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0][1]["value"]["truncated"], json!(true));
    assert!(runs[0][1].get("content").is_none() && runs[0][1].get("arguments_digest").is_none());
    for (records, published, reason) in [(&runs[0], &big, "value_cut"), (&runs[1], &small, "not_recorded")] {
        let end = records.last().expect("run_end");
        assert_eq!(
            (&end["result_digest"], &end["replayable"], &end["replay_blocked"]),
            (&json!(digest(published)), &json!(false), &json!(reason))
        );
    }
}
