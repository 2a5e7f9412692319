//! The `tools/call` result shapes of the PCC front (pcc.md §8): `structuredContent` on every result,
//! `{"outcome":<code>}` on tool errors, no `_meta` and no `resultType`.
//!
//! Owns only the shapes and the 4,194,304-byte bound of the encoded response; the outcome, the fixed
//! text and the result contract are decided by execution (`crate::exec`).

use serde_json::{Map, Value};

use crate::exec::outcome::Outcome;
use crate::json::to_deterministic_string;
use crate::mcp::rpc::{result_body, RequestId, MAX_RESPONSE_BYTES};

/// execution.md §7.2: a `fail(message)` detail reaches the client only with 1 to 1,024 bytes.
const MAX_DETAIL_BYTES: usize = crate::exec::result::MAX_DETAIL_BYTES;

fn text_block(text: String) -> Value {
    let mut block = Map::new();
    block.insert("text".into(), Value::String(text));
    block.insert("type".into(), Value::from("text"));
    Value::Object(block)
}

fn result(content: Vec<Value>, is_error: bool, structured: Value) -> Value {
    let mut result = Map::new();
    result.insert("content".into(), Value::Array(content));
    result.insert("isError".into(), Value::Bool(is_error));
    result.insert("structuredContent".into(), structured);
    Value::Object(result)
}

/// The success response for `value` (already valid against the result contract), or `None` when it is
/// not an object or the encoded response exceeds 4,194,304 bytes (pcc.md §8: then `invalid_result`).
pub fn success(id: &RequestId, value: Value) -> Option<String> {
    if !matches!(value, Value::Object(_)) {
        return None;
    }
    let text = to_deterministic_string(&value);
    // The value appears twice, once escaped: its own encoding already decides most oversized results.
    if text.len().saturating_mul(2) > MAX_RESPONSE_BYTES {
        return None;
    }
    let body = result_body(id, &to_deterministic_string(&result(vec![text_block(text)], false, value)));
    (body.len() <= MAX_RESPONSE_BYTES).then_some(body)
}

/// The tool-error response: the fixed text, the optional application detail, and the outcome code.
pub fn tool_error(id: &RequestId, fixed_text: &str, detail: Option<&str>, outcome: Outcome) -> String {
    let mut content = vec![text_block(fixed_text.to_owned())];
    if let Some(detail) = detail.filter(|d| !d.is_empty() && d.len() <= MAX_DETAIL_BYTES) {
        content.push(text_block(detail.to_owned()));
    }
    let mut structured = Map::new();
    structured.insert("outcome".into(), Value::from(outcome.as_str()));
    result_body(id, &to_deterministic_string(&result(content, true, Value::Object(structured))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode, Limits};

    #[test]
    fn shapes_of_section_8() {
        let hi = decode(br#"{"text":"hi"}"#, Limits::REQUEST).unwrap();
        let call = |s: &str| RequestId::String(s.into());
        assert_eq!(
            success(&call("call-1"), hi).unwrap(),
            r#"{"id":"call-1","jsonrpc":"2.0","result":{"content":[{"text":"{\"text\":\"hi\"}","type":"text"}],"isError":false,"structuredContent":{"text":"hi"}}}"#
        );
        let cases: Vec<(&str, Option<&str>, Outcome, &str)> = vec![
            (
                "Tool input did not satisfy its contract",
                None,
                Outcome::InvalidInput,
                r#"{"id":"call-2","jsonrpc":"2.0","result":{"content":[{"text":"Tool input did not satisfy its contract","type":"text"}],"isError":true,"structuredContent":{"outcome":"invalid_input"}}}"#,
            ),
            (
                "Tool execution failed",
                Some("boom"),
                Outcome::ExecutionFailed,
                r#"{"id":"call-2","jsonrpc":"2.0","result":{"content":[{"text":"Tool execution failed","type":"text"},{"text":"boom","type":"text"}],"isError":true,"structuredContent":{"outcome":"execution_failed"}}}"#,
            ),
            (
                "Tool execution failed",
                Some(""),
                Outcome::ExecutionFailed,
                r#"{"id":"call-2","jsonrpc":"2.0","result":{"content":[{"text":"Tool execution failed","type":"text"}],"isError":true,"structuredContent":{"outcome":"execution_failed"}}}"#,
            ),
        ];
        for (text, detail, outcome, expected) in cases {
            assert_eq!(tool_error(&call("call-2"), text, detail, outcome), expected);
        }
        assert_eq!(success(&call("x"), Value::Array(vec![])), None);
        let mut big = Map::new();
        big.insert("s".into(), Value::String("a".repeat(2_100_000)));
        assert_eq!(success(&call("x"), Value::Object(big)), None);
    }
}
