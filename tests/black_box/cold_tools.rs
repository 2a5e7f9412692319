//! Cold trace-snapshot tools against the real binary (traces.md §9; config.md §11 rows 144–149; vectors
//! H6–H9): a tool whose mission is granted a `ptc_trace_snapshot` installation reads that directory anew
//! on every call, is pinned but never acquired, refuses a missing directory before binding, and never
//! mixes with live providers.

use crate::support;

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{json, Value};
use support::providers::{call, structured};
use support::{assert_startup_error, content_pin, run_with_deadline, Deployment, Gateway};

/// The workflow evaluates the source it is given in mission `m`.
const EVAL: &str =
    "local M = {}\nfunction M.run(input) return { value = mission('m'):eval(input.source) } end\nreturn M\n";
const INPUT: &str = r#"{"type":"object","properties":{"source":{"type":"string"}},"required":["source"]}"#;
const RESULT: &str = r#"{"type":"object","properties":{"value":{}}}"#;

/// The baseline with a tool `look` whose mission `m` is granted the snapshot installation `snap` over
/// `snap/` (created 0700 with `traces` run files), with `edit` applied to the manifest and host first.
fn deployment(runs: usize, edit: impl FnOnce(&mut Value, &mut Deployment)) -> Deployment {
    let mut d = Deployment::baseline();
    let mut manifest = json!({
        "version": 1, "effect": "read",
        "contracts": {"input_schema": {"path": "input.json"}, "result_schema": {"path": "result.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
        "missions": {"m": {"providers": ["snap"]}},
        "providers": {"mission": [{"name": "snap"}]}
    });
    d.host["install"]["snap"] =
        json!({"source": "ptc_trace_snapshot", "installation_revision": "s1", "directory": "snap"});
    std::fs::create_dir_all(d.path("snap")).unwrap();
    std::fs::set_permissions(d.path("snap"), std::fs::Permissions::from_mode(0o700)).unwrap();
    for i in 1..=runs {
        write_run(&d, i, "echo", "success");
    }
    edit(&mut manifest, &mut d);
    d.write_file("look/ptc.json", &serde_json::to_string_pretty(&manifest).unwrap());
    d.write_file("look/app.luau", EVAL);
    d.write_file("look/input.json", INPUT);
    d.write_file("look/result.json", RESULT);
    d.gateway["tools"] = json!([{
        "name": "look", "title": "look", "description": "fixture",
        "application": {"manifest": "look/ptc.json"},
        "expected_application_content_digest": content_pin::of(&d.path("look/ptc.json")),
        "installation_config_pins": {}, "provider_snapshot_pins": {}
    }]);
    d.gateway["pcc"]["servers"]["briefs"]["tools"] = json!(["look"]);
    d.write_documents();
    d
}

const START_REF: &str = "0006400a1b2c3d4e9f8e7d6c5b4a3921";

/// A complete trace file `snap/<start ref>-<i>.jsonl` of `tool` with `outcome` (traces.md §5).
fn write_run(d: &Deployment, i: usize, tool: &str, outcome: &str) {
    let run_ref = format!("{START_REF}-{i:020}");
    let start = json!({"at": "2026-09-16T08:03:40.100000Z", "call_id": "6f1c0a4e9b2d4c7f8a0b1c2d3e4f5061",
        "deadline_ms": 30000, "front": "mcp", "input": {"value": {}}, "kind": "run_start", "run_ref": run_ref,
        "seq": 1, "tool": tool, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"});
    let end = json!({"at": "2026-09-16T08:03:40.106900Z", "disconnected": false, "dispatch": "true",
        "duration_us": 6900, "kind": "run_end", "omitted_records": 0, "outcome": outcome, "seq": 2});
    d.write_file(&format!("snap/{run_ref}.jsonl"), &format!("{start}\n{end}\n"));
}

/// `--print-pins`: its output, and the pins copied into the documents.
fn pin(d: &mut Deployment) -> Value {
    let mut cmd = d.command();
    cmd.arg("--print-pins");
    let out = run_with_deadline(cmd, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let pins: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (key, value) in pins["look"].as_object().unwrap() {
        d.gateway["tools"][0][key] = value.clone();
    }
    d.frozen = false;
    d.write_documents();
    pins
}

fn addr(d: &Deployment) -> SocketAddr {
    format!("127.0.0.1:{}", d.port).parse().unwrap()
}

fn eval(d: &Deployment, id: usize, source: &str) -> Value {
    let (status, text) = call(addr(d), "look", id, &json!({"source": source}));
    assert_eq!(status, 200, "{text}");
    structured(&text).unwrap_or_else(|| panic!("{text}"))["value"].clone()
}

/// Rows 144 and 148, H8 (discovery prints `{}`), H2 through the gateway.
#[test]
fn rows_144_148_a_cold_tool_is_pinned_not_acquired_and_reads_anew() {
    let mut d = deployment(3, |_, _| {});
    let pins = pin(&mut d);
    assert_eq!(pins["look"]["provider_snapshot_pins"], json!({}), "row 148, H8");
    assert_eq!(pins["look"]["installation_config_pins"].as_object().unwrap().len(), 1);
    let gateway = Gateway::start(d.command(), addr(&d));
    let listed = eval(&d, 1, "return tool('hist.runs', {}).value");
    let refs: Vec<&str> =
        listed["runs"].as_array().unwrap().iter().map(|r| r["run_ref"].as_str().unwrap()).collect();
    assert_eq!(refs, [3, 2, 1].map(|i| format!("{START_REF}-{i:020}")), "newest first");
    assert_eq!(listed["next_cursor"], Value::Null);
    // Read anew: a fourth run written after startup is seen by the next call.
    write_run(&d, 4, "other", "cancelled");
    let counted = eval(&d, 2, "return tool('hist.counters', {}).value");
    assert_eq!(counted, json!({"by_tool": {"echo": {"success": 3}, "other": {"cancelled": 1}}, "runs": 4}));
    // An input error and an unknown run reach the script as their classes.
    let failed = eval(&d, 3, "local a = tool('hist.open', {run_ref = 7}) local b = tool('hist.open', {run_ref = '0006400a1b2c3d4e9f8e7d6c5b4a3921-00000000000000000099'}) return {a.error.code, b.error.code, b.content[1].text}");
    assert_eq!(failed, json!(["mcp_request_invalid", "mcp_tool_error", "unknown run"]));
    drop(gateway);
}

/// H6: concurrent cold calls each own a capture; an incomplete trace is never listed.
#[test]
fn h6_concurrent_calls_own_their_captures() {
    let mut d = deployment(50, |_, _| {});
    pin(&mut d);
    d.write_file(&format!("snap/{START_REF}-{:020}.jsonl", 99), "{\"kind\":\"run_start\"}\n");
    let gateway = Gateway::start(d.command(), addr(&d));
    let a = addr(&d);
    let calls: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                let source = "return tool('hist.counters', {}).value.runs";
                call(a, "look", i, &json!({"source": source}))
            })
        })
        .collect();
    for handle in calls {
        let (status, text) = handle.join().unwrap();
        assert_eq!(status, 200);
        assert_eq!(structured(&text).unwrap()["value"], json!(50), "{text}");
    }
    drop(gateway);
}

/// Rows 145–147 and 149, H7 and H9: the refusals.
#[test]
fn rows_145_to_149_refusals() {
    // Row 145, H7: the directory is missing; the port is never bound.
    let mut d = deployment(0, |_, _| {});
    pin(&mut d);
    std::fs::remove_dir(d.path("snap")).unwrap();
    let out = run_with_deadline(d.command(), Duration::from_secs(20));
    assert_startup_error(&out, "provider_runtime_unavailable", "row 145");
    assert!(std::net::TcpListener::bind(addr(&d)).is_ok(), "row 145: the port was never bound");
    // Row 146, H8: a snapshot pin configured for the cold tool.
    let mut d = deployment(0, |_, _| {});
    pin(&mut d);
    d.gateway["tools"][0]["provider_snapshot_pins"] =
        json!({"mission/snap": "sha256:0000000000000000000000000000000000000000000000000000000000000000"});
    d.write_documents();
    let out = run_with_deadline(d.command(), Duration::from_secs(20));
    assert_startup_error(&out, "provider_pin_mismatch", "row 146");
    // Row 147, H9: mixed with an `mcp` declaration; a `ptc_inspection_snapshot` selection.
    let d = deployment(0, |m, _| {
        m["missions"]["m"]["providers"] = json!(["snap", "notes"]);
        m["providers"]["mission"] = json!([{"name": "snap"}, {"name": "notes"}]);
    });
    let out = run_with_deadline(d.command(), Duration::from_secs(20));
    assert_startup_error(&out, "provider_source_unsupported", "row 147");
    let d = deployment(0, |_, d| d.host["install"]["snap"] = json!({"source": "ptc_inspection_snapshot"}));
    let out = run_with_deadline(d.command(), Duration::from_secs(20));
    assert_startup_error(&out, "provider_source_unsupported", "row 147b");
    // Row 149: `config.allow` naming an alias a snapshot does not reach.
    let d = deployment(0, |m, _| {
        m["providers"]["mission"] = json!([{"name": "snap", "config": {"allow": ["hist.nope"]}}])
    });
    let out = run_with_deadline(d.command(), Duration::from_secs(20));
    assert_startup_error(&out, "template_invalid", "row 149");
}
