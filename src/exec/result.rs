//! The `CallToolResult` of a `tools/call` and its response (execution.md §7, §8 step 4, execution.md §7.4).
//!
//! Owns the exact shapes: the success result (`structuredContent` and the one text block that encodes
//! it), the tool error (the fixed text and the optional application detail), the JSON-RPC response around
//! either, and the check that a success response is valid and within 4,194,304 bytes. It does not choose
//! the fixed text (`outcome`) or check the result contract (the call driver does, before building).

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::apps::catalog::server_meta;
use crate::json::encode::write_string;
use crate::json::to_deterministic_string;
use crate::mcp::rpc::{result_body, RequestId, MAX_RESPONSE_BYTES};

/// execution.md §7.2: a `fail(message)` detail reaches the client only with 1 to 1,024 bytes.
pub const MAX_DETAIL_BYTES: usize = 1_024;

fn text_block(text: String) -> Value {
    let mut block = Map::new();
    block.insert("text".into(), Value::String(text));
    block.insert("type".into(), Value::from("text"));
    Value::Object(block)
}

fn result(content: Vec<Value>, is_error: bool, structured: Option<Value>) -> Value {
    let mut result = Map::new();
    result.insert("_meta".into(), server_meta());
    result.insert("content".into(), Value::Array(content));
    result.insert("isError".into(), Value::Bool(is_error));
    result.insert("resultType".into(), Value::from("complete"));
    if let Some(structured) = structured {
        result.insert("structuredContent".into(), structured);
    }
    Value::Object(result)
}

/// Why a success response could not be sent (execution.md §8 step 4): the outcome is `invalid_result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseInvalid {
    /// `structuredContent` must be a JSON object (the result contract's root is an object schema).
    NotAnObject,
    /// The encoded response exceeds 4,194,304 bytes.
    TooLarge,
}

/// The success response (execution.md §7.1, §7.4) for `value`, which passed the result contract, or why it
/// cannot be sent (execution.md §8 step 4).
pub fn success_response(id: &RequestId, value: Value) -> Result<String, ResponseInvalid> {
    if !matches!(value, Value::Object(_)) {
        return Err(ResponseInvalid::NotAnObject);
    }
    let text = to_deterministic_string(&value);
    // A cheap bound first: the value appears twice, once escaped, so its own encoding already decides
    // most oversized results without building them.
    if text.len().saturating_mul(2) > MAX_RESPONSE_BYTES {
        return Err(ResponseInvalid::TooLarge);
    }
    let body = result_body(id, &success_result(&text));
    if body.len() > MAX_RESPONSE_BYTES {
        return Err(ResponseInvalid::TooLarge);
    }
    Ok(body)
}

/// `DJ` of the success result whose `structuredContent` encodes to `text` (`DJ` of the value): the bytes
/// `to_deterministic_string(&result(vec![text_block(text)], false, Some(value)))` gives, written member by
/// member in the byte order of their keys (`_meta` < `content` < `isError` < `resultType` <
/// `structuredContent`, and `text` < `type` in the block) instead of building that value, encoding the
/// structured value a second time and dropping it all again: the largest part of a quick call's own work
/// after its run (issue 27).
fn success_result(text: &str) -> String {
    let mut out = String::with_capacity(2 * text.len() + SUCCESS_RESULT_OVERHEAD);
    out.push_str("{\"_meta\":");
    out.push_str(server_meta_json());
    out.push_str(",\"content\":[{\"text\":");
    write_string(&mut out, text);
    out.push_str(",\"type\":\"text\"}],\"isError\":false,\"resultType\":\"complete\",\"structuredContent\":");
    out.push_str(text);
    out.push('}');
    out
}

/// Room for the members around the text and the structured value, and some escapes.
const SUCCESS_RESULT_OVERHEAD: usize = 256;

/// `DJ` of [`server_meta`], which is the same for every response of the process.
fn server_meta_json() -> &'static str {
    static META: OnceLock<String> = OnceLock::new();
    META.get_or_init(|| to_deterministic_string(&server_meta()))
}

/// The tool-error response (execution.md §7.2, §7.4): the fixed text, then `detail` as a second block when it
/// is a valid application detail (1..=1,024 bytes; a `String` is valid UTF-8 by construction). Small and
/// valid by construction.
pub fn tool_error_response(id: &RequestId, fixed_text: &str, detail: Option<&str>) -> String {
    result_body(id, &to_deterministic_string(&result(tool_error_content(fixed_text, detail), true, None)))
}

/// The tool error's `content` (execution.md §7.2): the fixed text, then the detail when it has 1 to 1,024
/// bytes. Both fronts publish this array; a trace's `result_digest` covers it (traces.md §5.5.2).
pub fn tool_error_content(fixed_text: &str, detail: Option<&str>) -> Vec<Value> {
    let mut content = vec![text_block(fixed_text.to_owned())];
    if let Some(detail) = detail.filter(|d| !d.is_empty() && d.len() <= MAX_DETAIL_BYTES) {
        content.push(text_block(detail.to_owned()));
    }
    content
}

/// The one `message` event that carries `response` (execution.md §9).
pub fn message_event(response: &str) -> String {
    let mut event = String::with_capacity(response.len() + 24);
    event.push_str("event: message\ndata: ");
    event.push_str(response);
    event.push_str("\n\n");
    event
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::decode::{decode, Limits};

    fn meta() -> String {
        format!(
            r#""_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"ptc-gateway","version":"{}"}}}}"#,
            env!("CARGO_PKG_VERSION")
        )
    }

    #[test]
    fn the_shout_example_of_section_15_1() {
        let value = decode(br#"{"text":"HELLO, WORLD","length":12}"#, Limits::REQUEST).unwrap();
        let body = success_response(&RequestId::Integer(1), value).unwrap();
        let expected = format!(
            r#"{{"id":1,"jsonrpc":"2.0","result":{{{},"content":[{{"text":"{{\"length\":12,\"text\":\"HELLO, WORLD\"}}","type":"text"}}],"isError":false,"resultType":"complete","structuredContent":{{"length":12,"text":"HELLO, WORLD"}}}}}}"#,
            meta()
        );
        assert_eq!(body, expected);
        if env!("CARGO_PKG_VERSION") == "0.1.0" {
            assert_eq!(body.len(), 298, "the byte count of execution.md §15.1");
            assert_eq!(message_event(&body).len(), 321);
        }
    }

    /// The success result written member by member is byte for byte `DJ` of the result value.
    #[test]
    fn the_written_success_result_is_dj_of_the_result_value() {
        let values = [
            r#"{}"#,
            r#"{"greeting":"Hello, Ada!"}"#,
            r#"{"text":"HELLO, WORLD","length":12}"#,
            r#"{"q":"\"quoted\" \\ back\nline\ttab\u0001\u001f","u":"\u00e9\u4e2d\ud83d\ude00"}"#,
            r#"{"n":[1,-0,2.5,1e300,-1.5e-7,9007199254740991],"b":[true,false,null],"o":{"z":{},"a":[]}}"#,
            r#"{"_meta":{"x":1},"content":"shadow","structuredContent":null}"#,
        ];
        for text in values {
            let value = decode(text.as_bytes(), Limits::REQUEST).unwrap();
            let dj = to_deterministic_string(&value);
            let built = to_deterministic_string(&result(vec![text_block(dj.clone())], false, Some(value)));
            assert_eq!(success_result(&dj), built, "{text}");
        }
    }

    #[test]
    fn tool_error_detail_rules() {
        let id = RequestId::Integer(2);
        let fixed = "Tool execution failed";
        let one = |extra: &str| {
            format!(
                r#"{{"id":2,"jsonrpc":"2.0","result":{{{},"content":[{{"text":"Tool execution failed","type":"text"}}{extra}],"isError":true,"resultType":"complete"}}}}"#,
                meta()
            )
        };
        let long = "x".repeat(1_024);
        let too_long = "x".repeat(1_025);
        let cases: Vec<(Option<&str>, String)> = vec![
            (None, one("")),
            (Some(""), one("")),
            (Some("boom"), one(r#",{"text":"boom","type":"text"}"#)),
            (Some(long.as_str()), one(&format!(r#",{{"text":"{long}","type":"text"}}"#))),
            (Some(too_long.as_str()), one("")),
        ];
        for (detail, expected) in cases {
            assert_eq!(tool_error_response(&id, fixed, detail), expected, "{detail:?}");
        }
    }

    #[test]
    fn oversized_and_non_object_results_are_refused() {
        let id = RequestId::Integer(1);
        assert_eq!(success_response(&id, Value::Array(vec![])), Err(ResponseInvalid::NotAnObject));
        let mut big = Map::new();
        big.insert("s".into(), Value::String("a".repeat(2_100_000)));
        assert_eq!(success_response(&id, Value::Object(big)), Err(ResponseInvalid::TooLarge));
        // Quotes double in the escaped copy: 1,048,576 quotes encode to 2 MiB in the text block alone.
        let mut quotes = Map::new();
        quotes.insert("s".into(), Value::String("\"".repeat(1_048_576)));
        assert_eq!(success_response(&id, Value::Object(quotes)), Err(ResponseInvalid::TooLarge));
        let mut fits = Map::new();
        fits.insert("s".into(), Value::String("a".repeat(1_000_000)));
        assert!(success_response(&id, Value::Object(fits)).is_ok());
    }
}
