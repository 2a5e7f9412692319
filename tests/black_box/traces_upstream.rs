//! Traces and inspection of calls that reach an upstream (traces.md §5.4, §8; vectors T4, T5, T11, I1,
//! I2) over the stdio fixture and the HTTP one: the `tool_call` records with their request ids, the raw
//! bodies attributed by request id under concurrent calls on one shared transport, the body ceiling, and
//! no credential in any file.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};
use support::http_fixture::HttpFixture;
use support::providers::{call, mission_args, Fx, HTTP_TOKEN};
use support::Gateway;

/// The mission component of the fixture's `mission` tool, made to call `alias` twice when `twice` is set
/// (the second time with `{"second": true}`).
const CALLS: &str = "local M = {}\nfunction M.run(input)\n  local first = tool(input.alias, input.args)\n  if input.twice then return tool(input.alias, { second = true }) end\n  return first\nend\nreturn M\n";

/// A secret only the upstream's environment sees (through the `flags` credential).
const SENTINEL: &str = "sentinel-4f9a2c";

fn traced(mut fx: Fx) -> Fx {
    fx.d.write_file("mission/calls.luau", CALLS);
    fx.d.gateway["artifacts"]["trace"] = json!(true);
    fx.d.gateway["artifacts"]["inspection"] = json!(true);
    fx.pin();
    fx
}

/// Every file of `dir` under the artifact root, sorted, with its parsed records.
fn files(fx: &Fx, dir: &str) -> Vec<(String, Vec<Value>)> {
    let path = fx.d.path(&format!("artifacts/{dir}"));
    let mut names: Vec<String> = std::fs::read_dir(&path)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(path.join(&n)).unwrap();
            let records = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            (n, records)
        })
        .collect()
}

fn kinds(records: &[Value]) -> Vec<&str> {
    records.iter().map(|r| r["kind"].as_str().unwrap()).collect()
}

/// Asserts that no file below `dir` contains `secret`.
fn assert_absent(dir: &Path, secret: &str) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            assert_absent(&path, secret);
        } else if let Ok(bytes) = std::fs::read(&path) {
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains(secret), "{} holds the secret", path.display());
        }
    }
}

/// T4, T5 and T11 over stdio: two upstream calls in one mission call; an alias not granted; the request
/// ids of the trace are the ids of the inspection's bodies; the sentinel is nowhere.
#[test]
fn t4_t5_t11_tool_calls_with_request_ids_and_no_secret() {
    let fx = traced(Fx::new("modern"));
    let mut cmd = fx.command(&format!("none,{SENTINEL}"));
    cmd.env("FX_FLAGS", format!("none,{SENTINEL}"));
    let gateway = Gateway::start(cmd, fx.addr());
    let mut args = mission_args("fx.echo", json!({"k": 1}));
    args["twice"] = json!(true);
    assert_eq!(call(fx.addr(), "mission", 1, &args).0, 200);
    assert_eq!(call(fx.addr(), "mission", 2, &mission_args("nope", json!({}))).0, 200);
    let traces = files(&fx, "traces");
    assert_eq!(traces.len(), 2);
    let first = &traces[0].1;
    assert_eq!(kinds(first), ["run_start", "tool_call", "tool_call", "mission", "run_end"]);
    let (a, b) = (&first[1], &first[2]);
    for (record, arguments, value) in
        [(a, json!({"k": 1}), json!({"k": 1})), (b, json!({"second": true}), json!({"second": true}))]
    {
        assert_eq!(record["alias"], "fx.echo");
        assert_eq!(record["mission"], "default");
        assert_eq!(
            (record["ok"].clone(), record["class"].clone(), record["dispatch"].clone()),
            (json!(true), Value::Null, json!("true"))
        );
        assert_eq!(record["arguments"], json!({"value": arguments}));
        assert_eq!(record["value"], json!({"value": value}));
    }
    let (id_a, id_b) = (a["request_id"].as_u64().unwrap(), b["request_id"].as_u64().unwrap());
    assert_eq!(id_b, id_a + 1, "one transport, consecutive ids");
    assert_eq!(first[3]["target"], "calls.run");
    assert_eq!(first[3]["result"], json!({"value": {"content": [], "ok": true, "value": {"second": true}}}));
    // T5: refused before dispatch: no request id, dispatch false, no value.
    let refused = &traces[1].1[1];
    assert_eq!(
        [&refused["ok"], &refused["class"], &refused["dispatch"], &refused["request_id"], &refused["value"]],
        [&json!(false), &json!("tool_not_granted"), &json!("false"), &Value::Null, &Value::Null]
    );
    // The inspection file of the first run: its start, one request and one response per id, its end.
    let inspections = files(&fx, "inspection");
    assert_eq!(inspections.len(), 2);
    assert_eq!(inspections[0].0.replace(".ptcins", ".jsonl"), traces[0].0, "one run reference");
    let ins = &inspections[0].1;
    assert_eq!(
        kinds(ins),
        ["inspection_start", "request", "response", "request", "response", "inspection_end"]
    );
    assert_eq!(ins[0]["trace_id"], first[0]["trace_id"]);
    for (i, id) in [(1, id_a), (3, id_b)] {
        assert_eq!(ins[i]["request_id"], json!(id));
        assert_eq!(ins[i + 1]["request_id"], json!(id));
        assert_eq!(ins[i]["provider"], "fx");
        let request: Value = serde_json::from_str(ins[i]["body"].as_str().unwrap()).unwrap();
        assert_eq!(request["id"], json!(id));
        assert_eq!(request["params"]["_meta"]["traceparent"], ins[i]["traceparent"]);
        let response: Value = serde_json::from_str(ins[i + 1]["body"].as_str().unwrap()).unwrap();
        assert_eq!(response["id"], json!(id));
        assert_eq!(ins[i + 1]["status"], Value::Null, "stdio has no status");
    }
    assert_eq!(kinds(&inspections[1].1), ["inspection_start", "inspection_end"]);
    drop(gateway);
    assert_absent(&fx.d.path("artifacts/traces"), SENTINEL);
    assert_absent(&fx.d.path("artifacts/inspection"), SENTINEL);
}

/// I1 and I2: concurrent calls on the one shared stdio transport each capture exactly their own bodies;
/// a response body over the ceiling is cut and marked.
#[test]
fn i1_i2_bodies_are_attributed_by_request_id_and_bounded() {
    let fx = traced(Fx::new("modern"));
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    let addr = fx.addr();
    let calls: Vec<_> = (0..4)
        .map(|k| {
            std::thread::spawn(move || call(addr, "mission", k, &mission_args("fx.echo", json!({"k": k}))))
        })
        .collect();
    for handle in calls {
        assert_eq!(handle.join().unwrap().0, 200);
    }
    let inspections = files(&fx, "inspection");
    assert_eq!(inspections.len(), 4);
    let mut seen = Vec::new();
    for (name, records) in &inspections {
        assert_eq!(kinds(records), ["inspection_start", "request", "response", "inspection_end"], "{name}");
        let request: Value = serde_json::from_str(records[1]["body"].as_str().unwrap()).unwrap();
        let response: Value = serde_json::from_str(records[2]["body"].as_str().unwrap()).unwrap();
        let k = request["params"]["arguments"]["k"].clone();
        assert_eq!(response["result"]["structuredContent"]["k"], k, "{name}: its own response");
        assert_eq!(response["id"], request["id"]);
        seen.push(k.as_u64().unwrap());
    }
    seen.sort();
    assert_eq!(seen, [0, 1, 2, 3]);
    // I2: 70,000 bytes of text in the response.
    assert_eq!(call(addr, "mission", 9, &mission_args("fx.big", json!({"size": 70000}))).0, 200);
    let last = files(&fx, "inspection").pop().unwrap().1;
    let response = &last[2];
    assert_eq!(response["truncated"], json!(true));
    assert!(response["bytes"].as_u64().unwrap() > 70_000, "{}", response["bytes"]);
    assert_eq!(response["body"].as_str().unwrap().len(), 65_536);
    drop(gateway);
}

/// T11 over HTTP: the bearer the gateway sends upstream is in no trace or inspection file; the response
/// carries its HTTP status.
#[test]
fn t11_an_http_upstream_bearer_is_in_no_file() {
    let up = HttpFixture::start("auth");
    let fx = traced(Fx::http(&up, &["echo"]));
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    assert_eq!(call(fx.addr(), "mission", 1, &mission_args("fx.echo", json!({"k": 1}))).0, 200);
    let ins = &files(&fx, "inspection")[0].1;
    assert_eq!(kinds(ins), ["inspection_start", "request", "response", "inspection_end"]);
    assert_eq!(ins[2]["status"], json!(200));
    drop(gateway);
    assert_absent(&fx.d.path("artifacts/traces"), HTTP_TOKEN);
    assert_absent(&fx.d.path("artifacts/inspection"), HTTP_TOKEN);
}

/// I3: what an upstream writes to stderr never reaches an inspection file, even for the request that made
/// it write (the fixture's `crash` writes a line to stderr and exits).
#[test]
fn i3_stderr_is_in_no_inspection_file() {
    let fx = traced(Fx::new("modern"));
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    assert_eq!(call(fx.addr(), "mission", 1, &mission_args("fx.crash", json!({}))).0, 200);
    let ins = &files(&fx, "inspection")[0].1;
    assert_eq!(kinds(ins), ["inspection_start", "request", "inspection_end"], "no response to a crash");
    drop(gateway);
    assert_absent(&fx.d.path("artifacts/inspection"), "crashing now");
}
