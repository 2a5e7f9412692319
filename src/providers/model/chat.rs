//! The Chat Completions codec (models.md §4): the Luau-form request of `m:chat` to the exact wire body, and
//! the wire answer back to the Luau form, with tool calls converted both ways.
//!
//! Owns the request's validation (`model_request_invalid`), its deterministic encoding, and the answer's
//! validation (`model_protocol_error`). Pure: it sends nothing and reads no clock. The HTTP exchange is
//! `client.rs`; the Luau conversion of the values is the runtime's.

use serde_json::{Map, Value};

use crate::codes::model::ModelFailure;
use crate::json::{self, as_integer, integer_value, number_f64, number_integer, Limits};

/// The bound of one encoded request body (models.md §4.1).
pub const MAX_REQUEST_BYTES: usize = 4_194_304;
/// The bound of one response body (models.md §4.4).
pub const MAX_RESPONSE_BYTES: usize = 4_194_304;
/// At most this many messages, tools and tool calls per request (models.md §4.1).
pub const MAX_MESSAGES: usize = 1_024;
pub const MAX_TOOLS: usize = 128;
pub const MAX_TOOL_CALLS: usize = 128;

/// The installation's defaults (config.md §5.5 `model`, `params`).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelDefaults {
    pub model: String,
    pub temperature: Option<Value>,
    pub max_tokens: Option<i128>,
}

/// A successful answer in the Luau form (models.md §4.3): `message`, `finish_reason` (absent when the
/// upstream sent none) and `usage`.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatAnswer {
    pub message: Value,
    pub finish_reason: Option<String>,
    pub usage: Usage,
}

/// Token counts of one answer; a count the upstream did not send is 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
    }

    pub fn to_value(self) -> Value {
        let n = |v: u64| Value::from(v);
        object([
            ("completion_tokens", n(self.completion_tokens)),
            ("prompt_tokens", n(self.prompt_tokens)),
            ("total_tokens", n(self.total_tokens)),
        ])
    }
}

pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

const INVALID: ModelFailure = ModelFailure::RequestInvalid;
const ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];

/// A function name of the OpenAI tool-calling form: `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_function_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn bounded_string(value: Option<&Value>, max: usize) -> Result<&str, ModelFailure> {
    match value {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= max => Ok(s),
        _ => Err(INVALID),
    }
}

fn only_keys(map: &Map<String, Value>, allowed: &[&str]) -> Result<(), ModelFailure> {
    if map.keys().all(|k| allowed.contains(&k.as_str())) {
        Ok(())
    } else {
        Err(INVALID)
    }
}

/// models.md §4.1: the wire body for `request` (the `m:chat` table converted to JSON) under `defaults`.
pub fn request_body(defaults: &ModelDefaults, request: &Value) -> Result<Vec<u8>, ModelFailure> {
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

fn temperature_ok(value: &Value) -> bool {
    match value {
        Value::Number(n) => match number_integer(n) {
            Some(i) => (0..=2).contains(&i),
            None => (0.0..=2.0).contains(&number_f64(n)),
        },
        _ => false,
    }
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

/// `tool_choice`: `auto`, `none`, `required`, or the name of one of the request's tools (also in the wire
/// form `{type = "function", ["function"] = {name}}`).
fn wire_choice(choice: &Value, names: &[String]) -> Result<Value, ModelFailure> {
    let named = choice
        .get("function")
        .filter(|_| choice.get("type").and_then(Value::as_str) == Some("function"))
        .and_then(|f| f.get("name"));
    if let Some(name) = named {
        return wire_choice(name, names);
    }
    match choice.as_str() {
        Some(c @ ("auto" | "none")) => Ok(Value::from(c)),
        Some("required") if !names.is_empty() => Ok(Value::from("required")),
        Some(name) if names.iter().any(|n| n == name) => Ok(object([
            ("function", object([("name", Value::from(name))])),
            ("type", Value::from("function")),
        ])),
        _ => Err(INVALID),
    }
}

const PROTOCOL: ModelFailure = ModelFailure::ProtocolError;

/// models.md §4.3: a 200 body → the Luau-form answer.
pub fn parse_answer(body: &[u8]) -> Result<ChatAnswer, ModelFailure> {
    let limits = Limits { max_bytes: MAX_RESPONSE_BYTES, ..Limits::UPSTREAM_MESSAGE };
    let value = json::decode(body, limits).map_err(|_| PROTOCOL)?;
    let choice =
        value.get("choices").and_then(Value::as_array).and_then(|items| items.first()).ok_or(PROTOCOL)?;
    let Some(Value::Object(message)) = choice.get("message") else { return Err(PROTOCOL) };
    match message.get("role") {
        None | Some(Value::Null) => {}
        Some(Value::String(r)) if r == "assistant" => {}
        Some(_) => return Err(PROTOCOL),
    }
    let mut out = Map::new();
    out.insert("role".into(), Value::from("assistant"));
    match message.get("content") {
        Some(Value::String(s)) => {
            out.insert("content".into(), Value::String(s.clone()));
        }
        None | Some(Value::Null) => {}
        Some(_) => return Err(PROTOCOL),
    }
    match message.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) if calls.is_empty() => {}
        Some(Value::Array(calls)) if calls.len() <= MAX_TOOL_CALLS => {
            let calls = calls.iter().map(luau_call).collect::<Result<Vec<_>, _>>()?;
            out.insert("tool_calls".into(), Value::Array(calls));
        }
        Some(_) => return Err(PROTOCOL),
    }
    let finish_reason = match choice.get("finish_reason") {
        Some(Value::String(s)) if s.len() <= 64 => Some(s.clone()),
        None | Some(Value::Null) => None,
        Some(_) => return Err(PROTOCOL),
    };
    let usage = match value.get("usage") {
        None | Some(Value::Null) => Usage::default(),
        Some(Value::Object(u)) => Usage {
            prompt_tokens: count(u.get("prompt_tokens"))?,
            completion_tokens: count(u.get("completion_tokens"))?,
            total_tokens: count(u.get("total_tokens"))?,
        },
        Some(_) => return Err(PROTOCOL),
    };
    Ok(ChatAnswer { message: Value::Object(out), finish_reason, usage })
}

fn count(value: Option<&Value>) -> Result<u64, ModelFailure> {
    match value {
        None | Some(Value::Null) => Ok(0),
        Some(v) => as_integer(v).and_then(|n| u64::try_from(n).ok()).ok_or(PROTOCOL),
    }
}

/// A wire tool call → `{id, name, arguments}`, the arguments' JSON text decoded to an object.
fn luau_call(call: &Value) -> Result<Value, ModelFailure> {
    let id = match call.get("id") {
        Some(Value::String(id)) if !id.is_empty() && id.len() <= 256 => id,
        _ => return Err(PROTOCOL),
    };
    match call.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "function" => {}
        Some(_) => return Err(PROTOCOL),
    }
    let function = call.get("function").ok_or(PROTOCOL)?;
    let name = match function.get("name") {
        Some(Value::String(n)) if !n.is_empty() && n.len() <= 64 => n,
        _ => return Err(PROTOCOL),
    };
    let arguments = match function.get("arguments") {
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => match json::decode(text.as_bytes(), Limits::UPSTREAM_MESSAGE) {
            Ok(v @ Value::Object(_)) => v,
            _ => return Err(PROTOCOL),
        },
        Some(v @ Value::Object(_)) => v.clone(),
        _ => return Err(PROTOCOL),
    };
    Ok(object([
        ("arguments", arguments),
        ("id", Value::from(id.as_str())),
        ("name", Value::from(name.as_str())),
    ]))
}

/// models.md §5: the failure class of a non-200 status.
pub fn status_class(status: u16) -> ModelFailure {
    match status {
        401 | 403 => ModelFailure::AuthenticationFailed,
        429 => ModelFailure::RateLimited,
        _ => ModelFailure::UpstreamError,
    }
}

#[cfg(test)]
#[path = "chat_tests.rs"]
mod tests;
