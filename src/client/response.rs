//! Reading the two answers of `ptc call` (lifecycle.md §1.2): the `tools/list` JSON response and the
//! `tools/call` event stream up to its `message` event, each checked as http-mcp.md §10 and
//! execution.md §7 shape them.
//!
//! Owns the mapping of an answer to the tool's listing entry or to the call's outcome. Does not own the
//! transport (`super::http`) or what is printed (`super`).

use serde_json::Value;

use super::failure::{Failure, Step};
use super::http::Response;
use crate::json::{as_integer, decode, Limits};

/// The listing and the streamed response are bounded at 4,194,304 bytes (http-mcp.md §10.1,
/// execution.md); served schemas may nest deeper than a request body.
const RESPONSE_LIMITS: Limits = Limits { max_bytes: 8_388_608, max_depth: 256, max_nodes: 2_000_000 };

/// What the call answered.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// `isError: false`: the `structuredContent` object.
    Success(Value),
    /// `isError: true`: the text of every `text` content item, in order (lifecycle.md §1.2): the fixed text
    /// and, when the run gave one, its message (execution.md §7.2).
    ToolError(Vec<String>),
}

/// The JSON-RPC `result` of a 200 JSON answer to `step` with id `id`.
fn rpc_result(step: Step, id: i128, body: &[u8]) -> Result<Value, Failure> {
    let malformed = |what| Failure::Malformed { step, what };
    let value = decode(body, RESPONSE_LIMITS).map_err(|_| malformed("not strict JSON"))?;
    if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(malformed("not a JSON-RPC 2.0 response"));
    }
    if let Some(error) = value.get("error") {
        return Err(rpc_error(step, error).unwrap_or(malformed("unreadable JSON-RPC error")));
    }
    if value.get("id").and_then(as_integer) != Some(id) {
        return Err(malformed("wrong JSON-RPC id"));
    }
    match value.get("result") {
        Some(result @ Value::Object(_)) => Ok(result.clone()),
        _ => Err(malformed("no result object")),
    }
}

fn rpc_error(step: Step, error: &Value) -> Option<Failure> {
    let code = as_integer(error.get("code")?)?;
    let mut message = error.get("message")?.as_str()?.to_owned();
    if let Some(reason) = error.get("data").and_then(|d| d.get("reason")).and_then(Value::as_str) {
        message = format!("{message} ({reason})");
    }
    Some(Failure::Rpc { step, code, message: printable(&message) })
}

/// A non-200 answer: the fixed `{"error":"<code>"}` word, or the JSON-RPC error, as the detail.
fn status_failure(step: Step, response: &Response) -> Failure {
    let detail = decode(&response.body, Limits::REQUEST).ok().and_then(|v| match v.get("error") {
        Some(Value::String(code)) => Some(printable(code)),
        Some(error) => match rpc_error(step, error) {
            Some(Failure::Rpc { code, message, .. }) => Some(format!("JSON-RPC error {code} {message}")),
            _ => None,
        },
        None => None,
    });
    Failure::Status { step, status: response.status, detail }
}

/// Keeps a reason on one line whatever the peer sent.
fn printable(text: &str) -> String {
    text.chars().take(200).map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// The `tools/list` answer's `result`, with its `tools` array checked.
pub fn listing(response: &Response) -> Result<Value, Failure> {
    if response.status != 200 {
        return Err(status_failure(Step::List, response));
    }
    let result = rpc_result(Step::List, 1, &response.body)?;
    match result.get("tools") {
        Some(Value::Array(_)) => Ok(result),
        _ => Err(Failure::Malformed { step: Step::List, what: "no tools array" }),
    }
}

/// The listed entry of `tool` in the `tools/list` answer.
pub fn listed_tool(response: &Response, tool: &str) -> Result<Value, Failure> {
    let result = listing(response)?;
    let tools = result
        .get("tools")
        .and_then(Value::as_array)
        .ok_or(Failure::Malformed { step: Step::List, what: "no tools array" })?;
    tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(tool))
        .cloned()
        .ok_or_else(|| Failure::UnknownTool(tool.to_owned()))
}

/// The outcome carried by the `tools/call` answer: a JSON error, or the event stream's `message` event.
pub fn call_outcome(response: &Response) -> Result<Outcome, Failure> {
    let step = Step::Call;
    let malformed = |what| Failure::Malformed { step, what };
    if response.status != 200 {
        return Err(status_failure(step, response));
    }
    let is_stream = response.header("content-type").is_some_and(|v| v.starts_with("text/event-stream"));
    let data = if is_stream {
        message_data(&response.body).ok_or(malformed("the event stream has no message event"))?
    } else {
        // A 200 JSON answer is a JSON-RPC error (bad parameters or an unknown tool, http-mcp.md §7.7, §8.2)
        // or not a call answer at all.
        response.body.clone()
    };
    let result = rpc_result(step, 2, &data)?;
    match result.get("isError").and_then(Value::as_bool) {
        Some(false) => match result.get("structuredContent") {
            Some(content @ Value::Object(_)) => Ok(Outcome::Success(content.clone())),
            _ => Err(malformed("a success without a structuredContent object")),
        },
        Some(true) => {
            let texts: Vec<String> = result
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|i| i.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|item| item.get("text").and_then(Value::as_str))
                .map(str::to_owned)
                .collect();
            if texts.is_empty() {
                return Err(malformed("a tool error without a text content item"));
            }
            Ok(Outcome::ToolError(texts))
        }
        None => Err(malformed("no isError member")),
    }
}

/// The `data` of the first `message` event (the WHATWG event-stream rules: LF, CR or CRLF line ends,
/// `:` comments, `data` lines joined with LF, an event without `event:` is a `message`).
fn message_data(body: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(body).ok()?;
    let mut event = String::new();
    let mut data: Option<String> = None;
    for line in text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)) {
        if line.is_empty() {
            if let Some(d) = data.take() {
                if event.is_empty() || event == "message" {
                    return Some(d.into_bytes());
                }
            }
            event.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => event = value.to_owned(),
            "data" => match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            },
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"{\"a\":1}","type":"text"}],"isError":false,"resultType":"complete","structuredContent":{"a":1}}}"#;
    const TOOL_ERROR: &str = r#"{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"Tool execution failed","type":"text"},{"text":"detail","type":"text"}],"isError":true,"resultType":"complete"}}"#;

    fn stream(body: &str) -> Response {
        Response {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream; charset=utf-8".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    fn json(status: u16, body: &str) -> Response {
        Response {
            status,
            headers: vec![("content-type".into(), "application/json; charset=utf-8".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn call_vectors() {
        let success = Outcome::Success(decode(br#"{"a":1}"#, Limits::REQUEST).unwrap());
        let failed = Outcome::ToolError(vec!["Tool execution failed".into(), "detail".into()]);
        let fixed_only = Outcome::ToolError(vec!["Tool input did not satisfy its contract".into()]);
        let input_error = r#"{"id":2,"jsonrpc":"2.0","result":{"content":[{"text":"Tool input did not satisfy its contract","type":"text"}],"isError":true,"resultType":"complete"}}"#;
        let no_text = r#"{"id":2,"jsonrpc":"2.0","result":{"content":[{"data":"x","type":"image"}],"isError":true,"resultType":"complete"}}"#;
        let cases: Vec<(Response, Result<Outcome, String>)> = vec![
            (stream(&format!(": accepted\n\nevent: message\ndata: {OK}\n\n")), Ok(success)),
            (stream(&format!(": accepted\n\n: heartbeat\n\nevent: message\ndata: {TOOL_ERROR}\n\n")), Ok(failed)),
            (stream(&format!("event: message\ndata: {input_error}\n\n")), Ok(fixed_only)),
            (stream(&format!("event: message\ndata: {no_text}\n\n")), Err("malformed tools/call response: a tool error without a text content item".into())),
            (stream(": accepted\n\n"), Err("malformed tools/call response: the event stream has no message event".into())),
            (stream(&format!("event: message\ndata: {OK}")), Err("malformed tools/call response: the event stream has no message event".into())),
            (
                json(429, r#"{"error":{"code":-31999,"data":{"reason":"run_capacity_exhausted"},"message":"Server busy"},"id":2,"jsonrpc":"2.0"}"#),
                Err("tools/call answered HTTP 429: JSON-RPC error -31999 Server busy (run_capacity_exhausted)".into()),
            ),
            (json(401, r#"{"error":"unauthorized"}"#), Err("tools/call answered HTTP 401: unauthorized".into())),
            (json(502, "<html>"), Err("tools/call answered HTTP 502".into())),
            (
                json(200, r#"{"error":{"code":-32602,"message":"Invalid params"},"id":2,"jsonrpc":"2.0"}"#),
                Err("tools/call answered JSON-RPC error -32602 Invalid params".into()),
            ),
            (stream(&format!("event: message\ndata: {}\n\n", OK.replace("\"id\":2", "\"id\":1"))), Err("malformed tools/call response: wrong JSON-RPC id".into())),
            (stream("event: message\ndata: {\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{\"isError\":false}}\n\n"), Err("malformed tools/call response: a success without a structuredContent object".into())),
        ];
        for (response, expected) in cases {
            let got = call_outcome(&response).map_err(|f| f.to_string());
            assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(&response.body));
        }
    }

    #[test]
    fn listing_vectors() {
        let listing = r#"{"id":1,"jsonrpc":"2.0","result":{"tools":[{"name":"greet","inputSchema":{"type":"object"}}]}}"#;
        assert!(listed_tool(&json(200, listing), "greet").is_ok());
        assert_eq!(listed_tool(&json(200, listing), "other"), Err(Failure::UnknownTool("other".into())));
        let unavailable =
            r#"{"error":{"code":-31998,"message":"Server unavailable"},"id":1,"jsonrpc":"2.0"}"#;
        assert_eq!(
            listed_tool(&json(503, unavailable), "greet").map_err(|f| f.to_string()),
            Err("tools/list answered HTTP 503: JSON-RPC error -31998 Server unavailable".into())
        );
    }
}
