//! The seam between the workflow's `model(name)` handles and the model sites (models.md §7), and the exact
//! Luau shapes of `m:chat`'s answer.
//!
//! Owns the [`ModelPort`] contract (one blocking model request per `m:chat`, with admission, deadline and
//! cancellation the port's) and the conversion of a [`ModelReply`] into `{ ok = true, message,
//! finish_reason, usage }` / `{ ok = false, error = {…} }`. Does not own the wire form (the model client)
//! or the agent loop (`agent`).

use mlua::{Lua, Table, Value as LuaValue};
use serde_json::{Map, Value};

use crate::apps::luau::convert::to_lua;
use crate::codes::model::ModelFailure;
use crate::codes::provider::Dispatch;
use crate::json::number_f64;

/// What one `m:chat` answered.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelReply {
    /// models.md §4.3: the assistant message in the Luau form, the finish reason when sent, and `usage`
    /// (`{prompt_tokens, completion_tokens, total_tokens}`).
    Ok { message: Value, finish_reason: Option<String>, usage: Value },
    /// A class of models.md §6 with the request's dispatch state.
    Failed { class: ModelFailure, dispatch: Dispatch },
}

impl ModelReply {
    /// The reply as the Luau table of models.md §7.2, built in the workflow sandbox.
    pub fn table(&self, lua: &Lua) -> mlua::Result<Table> {
        let result = lua.create_table()?;
        match self {
            ModelReply::Ok { message, finish_reason, usage } => {
                result.raw_set("ok", true)?;
                result.raw_set("message", to_lua(lua, message)?)?;
                if let Some(reason) = finish_reason {
                    result.raw_set("finish_reason", reason.as_str())?;
                }
                result.raw_set("usage", to_lua(lua, usage)?)?;
            }
            ModelReply::Failed { class, dispatch } => {
                result.raw_set("ok", false)?;
                result.raw_set("error", error_table(lua, *class, *dispatch)?)?;
            }
        }
        Ok(result)
    }

    /// What the `:chat` shim receives for this reply (models.md §7.2): for an answer of the usual shape (an
    /// assistant message whose only other member is a text `content`, and `usage` of exactly the three
    /// counts), `nil` and the parts, from which the shim builds the table in one Luau table constructor;
    /// any other reply as the whole table of [`ModelReply::table`]. The table is the same either way;
    /// built here it took a protected mlua call per key, per string and per member set (issue 27).
    pub fn into_shim(self, lua: &Lua) -> mlua::Result<ShimReply> {
        match self {
            ModelReply::Ok {
                message: Value::Object(message),
                finish_reason,
                usage: Value::Object(usage),
            } => match (usual_message(&message), usual_usage(&usage)) {
                (true, Some(counts)) => {
                    let content = match message.into_iter().find(|(key, _)| key == "content") {
                        Some((_, Value::String(content))) => Some(content),
                        _ => None,
                    };
                    Ok((LuaValue::Nil, content, finish_reason, counts[0], counts[1], counts[2]))
                }
                _ => {
                    let reply = ModelReply::Ok {
                        message: Value::Object(message),
                        finish_reason,
                        usage: Value::Object(usage),
                    };
                    Ok(whole(reply.table(lua)?))
                }
            },
            reply => Ok(whole(reply.table(lua)?)),
        }
    }
}

/// `(table | nil, content, finish_reason, prompt_tokens, completion_tokens, total_tokens)`: see
/// [`ModelReply::into_shim`].
pub type ShimReply = (LuaValue, Option<String>, Option<String>, f64, f64, f64);

fn whole(table: Table) -> ShimReply {
    (LuaValue::Table(table), None, None, 0.0, 0.0, 0.0)
}

/// Whether a message is exactly `{role = "assistant"}` or `{role = "assistant", content = <text>}`.
fn usual_message(message: &Map<String, Value>) -> bool {
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return false;
    }
    matches!((message.len(), message.get("content")), (1, None) | (2, Some(Value::String(_))))
}

/// `[prompt_tokens, completion_tokens, total_tokens]` of a `usage` of exactly those three numbers, each as
/// `to_lua` converts it.
fn usual_usage(usage: &Map<String, Value>) -> Option<[f64; 3]> {
    if usage.len() != 3 {
        return None;
    }
    let count = |key: &str| match usage.get(key) {
        Some(Value::Number(n)) => Some(number_f64(n)),
        _ => None,
    };
    Some([count("prompt_tokens")?, count("completion_tokens")?, count("total_tokens")?])
}

/// `{ code, message, retryable, dispatch }` of a model or agent failure (models.md §6).
pub(super) fn error_table(lua: &Lua, class: ModelFailure, dispatch: Dispatch) -> mlua::Result<Table> {
    let error = lua.create_table()?;
    error.raw_set("code", class.as_str())?;
    error.raw_set("message", class.fixed_message())?;
    error.raw_set("retryable", class.retryable())?;
    error.raw_set("dispatch", dispatch.as_str())?;
    Ok(error)
}

/// The model sites as one run sees them. Called on the run's blocking thread; `chat` blocks until the
/// request is answered, failed, timed out or cancelled.
pub trait ModelPort: Send + Sync {
    /// Whether `name` is a `providers.workflow` declaration of the tool.
    fn declared(&self, name: &str) -> bool;

    /// One request on the model site `name`; `request` is the `m:chat` table as JSON, `None` when it
    /// does not convert (`model_request_invalid`, nothing sent).
    fn chat(&self, name: &str, request: Option<Value>) -> ModelReply;
}
