//! Trace artifacts against the real binary (traces.md §3–§7, vectors T1–T3, T6–T10, T12, T13): one file
//! per call with the exact record sequence, value fields and the file ceiling, retention across a
//! restart, a directory that cannot be written, a refused reservation, and the configuration and
//! inventory refusals.

use crate::support;

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use crate::traces_replay::digest;
use serde_json::{json, Value};
use support::providers::{call, structured, wait};
use support::{content_pin, Deployment, Gateway};

const ANY: &str = r#"{"type":"object","additionalProperties":true}"#;

/// The mission library of the provider-free mission tools.
const LIB: &str = "local M = {}\nfunction M.twice(a) return { n = a.n * 2 } end\nfunction M.big() return string.rep('y', 4998) end\nfunction M.kib(i) return string.rep('z', 1024) end\nfunction M.oops() local t = nil\n  return t.field end\nreturn M\n";

/// (tool, workflow source, manifest `limits`, with the mission `m` over `lib`)
fn apps() -> Vec<(&'static str, &'static str, Value, bool)> {
    vec![
        ("echo", "local M = {}\nfunction M.run(input) return input end\nreturn M\n", json!({}), false),
        ("boom", "local M = {}\nfunction M.run(input) error('secret internals') end\nreturn M\n", json!({}), false),
        ("spin", "local M = {}\nfunction M.run(input) while true do end end\nreturn M\n", json!({"run_duration_ms": 300}), false),
        ("nil_index", "local M = {}\nfunction M.run(input)\n  local t = nil\n  return t.x\nend\nreturn M\n", json!({}), false),
        (
            "mission_error",
            "local M = {}\nfunction M.run(input)\n  return mission('m'):call('lib.oops')\nend\nreturn M\n",
            json!({}),
            true,
        ),
        (
            "missions",
            "local M = {}\nfunction M.run(input)\n  local m = mission('m')\n  local a = m:call('lib.twice', { n = 2 })\n  pcall(function() return m:eval(\"error('x')\") end)\n  return { n = a.n }\nend\nreturn M\n",
            json!({}),
            true,
        ),
        (
            "big",
            "local M = {}\nfunction M.run(input) return { s = mission('m'):call('lib.big') } end\nreturn M\n",
            json!({}),
            true,
        ),
        (
            "many",
            "local M = {}\nfunction M.run(input)\n  for i = 1, 100 do mission('m'):call('lib.kib', i) end\n  return {}\nend\nreturn M\n",
            json!({}),
            true,
        ),
    ]
}

/// The baseline deployment with the applications above and `artifacts.trace` set to `trace`.
fn deployment(trace: Value) -> Deployment {
    let mut d = Deployment::baseline();
    let mut tools = Vec::new();
    for (name, luau, limits, with_mission) in apps() {
        let mut manifest = json!({
            "version": 1, "effect": "read",
            "contracts": {"input_schema": {"path": "any.json"}, "result_schema": {"path": "any.json"}},
            "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
            "limits": limits,
        });
        if with_mission {
            manifest["missions"] = json!({"m": {"components": [{"id": "lib", "path": "lib.luau"}]}});
            d.write_file(&format!("{name}/lib.luau"), LIB);
        }
        d.write_file(&format!("{name}/ptc.json"), &serde_json::to_string_pretty(&manifest).unwrap());
        d.write_file(&format!("{name}/app.luau"), luau);
        d.write_file(&format!("{name}/any.json"), ANY);
        tools.push(json!({
            "name": name, "title": name, "description": "fixture",
            "application": {"manifest": format!("{name}/ptc.json")},
            "expected_application_content_digest": content_pin::of(&d.path(&format!("{name}/ptc.json"))),
            "installation_config_pins": {}, "provider_snapshot_pins": {}
        }));
    }
    d.gateway["tools"] = Value::Array(tools);
    d.gateway["pcc"]["servers"]["briefs"]["tools"] = json!(["echo", "boom"]);
    d.gateway["artifacts"]["trace"] = trace;
    d.write_documents();
    d
}

fn addr(d: &Deployment) -> SocketAddr {
    format!("127.0.0.1:{}", d.port).parse().unwrap()
}

fn traces_dir(d: &Deployment) -> PathBuf {
    d.path("artifacts/traces")
}

/// The trace files, oldest first, each with its parsed records.
fn traces(d: &Deployment) -> Vec<(String, Vec<Value>)> {
    support::trace_files(&traces_dir(d))
}

/// A record with its volatile members (times, durations, ids) replaced by their shapes, so that the rest
/// can be compared exactly.
fn normalised(record: &Value) -> String {
    let mut r = record.clone();
    for (key, len) in [("at", 27), ("started_at", 27), ("call_id", 32), ("trace_id", 32), ("run_ref", 53)] {
        if let Some(v) = r.get(key) {
            let s = v.as_str().unwrap_or_else(|| panic!("{key} is a string: {record}"));
            assert_eq!(s.len(), len, "{key} in {record}");
            r[key] = json!(key.to_uppercase());
        }
    }
    if let Some(v) = r.get("duration_us") {
        assert!(v.is_u64(), "duration_us in {record}");
        r["duration_us"] = json!(0);
    }
    serde_json::to_string(&r).unwrap()
}

/// The first `artifact_failed` count the event log reports for `tool`, waited for (the counters are
/// written every 1,000 ms, audit-events.md §3.7).
fn artifact_failed(d: &Deployment, tool: &str) -> Value {
    wait("artifact_failed", Duration::from_secs(5), || {
        support::providers::event_records(d)
            .iter()
            .find(|e| e["kind"] == "artifact_failed" && e["tool"] == tool)
            .map(|e| e["count"].clone())
    })
}

const DUR: &str = r#""duration_us":0"#;

/// T1–T3 and the mission records of §5.3: one trace per call, in call order, with exact records.
#[test]
fn t1_t2_t3_one_trace_per_call_with_the_exact_record_sequence() {
    let d = deployment(json!(true));
    let gateway = Gateway::start(d.command(), addr(&d));
    let table: [(&str, Value, Vec<String>); 4] = [
        (
            "echo",
            json!({"text": "hi"}),
            vec![
                r#"{"at":"AT","call_id":"CALL_ID","deadline_ms":30000,"front":"mcp","input":{"value":{"text":"hi"}},"kind":"run_start","run_ref":"RUN_REF","seq":1,"tool":"echo","trace_id":"TRACE_ID"}"#.into(),
                format!(r#"{{"at":"AT","disconnected":false,"dispatch":"true",{DUR},"error":null,"failure":null,"kind":"run_end","omitted_records":0,"outcome":"success","replay_blocked":null,"replayable":true,"result":{{"value":{{"text":"hi"}}}},"result_digest":"{}","seq":2}}"#, digest(&json!({"text": "hi"}))),
            ],
        ),
        (
            "boom",
            json!({}),
            vec![
                r#"{"at":"AT","call_id":"CALL_ID","deadline_ms":30000,"front":"mcp","input":{"value":{}},"kind":"run_start","run_ref":"RUN_REF","seq":1,"tool":"boom","trace_id":"TRACE_ID"}"#.into(),
                format!(r#"{{"at":"AT","disconnected":false,"dispatch":"true",{DUR},"error":{{"message":"workflow/app (app.luau):2: secret internals","traceback":"workflow/app (app.luau):2: in function 'run'"}},"failure":"uncaught_error","kind":"run_end","omitted_records":0,"outcome":"execution_failed","replay_blocked":null,"replayable":true,"result":null,"result_digest":"{}","seq":2}}"#, digest(&json!("uncaught_error"))),
            ],
        ),
        (
            "spin",
            json!({}),
            vec![
                r#"{"at":"AT","call_id":"CALL_ID","deadline_ms":300,"front":"mcp","input":{"value":{}},"kind":"run_start","run_ref":"RUN_REF","seq":1,"tool":"spin","trace_id":"TRACE_ID"}"#.into(),
                format!(r#"{{"at":"AT","disconnected":false,"dispatch":"true",{DUR},"error":null,"failure":null,"kind":"run_end","omitted_records":0,"outcome":"cancelled","replay_blocked":"interrupted","replayable":false,"result":null,"result_digest":"{}","seq":2}}"#, digest(&json!("cancelled"))),
            ],
        ),
        (
            "missions",
            json!({}),
            vec![
                r#"{"at":"AT","call_id":"CALL_ID","deadline_ms":30000,"front":"mcp","input":{"value":{}},"kind":"run_start","run_ref":"RUN_REF","seq":1,"tool":"missions","trace_id":"TRACE_ID"}"#.into(),
                format!(r#"{{"at":"AT",{DUR},"error":null,"failure":null,"input":{{"value":{{"n":2}}}},"input_digest":"{}","kind":"mission","mission":"m","op":"call","result":{{"value":{{"n":4}}}},"seq":2,"started_at":"STARTED_AT","target":"lib.twice"}}"#, digest(&json!({"n": 2}))),
                format!(r#"{{"at":"AT",{DUR},"error":{{"message":"mission/m/eval:1: x","traceback":"mission/m/eval:1: in function <mission/m/eval:1>\nworkflow/app (app.luau):5: in function <workflow/app (app.luau):5>\nworkflow/app (app.luau):5: in function 'run'"}},"failure":"error","input":{{"value":"error('x')"}},"input_digest":"{}","kind":"mission","mission":"m","op":"eval","result":null,"seq":3,"started_at":"STARTED_AT","target":null}}"#, digest(&json!("error('x')"))),
                format!(r#"{{"at":"AT","disconnected":false,"dispatch":"true",{DUR},"error":null,"failure":null,"kind":"run_end","omitted_records":0,"outcome":"success","replay_blocked":null,"replayable":true,"result":{{"value":{{"n":4}}}},"result_digest":"{}","seq":4}}"#, digest(&json!({"n": 4}))),
            ],
        ),
    ];
    for (i, (tool, arguments, _)) in table.iter().enumerate() {
        let (status, _) = call(addr(&d), tool, i + 1, arguments);
        assert_eq!(status, 200, "{tool}");
    }
    let found = traces(&d);
    assert_eq!(found.len(), table.len(), "one trace per call");
    let start_ref = &found[0].0[..32];
    for (i, ((name, records), (tool, _, want))) in found.iter().zip(&table).enumerate() {
        assert_eq!(*name, format!("{start_ref}-{:020}.jsonl", i + 1), "{tool}: name in call order");
        assert_eq!(records[0]["run_ref"], json!(&name[..53]), "{tool}");
        let got: Vec<String> = records.iter().map(normalised).collect();
        assert_eq!(&got, want, "{tool}");
        let mode = std::fs::metadata(traces_dir(&d).join(name)).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600, "{tool}: file mode");
    }
    let dir_mode = std::fs::metadata(traces_dir(&d)).unwrap().permissions().mode() & 0o7777;
    assert_eq!(dir_mode, 0o700);
    drop(gateway);
}

/// T6 and T7: a value over the ceiling is cut with its marker; a run with more records than the file
/// holds stays within `max_file_bytes`, ends with `run_end` and counts what it left out. R4: each says
/// why it cannot be replayed.
#[test]
fn t6_t7_value_fields_and_the_file_ceiling() {
    let d = deployment(json!({"max_file_bytes": 16384}));
    let gateway = Gateway::start(d.command(), addr(&d));
    assert_eq!(call(addr(&d), "big", 1, &json!({})).0, 200);
    assert_eq!(call(addr(&d), "many", 2, &json!({})).0, 200);
    let found = traces(&d);
    let big = &found[0].1;
    let result = &big[1]["result"];
    assert_eq!(result["bytes"], json!(5000));
    assert_eq!(result["truncated"], json!(true));
    assert_eq!(result["prefix"], json!(format!("\"{}", "y".repeat(4095))));
    assert_eq!(result.as_object().unwrap().len(), 3, "{result}");
    let end = big.last().unwrap();
    assert_eq!((&end["replayable"], &end["replay_blocked"]), (&json!(false), &json!("value_cut")));
    let many = &found[1].1;
    let size = std::fs::metadata(traces_dir(&d).join(&found[1].0)).unwrap().len();
    assert!(size <= 16384, "file of {size} bytes");
    let end = many.last().unwrap();
    assert_eq!(end["kind"], "run_end");
    let written = many.iter().filter(|r| r["kind"] == "mission").count() as u64;
    assert!(written > 0 && written < 100, "{written} mission records");
    assert_eq!(end["omitted_records"], json!(100 - written));
    assert_eq!((&end["replayable"], &end["replay_blocked"]), (&json!(false), &json!("records_omitted")));
    assert_eq!(end["result_digest"], json!(digest(&json!({}))));
    drop(gateway);
}

/// T8: retention oldest first, across a restart.
#[test]
fn t8_retention_keeps_the_newest_files_across_a_restart() {
    let d = deployment(json!({"max_retained_files": 3}));
    let mut all = Vec::new();
    for round in 0..2 {
        let gateway = Gateway::start(d.command(), addr(&d));
        for i in 0..[5, 2][round] {
            assert_eq!(call(addr(&d), "echo", i + 1, &json!({})).0, 200);
            let names: Vec<String> = traces(&d).into_iter().map(|(n, _)| n).collect();
            assert!(names.len() <= 3, "{names:?}");
            all.extend(names);
        }
        let (status, ..) =
            gateway.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(20));
        assert_eq!(status, Some(0));
    }
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 7, "seven runs were traced: {all:?}");
    let kept = traces(&d);
    let names: Vec<String> = kept.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, all[4..].to_vec(), "the newest three remain");
    // Each file holds its own run only (a reused file is emptied first, traces.md §4.3).
    for (name, records) in &kept {
        assert_eq!(records.len(), 2, "{name}: {records:?}");
        assert_eq!(records[0]["run_ref"], json!(&name[..53]), "{name}");
        let mode = std::fs::metadata(traces_dir(&d).join(name)).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600, "{name}");
    }
}

/// T9: a traces directory that cannot be written (removed after startup: creating a file in it fails,
/// also for root) changes no answer; the failure is counted.
#[test]
fn t9_a_directory_that_cannot_be_written_changes_no_answer() {
    let d = deployment(json!(true));
    let gateway = Gateway::start(d.command(), addr(&d));
    let (_, before) = call(addr(&d), "echo", 1, &json!({"text": "a"}));
    assert_eq!(traces(&d).len(), 1);
    std::fs::remove_dir_all(traces_dir(&d)).unwrap();
    let (status, after) = call(addr(&d), "echo", 1, &json!({"text": "a"}));
    assert_eq!(status, 200);
    // The same bytes, but for the `date` header, which may cross a second between the two calls.
    let undated =
        |text: &str| text.split("\r\n").filter(|l| !l.starts_with("date: ")).collect::<Vec<_>>().join("\r\n");
    assert_eq!(undated(&after), undated(&before), "the same bytes with and without a trace");
    assert_eq!(after.matches("\r\ndate: ").count(), 1, "one date header");
    assert_eq!(structured(&after), Some(json!({"text": "a"})));
    assert_eq!(artifact_failed(&d, "echo"), json!(1));
    drop(gateway);
}

/// T10: a reservation out of descriptors refuses the call before it runs, with the exact body.
#[test]
fn t10_a_reservation_out_of_descriptors_refuses_the_call() {
    let d = deployment(json!(true));
    let mut cmd = d.command();
    cmd.env("PTC_FAULT", "trace_descriptors");
    let gateway = Gateway::start(cmd, addr(&d));
    let (status, text) = call(addr(&d), "echo", 7, &json!({}));
    assert_eq!(status, 503);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert_eq!(
        body,
        r#"{"error":{"code":-31998,"data":{"reason":"artifact_unavailable"},"message":"Server unavailable"},"id":7,"jsonrpc":"2.0"}"#
    );
    assert!(traces(&d).is_empty());
    assert_eq!(artifact_failed(&d, "echo"), json!(1));
    drop(gateway);
}

/// T12 and T13: the configuration and inventory refusals.
#[test]
fn t12_t13_configuration_and_inventory_refusals() {
    for bad in
        [json!({"max_file_bytes": 1000}), json!({"max_retained_files": 1}), json!({"x": 1}), json!("yes")]
    {
        let d = deployment(bad.clone());
        let out = support::run_with_deadline(d.command(), Duration::from_secs(20));
        support::assert_startup_error(&out, "config_invalid", &bad.to_string());
    }
    let d = deployment(json!(true));
    std::fs::create_dir_all(d.path("artifacts/traces")).unwrap();
    for dir in ["artifacts", "artifacts/traces"] {
        std::fs::set_permissions(d.path(dir), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let name = "0123456789abcdef0123456789abcdef-00000000000000000001.jsonl";
    let cases: [(&str, u32); 2] = [(name, 0o644), ("notes.txt", 0o600)];
    for (file, mode) in cases {
        let path = traces_dir(&d).join(file);
        std::fs::write(&path, "{}\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = support::run_with_deadline(d.command(), Duration::from_secs(20));
        support::assert_startup_error(&out, "artifact_root_unavailable", file);
        std::fs::remove_file(&path).unwrap();
    }
    // A retained file of the right shape is kept and never read.
    let path = traces_dir(&d).join(name);
    std::fs::write(&path, "not json\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let gateway = Gateway::start(d.command(), addr(&d));
    assert_eq!(call(addr(&d), "echo", 1, &json!({})).0, 200);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "not json\n");
    drop(gateway);
}

/// config.md §11 rows 124–126 and 143: the directories traces and inspection create, none in discovery,
/// and the traces lock held against a second gateway on the same root.
#[test]
fn config_rows_124_125_126_143_directories_and_the_traces_lock() {
    let mut d = deployment(json!(true));
    d.gateway["artifacts"]["inspection"] = json!(true);
    d.gateway["artifacts"].as_object_mut().unwrap().remove("events");
    d.gateway.as_object_mut().unwrap().remove("pcc");
    d.write_documents();
    // Row 126: discovery creates neither directory.
    let mut discovery = d.command();
    discovery.arg("--print-pins");
    let out = support::run_with_deadline(discovery, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!d.path("artifacts").exists(), "discovery created the artifact root");
    // Rows 124 and 125.
    let gateway = Gateway::start(d.command(), addr(&d));
    for dir in ["artifacts/traces", "artifacts/inspection"] {
        let mode = std::fs::metadata(d.path(dir)).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o700, "{dir}");
    }
    // Row 143: a second gateway on the same root, other ports.
    let mut second = d.gateway.clone();
    second["listen"]["port"] = json!(support::free_port("127.0.0.1"));
    d.write_file("second.json", &serde_json::to_string_pretty(&second).unwrap());
    let mut cmd = support::ptc();
    cmd.current_dir(d.dir.path()).args(["gateway", "second.json"]).env("GATEWAY_TOKEN", support::TOKEN);
    let out = support::run_with_deadline(cmd, Duration::from_secs(20));
    support::assert_startup_error(&out, "artifact_root_unavailable", "row 143");
    drop(gateway);
}

/// traces.md §5.3, §5.5 and vectors T14–T16, execution.md §12.9: a failed run's error message and
/// traceback (component file and line) are in its trace and its debug log line, and nowhere a client or
/// the event log reads: the `/mcp` answer is the fixed text, byte for byte.
#[test]
fn t14_t15_t16_a_failed_run_tells_the_operator_why() {
    let d = deployment(json!(true));
    let mut cmd = d.command();
    cmd.env("PTC_LOG", "ptc_gateway=debug");
    let gateway = Gateway::start(cmd, addr(&d));
    let tb = |line: u32| format!("workflow/app (app.luau):{line}: in function 'run'");
    let lib = "mission/m/lib (lib.luau):6";
    let table = [
        ("boom", "workflow/app (app.luau):2: secret internals".to_owned(), tb(2)),
        ("nil_index", "workflow/app (app.luau):4: attempt to index nil with 'x'".to_owned(), tb(4)),
        ("mission_error", "(error object is a table, not a string)".to_owned(), tb(3)),
    ];
    for (i, (tool, _, _)) in table.iter().enumerate() {
        let (status, answer) = call(addr(&d), tool, i + 1, &json!({}));
        assert_eq!(status, 200, "{tool}");
        // execution.md §7.2: the client gets the fixed text and nothing of the error.
        let event = &support::sse::tool_error(i as u64 + 1, &["Tool execution failed"])[12..];
        assert!(answer.contains(event), "{tool}: {answer}");
        for leak in ["secret", "app.luau", "lib.luau", "stack traceback", "nil"] {
            assert!(!answer.contains(leak), "{tool}: {leak} in {answer}");
        }
    }
    let found = traces(&d);
    assert_eq!(found.len(), table.len());
    for ((_, records), (tool, message, traceback)) in found.iter().zip(&table) {
        let end = records.last().unwrap();
        let want = json!({"message": message, "traceback": traceback});
        assert_eq!(end["error"], want, "{tool}: {end}");
        assert_eq!(end["failure"], json!("uncaught_error"), "{tool}");
        assert_eq!(end["outcome"], json!("execution_failed"), "{tool}");
    }
    // The mission's own error is in its `mission` record, with the mission's file and line.
    let mission = &found[2].1[1];
    let null = digest(&Value::Null);
    assert_eq!(
        normalised(mission),
        format!(
            r#"{{"at":"AT",{DUR},"error":{{"message":"{lib}: attempt to index nil with 'field'","traceback":"{lib}: in function 'oops'\nworkflow/app (app.luau):3: in function 'run'"}},"failure":"error","input":{{"value":null}},"input_digest":"{null}","kind":"mission","mission":"m","op":"call","result":null,"seq":2,"started_at":"STARTED_AT","target":"lib.oops"}}"#
        )
    );
    let events = support::providers::event_records(&d);
    let (_, _, _, stderr) =
        gateway.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(20));
    let stderr = String::from_utf8(stderr).unwrap();
    // The debug line of each failed run, after its timestamp and level: the class, the message and the
    // traceback, each escaped on the one line.
    let lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.split_once("ptc_gateway::exec::luau_runner: "))
        .map(|(_, r)| r)
        .collect();
    let want: Vec<String> = table
        .iter()
        .map(|(_, message, traceback)| {
            format!("run failed cause=uncaught_error error={message:?} traceback={traceback:?}")
        })
        .collect();
    assert_eq!(lines, want, "{stderr}");
    let events = serde_json::to_string(&events).unwrap();
    for leak in ["secret", "app.luau", "lib.luau", "index nil"] {
        assert!(!events.contains(leak), "the event log: {leak} in {events}");
    }
}

/// T16 on the PCC front: the answer of a failed run is the fixed text and the outcome (pcc.md §8), with
/// nothing of the error, while its trace has the message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t16_the_pcc_answer_of_a_failed_run_carries_nothing_of_its_error() {
    use support::pcc_client::{bearer, call as pcc_call, h, initialized, open, In, Out};
    let d = deployment(json!(true));
    let gateway = Gateway::start(d.command(), addr(&d));
    let meta = bearer();
    let meta: Vec<(&str, &str)> = meta.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut conv = open(d.pcc_port, &meta).await.expect("admitted");
    let mut steps = vec![In::Connect("briefs", "req-1")];
    steps.extend(h());
    steps.push(pcc_call(r#""c1""#, "boom", "{}"));
    for step in &steps {
        conv.send(step).await;
    }
    assert_eq!(conv.next().await, Out::Connected);
    assert_eq!(conv.next().await, initialized(0, "2025-11-25"));
    let answer = r#"{"id":"c1","jsonrpc":"2.0","result":{"content":[{"text":"Tool execution failed","type":"text"}],"isError":true,"structuredContent":{"outcome":"execution_failed"}}}"#;
    assert_eq!(conv.next().await, Out::Json(answer.into()));
    let found = traces(&d);
    let end = found[0].1.last().unwrap();
    assert_eq!(end["error"]["message"], json!("workflow/app (app.luau):2: secret internals"), "{end}");
    drop(gateway);
}
