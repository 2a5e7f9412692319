//! The model rows (issue 16): what a `model(name):chat` call through the gateway costs next to the same
//! Chat Completions request sent straight to the same model server, all measured in one run.
//!
//! The model server is this binary re-executed with `PTC_BENCH_MODEL=<port>`: a hyper server answering
//! every request with one fixed chat completion, so both rows measure the same server. A tool with a model
//! is a write tool (models.md §2, S12), so every gateway call is also audited; the same deployment's
//! trivial write tool is driven too, so the model call's own share shows beside the audit's. The three are
//! measured in interleaved rounds (direct, chat, note, direct, …; at concurrency 16, then sequentially),
//! and "a model call adds … µs p50" is chat − note of the same round (issue 27 aims at 150 µs or less:
//! goal T2). Owns only these rows; the HTTP client helpers are the parent module's. Nothing here asserts a
//! threshold.

use std::net::SocketAddr;
use std::process::{Command, Stdio};

use serde_json::json;

use super::rounds::{self, plan, Rounds};
use super::{count, drive, mcp_request, ms, sequential, wait_listening, Reaped};
use crate::support;

/// The environment variable that makes this binary the model server.
pub const MODEL_ENV: &str = "PTC_BENCH_MODEL";
/// The concurrency of the rows.
const CONCURRENCY: usize = 16;
/// The fixed answer: one assistant message of two words.
const ANSWER: &str = r#"{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":"hello there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#;
/// What the gateway sends for `m:chat{messages={{role="user",content="hi"}}}` (models.md §4.1).
const REQUEST: &str = r#"{"messages":[{"content":"hi","role":"user"}],"model":"bench"}"#;

/// One workload at concurrency 16 and sequentially, once each per round.
pub struct Rows {
    pub loaded: Rounds,
    pub single: Rounds,
}

pub struct Results {
    pub direct: Rows,
    pub chat: Rows,
    pub write: Rows,
}

/// One round of `request` to `addr`: at concurrency [`CONCURRENCY`], then the plan's sequential calls.
async fn round(rows: &mut Rows, addr: SocketAddr, request: &[u8]) {
    rows.loaded.push(drive(addr, request.to_vec(), CONCURRENCY).await);
    rows.single.push(sequential(addr, request.to_vec(), plan().warm_calls, plan().calls).await);
}

fn new_rows() -> Rows {
    Rows { loaded: Rounds::new(), single: Rounds::new() }
}

/// The model server of `MODEL_ENV`: answers every request with [`ANSWER`].
pub fn model_server(port: u16) {
    super::fixed_answer_server(port, ANSWER.as_bytes(), Some("application/json"));
}

pub async fn measure() -> Results {
    let port = support::free_port("127.0.0.1");
    let model: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
    let exe = std::env::current_exe().expect("bench binary");
    let _server = Reaped(
        Command::new(exe)
            .env(MODEL_ENV, port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the model server"),
    );
    wait_listening(model).await;
    let post = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {model}\r\nAuthorization: Bearer sk-bench\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\n\r\n{REQUEST}",
        REQUEST.len()
    );
    let post = post.into_bytes();
    let d = deployment(port);
    let addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().expect("addr");
    let mut cmd = d.command();
    cmd.env("MODEL_KEY", "sk-bench");
    let _gateway = Reaped(cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn ptc"));
    wait_listening(addr).await;
    let chat_call = mcp_request(addr, "tools/call", r#""name":"chat","arguments":{},"#, Some("chat"));
    let note_call =
        mcp_request(addr, "tools/call", r#""name":"note","arguments":{"text":"x"},"#, Some("note"));
    let (mut direct, mut chat, mut write) = (new_rows(), new_rows(), new_rows());
    for n in 0..plan().rounds {
        eprintln!("models, round {}/{}", n + 1, plan().rounds);
        round(&mut direct, model, &post).await;
        round(&mut chat, addr, &chat_call).await;
        round(&mut write, addr, &note_call).await;
    }
    Results { direct, chat, write }
}

/// The audited deployment of `support::audit` (its write tool `note` made trivial) plus the tool `chat`,
/// whose workflow makes one model call to the server on `port`.
fn deployment(port: u16) -> support::Deployment {
    let mut d = support::audit::deployment(128, 128, 67_108_864, 8);
    d.write_file("note/app.luau", "local M = {}\nfunction M.run(input) return { ok = true } end\nreturn M\n");
    d.gateway["tools"][2]["expected_application_content_digest"] =
        json!(support::content_pin::of(&d.path("note/ptc.json")));
    d.gateway["admission"]["max_active_provider_calls"] = json!(64);
    d.gateway["admission"]["max_waiting_provider_calls"] = json!(64);
    d.host["credentials"]["model_key"] = json!({"env": "MODEL_KEY"});
    d.host["install"]["llm"] = json!({"source": "llm", "installation_revision": "bench",
        "endpoint": format!("http://127.0.0.1:{port}/v1"), "allow_insecure_loopback": true,
        "model": "bench", "credential": "model_key"});
    let manifest = json!({
        "version": 1, "effect": "write",
        "contracts": {"input_schema": {"path": "open.json"}, "result_schema": {"path": "open.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
        "providers": {"workflow": [{"name": "llm"}]}
    });
    d.write_file("chat/ptc.json", &manifest.to_string());
    d.write_file("chat/open.json", r#"{"type":"object","additionalProperties":true}"#);
    d.write_file(
        "chat/app.luau",
        "local M = {}\nfunction M.run(input)\n  return model('llm'):chat({ messages = { { role = 'user', content = 'hi' } } })\nend\nreturn M\n",
    );
    let tool = json!({"name": "chat", "title": "chat", "description": "bench", "allow_write": true,
        "application": {"manifest": "chat/ptc.json"}});
    d.gateway["tools"].as_array_mut().expect("tools").push(tool);
    d.write_documents();
    let mut discover = d.command();
    discover.arg("--print-pins");
    let out = support::run_with_deadline(discover, std::time::Duration::from_secs(30));
    let pins: serde_json::Value = serde_json::from_slice(&out.stdout).expect("print-pins");
    for tool in d.gateway["tools"].as_array_mut().expect("tools") {
        let name = tool["name"].as_str().expect("name").to_owned();
        for (key, value) in pins[&name].as_object().expect("pins") {
            tool[key] = value.clone();
        }
    }
    d.frozen = false;
    d.write_documents();
    d
}

/// The section of `docs/benchmarks.md`.
pub fn section(r: &Results) -> String {
    let mut out = String::new();
    out.push_str("\n## Model calls (issues 16 and 27)\n\n");
    out.push_str("The same Chat Completions request sent straight to a fixed-answer model server (this bench binary),\n");
    out.push_str(
        "the tool `chat` whose workflow makes that request through `model('llm'):chat` (a write tool,\n",
    );
    out.push_str(
        "models.md §2, so each call is also audited), and the same deployment's trivial audited write tool\n",
    );
    out.push_str(&format!(
        "`note`, in {} interleaved rounds (direct, chat, note, …); per round each at concurrency {CONCURRENCY}\n",
        plan().rounds
    ));
    out.push_str(&format!(
        "(keep-alive connections back to back; `ratio` is req/s over the direct request's of the same round,\n\
         median with min–max) and then sequentially on one connection ({} calls after {} unmeasured).\n\n",
        count(plan().calls),
        count(plan().warm_calls)
    ));
    out.push_str(
        "| workload | req/s c=16 | p50 ms | p99 ms | ratio, median (min–max) | p50 ms c=1 | p99 ms c=1 |\n",
    );
    out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (name, rows) in [
        ("model server, direct", &r.direct),
        ("tools/call chat (model call, audited)", &r.chat),
        ("tools/call note (audited, no model)", &r.write),
    ] {
        let (m, one) = (&rows.loaded, &rows.single);
        out.push_str(&format!(
            "| {name} | {:.0} | {} | {} | {} | {} | {} |\n",
            m.rps(),
            ms(m.p50()),
            ms(m.percentile(0.99)),
            rounds::rate_ratio(m, &r.direct.loaded).ratio(),
            ms(one.p50()),
            ms(one.percentile(0.99))
        ));
    }
    let added = rounds::added_at(&r.chat.single, &r.write.single, 0.5);
    let request = r.direct.single.seconds_at(0.5);
    out.push_str(&format!(
        "\nAt c=1 a model call adds {} µs p50 (median, min–max over rounds) to an audited call (goal T2: ≤ 150 µs);\n\
         the request itself takes {} µs p50 when sent directly, so the rest is the gateway's side of the call\n",
        added.micros(),
        request.micros()
    ));
    out.push_str("(admission, the pooled connection, the request's encoding, the answer's decoding and its conversion\n");
    out.push_str("to Luau).\n");
    out
}
