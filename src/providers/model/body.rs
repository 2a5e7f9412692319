//! The Chat Completions request body (models.md §4.1–§4.2), validated and written in one pass.
//!
//! Owns the wire body's layout: each part of the `m:chat` table is checked (`model_request_invalid`) and
//! written straight into the body in deterministic JSON (pins.md §2: no whitespace, members in UTF-8 byte
//! order), the members of every object of the wire form written in that order by hand, and every value the
//! script gave (a schema, a temperature, arguments) by the one deterministic encoder. Replaced building the
//! wire form as a `serde_json::Value` (a copy of every string of the request) and encoding that (issue 27);
//! the bytes are the same, which `body_tests.rs` checks against that construction. Does not own what the
//! rules are (`chat.rs` keeps the shared checks) or sending (`client.rs`).

use serde_json::{Map, Value};

use super::chat::{
    bounded_string, is_function_name, only_keys, temperature_ok, wire_choice, ModelDefaults, MAX_MESSAGES,
    MAX_REQUEST_BYTES, MAX_TOOLS, MAX_TOOL_CALLS,
};
use crate::codes::model::ModelFailure;
use crate::json::encode::write_string;
use crate::json::{self, as_integer, integer_value, write_deterministic, Limits};

const INVALID: ModelFailure = ModelFailure::RequestInvalid;
const ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

/// The members of one object being written, in the order the caller gives them (which must be DJ's).
struct Members<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Members<'a> {
    fn open(out: &'a mut String) -> Members<'a> {
        out.push('{');
        Members { out, first: true }
    }

    /// Writes `"key":` (after a comma unless first) and hands back the buffer for the value.
    fn key(&mut self, key: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        write_string(self.out, key);
        self.out.push(':');
        self.out
    }

    fn close(self) {
        self.out.push('}');
    }
}

/// models.md §4.1: the wire body for `request` (the `m:chat` table converted to JSON) under `defaults`.
pub fn request_body(defaults: &ModelDefaults, request: &Value) -> Result<Vec<u8>, ModelFailure> {
    let Value::Object(request) = request else { return Err(INVALID) };
    only_keys(
        request,
        &["messages", "tools", "tool_choice", "response_format", "temperature", "max_tokens"],
    )?;
    let messages = match request.get("messages") {
        Some(Value::Array(m)) if !m.is_empty() && m.len() <= MAX_MESSAGES => m,
        _ => return Err(INVALID),
    };
    // Every part is checked before the body is laid out: `tools` (written last) names what `tool_choice`
    // may name, and a refused request writes nothing.
    let mut wire_messages = String::new();
    write_array(&mut wire_messages, messages, write_message)?;
    let mut names = Vec::new();
    let tools = match request.get("tools") {
        Some(Value::Array(tools)) if !tools.is_empty() && tools.len() <= MAX_TOOLS => {
            let mut wire = String::new();
            write_array(&mut wire, tools, |out, tool| write_tool(out, tool, &mut names))?;
            Some(wire)
        }
        Some(_) => return Err(INVALID),
        None => None,
    };
    let choice = request.get("tool_choice").map(|choice| wire_choice(choice, &names)).transpose()?;
    let schema = match request.get("response_format") {
        Some(schema @ Value::Object(_)) => Some(schema),
        Some(_) => return Err(INVALID),
        None => None,
    };
    let temperature = match request.get("temperature").or(defaults.temperature.as_ref()) {
        Some(t) if temperature_ok(t) => Some(t),
        Some(_) => return Err(INVALID),
        None => None,
    };
    let max_tokens = match request.get("max_tokens") {
        Some(v) => match as_integer(v) {
            Some(n) if (1..=1_000_000).contains(&n) => Some(n),
            _ => return Err(INVALID),
        },
        None => defaults.max_tokens,
    };
    let mut out = String::with_capacity(wire_messages.len() + tools.as_ref().map_or(0, String::len) + 64);
    let mut body = Members::open(&mut out);
    if let Some(n) = max_tokens {
        write_deterministic(body.key("max_tokens"), &integer_value(n));
    }
    body.key("messages").push_str(&wire_messages);
    write_string(body.key("model"), &defaults.model);
    if let Some(schema) = schema {
        let format = body.key("response_format");
        let mut response_format = Members::open(format);
        let mut json_schema = Members::open(response_format.key("json_schema"));
        write_string(json_schema.key("name"), "result");
        write_deterministic(json_schema.key("schema"), schema);
        json_schema.key("strict").push_str("true");
        json_schema.close();
        write_string(response_format.key("type"), "json_schema");
        response_format.close();
    }
    if let Some(t) = temperature {
        write_deterministic(body.key("temperature"), t);
    }
    if let Some(choice) = choice {
        write_deterministic(body.key("tool_choice"), &choice);
    }
    if let Some(tools) = tools {
        body.key("tools").push_str(&tools);
    }
    body.close();
    if out.len() > MAX_REQUEST_BYTES {
        return Err(INVALID);
    }
    Ok(out.into_bytes())
}

/// `[w(item), …]`.
fn write_array(
    out: &mut String,
    items: &[Value],
    mut write: impl FnMut(&mut String, &Value) -> Result<(), ModelFailure>,
) -> Result<(), ModelFailure> {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(out, item)?;
    }
    out.push(']');
    Ok(())
}

/// One message, Luau form → wire form (models.md §4.2): `content`, `role`, then `tool_call_id` or
/// `tool_calls`.
fn write_message(out: &mut String, message: &Value) -> Result<(), ModelFailure> {
    let Value::Object(m) = message else { return Err(INVALID) };
    let role = bounded_string(m.get("role"), 16)?;
    if !ROLES.contains(&role) {
        return Err(INVALID);
    }
    let content = match m.get("content") {
        Some(Value::String(s)) => Some(s.as_str()),
        None => None,
        Some(_) => return Err(INVALID),
    };
    let mut wire = Members::open(out);
    match role {
        "assistant" => {
            only_keys(m, &["role", "content", "tool_calls"])?;
            let calls = match m.get("tool_calls") {
                None => None,
                Some(Value::Array(calls)) if !calls.is_empty() && calls.len() <= MAX_TOOL_CALLS => {
                    Some(calls)
                }
                Some(_) => return Err(INVALID),
            };
            if content.is_none() && calls.is_none() {
                return Err(INVALID);
            }
            match content {
                Some(content) => write_string(wire.key("content"), content),
                None => wire.key("content").push_str("null"),
            }
            write_string(wire.key("role"), role);
            if let Some(calls) = calls {
                write_array(wire.key("tool_calls"), calls, write_call)?;
            }
        }
        "tool" => {
            only_keys(m, &["role", "content", "tool_call_id"])?;
            let id = bounded_string(m.get("tool_call_id"), 256)?;
            write_string(wire.key("content"), content.ok_or(INVALID)?);
            write_string(wire.key("role"), role);
            write_string(wire.key("tool_call_id"), id);
        }
        _ => {
            only_keys(m, &["role", "content"])?;
            write_string(wire.key("content"), content.ok_or(INVALID)?);
            write_string(wire.key("role"), role);
        }
    }
    wire.close();
    Ok(())
}

/// An assistant's tool call → `{function = {arguments, name}, id, type = "function"}`, arguments as JSON
/// text. The Luau form is `{id, name, arguments}`; the wire form itself (`{id, type = "function",
/// ["function"] = {name, arguments}}`, arguments a JSON text or a table) is accepted too, so a script may
/// echo an answer's call in either shape (models.md §4.2).
fn write_call(out: &mut String, call: &Value) -> Result<(), ModelFailure> {
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
    let mut wire = Members::open(out);
    let mut wire_function = Members::open(wire.key("function"));
    write_string(wire_function.key("arguments"), &arguments);
    write_string(wire_function.key("name"), name);
    wire_function.close();
    write_string(wire.key("id"), id);
    write_string(wire.key("type"), "function");
    wire.close();
    Ok(())
}

/// A function tool, Luau form `{name, description?, parameters?}` (or the wire form `{type = "function",
/// ["function"] = {…}}`) → `{function = {description?, name, parameters?}, type = "function"}`.
fn write_tool(out: &mut String, tool: &Value, names: &mut Vec<String>) -> Result<(), ModelFailure> {
    let Value::Object(t) = tool else { return Err(INVALID) };
    let t: &Map<String, Value> = match t.get("function") {
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
    let description = match t.get("description") {
        Some(Value::String(d)) => Some(d),
        None => None,
        Some(_) => return Err(INVALID),
    };
    let parameters = match t.get("parameters") {
        Some(p @ Value::Object(_)) => Some(p),
        None => None,
        Some(_) => return Err(INVALID),
    };
    let mut wire = Members::open(out);
    let mut function = Members::open(wire.key("function"));
    if let Some(description) = description {
        write_string(function.key("description"), description);
    }
    write_string(function.key("name"), name);
    if let Some(parameters) = parameters {
        write_deterministic(function.key("parameters"), parameters);
    }
    function.close();
    write_string(wire.key("type"), "function");
    wire.close();
    Ok(())
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
