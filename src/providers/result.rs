//! Classification of one `tools/call` response (providers.md §8.2) and what a success hands the mission.
//!
//! This file is pure: it gets the received message and its size and returns success or a failure class
//! with dispatch `true`. It does not wait, cancel or touch a transport.

use serde_json::Value;

use super::failure::{CallFailure, Dispatch, FailureClass};
use super::framing::Message;
use crate::json::{self, Limits};

/// A successful provider call (providers.md §8.2).
#[derive(Clone, Debug, PartialEq)]
pub struct CallSuccess {
    /// `structuredContent` when present, else the strict JSON of a single text block, else none.
    pub value: Option<Value>,
    /// The upstream's `content` array, unchanged.
    pub content: Vec<Value>,
}

/// A failed provider call; only `mcp_tool_error` carries the upstream's `content` (providers.md §8.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CallError {
    pub failure: CallFailure,
    pub tool_content: Option<Vec<Value>>,
}

fn fail(class: FailureClass) -> CallError {
    CallError { failure: CallFailure::new(class, Dispatch::True), tool_content: None }
}

/// Rows 1–5 of providers.md §8.2, first match wins.
pub fn classify(message: Message, size: usize, max_result_bytes: u64) -> Result<CallSuccess, CallError> {
    if u64::try_from(size).unwrap_or(u64::MAX) > max_result_bytes {
        return Err(fail(FailureClass::McpResultTooLarge));
    }
    let result = match message {
        Message::Result { result, .. } => result,
        // The upstream's code and message are not passed on (providers.md §8.2 row 2).
        _ => return Err(fail(FailureClass::McpUpstreamError)),
    };
    let Value::Object(mut result) = result else {
        return Err(fail(FailureClass::McpProtocolError));
    };
    if let Some(kind) = result.get("resultType") {
        if kind.as_str() != Some("complete") {
            return Err(fail(FailureClass::McpProtocolError));
        }
    }
    let content = match result.remove("content") {
        Some(Value::Array(blocks)) if blocks.iter().all(is_block) => blocks,
        _ => return Err(fail(FailureClass::McpProtocolError)),
    };
    let is_error = match result.get("isError") {
        None => false,
        Some(Value::Bool(flag)) => *flag,
        Some(_) => return Err(fail(FailureClass::McpProtocolError)),
    };
    if is_error {
        return Err(CallError {
            failure: CallFailure::new(FailureClass::McpToolError, Dispatch::True),
            tool_content: Some(content),
        });
    }
    let value = match result.remove("structuredContent") {
        Some(value) => Some(value),
        None => single_text_json(&content),
    };
    Ok(CallSuccess { value, content })
}

fn is_block(block: &Value) -> bool {
    block.as_object().and_then(|b| b.get("type")).and_then(Value::as_str).is_some()
}

fn single_text_json(content: &[Value]) -> Option<Value> {
    let [block] = content else { return None };
    let block = block.as_object()?;
    if block.get("type")?.as_str()? != "text" {
        return None;
    }
    let text = block.get("text")?.as_str()?;
    json::decode(text.as_bytes(), Limits::UPSTREAM_MESSAGE).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::framing::parse_message;

    fn message(line: &str) -> Message {
        parse_message(line.as_bytes()).unwrap()
    }

    #[test]
    fn classification_table() {
        use FailureClass::*;
        let cases: &[(&str, u64, Option<FailureClass>)] = &[
            (r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#, 10, Some(McpResultTooLarge)),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"secret"}}"#,
                1024,
                Some(McpUpstreamError),
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":[]}"#, 1024, Some(McpProtocolError)),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"input_required"}}"#,
                1024,
                Some(McpProtocolError),
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, 1024, Some(McpProtocolError)),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"x"}]}}"#, 1024, Some(McpProtocolError)),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":"yes"}}"#,
                1024,
                Some(McpProtocolError),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}"#,
                1024,
                Some(McpToolError),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"resultType":"complete","isError":false}}"#,
                1024,
                None,
            ),
        ];
        for (line, max, expected) in cases {
            let got = classify(message(line), line.len(), *max);
            match expected {
                Some(class) => {
                    let error = got.unwrap_err();
                    assert_eq!(error.failure, CallFailure::new(*class, Dispatch::True), "{line}");
                    assert_eq!(error.tool_content.is_some(), *class == McpToolError, "{line}");
                }
                None => assert!(got.is_ok(), "{line}"),
            }
        }
    }

    #[test]
    fn value_table() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"a":1}}}"#,
                Some(r#"{"a":1}"#),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[1,2]"}]}}"#,
                Some("[1,2]"),
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"plain"}]}}"#, None),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"1"},{"type":"text","text":"2"}]}}"#,
                None,
            ),
            (r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":null}}"#, Some("null")),
        ];
        for (line, expected) in cases {
            let success = classify(message(line), line.len(), 1024).unwrap();
            assert_eq!(
                success.value.map(|v| json::to_deterministic_string(&v)).as_deref(),
                *expected,
                "{line}"
            );
        }
    }

    #[test]
    fn the_size_bound_is_inclusive() {
        let line = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
        let size = line.len();
        assert!(classify(message(line), size, size as u64).is_ok());
        assert!(classify(message(line), size, size as u64 - 1).is_err());
    }
}
