//! The wire body of `body.rs` against the construction it replaced (issue 27): the request's wire form
//! built as a `serde_json::Value` and encoded by the deterministic encoder, kept here as the reference. Every
//! request vector of `chat_tests.rs` and a set of further shapes give the same bytes, or the same refusal,
//! both ways.

use serde_json::{Map, Value};

use super::super::chat::{
    bounded_string, is_function_name, object, only_keys, temperature_ok, wire_choice, ModelDefaults,
    MAX_MESSAGES, MAX_REQUEST_BYTES, MAX_TOOLS, MAX_TOOL_CALLS,
};
use super::request_body;
use crate::codes::model::ModelFailure;
use crate::json::{self, as_integer, decode, integer_value, Limits};

const INVALID: ModelFailure = ModelFailure::RequestInvalid;
const ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

/// models.md §4.1: the wire body for `request` (the `m:chat` table converted to JSON) under `defaults`.
fn reference_body(defaults: &ModelDefaults, request: &Value) -> Result<Vec<u8>, ModelFailure> {
    let Value::Object(request) = request else { return Err(INVALID) };
    only_keys(
        request,
        &["messages", "tools", "tool_choice", "response_format", "temperature", "max_tokens"],
    )?;
    let mut body = Map::new();
    body.insert("model".into(), Value::String(defaults.model.clone()));
    let messages = match request.get("messages") {
        Some(Value::Array(m)) if !m.is_empty() && m.len() <= MAX_MESSAGES => m,
        _ => return Err(INVALID),
    };
    let messages = messages.iter().map(wire_message).collect::<Result<Vec<_>, _>>()?;
    body.insert("messages".into(), Value::Array(messages));
    let mut names = Vec::new();
    if let Some(tools) = request.get("tools") {
        let Value::Array(tools) = tools else { return Err(INVALID) };
        if tools.is_empty() || tools.len() > MAX_TOOLS {
            return Err(INVALID);
        }
        let wire = tools.iter().map(|t| wire_tool(t, &mut names)).collect::<Result<Vec<_>, _>>()?;
        body.insert("tools".into(), Value::Array(wire));
    }
    if let Some(choice) = request.get("tool_choice") {
        body.insert("tool_choice".into(), wire_choice(choice, &names)?);
    }
    if let Some(schema) = request.get("response_format") {
        let Value::Object(_) = schema else { return Err(INVALID) };
        let format = object([
            ("name", Value::from("result")),
            ("schema", schema.clone()),
            ("strict", Value::Bool(true)),
        ]);
        body.insert(
            "response_format".into(),
            object([("json_schema", format), ("type", Value::from("json_schema"))]),
        );
    }
    match request.get("temperature").or(defaults.temperature.as_ref()) {
        Some(t) if temperature_ok(t) => {
            body.insert("temperature".into(), t.clone());
        }
        Some(_) => return Err(INVALID),
        None => {}
    }
    let max_tokens = match request.get("max_tokens") {
        Some(v) => match as_integer(v) {
            Some(n) if (1..=1_000_000).contains(&n) => Some(n),
            _ => return Err(INVALID),
        },
        None => defaults.max_tokens,
    };
    if let Some(n) = max_tokens {
        body.insert("max_tokens".into(), integer_value(n));
    }
    let bytes = json::to_deterministic(&Value::Object(body));
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(INVALID);
    }
    Ok(bytes)
}

/// One message, Luau form → wire form (models.md §4.2).
fn wire_message(message: &Value) -> Result<Value, ModelFailure> {
    let Value::Object(m) = message else { return Err(INVALID) };
    let role = bounded_string(m.get("role"), 16)?;
    if !ROLES.contains(&role) {
        return Err(INVALID);
    }
    let content = match m.get("content") {
        Some(Value::String(s)) => Some(Value::String(s.clone())),
        None => None,
        Some(_) => return Err(INVALID),
    };
    let mut wire = Map::new();
    wire.insert("role".into(), Value::from(role));
    match role {
        "assistant" => {
            only_keys(m, &["role", "content", "tool_calls"])?;
            let calls = match m.get("tool_calls") {
                None => None,
                Some(Value::Array(calls)) if !calls.is_empty() && calls.len() <= MAX_TOOL_CALLS => {
                    Some(calls.iter().map(wire_call).collect::<Result<Vec<_>, _>>()?)
                }
                Some(_) => return Err(INVALID),
            };
            if content.is_none() && calls.is_none() {
                return Err(INVALID);
            }
            wire.insert("content".into(), content.unwrap_or(Value::Null));
            if let Some(calls) = calls {
                wire.insert("tool_calls".into(), Value::Array(calls));
            }
        }
        "tool" => {
            only_keys(m, &["role", "content", "tool_call_id"])?;
            let id = bounded_string(m.get("tool_call_id"), 256)?;
            wire.insert("tool_call_id".into(), Value::from(id));
            wire.insert("content".into(), content.ok_or(INVALID)?);
        }
        _ => {
            only_keys(m, &["role", "content"])?;
            wire.insert("content".into(), content.ok_or(INVALID)?);
        }
    }
    Ok(Value::Object(wire))
}

/// An assistant's tool call → wire form, arguments as JSON text. The Luau form is `{id, name, arguments}`;
/// the wire form itself (`{id, type = "function", ["function"] = {name, arguments}}`, arguments a JSON
/// text or a table) is accepted too, so a script may echo an answer's call in either shape (models.md §4.2).
fn wire_call(call: &Value) -> Result<Value, ModelFailure> {
    let Value::Object(c) = call else { return Err(INVALID) };
    let (id, function) = if c.contains_key("function") {
        only_keys(c, &["id", "type", "function"])?;
        if c.get("type").is_some_and(|t| t.as_str() != Some("function")) {
            return Err(INVALID);
        }
        let Some(Value::Object(f)) = c.get("function") else { return Err(INVALID) };
        only_keys(f, &["name", "arguments"])?;
        (bounded_string(c.get("id"), 256)?, f)
    } else {
        only_keys(c, &["id", "name", "arguments"])?;
        (bounded_string(c.get("id"), 256)?, c)
    };
    let name = bounded_string(function.get("name"), 64)?;
    if !is_function_name(name) {
        return Err(INVALID);
    }
    let arguments = match function.get("arguments") {
        Some(a @ Value::Object(_)) => json::to_deterministic_string(a),
        Some(Value::String(text)) => match json::decode(text.as_bytes(), Limits::UPSTREAM_MESSAGE) {
            Ok(a @ Value::Object(_)) => json::to_deterministic_string(&a),
            _ => return Err(INVALID),
        },
        None => "{}".to_owned(),
        Some(_) => return Err(INVALID),
    };
    let function = object([("arguments", Value::String(arguments)), ("name", Value::from(name))]);
    Ok(object([("function", function), ("id", Value::from(id)), ("type", Value::from("function"))]))
}

/// A function tool, Luau form `{name, description?, parameters?}` (or the wire form `{type = "function",
/// ["function"] = {…}}`) → wire form.
fn wire_tool(tool: &Value, names: &mut Vec<String>) -> Result<Value, ModelFailure> {
    let Value::Object(t) = tool else { return Err(INVALID) };
    let t = match t.get("function") {
        Some(Value::Object(f)) => {
            only_keys(t, &["type", "function"])?;
            if t.get("type").and_then(Value::as_str) != Some("function") {
                return Err(INVALID);
            }
            f
        }
        Some(_) => return Err(INVALID),
        None => t,
    };
    only_keys(t, &["name", "description", "parameters"])?;
    let name = bounded_string(t.get("name"), 64)?;
    if !is_function_name(name) || names.iter().any(|n| n == name) {
        return Err(INVALID);
    }
    names.push(name.to_owned());
    let mut function = Map::new();
    function.insert("name".into(), Value::from(name));
    match t.get("description") {
        Some(Value::String(d)) => {
            function.insert("description".into(), Value::String(d.clone()));
        }
        None => {}
        Some(_) => return Err(INVALID),
    }
    match t.get("parameters") {
        Some(p @ Value::Object(_)) => {
            function.insert("parameters".into(), p.clone());
        }
        None => {}
        Some(_) => return Err(INVALID),
    }
    Ok(object([("function", Value::Object(function)), ("type", Value::from("function"))]))
}

fn defaults() -> ModelDefaults {
    ModelDefaults { model: "small".into(), temperature: None, max_tokens: None }
}

/// Requests of every shape the wire form has: the vectors of `chat_tests.rs` and more, each accepted or
/// refused.
const REQUESTS: &[&str] = &[
    r#"{"messages":[{"role":"user","content":"hi"}]}"#,
    r#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],
        "tools":[{"name":"add","description":"Adds.","parameters":{"type":"object"}}],
        "tool_choice":"add","temperature":0.5,"max_tokens":64}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","name":"add","arguments":{"b":2,"a":1}}]},
        {"role":"tool","tool_call_id":"c1","content":"3"}]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"object","properties":{"b":{},"a":{"type":"integer"}}}}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"b\":2, \"a\":1}"}}]},
        {"role":"tool","tool_call_id":"c1","content":"3"}],
        "tools":[{"type":"function","function":{"name":"add"}}],"tool_choice":{"type":"function","function":{"name":"add"}}}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"[1]"}}]}]}"#,
    r#"{"messages":[]}"#,
    r#"{"messages":[{"role":"robot","content":"x"}]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"stream":true}"#,
    r#"{"messages":[{"role":"tool","content":"x"}]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"temperature":2.5}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a.b"}]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a"}],"tool_choice":"b"}"#,
    r#"{"messages":[{"role":"assistant"}]}"#,
    r#"{"messages":[{"role":"assistant","content":"both","tool_calls":[{"id":"c","name":"f"}]}]}"#,
    r#"{"messages":[{"role":"user","content":"esc \"q\" \\ \n \u0001 é 𝄞"}],"temperature":1,"max_tokens":1000000}"#,
    r#"{"messages":[{"role":"user","content":""}],"temperature":0,"max_tokens":1}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"max_tokens":0}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"max_tokens":1.5}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"temperature":"1"}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"response_format":"json"}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":[]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":{"name":"a"}}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a"},{"name":"a"}]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a","description":7}]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a","parameters":[]}]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"a","description":"d","parameters":{"z":1,"y":[2,{"b":null,"a":true}]}}},{"name":"b-2_c"}],"tool_choice":"required"}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"other","function":{"name":"a"}}]}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tool_choice":"required"}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tool_choice":"none"}"#,
    r#"{"messages":[{"role":"user","content":"x"}],"tool_choice":"auto","tools":[{"name":"a"}]}"#,
    r#"{"messages":[{"role":"user","content":1}]}"#,
    r#"{"messages":[{"role":"user"}]}"#,
    r#"{"messages":[{"role":"user","content":"x","name":"n"}]}"#,
    r#"{"messages":[{"role":"system","content":"s"},{"role":"tool","tool_call_id":"","content":"x"}]}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[]}]}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c","name":"f","arguments":"not json"}]}]}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c","name":"f","arguments":7}]}]}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"x","function":{"name":"f"}}]}]}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","extra":1}}]}]}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c","name":"bad name"}]}]}"#,
    r#"{"messages":[{"role":"assistant","tool_calls":[{"name":"f"}]}]}"#,
    r#"{"messages":"hi"}"#,
    r#"[1]"#,
];

#[test]
fn the_body_is_written_as_the_value_construction_encoded_it() {
    let with_params =
        ModelDefaults { model: "m\"odel".into(), temperature: Some(Value::from(1.25)), max_tokens: Some(9) };
    for defaults in [defaults(), with_params] {
        for request in REQUESTS {
            let request = decode(request.as_bytes(), Limits::DOCUMENT).unwrap();
            let got = request_body(&defaults, &request).map(|b| String::from_utf8(b).unwrap());
            let want = reference_body(&defaults, &request).map(|b| String::from_utf8(b).unwrap());
            assert_eq!(got, want, "{request}");
        }
    }
}

// models.md §4.1: a body over 4 MiB is refused, one at the bound is sent, both ways alike.
#[test]
fn the_size_bound_is_the_same() {
    let overhead = r#"{"messages":[{"content":"","role":"user"}],"model":"small"}"#.len();
    for fill in [MAX_REQUEST_BYTES - overhead, MAX_REQUEST_BYTES - overhead + 1] {
        let request = serde_json::json!({"messages": [{"role": "user", "content": "x".repeat(fill)}]});
        let got = request_body(&defaults(), &request).map(|b| b.len());
        assert_eq!(got, reference_body(&defaults(), &request).map(|b| b.len()));
        let want = if fill + overhead <= MAX_REQUEST_BYTES { Ok(MAX_REQUEST_BYTES) } else { Err(INVALID) };
        assert_eq!(got, want);
    }
}
