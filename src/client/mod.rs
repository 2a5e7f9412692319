//! `ptc call ENDPOINT TOOL [--arguments JSON]` (lifecycle.md §1.2): one stateless tool call against a
//! running gateway, for operators and smoke tests; and `ptc list` (`list`), which shares its client.
//!
//! Owns the sequence (arguments, token, `tools/list`, the `Mcp-Param-*` headers, `tools/call`) and the
//! mapping of every outcome to stdout, stderr and the exit status of lifecycle.md §1.2 / §2.2. The client
//! never retries. It does not own the header projection and encoding rules, which it shares with the server
//! side (`crate::apps::header`, `crate::mcp_param`), so the two cannot drift apart.

pub mod args;
pub mod failure;
pub mod http;
pub mod list;
pub mod response;

use std::ffi::OsString;
use std::io::Write;

use serde_json::{Map, Value};

use crate::json::to_deterministic_string;
use failure::{Failure, Step};
use response::Outcome;

/// Exit statuses of lifecycle.md §2.2 for `ptc call`.
const EXIT_SUCCESS: u8 = 0;
const EXIT_TOOL_ERROR: u8 = 1;
const EXIT_FAILURE: u8 = 2;

/// Runs `ptc call` with `args` (after `call`) and the value of `PTC_GATEWAY_TOKEN`; returns the exit
/// status after writing stdout or stderr. Blocking.
pub fn run(args: &[OsString], token: Option<OsString>) -> u8 {
    match call(args, token) {
        Ok(Outcome::Success(content)) => {
            let mut line = to_deterministic_string(&content);
            line.push('\n');
            let mut out = std::io::stdout().lock();
            match out.write_all(line.as_bytes()).and_then(|_| out.flush()) {
                Ok(()) => EXIT_SUCCESS,
                Err(_) => EXIT_FAILURE,
            }
        }
        Ok(Outcome::ToolError(texts)) => {
            // lifecycle.md §1.2: every text item, each on its own line, so the run's message after the
            // fixed text (execution.md §7.2) reaches the operator as it reaches any other client.
            let mut err = std::io::stderr().lock();
            for text in texts {
                let _ = writeln!(err, "{text}");
            }
            EXIT_TOOL_ERROR
        }
        Err(failure) => {
            let _ = writeln!(std::io::stderr().lock(), "ptc call: {failure}");
            EXIT_FAILURE
        }
    }
}

fn call(argv: &[OsString], token: Option<OsString>) -> Result<Outcome, Failure> {
    let parsed = args::parse(argv)?;
    let token = args::token(token)?;
    let list = http::post(&parsed.endpoint, &token, Step::List, &[], &body(1, "tools/list", None))?;
    let entry = response::listed_tool(&list, &parsed.tool)?;
    let schema =
        entry.get("inputSchema").ok_or(Failure::Malformed { step: Step::List, what: "no inputSchema" })?;
    // The same projection the gateway computed at startup (http-mcp.md §9.1).
    let params = crate::apps::header::project(schema).map_err(|_| Failure::Malformed {
        step: Step::List,
        what: "an x-mcp-header annotation is invalid",
    })?;
    let mut headers = vec![("Mcp-Name".to_owned(), parsed.tool.clone())];
    headers
        .extend(crate::mcp_param::expected_headers(&params, &parsed.arguments).ok_or(Failure::Unmirrorable)?);
    let request = body(2, "tools/call", Some((&parsed.tool, &parsed.arguments)));
    let answer = http::post(&parsed.endpoint, &token, Step::Call, &headers, &request)?;
    response::call_outcome(&answer)
}

/// A JSON-RPC request with the `_meta` of lifecycle.md §1.2, in deterministic JSON.
pub(crate) fn body(id: i64, method: &str, call: Option<(&str, &Value)>) -> Vec<u8> {
    let text = |s: &str| Value::String(s.to_owned());
    let mut client_info = Map::new();
    client_info.insert("name".into(), text("ptc"));
    client_info.insert("version".into(), text(env!("CARGO_PKG_VERSION")));
    let mut meta = Map::new();
    meta.insert("io.modelcontextprotocol/protocolVersion".into(), text("2026-07-28"));
    meta.insert("io.modelcontextprotocol/clientCapabilities".into(), Value::Object(Map::new()));
    meta.insert("io.modelcontextprotocol/clientInfo".into(), Value::Object(client_info));
    let mut params = Map::new();
    params.insert("_meta".into(), Value::Object(meta));
    if let Some((name, arguments)) = call {
        params.insert("name".into(), text(name));
        params.insert("arguments".into(), arguments.clone());
    }
    let mut request = Map::new();
    request.insert("jsonrpc".into(), text("2.0"));
    request.insert("id".into(), Value::from(id));
    request.insert("method".into(), text(method));
    request.insert("params".into(), Value::Object(params));
    to_deterministic_string(&Value::Object(request)).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_bodies_are_the_bytes_of_1_2() {
        let args = crate::json::decode(br#"{"name":"Ada"}"#, crate::json::Limits::REQUEST).unwrap();
        let meta = r#""_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"ptc","version":"VERSION"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#
            .replace("VERSION", env!("CARGO_PKG_VERSION"));
        let cases = [
            (
                body(1, "tools/list", None),
                format!(r#"{{"id":1,"jsonrpc":"2.0","method":"tools/list","params":{{{meta}}}}}"#),
            ),
            (
                body(2, "tools/call", Some(("greet", &args))),
                format!(
                    r#"{{"id":2,"jsonrpc":"2.0","method":"tools/call","params":{{{meta},"arguments":{{"name":"Ada"}},"name":"greet"}}}}"#
                ),
            ),
        ];
        for (got, want) in cases {
            assert_eq!(String::from_utf8(got).unwrap(), want);
        }
    }

    #[test]
    fn failures_before_the_network_exit_2() {
        let os = |l: &[&str]| l.iter().map(OsString::from).collect::<Vec<_>>();
        let cases: &[(&[&str], Option<&str>, Failure)] = &[
            (&["http://127.0.0.1:9/mcp"], Some("t"), Failure::Usage("expected exactly ENDPOINT and TOOL")),
            (&["http://127.0.0.1:9/mcp", "greet"], None, Failure::TokenMissing),
            (&["http://127.0.0.1:9/mcp", "greet"], Some(""), Failure::TokenInvalid),
        ];
        for (argv, token, expected) in cases {
            assert_eq!(call(&os(argv), token.map(OsString::from)), Err(expected.clone()), "{argv:?}");
        }
    }
}
