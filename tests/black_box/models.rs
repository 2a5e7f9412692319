//! Model providers through the real gateway (models.md): an `llm` installation over the scripted
//! OpenAI-compatible fixture, the tool `model` that calls `model(name):chat` or runs `handle:agent` over
//! the stdio MCP fixture, and what reaches the fixture, the caller, the audit, the event log and the traces.
//! Vectors M1–M12 and AG1–AG4 of models.md §11.

use crate::support;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};
use support::openai::OpenAiFixture;
use support::providers::{call, structured, wait, Fx};
use support::{content_pin, tools_call_request, Gateway};

/// The model credential and the gateway bearer: neither may appear anywhere the gateway writes.
const MODEL_KEY: &str = "sk-model-secret-7d1e0c";

const APP: &str = r#"local M = {}
function M.run(input)
  if input.goal then
    return mission("default"):agent{ goal = input.goal, model = input.model or "llm",
                                     max_turns = input.max_turns, result_schema = input.result_schema }
  end
  return model(input.model or "llm"):chat(input.request)
end
return M
"#;

const CALLS: &str = "local M = {}\nfunction M.echo(args)\n  return tool(\"fx.echo\", args)\nend\nreturn M\n";
const OPEN: &str = r#"{"type":"object","additionalProperties":true}"#;

/// The stdio fixture deployment plus the model tool over `up`: installations `llm` (the fixture, timeout
/// 60 s) and `slow` (the same fixture, `timeout_ms` 400), traces on, the write tool audited.
fn deployment(up: &OpenAiFixture) -> Fx {
    deployment_with(up, |_| {})
}

/// [`deployment`] with `edit` applied before the pins are taken.
fn deployment_with(up: &OpenAiFixture, edit: impl FnOnce(&mut Fx)) -> Fx {
    let mut fx = Fx::new("modern");
    let llm = |timeout: u64| {
        json!({"source": "llm", "installation_revision": "fixture-1", "endpoint": up.endpoint(),
               "allow_insecure_loopback": true, "model": "fixture-model", "credential": "model_key",
               "params": {"temperature": 0}, "ceilings": {"timeout_ms": timeout}})
    };
    fx.d.host["install"]["llm"] = llm(60_000);
    fx.d.host["install"]["slow"] = llm(400);
    fx.d.host["credentials"]["model_key"] = json!({"env": "MODEL_KEY"});
    let manifest = json!({
        "version": 1, "effect": "write",
        "contracts": {"input_schema": {"path": "open.json"}, "result_schema": {"path": "open.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
        "missions": {"default": {"components": [{"id": "calls", "path": "calls.luau"}], "providers": ["fx"]}},
        "providers": {"mission": [{"name": "fx", "config": {"allow": ["fx.echo"]}}],
                      "workflow": [{"name": "llm"}, {"name": "slow"}]}
    });
    fx.d.write_file("model/ptc.json", &serde_json::to_string_pretty(&manifest).expect("json"));
    fx.d.write_file("model/open.json", OPEN);
    fx.d.write_file("model/app.luau", APP);
    fx.d.write_file("model/calls.luau", CALLS);
    let tool = json!({"name": "model", "title": "Model", "description": "Calls the model fixture.",
                      "application": {"manifest": "model/ptc.json"}, "allow_write": true,
                      "expected_application_content_digest": content_pin::of(&fx.d.path("model/ptc.json")),
                      "installation_config_pins": {}, "provider_snapshot_pins": {}});
    fx.d.gateway["tools"].as_array_mut().expect("tools").push(tool);
    fx.d.gateway["private_audit"] =
        json!({"directory": "audit", "max_file_bytes": 1048576, "max_retained_files": 4});
    fx.d.gateway["artifacts"]["trace"] = json!(true);
    edit(&mut fx);
    fx.pin();
    fx
}

fn start(fx: &Fx) -> Gateway {
    let mut cmd = fx.command("none");
    cmd.env("MODEL_KEY", MODEL_KEY);
    Gateway::start(cmd, fx.addr())
}

fn chat(fx: &Fx, id: usize, arguments: Value) -> Value {
    let (status, body) = call(fx.addr(), "model", id, &arguments);
    assert_eq!(status, 200, "{body}");
    structured(&body).unwrap_or_else(|| panic!("no structured result in {body}"))
}

fn user(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": text}]})
}

fn failure(code: &str, dispatch: &str, retryable: bool, message: &str) -> Value {
    json!({"ok": false, "error": {"code": code, "message": message, "retryable": retryable, "dispatch": dispatch}})
}

fn usage(prompt: u64, completion: u64) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

/// M1–M9: one gateway, one scripted answer per call, in order: each call's exact result, then the exact
/// requests the fixture received.
#[test]
fn m1_m9_chat_answers_and_failure_classes() {
    let big = 4_194_305;
    let up = OpenAiFixture::start(&[
        json!({"reply": {"content": "hello", "usage": usage(7, 2)}}),
        json!({"reply": {"content": null, "tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}}]}}),
        json!({"status": 401, "body": {"error": {"message": "bad key sk-upstream-leak"}}}),
        json!({"status": 429, "body": {"error": {"message": "slow down"}}}),
        json!({"status": 500, "raw": "upstream exploded"}),
        json!({"size": big}),
        json!({"status": 200, "raw": "{\"choices\": \"nope\"}"}),
        json!({"hold": true}),
    ]);
    let fx = deployment(&up);
    let _gateway = start(&fx);
    let tools = json!([{"name": "add", "description": "Adds.", "parameters": {"type": "object"}}]);
    let converted = json!({"messages": [
        {"role": "user", "content": "1+2?"},
        {"role": "assistant", "tool_calls": [{"id": "c0", "name": "add", "arguments": {"a": 0}}]},
        {"role": "tool", "tool_call_id": "c0", "content": "0"}], "tools": tools, "tool_choice": "auto"});
    let table: Vec<(&str, Value, Value)> = vec![
        (
            "M1 a chat success",
            json!({"request": user("hi")}),
            json!({"ok": true, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop", "usage": usage(7, 2)}),
        ),
        (
            "M2 tool calls converted both ways",
            json!({"request": converted}),
            json!({"ok": true, "message": {"role": "assistant", "tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}}]},
                "finish_reason": "tool_calls", "usage": usage(10, 5)}),
        ),
        (
            "M3 401",
            json!({"request": user("x")}),
            failure("model_authentication_failed", "true", false, "Model authentication failed"),
        ),
        (
            "M4 429",
            json!({"request": user("x")}),
            failure("model_rate_limited", "true", true, "Model rate limited"),
        ),
        (
            "M5 500",
            json!({"request": user("x")}),
            failure("model_upstream_error", "true", false, "Model upstream error"),
        ),
        (
            "M6 oversized",
            json!({"request": user("x")}),
            failure("model_response_too_large", "true", false, "Model response too large"),
        ),
        (
            "M7 malformed",
            json!({"request": user("x")}),
            failure("model_protocol_error", "true", false, "Model protocol error"),
        ),
        (
            "M8 a timeout",
            json!({"request": user("x"), "model": "slow"}),
            failure("model_timeout", "unknown", false, "Model call timed out"),
        ),
        (
            "M9 an invalid request, nothing sent",
            json!({"request": {"messages": []}}),
            failure("model_request_invalid", "false", false, "Model request invalid"),
        ),
    ];
    for (i, (what, arguments, want)) in table.iter().enumerate() {
        assert_eq!(chat(&fx, i + 1, arguments.clone()), *want, "{what}");
    }
    let events = up
        .wait("the timed-out request closed", |e| e.iter().any(|e| e["event"] == "closed" && e["step"] == 7));
    let received: Vec<&Value> = events.iter().filter(|e| e["event"] == "recv").collect();
    assert_eq!(received.len(), 8, "M9 sent nothing");
    for request in &received {
        assert_eq!(request["method"], "POST");
        assert_eq!(request["path"], "/v1/chat/completions");
        assert_eq!(request["headers"]["authorization"], format!("Bearer {MODEL_KEY}"));
        assert_eq!(request["headers"]["content-type"], "application/json");
    }
    assert_eq!(
        received[0]["body"],
        json!({"model": "fixture-model", "messages": [{"role": "user", "content": "hi"}], "temperature": 0})
    );
    assert_eq!(
        received[1]["body"],
        json!({"model": "fixture-model", "temperature": 0, "tool_choice": "auto", "messages": [
            {"role": "user", "content": "1+2?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "add", "arguments": "{\"a\":0}"}}]},
            {"role": "tool", "tool_call_id": "c0", "content": "0"}],
            "tools": [{"type": "function", "function": {"name": "add", "description": "Adds.", "parameters": {"type": "object"}}}]})
    );
    // M10: the event log counts by (tool, provider) and records each failure's class and dispatch only.
    let failures = fx.wait_event("the timeout's record", |e| {
        e["kind"] == "model_failure" && e["class"] == "model_timeout"
    });
    assert_eq!(
        failures,
        json!({"kind": "model_failure", "timestamp": failures["timestamp"], "tool": "model",
                                "provider": "slow", "class": "model_timeout", "dispatch": "unknown"})
    );
    // The event log is written after each answer, not before it: the last call's event may still be on its
    // way when the timeout's is there.
    fx.wait_event("the invalid request's record", |e| {
        e["kind"] == "model_failure" && e["class"] == "model_request_invalid"
    });
    let events = fx.events();
    let classes: Vec<(&str, &str, &str)> = events
        .iter()
        .filter(|e| e["kind"] == "model_failure")
        .map(|e| {
            (e["provider"].as_str().unwrap(), e["class"].as_str().unwrap(), e["dispatch"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        classes,
        vec![
            ("llm", "model_authentication_failed", "true"),
            ("llm", "model_rate_limited", "true"),
            ("llm", "model_upstream_error", "true"),
            ("llm", "model_response_too_large", "true"),
            ("llm", "model_protocol_error", "true"),
            ("slow", "model_timeout", "unknown"),
            ("llm", "model_request_invalid", "false"),
        ]
    );
    let counted = |kind: &str, provider: &str| -> u64 {
        fx.events()
            .iter()
            .filter(|e| e["kind"] == kind && e["provider"] == provider)
            .map(|e| e["count"].as_u64().unwrap())
            .sum()
    };
    // The writer reports each counter slot when it next runs (audit-events.md §3.7), so one report can
    // hold `llm`'s requests and the next the rest: wait for every count asserted below, not only the first.
    wait("the counters", Duration::from_secs(5), || {
        let all = [
            counted("model_requests", "llm") == 7,
            counted("model_requests", "slow") == 1,
            counted("model_failed", "llm") == 6,
            counted("model_tokens", "llm") == 9 + 15,
        ];
        all.iter().all(|reached| *reached).then_some(())
    });
    assert_eq!(counted("model_requests", "slow"), 1);
    assert_eq!(counted("model_failed", "llm"), 6);
    assert_eq!(counted("model_tokens", "llm"), 9 + 15);
    // M11: every call of the write tool is audited with dispatch `true`.
    let audit = fx.audit_records();
    assert_eq!(audit.len(), 9);
    assert!(audit.iter().all(|r| r["tool_name"] == "model"
        && r["dispatch_state"] == "true"
        && r["outcome_code"] == "success"));
    // M12: neither secret is in any file the gateway wrote, nor in any result.
    for secret in [MODEL_KEY, "sk-upstream-leak", support::TOKEN] {
        assert_absent(&fx.d.path("artifacts"), secret);
        assert_absent(&fx.d.path("audit"), secret);
    }
}

/// Asserts that no file below `dir` contains `secret`.
fn assert_absent(dir: &std::path::Path, secret: &str) {
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            assert_absent(&path, secret);
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).expect("file")).into_owned();
            assert!(!text.contains(secret), "{} holds a secret", path.display());
        }
    }
}

/// M13: a client that disappears while its model request is in flight: the run is cancelled and the
/// request's connection is closed, which the fixture sees.
#[test]
fn m13_a_vanished_client_closes_the_model_connection() {
    let up = OpenAiFixture::start(&[json!({"hold": true}), json!({"reply": {"content": "after"}})]);
    let fx = deployment(&up);
    let _gateway = start(&fx);
    let arguments = json!({"request": user("wait")}).to_string();
    let mut client = TcpStream::connect(fx.addr()).expect("connect");
    client.write_all(&tools_call_request(fx.addr(), "model", 1, &arguments, false)).expect("send");
    up.wait("the held request", |e| e.iter().any(|e| e["event"] == "recv"));
    drop(client);
    up.wait("the connection closed", |e| e.iter().any(|e| e["event"] == "closed" && e["step"] == 0));
    // The audit has the cancelled call: the connection closes when the run is cancelled, and the record
    // is made after that, so it is waited for before the next call can take the first place.
    let first = wait("the cancelled call's audit record", Duration::from_secs(10), || {
        fx.audit_records().into_iter().next()
    });
    assert_eq!(first["outcome_code"], "cancelled");
    assert_eq!(first["disconnected"], true);
    // The gateway is still serving.
    let answer = chat(&fx, 2, json!({"request": user("again")}));
    assert_eq!(answer["message"]["content"], "after");
    let audit = fx.audit_records();
    assert_eq!(audit.len(), 2);
    assert_eq!(audit[1]["outcome_code"], "success");
}

fn run_luau(id: &str, source: &str) -> Value {
    json!({"reply": {"content": null, "tool_calls": [{"id": id, "name": "run_luau", "arguments": {"source": source}}],
                     "usage": usage(20, 10)}})
}

fn finish(id: &str, value: Value) -> Value {
    json!({"reply": {"content": null, "tool_calls": [{"id": id, "name": "finish", "arguments": {"value": value}}],
                     "usage": usage(20, 10)}})
}

/// AG1: a task solved in two turns through the granted upstream tool; the exact second request.
#[test]
fn ag1_an_agent_solves_a_task_in_two_turns() {
    let source = "return tool('fx.echo', { n = 41 }).value.n + 1";
    let up = OpenAiFixture::start(&[run_luau("r1", source), finish("f1", json!({"answer": 42}))]);
    let fx = deployment(&up);
    let _gateway = start(&fx);
    let schema =
        json!({"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]});
    let result =
        chat(&fx, 1, json!({"goal": "Add one to 41 with fx.echo.", "max_turns": 4, "result_schema": schema}));
    assert_eq!(result, json!({"ok": true, "value": {"answer": 42}, "turns": 2, "usage": usage(40, 20)}));
    let requests = up.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0]["body"];
    assert_eq!(first["tool_choice"], "required");
    assert_eq!(first["tools"][0]["function"]["name"], "run_luau");
    assert_eq!(first["tools"][1]["function"]["parameters"]["properties"]["value"], schema);
    let system = first["messages"][0]["content"].as_str().expect("system text");
    assert!(system.starts_with("You solve the user's task by writing Luau programs"), "{system}");
    assert!(
        system.contains(
            "declare function tool(alias: \"fx.echo\", arguments: { [string]: any }): ToolResult<any>"
        ),
        "{system}"
    );
    assert!(system.contains("-- require(\"calls\").echo(...: any): any"), "{system}");
    assert_eq!(first["messages"][1], json!({"role": "user", "content": "Add one to 41 with fx.echo."}));
    let second = &requests[1]["body"]["messages"];
    assert_eq!(second.as_array().expect("messages").len(), 4);
    assert_eq!(
        second[2],
        json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "r1", "type": "function", "function": {"name": "run_luau", "arguments": serde_json::to_string(&json!({"source": source})).unwrap()}}]})
    );
    assert_eq!(
        second[3],
        json!({"role": "tool", "tool_call_id": "r1", "content": "{\"ok\":true,\"value\":42}"})
    );
}

/// AG2–AG4: the loop's other ends, each with its exact result.
#[test]
fn ag2_ag4_max_turns_an_invalid_reply_and_a_failed_eval() {
    let up = OpenAiFixture::start(&[
        // AG2: two runs, max_turns 2.
        run_luau("a", "return 1"),
        run_luau("b", "return 2"),
        // AG3: a reply without a tool call.
        json!({"reply": {"content": "I refuse", "usage": usage(20, 10)}}),
        // AG4: an eval that fails, then a final value that fails the schema, then one that passes.
        run_luau("c", "error('boom')"),
        finish("d", json!("not a number")),
        finish("e", json!(7)),
    ]);
    let fx = deployment(&up);
    let _gateway = start(&fx);
    let ag2 = chat(&fx, 1, json!({"goal": "loop", "max_turns": 2}));
    let mut want = failure("agent_max_turns", "true", false, "Agent reached max_turns");
    want["turns"] = json!(2);
    want["usage"] = usage(40, 20);
    assert_eq!(ag2, want, "AG2");
    let ag3 = chat(&fx, 2, json!({"goal": "refuse", "max_turns": 3}));
    let mut want = failure("agent_invalid_reply", "true", false, "Agent reply invalid");
    want["turns"] = json!(1);
    want["usage"] = usage(20, 10);
    assert_eq!(ag3, want, "AG3");
    let ag4 =
        chat(&fx, 3, json!({"goal": "fail first", "max_turns": 5, "result_schema": {"type": "integer"}}));
    assert_eq!(ag4, json!({"ok": true, "value": 7, "turns": 3, "usage": usage(60, 30)}), "AG4");
    let requests = up.requests();
    let last = requests[5]["body"]["messages"].as_array().expect("messages").clone();
    let tool_messages: Vec<&Value> = last.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_messages.len(), 2);
    let failed: Value = serde_json::from_str(tool_messages[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(failed["ok"], false);
    assert_eq!(failed["error"]["kind"], "error");
    assert!(failed["error"]["message"].as_str().unwrap().contains("boom"));
    assert_eq!(tool_messages[1]["content"], "{\"error\":{\"kind\":\"result_schema\"},\"ok\":false}");
}

/// M14: model calls share provider-call admission (providers.md §9): with one active slot and no waiter,
/// a second call while the first is held is refused unsent, retryable, and counted `provider_busy`.
#[test]
fn m14_model_calls_share_provider_call_admission() {
    let up = OpenAiFixture::start(&[json!({"hold": true}), json!({"reply": {"content": "second"}})]);
    let fx = deployment_with(&up, |fx| {
        fx.d.gateway["admission"]["max_active_provider_calls"] = json!(1);
        fx.d.gateway["admission"]["max_waiting_provider_calls"] = json!(0);
    });
    let _gateway = start(&fx);
    let arguments = json!({"request": user("hold")}).to_string();
    let mut held = TcpStream::connect(fx.addr()).expect("connect");
    held.write_all(&tools_call_request(fx.addr(), "model", 1, &arguments, false)).expect("send");
    up.wait("the held request", |e| e.iter().any(|e| e["event"] == "recv"));
    assert_eq!(
        chat(&fx, 2, json!({"request": user("x")})),
        failure("provider_capacity_exhausted", "false", true, "Provider capacity exhausted")
    );
    drop(held);
    up.wait("the held connection closed", |e| e.iter().any(|e| e["event"] == "closed"));
    let busy = fx.wait_event("the provider_busy counter", |e| e["kind"] == "provider_busy");
    assert_eq!(
        (&busy["tool"], &busy["provider"], &busy["count"]),
        (&json!("model"), &json!("llm"), &json!(1))
    );
    // The slot is free again once the held call was cancelled.
    wait("the slot released", Duration::from_secs(10), || {
        let answer = chat(&fx, 3, json!({"request": user("again")}));
        (answer["ok"] == true).then_some(())
    });
}

/// M15: the answer is built in the workflow sandbox, so it counts against `limits.memory_bytes`: an
/// answer larger than the limit ends the run `execution_failed` (a tool error), and the gateway goes on.
#[test]
fn m15_an_answer_over_the_memory_limit_fails_the_run() {
    let big = "x".repeat(3 * 1024 * 1024);
    let up =
        OpenAiFixture::start(&[json!({"reply": {"content": big}}), json!({"reply": {"content": "small"}})]);
    let fx = deployment_with(&up, |fx| {
        let path = fx.d.path("model/ptc.json");
        let mut manifest: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("manifest")).expect("json");
        manifest["limits"] = json!({"memory_bytes": 2_097_152});
        fx.d.write_file("model/ptc.json", &serde_json::to_string_pretty(&manifest).expect("json"));
    });
    let _gateway = start(&fx);
    let (status, body) = call(fx.addr(), "model", 1, &json!({"request": user("big")}));
    assert_eq!(status, 200);
    assert!(body.contains("\"isError\":true"), "{body}");
    assert_eq!(chat(&fx, 2, json!({"request": user("small")}))["message"]["content"], "small");
    let audit = fx.audit_records();
    assert_eq!(audit[0]["outcome_code"], "execution_failed");
}

/// The one trace file of the deployment: its text (for what must not be in it) and its records.
fn the_trace(fx: &Fx) -> (String, Vec<Value>) {
    let files = support::trace_files(&fx.d.path("artifacts/traces"));
    assert_eq!(files.len(), 1, "one trace file");
    let name = &files[0].0;
    let text = std::fs::read_to_string(fx.d.path("artifacts/traces").join(name)).expect("trace");
    let records = files.into_iter().next().map(|(_, records)| records).unwrap_or_default();
    (text, records)
}

/// AG5: an agent run's trace (traces.md §5.6, models.md §9): each turn's answer as a `model_call` record,
/// each eval as a mission invocation with its upstream call; no endpoint or key.
#[test]
fn ag5_an_agent_run_is_traced_with_its_evals() {
    let source = "return tool('fx.echo', { n = 1 }).value.n";
    let up = OpenAiFixture::start(&[run_luau("r1", source), finish("f1", json!(1))]);
    let fx = deployment(&up);
    let _gateway = start(&fx);
    assert_eq!(chat(&fx, 1, json!({"goal": "one", "max_turns": 2}))["value"], 1);
    let (text, records) = the_trace(&fx);
    let kinds: Vec<&str> = records.iter().map(|r| r["kind"].as_str().expect("kind")).collect();
    // The granted tools' facts of the system message, once (traces.md §5.8), before the first request.
    assert_eq!(
        kinds,
        ["run_start", "listing", "model_call", "tool_call", "mission", "model_call", "run_end"]
    );
    assert_eq!((&records[1]["mission"], &records[1]["seq"]), (&json!("default"), &json!(2)));
    let first = &records[2];
    assert_eq!(
        first,
        &json!({"kind": "model_call", "seq": 3, "at": first["at"], "provider": "llm", "started_at": first["started_at"],
                "duration_us": first["duration_us"], "ok": true, "class": null, "dispatch": "true",
                "finish_reason": "tool_calls", "usage": usage(20, 10), "request_digest": first["request_digest"],
                "message": {"value": {"role": "assistant", "tool_calls": [
                    {"id": "r1", "name": "run_luau", "arguments": {"source": source}}]}}})
    );
    // Each request's digest in every trace (traces.md §5.6); the second request carries the first turn.
    let digests = [&records[2]["request_digest"], &records[5]["request_digest"]];
    for d in digests {
        assert!(d.as_str().is_some_and(|d| d.len() == 71 && d.starts_with("sha256:")), "{d}");
    }
    assert_ne!(digests[0], digests[1]);
    assert_eq!(records[4]["op"], "eval");
    assert_eq!(records[4]["input"], json!({"value": source}));
    assert_eq!(records[5]["message"]["value"]["tool_calls"][0]["name"], "finish");
    assert!(
        !text.contains(MODEL_KEY) && !text.contains("chat/completions") && !text.contains(&up.endpoint())
    );
}

/// R7 (traces.md §6.3): with `artifacts.trace.replay`, each model answer whole as `m:chat` or the agent
/// loop received it, with the digest of the request; `result_digest` of the published result; no key.
#[test]
fn r7_a_replay_trace_keeps_each_model_answer_with_its_request_digest() {
    use crate::traces_replay::digest;
    let long = "m".repeat(5_000);
    let source = "return tool('fx.echo', { n = 1 }).value.n";
    let up = OpenAiFixture::start(&[
        json!({"reply": {"content": long, "usage": usage(7, 2)}}),
        run_luau("r1", source),
        finish("f1", json!(1)),
    ]);
    let fx = deployment_with(&up, |fx| fx.d.gateway["artifacts"]["trace"] = json!({"replay": true}));
    let _gateway = start(&fx);
    let request = user("hi");
    let chatted = chat(&fx, 1, json!({"request": request}));
    let agent = chat(&fx, 2, json!({"goal": "one", "max_turns": 2}));
    assert_eq!(agent["value"], 1);
    let dir = fx.d.path("artifacts/traces");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("traces")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 2);
    let read = |path: &std::path::Path| -> (String, Vec<Value>) {
        let text = std::fs::read_to_string(path).expect("trace");
        let records = text.lines().map(|l| serde_json::from_str(l).expect("record")).collect();
        (text, records)
    };
    let kinds = |records: &[Value]| -> Vec<String> {
        records.iter().map(|r| r["kind"].as_str().expect("kind").to_owned()).collect()
    };
    // m:chat: the answer whole (over the 4,096-byte value ceiling), the digest of the request as sent.
    let (text, records) = read(&files[0]);
    assert_eq!(kinds(&records), ["run_start", "model_call", "run_end"]);
    let answer = &records[1];
    assert_eq!(answer["message"], json!({"value": {"role": "assistant", "content": long}}));
    assert_eq!(answer["request_digest"], json!(digest(&request)));
    assert_eq!((&answer["finish_reason"], &answer["usage"]), (&json!("stop"), &usage(7, 2)));
    let end = &records[2];
    assert_eq!(
        (&end["result_digest"], &end["replayable"], &end["replay_blocked"]),
        (&json!(digest(&chatted)), &json!(true), &Value::Null)
    );
    assert!(!text.contains(MODEL_KEY));
    // The agent loop: two answers with their requests' digests, the eval's upstream call between them.
    let (text, records) = read(&files[1]);
    assert_eq!(
        kinds(&records),
        ["run_start", "listing", "model_call", "tool_call", "mission", "model_call", "run_end"]
    );
    let (first, second) = (&records[2]["request_digest"], &records[5]["request_digest"]);
    for d in [first, second] {
        assert!(d.as_str().is_some_and(|d| d.len() == 71 && d.starts_with("sha256:")), "{d}");
    }
    assert_ne!(first, second, "the second request carries the first turn");
    assert_eq!(records[2]["message"]["value"]["tool_calls"][0]["name"], "run_luau");
    let upstream = &records[3];
    assert_eq!(upstream["arguments"], json!({"value": {"n": 1}}));
    assert_eq!(upstream["arguments_digest"], json!(digest(&json!({"n": 1}))));
    assert_eq!(upstream["content"], json!({"value": []}));
    assert_eq!(records[4]["input_digest"], json!(digest(&json!(source))));
    let end = &records[6];
    assert_eq!(
        (&end["result_digest"], &end["replayable"], &end["replay_blocked"]),
        (&json!(digest(&agent)), &json!(true), &Value::Null)
    );
    assert!(!text.contains(MODEL_KEY) && !text.contains(&up.endpoint()));
}

/// R9 (traces.md §5.6, §6.3): without `replay`, `m:chat`'s record carries the digest of the request as
/// the run made it, computed here from the request with SHA-256 alone; the run is replayable.
#[test]
fn r9_without_replay_a_model_call_has_its_request_digest() {
    use crate::traces_replay::digest;
    let up = OpenAiFixture::start(&[json!({"reply": {"content": "hello", "usage": usage(7, 2)}})]);
    let fx = deployment(&up);
    let _gateway = start(&fx);
    let request = user("hi");
    let chatted = chat(&fx, 1, json!({"request": request}));
    let (text, records) = the_trace(&fx);
    let kinds: Vec<&str> = records.iter().map(|r| r["kind"].as_str().expect("kind")).collect();
    assert_eq!(kinds, ["run_start", "model_call", "run_end"]);
    let answer = &records[1];
    assert_eq!(
        answer,
        &json!({"kind": "model_call", "seq": 2, "at": answer["at"], "provider": "llm",
                "started_at": answer["started_at"], "duration_us": answer["duration_us"], "ok": true,
                "class": null, "dispatch": "true", "finish_reason": "stop", "usage": usage(7, 2),
                "message": {"value": {"role": "assistant", "content": "hello"}},
                "request_digest": digest(&json!({"messages": [{"content": "hi", "role": "user"}]}))})
    );
    let end = &records[2];
    assert_eq!(
        (&end["result"], &end["result_digest"], &end["replayable"], &end["replay_blocked"]),
        (&json!({"value": chatted}), &json!(digest(&chatted)), &json!(true), &Value::Null)
    );
    assert!(!text.contains(MODEL_KEY) && !text.contains(&up.endpoint()));
}
