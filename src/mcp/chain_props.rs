//! Generated inputs for the `/mcp` validation chain (http-mcp.md §6–§9; issue 18, docs/reliability.md):
//! heads and bodies of `server/discover`, `tools/list` and `tools/call` requests, consistent or not, with
//! ids, `_meta`, tool names, arguments and `Mcp-Param-*` lines drawn near every rule's edge, then
//! perturbed (header lines dropped, repeated, replaced or added; body bytes mutated).
//!
//! The chain runs the front's own step sequences (`front::head_steps` for the head checks,
//! http-mcp.md §6.2–§6.7; `envelope::parse` for strict JSON and the envelope, http-mcp.md §7.1–§7.2;
//! `front::method_steps` for http-mcp.md §7.3–§7.7) and the `tools/call` checks of http-mcp.md §8.1–§8.3 in
//! the order of `front.rs` (request admission, the body read and the two readiness steps depend on state, not
//! on the input, and are covered by `tests/black_box/mcp_front.rs`). Properties: no panic; the answer is one
//! of the closed refusals of the head checks or JSON-RPC errors of http-mcp.md §11, whose body is strict JSON
//! carrying the code and exactly the id validated by the envelope check; and a consistent, unperturbed
//! request is admitted as the method it names.

use hyper::header::{HeaderName, HeaderValue};
use hyper::HeaderMap;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;

use crate::json::{decode, Limits};
use crate::mcp::bearer::BearerDigest;
use crate::mcp::envelope;
use crate::mcp::front::{head_steps, method_steps};
use crate::mcp::method::Method;
use crate::mcp::refusal::Refusal;
use crate::mcp::rpc::{RequestId, RpcError};
use crate::mcp::{params, tool};
use crate::mcp_param::encoding::canonical_encoding;
use crate::mcp_param::{expected_headers, HeaderParam};
use crate::support::prop_support::{check, mutated};

const AUTHORITY: &str = "127.0.0.1:7777";
const ORIGIN: &str = "http://127.0.0.1:3000";
const BEARER: &str = "0123456789abcdef0123456789abcdef";
/// The one served tool and its header projection (http-mcp.md §9.1).
const TOOL: &str = "search";

fn projection() -> Vec<HeaderParam> {
    vec![
        HeaderParam { path: vec!["q".into()], suffix: "Q".into() },
        HeaderParam { path: vec!["filter".into(), "owner".into()], suffix: "Owner".into() },
    ]
}

/// What the chain decided.
#[derive(Debug, PartialEq)]
enum Outcome {
    Refused(Refusal),
    Error(RpcError, Option<RequestId>),
    Discover(RequestId),
    List(RequestId),
    Call(RequestId),
}

/// The head checks and the JSON-RPC checks (http-mcp.md §6.2–§6.7, §7.1–§7.7) as `McpFront` runs them
/// (`head_steps`, `envelope::parse`, `method_steps`), then the `tools/call` checks
/// (http-mcp.md §8.1–§8.3) in the order of `McpFront::check_call` over the one served tool.
fn chain(headers: &HeaderMap, body: &[u8]) -> Outcome {
    let digest = BearerDigest::of(BEARER.as_bytes());
    if let Err(refusal) = head_steps(headers, AUTHORITY, &[ORIGIN.to_owned()], &digest) {
        return Outcome::Refused(refusal);
    }
    let envelope::Envelope { id, method, params } = match envelope::parse(body) {
        Ok(envelope) => envelope,
        Err(failure) => return Outcome::Error(failure.error, failure.id),
    };
    let fail = |error: RpcError| Outcome::Error(error, Some(id.clone()));
    match method_steps(headers, &method, params) {
        Err(refused) => fail(refused.error),
        Ok(Method::Discover) => Outcome::Discover(id),
        Ok(Method::List) => Outcome::List(id),
        Ok(Method::Call { name, arguments }) => {
            if !tool::name_matches(headers, &name) {
                fail(RpcError::HeaderMismatch)
            } else if name != TOOL {
                fail(RpcError::InvalidParams)
            } else if !params::matches(headers, &projection(), &arguments) {
                fail(RpcError::HeaderMismatch)
            } else {
                Outcome::Call(id)
            }
        }
    }
}

/// One generated request: the body's parts, and whether each is the valid choice.
#[derive(Clone, Debug)]
struct Parts {
    id: (&'static str, bool),
    method: (&'static str, bool),
    meta: (&'static str, bool),
    name: (String, bool),
    arguments: String,
}

fn parts() -> impl Strategy<Value = Parts> {
    let id = prop_oneof![
        3 => select(vec!["1", "0", "-9007199254740991", "\"a\"", "\"\\u00e9\""]).prop_map(|i| (i, true)),
        1 => select(vec!["null", "1.0", "\"\"", "true", "9007199254740992", "[1]", "-0"]).prop_map(|i| (i, i == "-0")),
    ];
    let method = prop_oneof![
        4 => select(vec!["server/discover", "tools/list", "tools/call"]).prop_map(|m| (m, true)),
        1 => select(vec!["ping", "", "tools/List", "initialize"]).prop_map(|m| (m, false)),
    ];
    let meta = prop_oneof![
        4 => Just((r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#, true)),
        2 => Just((r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","websiteUrl":"http://x.example/%41"}}"#, true)),
        1 => select(vec![
            r#"{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","websiteUrl":"x"}}"#,
            "[]",
        ])
        .prop_map(|m| (m, false)),
    ];
    let name = prop_oneof![
        4 => Just((TOOL.to_owned(), true)),
        1 => prop_oneof![Just(String::new()), Just("n".repeat(129)), "[a-z/é ]{1,12}"].prop_map(|n| (n, false)),
    ];
    let scalar = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        "-?(0|[1-9][0-9]{0,16})(\\.[05])?",
        "[ -~é😀\u{1}]{0,12}".prop_map(|s| crate::json::to_deterministic_string(&Value::from(s))),
        Just("\"=?base64?YQ==?=\"".to_owned()),
        Just("\" padded \"".to_owned()),
    ];
    let arguments = (scalar.clone(), scalar)
        .prop_map(|(q, owner)| format!(r#"{{"q":{q},"filter":{{"owner":{owner}}}}}"#));
    (id, method, meta, name, arguments).prop_map(|(id, method, meta, name, arguments)| Parts {
        id,
        method,
        meta,
        name,
        arguments,
    })
}

impl Parts {
    fn body(&self) -> String {
        let call = if self.method.0 == "tools/call" {
            format!(
                r#","name":{},"arguments":{}"#,
                crate::json::to_deterministic_string(&Value::from(self.name.0.as_str())),
                self.arguments
            )
        } else {
            String::new()
        };
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"{}","params":{{"_meta":{}{call}}}}}"#,
            self.id.0, self.method.0, self.meta.0
        )
    }

    /// The header lines of a client that mirrors the body (http-mcp.md §6, §7.4, §9.2).
    fn headers(&self) -> Vec<(String, Vec<u8>)> {
        let mut lines: Vec<(String, Vec<u8>)> = vec![
            ("host".into(), AUTHORITY.into()),
            ("origin".into(), ORIGIN.into()),
            ("authorization".into(), format!("Bearer {BEARER}").into_bytes()),
            ("content-type".into(), b"application/json".to_vec()),
            ("accept".into(), b"application/json, text/event-stream".to_vec()),
            ("mcp-protocol-version".into(), b"2026-07-28".to_vec()),
            ("mcp-method".into(), self.method.0.as_bytes().to_vec()),
        ];
        if self.method.0 == "tools/call" {
            lines.push(("mcp-name".into(), canonical_encoding(&self.name.0).into_bytes()));
            let arguments = decode(self.arguments.as_bytes(), Limits::REQUEST).unwrap_or(Value::Null);
            for (name, value) in expected_headers(&projection(), &arguments).unwrap_or_default() {
                lines.push((name.to_ascii_lowercase(), value.into_bytes()));
            }
        }
        lines
    }

    /// What a consistent request is admitted as, or `None` when some part is invalid on purpose.
    fn expected(&self, arguments_mirrorable: bool) -> Option<&'static str> {
        let valid = self.id.1 && self.method.1 && self.meta.1;
        match self.method.0 {
            "tools/call" if valid && self.name.1 && arguments_mirrorable => Some("call"),
            "server/discover" if valid => Some("discover"),
            "tools/list" if valid => Some("list"),
            _ => None,
        }
    }
}

/// One change to the header lines.
#[derive(Clone, Debug)]
enum HeaderEdit {
    Drop(usize),
    Repeat(usize),
    Replace(usize, Vec<u8>),
    Add(String, Vec<u8>),
}

fn header_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[ -~]{0,24}".prop_map(String::into_bytes),
        Just(b"application/json; charset=utf-8".to_vec()),
        Just(b"text/event-stream".to_vec()),
        Just(b"=?base64?c2VhcmNo?=".to_vec()),
        Just(b"Bearer 0123456789abcdef0123456789abcdeg".to_vec()),
        vec(any::<u8>(), 0..16),
        (32_000usize..33_000).prop_map(|n| vec![b'x'; n]),
    ]
}

fn header_edit() -> impl Strategy<Value = HeaderEdit> {
    let name = prop_oneof![
        select(vec![
            "host",
            "origin",
            "authorization",
            "content-type",
            "accept",
            "mcp-protocol-version",
            "mcp-method",
            "mcp-name",
            "mcp-param-q",
            "mcp-param-owner",
            "mcp-param-other"
        ])
        .prop_map(str::to_owned),
        "[a-z][a-z0-9-]{0,12}",
    ];
    prop_oneof![
        any::<usize>().prop_map(HeaderEdit::Drop),
        any::<usize>().prop_map(HeaderEdit::Repeat),
        (any::<usize>(), header_value()).prop_map(|(at, v)| HeaderEdit::Replace(at, v)),
        (name, header_value()).prop_map(|(n, v)| HeaderEdit::Add(n, v)),
    ]
}

fn header_map(lines: &[(String, Vec<u8>)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in lines {
        // Bytes hyper would not parse into a field value never reach the chain.
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_bytes(value)) {
            map.append(n, v);
        }
    }
    map
}

/// The answer's body is strict JSON with the code and the echoed id (http-mcp.md §11), or the fixed
/// refusal body (http-mcp.md §6).
fn check_answer(outcome: &Outcome) -> Result<(), TestCaseError> {
    match outcome {
        Outcome::Refused(refusal) => {
            let body = decode(refusal.body().as_bytes(), Limits::REQUEST);
            prop_assert!(body.is_ok_and(|b| b.get("error").and_then(Value::as_str).is_some()));
        }
        Outcome::Error(error, id) => {
            let body = decode(error.body(id.as_ref()).as_bytes(), Limits::REQUEST)
                .map_err(|e| TestCaseError::fail(format!("error body: {e}")))?;
            prop_assert_eq!(body.get("jsonrpc"), Some(&Value::from("2.0")));
            let code = body.get("error").and_then(|e| e.get("code")).and_then(crate::json::as_integer);
            prop_assert_eq!(code, Some(i128::from(error.code())));
            prop_assert!(
                [-32700, -32600, -32602, -32020, -32022, -32601].contains(&error.code()),
                "{error:?}"
            );
            prop_assert_eq!(body.get("id").cloned(), id.as_ref().map(RequestId::to_value));
        }
        Outcome::Discover(_) | Outcome::List(_) | Outcome::Call(_) => {}
    }
    Ok(())
}

#[test]
fn prop_mcp_chain() {
    let input = (parts(), prop_oneof![2 => Just(vec![]), 1 => vec(header_edit(), 1..4)], any::<bool>());
    let input = input.prop_flat_map(|(parts, edits, mutate)| {
        let body = parts.body().into_bytes();
        let body = if mutate { mutated(Just(body)).boxed() } else { Just(body).boxed() };
        (Just(parts), Just(edits), body)
    });
    check("mcp_chain", 8192, input, |(parts, edits, body)| {
        let mut lines = parts.headers();
        for edit in &edits {
            let n = lines.len().max(1);
            match edit {
                HeaderEdit::Drop(at) if !lines.is_empty() => drop(lines.remove(at % n)),
                HeaderEdit::Repeat(at) if !lines.is_empty() => lines.push(lines[at % n].clone()),
                HeaderEdit::Replace(at, v) if !lines.is_empty() => lines[at % n].1 = v.clone(),
                HeaderEdit::Add(name, v) => lines.push((name.clone(), v.clone())),
                _ => {}
            }
        }
        let outcome = chain(&header_map(&lines), &body);
        check_answer(&outcome)?;
        let clean = edits.is_empty() && body == parts.body().into_bytes();
        let arguments = decode(parts.arguments.as_bytes(), Limits::REQUEST).unwrap_or(Value::Null);
        let mirrorable = expected_headers(&projection(), &arguments).is_some();
        if let (true, Some(expected)) = (clean, parts.expected(mirrorable)) {
            let got = match &outcome {
                Outcome::Discover(_) => "discover",
                Outcome::List(_) => "list",
                Outcome::Call(_) => "call",
                _ => "refused",
            };
            prop_assert_eq!(got, expected, "{:?} for {}", outcome, String::from_utf8_lossy(&body));
        }
        Ok(())
    });
}
