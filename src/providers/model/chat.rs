//! The Chat Completions codec (models.md §4): the Luau-form request of `m:chat` to the exact wire body, and
//! the wire answer back to the Luau form, with tool calls converted both ways.
//!
//! Owns the request's rules shared with the body's writer (`body.rs`, which validates and writes the
//! request in one pass: `model_request_invalid`), and the answer's validation (`model_protocol_error`).
//! Pure: it sends nothing and reads no clock. The HTTP exchange is `client.rs`; the Luau conversion of the
//! values is the runtime's.

use serde_json::{Map, Value};

use super::mismatch::{AnswerMismatch, Member};
use crate::codes::model::ModelFailure;
use crate::json::{self, as_integer, number_f64, number_integer, Limits};

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

/// A function name of the OpenAI tool-calling form: `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_function_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

pub(super) fn bounded_string(value: Option<&Value>, max: usize) -> Result<&str, ModelFailure> {
    match value {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= max => Ok(s),
        _ => Err(INVALID),
    }
}

pub(super) fn only_keys(map: &Map<String, Value>, allowed: &[&str]) -> Result<(), ModelFailure> {
    if map.keys().all(|k| allowed.contains(&k.as_str())) {
        Ok(())
    } else {
        Err(INVALID)
    }
}

pub(super) fn temperature_ok(value: &Value) -> bool {
    match value {
        Value::Number(n) => match number_integer(n) {
            Some(i) => (0..=2).contains(&i),
            None => (0.0..=2.0).contains(&number_f64(n)),
        },
        _ => false,
    }
}

/// `tool_choice`: `auto`, `none`, `required`, or the name of one of the request's tools (also in the wire
/// form `{type = "function", ["function"] = {name}}`).
pub(super) fn wire_choice(choice: &Value, names: &[String]) -> Result<Value, ModelFailure> {
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

/// The mismatch of member `pointer`, which should have been `expected`.
const fn wrong(pointer: &'static str, expected: &'static str) -> AnswerMismatch {
    AnswerMismatch::Member { at: Member::at(pointer), expected }
}

const OBJECT: &str = "an object";
const COUNT: &str = "a non-negative integer, null or absent";

/// models.md §4.3: a 200 body → the Luau-form answer, or the first rule it breaks (the call's class is
/// `model_protocol_error`; the mismatch is for the debug log only, models.md §9). The decoded document is
/// taken apart, not copied: the answer's strings move into the Luau form (issue 27).
pub fn parse_answer(body: &[u8]) -> Result<ChatAnswer, AnswerMismatch> {
    let limits = Limits { max_bytes: MAX_RESPONSE_BYTES, ..Limits::UPSTREAM_MESSAGE };
    let Value::Object(mut value) = json::decode(body, limits).map_err(AnswerMismatch::NotJson)? else {
        return Err(wrong("", OBJECT));
    };
    let mut choice = match value.get_mut("choices") {
        Some(Value::Array(items)) if !items.is_empty() => items.swap_remove(0),
        _ => return Err(wrong("/choices", "a non-empty array")),
    };
    let Some(Value::Object(message)) = choice.get_mut("message") else {
        return Err(wrong("/choices/0/message", OBJECT));
    };
    match message.get("role") {
        None | Some(Value::Null) => {}
        Some(Value::String(r)) if r == "assistant" => {}
        Some(_) => return Err(wrong("/choices/0/message/role", "\"assistant\", null or absent")),
    }
    let mut out = Map::new();
    out.insert("role".into(), Value::from("assistant"));
    match message.remove("content") {
        Some(Value::String(s)) => {
            out.insert("content".into(), Value::String(s));
        }
        None | Some(Value::Null) => {}
        Some(_) => return Err(wrong("/choices/0/message/content", "a string, null or absent")),
    }
    match message.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) if calls.is_empty() => {}
        Some(Value::Array(calls)) if calls.len() <= MAX_TOOL_CALLS => {
            let calls = calls.iter().enumerate().map(luau_call).collect::<Result<Vec<_>, _>>()?;
            out.insert("tool_calls".into(), Value::Array(calls));
        }
        Some(_) => {
            return Err(wrong(
                "/choices/0/message/tool_calls",
                "an array of at most 128 calls, null or absent",
            ))
        }
    }
    let finish_reason = match choice.get_mut("finish_reason").map(Value::take) {
        Some(Value::String(s)) if s.len() <= 64 => Some(s),
        None | Some(Value::Null) => None,
        Some(_) => {
            return Err(wrong("/choices/0/finish_reason", "a string of at most 64 bytes, null or absent"))
        }
    };
    let usage = match value.get("usage") {
        None | Some(Value::Null) => Usage::default(),
        Some(Value::Object(u)) => Usage {
            prompt_tokens: count(u.get("prompt_tokens")).ok_or(wrong("/usage/prompt_tokens", COUNT))?,
            completion_tokens: count(u.get("completion_tokens"))
                .ok_or(wrong("/usage/completion_tokens", COUNT))?,
            total_tokens: count(u.get("total_tokens")).ok_or(wrong("/usage/total_tokens", COUNT))?,
        },
        Some(_) => return Err(wrong("/usage", "an object, null or absent")),
    };
    Ok(ChatAnswer { message: Value::Object(out), finish_reason, usage })
}

fn count(value: Option<&Value>) -> Option<u64> {
    match value {
        None | Some(Value::Null) => Some(0),
        Some(v) => as_integer(v).and_then(|n| u64::try_from(n).ok()),
    }
}

/// Wire tool call `at` → `{id, name, arguments}`, the arguments' JSON text decoded to an object.
fn luau_call((at, call): (usize, &Value)) -> Result<Value, AnswerMismatch> {
    let wrong = |pointer, expected| AnswerMismatch::Member { at: Member::in_call(at, pointer), expected };
    let id = match call.get("id") {
        Some(Value::String(id)) if !id.is_empty() && id.len() <= 256 => id,
        _ => return Err(wrong("/id", "a string of 1 to 256 bytes")),
    };
    match call.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "function" => {}
        Some(_) => return Err(wrong("/type", "\"function\", null or absent")),
    }
    let function = call.get("function").ok_or(wrong("/function", OBJECT))?;
    let name = match function.get("name") {
        Some(Value::String(n)) if !n.is_empty() && n.len() <= 64 => n,
        _ => return Err(wrong("/function/name", "a string of 1 to 64 bytes")),
    };
    const ARGUMENTS: &str = "an object, or a string that decodes to one";
    let arguments = match function.get("arguments") {
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => match json::decode(text.as_bytes(), Limits::UPSTREAM_MESSAGE) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return Err(wrong("/function/arguments", ARGUMENTS)),
            Err(error) => return Err(AnswerMismatch::ArgumentsNotJson { call: at, error }),
        },
        Some(v @ Value::Object(_)) => v.clone(),
        _ => return Err(wrong("/function/arguments", ARGUMENTS)),
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
