//! Replayable traces (traces.md §5.5.2, §6.3; vectors R1, R3, R6, R8) through the real gateway over the
//! stdio fixture: with `replay`, every value a host call returned whole with the arguments' digest;
//! `result` and `result_digest` in every trace, checked against a digest computed here from the published
//! response; without `replay`, every answer up to the value ceiling, replayable when nothing was cut, and
//! the reason a run cannot be replayed when something was; no credential in any file.

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
    support::trace_files(&fx.d.path("artifacts/traces")).into_iter().map(|(_, records)| records).collect()
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
            "value": {"value": args}, "content": {"value": []}
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
        (&end["outcome"], &end["result"], &end["result_digest"], &end["replayable"], &end["replay_blocked"]),
        (
            &json!("success"),
            &json!({"value": published}),
            &json!(digest(&published)),
            &json!(true),
            &Value::Null
        )
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
/// so (`value_cut`); a run whose values fit is replayable. Both have `content`, `result` and
/// `result_digest`, and neither has `arguments_digest`.
#[test]
fn r3_without_replay_a_cut_value_blocks_replay() {
    let fx = deployment(json!(true));
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    let long = json!({"s": "x".repeat(5_000)});
    let big = run(&fx, 1, &mission_args("fx.echo", long.clone()));
    let small = run(&fx, 2, &mission_args("fx.echo", json!({"k": 1})));
    drop(gateway);
    let runs = traces(&fx);
    assert_eq!(runs.len(), 2);
    let cut = &runs[0][1];
    // The encoding of `{"s":"xxx…"}`: 5,008 bytes.
    let marker =
        json!({"bytes": 5_008, "prefix": format!("{{\"s\":\"{}", "x".repeat(4_090)), "truncated": true});
    assert_eq!(
        (&cut["arguments"], &cut["value"], &cut["content"]),
        (&marker, &marker, &json!({"value": []}))
    );
    let encoded = to_string(&big);
    let published_marker = json!({"bytes": encoded.len(), "prefix": &encoded[..4_096], "truncated": true});
    for (records, published, result, verdict) in [
        (&runs[0], &big, published_marker, (json!(false), json!("value_cut"))),
        (&runs[1], &small, json!({"value": small}), (json!(true), Value::Null)),
    ] {
        assert!(records[1].get("arguments_digest").is_none(), "{}", records[1]);
        let end = records.last().expect("run_end");
        assert_eq!(
            (&end["result"], &end["result_digest"], &end["replayable"], &end["replay_blocked"]),
            (&result, &json!(digest(published)), &verdict.0, &verdict.1)
        );
    }
}

/// The encoding of `value` as the gateway writes it (pins.md §2), for the values of these tests.
fn to_string(value: &Value) -> String {
    serde_json::to_string(value).expect("json")
}

/// R8 over stdio: without `replay`, three calls of a mission tool whose upstream answers fit the value
/// ceiling: each trace holds the table the script received (`value` and `content`), the mission's input
/// and its digest, and what the run published, and is replayable.
#[test]
fn r8_without_replay_small_answers_are_replayable() {
    let fx = deployment(json!(true));
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    let sizes = [1, 2, 3];
    let published: Vec<Value> =
        sizes.iter().map(|&n| run(&fx, n, &mission_args("fx.big", json!({"size": n})))).collect();
    drop(gateway);
    let runs = traces(&fx);
    assert_eq!(runs.len(), 3);
    for ((records, n), published) in runs.iter().zip(sizes).zip(&published) {
        assert_eq!(kinds(records), ["run_start", "tool_call", "mission", "run_end"]);
        let content = json!([{"text": "y".repeat(n), "type": "text"}]);
        assert_eq!(published, &json!({"content": content, "ok": true}));
        let mut call = records[1].clone();
        for volatile in ["at", "seq", "started_at", "duration_us", "request_id"] {
            call.as_object_mut().expect("record").remove(volatile);
        }
        let args = json!({"size": n});
        assert_eq!(
            call,
            json!({"kind": "tool_call", "alias": "fx.big", "mission": "default", "ok": true, "class": null,
                   "dispatch": "true", "arguments": {"value": args}, "value": null, "content": {"value": content}})
        );
        let input = mission_args("fx.big", args);
        assert_eq!(
            (&records[2]["input"], &records[2]["input_digest"], &records[2]["result"]),
            (&json!({"value": input}), &json!(digest(&input)), &json!({"value": published}))
        );
        let end = &records[3];
        assert_eq!(
            (&end["result"], &end["result_digest"], &end["replayable"], &end["replay_blocked"]),
            (&json!({"value": published}), &json!(digest(published)), &json!(true), &Value::Null)
        );
    }
}
