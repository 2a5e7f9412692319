//! The seam between a mission's `tool(alias, arguments)` and the provider runtime (execution.md §12.5,
//! providers.md §8), and the exact Luau shapes of its answer.
//!
//! Owns the [`ToolPort`] contract (one blocking upstream call per `tool`, issued by the mission named in
//! it: the grant check, the deadline, admission and dispatch are the port's; and the grant set's listing
//! facts for `handle:api()`) and the conversion of a
//! [`ToolReply`] into `{ ok = true, value, content }` / `{ ok = false, error = {…}, content }`. Does not
//! own any provider logic: the gateway's port lives in `exec::borrow`.

use std::sync::Arc;

use mlua::{Lua, Table};
use serde_json::Value;

use crate::apps::luau::convert::to_lua;
use crate::codes::provider::{Dispatch, FailureClass};
use crate::config::host::ToolEffect;

/// One entry of `tools` (execution.md §12.5): a granted alias with its upstream tool's listed facts.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiTool {
    /// The alias `tool(alias, …)` takes.
    pub alias: String,
    /// The upstream tool's listed `description`, when it is a string.
    pub description: Option<String>,
    /// The upstream tool's listed `inputSchema` (pinned, providers.md §7.3).
    pub input_schema: Arc<Value>,
    /// The upstream tool's listed `outputSchema`, when it has one. Not part of `handle:api()`; the agent's
    /// signatures use it (models.md §8.2).
    pub output_schema: Option<Arc<Value>>,
    /// The operator's declared effect of the upstream tool (config.md §5.4.3).
    pub effect: ToolEffect,
}

/// What one `tool` call answered.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolReply {
    /// providers.md §8.2 row 5: the derived value (if any) and the upstream's `content` array.
    Ok { value: Option<Value>, content: Value },
    /// A failure class with its dispatch state; `content` only for `mcp_tool_error`.
    Failed { class: FailureClass, dispatch: Dispatch, content: Option<Value> },
}

impl ToolReply {
    /// A failure without upstream content.
    pub fn failed(class: FailureClass, dispatch: Dispatch) -> ToolReply {
        ToolReply::Failed { class, dispatch, content: None }
    }

    /// The reply as the Luau table of execution.md §12.5, built in the mission's sandbox.
    pub fn table(&self, lua: &Lua) -> mlua::Result<Table> {
        let result = lua.create_table()?;
        match self {
            ToolReply::Ok { value, content } => {
                result.raw_set("ok", true)?;
                if let Some(value) = value {
                    result.raw_set("value", to_lua(lua, value)?)?;
                }
                result.raw_set("content", to_lua(lua, content)?)?;
            }
            ToolReply::Failed { class, dispatch, content } => {
                let error = lua.create_table()?;
                error.raw_set("code", class.as_str())?;
                error.raw_set("message", class.fixed_message().unwrap_or("Upstream error"))?;
                error.raw_set("retryable", class.retryable())?;
                error.raw_set("dispatch", dispatch.as_str())?;
                result.raw_set("ok", false)?;
                result.raw_set("error", error)?;
                if let Some(content) = content {
                    result.raw_set("content", to_lua(lua, content)?)?;
                }
            }
        }
        Ok(result)
    }
}

/// What the port answered for one `tool` call: the reply, and the upstream request's JSON-RPC id when a
/// request was sent (for the trace, traces.md §5.4).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolAnswer {
    pub reply: ToolReply,
    pub request_id: Option<u64>,
}

/// The provider runtime as one run sees it. Called on the run's blocking thread; it blocks until the
/// upstream call is answered, failed, timed out or cancelled (upstream calls of one run are sequential,
/// execution.md §12.5).
pub trait ToolPort: Send + Sync {
    /// `arguments` is `None` when the script passed something that does not convert to a JSON object
    /// (`mcp_request_invalid`, after the grant check); `nil` was already mapped to `{}`.
    fn call(&self, mission: &str, alias: &str, arguments: Option<Value>) -> ToolAnswer;

    /// The grant set of `mission` (config.md §6.5 rule S7) with each alias's pinned listing facts, for
    /// `handle:api()` (execution.md §12.5): from what acquisition kept, without an upstream request. An
    /// alias whose facts are not known is left out.
    fn granted_tools(&self, mission: &str) -> Vec<ApiTool>;
}
