//! The deployment both third-party runs talk to, and what the spec says it must list.
//!
//! Owns: three provider-free read tools — `echo` (the baseline of tests/support), `shout` (execution.md
//! §15.1) and `weather` (the x-mcp-header fixture of http-mcp.md §12.1, so that the suite's custom-header
//! scenario has a string header parameter to probe) — with pins computed independently, the optional
//! allowed origin, the running gateway, and the exact `tools/list` entries http-mcp.md §10.3 fixes for
//! them. Does not own: the harness itself (tests/support) or any client.

use std::net::SocketAddr;

use serde_json::{json, Value};

use crate::support::{content_pin, Deployment, Gateway};

const SHOUT_LUAU: &str = "local M = {}\n\n-- Upper-cases ASCII letters and reports the byte length of the input text.\n\
function M.run(input)\n  local text = input.text\n  return { text = string.upper(text), length = #text }\nend\n\n\
return M\n";
const SHOUT_INPUT: &str = r#"{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":1000}},"required":["text"]}"#;
const SHOUT_RESULT: &str = r#"{"type":"object","properties":{"text":{"type":"string"},"length":{"type":"integer"}},"required":["text","length"]}"#;

const WEATHER_LUAU: &str =
    "local M = {}\n\nfunction M.run(input)\n  return { region = input.region }\nend\n\nreturn M\n";
const WEATHER_INPUT: &str = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"days":{"type":"integer","x-mcp-header":"Days"},"metric":{"type":"boolean","x-mcp-header":"Metric"}},"required":["region"]}"#;
const WEATHER_RESULT: &str =
    r#"{"type":"object","properties":{"region":{"type":"string"}},"required":["region"]}"#;

/// Writes one application (manifest, contracts, code) under `dir/` and returns its content pin.
fn add_app(d: &Deployment, dir: &str, luau: &str, input: &str, result: &str) -> String {
    let manifest = json!({
        "version": 1,
        "effect": "read",
        "contracts": {"input_schema": {"path": "input.schema.json"},
                      "result_schema": {"path": "result.schema.json"}},
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"}
    });
    d.write_file(&format!("{dir}/ptc.json"), &serde_json::to_string_pretty(&manifest).expect("json"));
    d.write_file(&format!("{dir}/app.luau"), luau);
    d.write_file(&format!("{dir}/input.schema.json"), input);
    d.write_file(&format!("{dir}/result.schema.json"), result);
    content_pin::of(&d.path(&format!("{dir}/ptc.json")))
}

fn tool(name: &str, title: &str, description: &str, dir: &str, pin: String) -> Value {
    json!({"name": name, "title": title, "description": description,
           "application": {"manifest": format!("{dir}/ptc.json")},
           "expected_application_content_digest": pin,
           "installation_config_pins": {}, "provider_snapshot_pins": {}})
}

/// Starts the gateway on a free loopback port; `origin` is added to `listen.allowed_origins`.
pub fn start(origin: Option<&str>) -> (Deployment, Gateway) {
    let mut d = Deployment::baseline();
    let shout = add_app(&d, "shout", SHOUT_LUAU, SHOUT_INPUT, SHOUT_RESULT);
    let weather = add_app(&d, "weather", WEATHER_LUAU, WEATHER_INPUT, WEATHER_RESULT);
    let tools = d.gateway["tools"].as_array_mut().expect("tools");
    tools.push(tool("shout", "Shout", "Upper-case a text and count its bytes.", "shout", shout));
    tools.push(tool("weather", "Weather", "Echo the region of a forecast request.", "weather", weather));
    if let Some(origin) = origin {
        d.gateway["listen"]["allowed_origins"] = json!([origin]);
    }
    d.write_documents();
    let addr = SocketAddr::from(([127, 0, 0, 1], d.port));
    let gateway = Gateway::start(d.command(), addr);
    (d, gateway)
}

/// `_meta` of every result (http-mcp.md §10.2 "Server identity").
pub fn server_meta() -> Value {
    json!({"io.modelcontextprotocol/serverInfo": {"name": "ptc-gateway", "version": env!("CARGO_PKG_VERSION")}})
}

/// The `server/discover` result, http-mcp.md §10.2.
pub fn discover_result() -> Value {
    json!({"_meta": server_meta(), "cacheScope": "private", "capabilities": {"tools": {"listChanged": false}},
           "resultType": "complete", "supportedVersions": ["2026-07-28"], "ttlMs": 0})
}

/// The `tools/list` result, http-mcp.md §10.3: byte order of names, normalized schemas (execution.md
/// §11.2 injects `additionalProperties: false` into every object schema and keeps `x-mcp-header`).
pub fn tools_list_result() -> Value {
    let read_only = json!({"readOnlyHint": true});
    let closed = |schema: &str| -> Value {
        let mut v: Value = serde_json::from_str(schema).expect("schema");
        v["additionalProperties"] = json!(false);
        v
    };
    json!({"_meta": server_meta(), "cacheScope": "private", "resultType": "complete", "ttlMs": 0, "tools": [
        {"annotations": read_only, "description": "Return the input object unchanged.",
         "inputSchema": {"additionalProperties": false, "type": "object"}, "name": "echo",
         "outputSchema": {"additionalProperties": false, "type": "object"}, "title": "Echo"},
        {"annotations": read_only, "description": "Upper-case a text and count its bytes.",
         "inputSchema": closed(SHOUT_INPUT), "name": "shout", "outputSchema": closed(SHOUT_RESULT),
         "title": "Shout"},
        {"annotations": read_only, "description": "Echo the region of a forecast request.",
         "inputSchema": closed(WEATHER_INPUT), "name": "weather", "outputSchema": closed(WEATHER_RESULT),
         "title": "Weather"}
    ]})
}

/// The results of the three calls both SDK clients make (tests/python/client.py, tests/typescript/client.mjs),
/// by label, as the gateway sends them.
pub fn sdk_call_results() -> Value {
    json!({
        // execution.md §15.1 "A successful call", byte for byte in the text block.
        "shout": success(json!({"length": 12, "text": "HELLO, WORLD"}), r#"{"length":12,"text":"HELLO, WORLD"}"#),
        // Both SDKs mirror `region` into Mcp-Param-Region; not header-safe, so only its base64 form
        // (http-mcp.md §9.2 step 4) can pass C3. Deterministic JSON leaves non-ASCII unescaped.
        "weather": success(json!({"region": "Hello, 世界"}), r#"{"region":"Hello, 世界"}"#),
        // execution.md §15.1 "Invalid input": minLength fails, the stream carries the fixed text.
        "shout_invalid": tool_error("Tool input did not satisfy its contract"),
    })
}

/// A success result (execution.md §7.1): the value as `structuredContent` and as deterministic JSON text.
pub fn success(value: Value, text: &str) -> Value {
    json!({"_meta": server_meta(), "content": [{"text": text, "type": "text"}], "isError": false,
           "resultType": "complete", "structuredContent": value})
}

/// A tool error (execution.md §7.2) with its fixed text (§7.3).
pub fn tool_error(text: &str) -> Value {
    json!({"_meta": server_meta(), "content": [{"text": text, "type": "text"}], "isError": true,
           "resultType": "complete"})
}
