//! The seam between the workflow's `model(name)` handles and the model sites (models.md §7), and the exact
//! Luau shapes of `m:chat`'s answer.
//!
//! Owns the [`ModelPort`] contract (one blocking model request per `m:chat`, with admission, deadline and
//! cancellation the port's) and the conversion of a [`ModelReply`] into `{ ok = true, message,
//! finish_reason, usage }` / `{ ok = false, error = {…} }`. Does not own the wire form (the model client)
//! or the agent loop (`agent`).

use mlua::{Lua, Table};
use serde_json::Value;

use crate::apps::luau::convert::to_lua;
use crate::codes::model::ModelFailure;
use crate::codes::provider::Dispatch;

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
