//! Write-tool deployments with a private audit, the call bytes, and reading the audit files back
//! (audit-events.md §2).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::{content_pin, Deployment};

/// A write application that computes for a few milliseconds, then returns `{"ok": true}`.
pub const NOTE_LUAU: &str = "local M = {}\nfunction M.run(input)\n  local n = 0\n  for i = 1, 100000 do n = n + i end\n  return { ok = true }\nend\nreturn M\n";
const HANG_LUAU: &str = "local M = {}\nfunction M.run(input)\n  while true do local s = string.rep('x', 1000) end\nend\nreturn M\n";
const INPUT: &str = r#"{"type":"object","properties":{"text":{"type":"string"}}}"#;
const RESULT: &str = r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#;

/// The baseline with one write tool `note` (and the read tool `echo`), `private_audit` in `audit/`.
pub fn deployment(max_runs: u32, inflight: u32, max_file_bytes: u64, max_retained: u32) -> Deployment {
    let mut d = Deployment::baseline();
    let manifest = json!({
        "version": 1,
        "effect": "write",
        "contracts": {"input_schema": {"path": "input.json"}, "result_schema": {"path": "result.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"}
    });
    d.write_file("note/ptc.json", &serde_json::to_string_pretty(&manifest).unwrap());
    d.write_file("note/app.luau", NOTE_LUAU);
    d.write_file("note/input.json", INPUT);
    d.write_file("note/result.json", RESULT);
    // `hang` runs until its 8 s deadline (for disconnects mid-run).
    let mut hang = manifest.clone();
    hang["limits"] = json!({"run_duration_ms": 8000});
    d.write_file("hang/ptc.json", &serde_json::to_string_pretty(&hang).unwrap());
    d.write_file("hang/app.luau", HANG_LUAU);
    d.write_file("hang/input.json", INPUT);
    d.write_file("hang/result.json", RESULT);
    let echo = d.gateway["tools"][0].clone();
    let tool = |name: &str| {
        json!({
            "name": name, "title": name, "description": "A write fixture.",
            "application": {"manifest": format!("{name}/ptc.json")}, "allow_write": true,
            "expected_application_content_digest": content_pin::of(&d.path(&format!("{name}/ptc.json"))),
            "installation_config_pins": {}, "provider_snapshot_pins": {}
        })
    };
    d.gateway["tools"] = json!([echo, tool("hang"), tool("note")]);
    d.gateway["pcc"]["servers"]["briefs"]["tools"] = json!(["echo"]);
    d.gateway["private_audit"] =
        json!({"directory": "audit", "max_file_bytes": max_file_bytes, "max_retained_files": max_retained});
    d.gateway["admission"]["max_concurrent_runs"] = json!(max_runs);
    d.gateway["admission"]["max_inflight_requests"] = json!(inflight);
    d
}

/// A `tools/call` of `tool` with `Connection: close`.
pub fn call_bytes(addr: SocketAddr, tool: &str, id: usize) -> Vec<u8> {
    super::tools_call_request(addr, tool, id, r#"{"text":"secret-argument"}"#, true)
}

/// Status and the whole response (read to EOF); status 0 when the connection failed.
pub fn exchange(addr: SocketAddr, tool: &str, id: usize) -> (u16, String) {
    super::send_to_eof(addr, &call_bytes(addr, tool, id), Duration::from_secs(30))
}

/// The final message event of a successful call `id` was received.
pub fn got_success(text: &str, id: usize) -> bool {
    text.contains(&format!("event: message\ndata: {{\"id\":{id},\"jsonrpc\":\"2.0\",\"result\":"))
        && text.contains(r#""isError":false"#)
}

/// The numbered audit files, ascending.
pub fn audit_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    v.retain(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".jsonl")));
    v.sort();
    v
}

/// Checks one record against audit-events.md §2.3: the exact nine keys and their domains.
pub fn assert_record(line: &str) {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let m = v.as_object().unwrap();
    let keys: Vec<&str> = m.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "call_id",
            "cleanup_status",
            "disconnected",
            "dispatch_state",
            "ended_at",
            "outcome_code",
            "started_at",
            "tool_name",
            "write_effects_may_have_occurred"
        ],
        "{line}"
    );
    let id = m["call_id"].as_str().unwrap();
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{line}");
    for k in ["started_at", "ended_at"] {
        let t = m[k].as_str().unwrap();
        assert!(t.len() == 24 && t.ends_with('Z') && &t[10..11] == "T", "{line}");
    }
    assert!(m["ended_at"].as_str() >= m["started_at"].as_str(), "{line}");
    assert_eq!(m["write_effects_may_have_occurred"], json!(true));
    assert!(["true", "unknown"].contains(&m["dispatch_state"].as_str().unwrap()), "{line}");
    assert!(line.len() < 512, "{line}");
    assert!(!line.contains("secret-argument"), "arguments never appear: {line}");
    assert_eq!(serde_json::to_string(&v).unwrap(), line, "deterministic encoding (sorted keys, no spaces)");
}

/// Every line of every file, each validated.
pub fn all_records(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    for f in audit_files(dir) {
        let content = std::fs::read_to_string(&f).unwrap();
        assert!(content.is_empty() || content.ends_with('\n'), "{f:?} ends with LF");
        for line in content.lines() {
            assert_record(line);
            out.push(serde_json::from_str(line).unwrap());
        }
    }
    out
}
