//! The rows of pcc.md §17 that need no special setup: inbound steps and everything expected back.

use super::client::{body, c, call, end, err, h, initialized, ping, pong, In, Out};
use tonic::Code;

/// One row: its name, inbound steps, and everything expected back, in order.
pub struct Row {
    pub name: &'static str,
    pub inbound: Vec<In>,
    pub outbound: Vec<Out>,
}

fn with_h(rest: Vec<In>) -> Vec<In> {
    let mut v = vec![c()];
    v.extend(h());
    v.extend(rest);
    v
}

pub fn rows(mcp: &[(String, String)]) -> Vec<Row> {
    let v = "2025-11-25";
    let entry = |name: &str| mcp.iter().find(|(n, _)| n == name).map(|(_, e)| e.clone()).unwrap();
    let (alpha, beta, delta, hang) = (entry("alpha"), entry("beta"), entry("delta"), entry("hang"));
    vec![
        Row { name: "V8", inbound: vec![ping(1)], outbound: vec![end(Code::FailedPrecondition, "connect_required")] },
        Row { name: "V9", inbound: vec![In::Connect("srv-9", "r")], outbound: vec![end(Code::NotFound, "unknown_server")] },
        Row { name: "V10", inbound: vec![In::Connect("srv-1", "")], outbound: vec![end(Code::InvalidArgument, "invalid_connect")] },
        Row { name: "V11", inbound: vec![c(), c()], outbound: vec![Out::Connected, end(Code::FailedPrecondition, "already_connected")] },
        Row { name: "V13", inbound: vec![In::Empty], outbound: vec![end(Code::InvalidArgument, "empty_message")] },
        Row { name: "V13 after connect", inbound: vec![c(), In::Empty], outbound: vec![Out::Connected, end(Code::InvalidArgument, "empty_message")] },
        Row { name: "V14", inbound: vec![c(), body("{")], outbound: vec![Out::Connected, err(-32700, "Parse error", None, "null")] },
        Row {
            name: "V15",
            inbound: vec![c(), body(r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}"#)],
            outbound: vec![Out::Connected, err(-32700, "Parse error", None, "null")],
        },
        Row {
            name: "V16",
            inbound: vec![c(), body(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)],
            outbound: vec![Out::Connected, err(-32600, "Invalid Request", Some("batch_unsupported"), "null")],
        },
        Row {
            name: "V17",
            inbound: vec![c(), body(r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#)],
            outbound: vec![Out::Connected, err(-32600, "Invalid Request", Some("invalid_envelope"), "null")],
        },
        Row {
            name: "V18",
            inbound: vec![c(), call(r#""x""#, "alpha", r#"{"text":"hi"}"#)],
            outbound: vec![Out::Connected, err(-32600, "Invalid Request", Some("not_initialized"), r#""x""#)],
        },
        Row {
            name: "V19",
            inbound: vec![c(), body(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}"#)],
            outbound: vec![Out::Connected, initialized(0, "2025-06-18")],
        },
        Row {
            name: "V20",
            inbound: vec![c(), body(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{}}}"#)],
            outbound: vec![Out::Connected, initialized(0, v)],
        },
        Row {
            name: "V21",
            inbound: vec![c(), body(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7,"capabilities":{}}}"#)],
            outbound: vec![Out::Connected, err(-32602, "Invalid params", None, "0")],
        },
        Row {
            name: "V22",
            inbound: vec![c(), h()[0].clone(), body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#)],
            outbound: vec![Out::Connected, initialized(0, v), err(-32600, "Invalid Request", Some("already_initialized"), "1")],
        },
        Row {
            name: "V23",
            inbound: vec![c(), h()[0].clone(), body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)],
            outbound: vec![Out::Connected, initialized(0, v), err(-32600, "Invalid Request", Some("not_initialized"), "2")],
        },
        // V24, V29, V30: nothing is sent for the notification or the response; the ping after it is
        // the very next message.
        Row { name: "V24", inbound: with_h(vec![ping(1)]), outbound: vec![Out::Connected, initialized(0, v), pong(1)] },
        Row {
            name: "V25",
            inbound: with_h(vec![body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)]),
            outbound: vec![Out::Connected, initialized(0, v), Out::Json(format!(r#"{{"id":2,"jsonrpc":"2.0","result":{{"tools":[{alpha},{beta},{delta},{hang}]}}}}"#))],
        },
        Row {
            name: "V26",
            inbound: with_h(vec![body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"x"}}"#)]),
            outbound: vec![Out::Connected, initialized(0, v), err(-32602, "Invalid params", None, "2")],
        },
        Row {
            name: "V27",
            inbound: with_h(vec![body(r#"{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{}}"#)]),
            outbound: vec![Out::Connected, initialized(0, v), err(-32601, "Method not found", None, "3")],
        },
        Row {
            name: "V28",
            inbound: with_h(vec![body(r#"{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}"#)]),
            outbound: vec![Out::Connected, initialized(0, v), err(-32601, "Method not found", None, "4")],
        },
        Row {
            name: "V29",
            inbound: with_h(vec![body(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#), ping(1)]),
            outbound: vec![Out::Connected, initialized(0, v), pong(1)],
        },
        Row {
            name: "V30",
            inbound: with_h(vec![body(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#), ping(1)]),
            outbound: vec![Out::Connected, initialized(0, v), pong(1)],
        },
        Row { name: "V31", inbound: with_h(vec![ping(9)]), outbound: vec![Out::Connected, initialized(0, v), pong(9)] },
        Row {
            name: "V32",
            inbound: with_h(vec![call("6", "gamma", "{}")]),
            outbound: vec![Out::Connected, initialized(0, v), err(-32602, "Invalid params", None, "6")],
        },
        Row {
            name: "V33",
            inbound: with_h(vec![body(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha","arguments":{"text":"hi"},"requestState":"x"}}"#)]),
            outbound: vec![Out::Connected, initialized(0, v), err(-32602, "Invalid params", None, "7")],
        },
        Row {
            name: "V34",
            inbound: with_h(vec![call(r#""call-1""#, "alpha", r#"{"text":"hi"}"#)]),
            outbound: vec![
                Out::Connected,
                initialized(0, v),
                Out::Json(r#"{"id":"call-1","jsonrpc":"2.0","result":{"content":[{"text":"{\"text\":\"hi\"}","type":"text"}],"isError":false,"structuredContent":{"text":"hi"}}}"#.into()),
            ],
        },
        Row {
            name: "V35",
            inbound: with_h(vec![call(r#""call-2""#, "alpha", "{}")]),
            outbound: vec![
                Out::Connected,
                initialized(0, v),
                Out::Json(r#"{"id":"call-2","jsonrpc":"2.0","result":{"content":[{"text":"Tool input did not satisfy its contract","type":"text"}],"isError":true,"structuredContent":{"outcome":"invalid_input"}}}"#.into()),
            ],
        },
        Row {
            name: "V36/V42 (held call, call_in_flight, cancellation, next call accepted)",
            inbound: with_h(vec![
                call(r#""call-3""#, "hang", "{}"),
                call(r#""call-4""#, "alpha", r#"{"text":"hi"}"#),
                body(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"other","reason":"user"}}"#),
                ping(1),
                body(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-3","reason":"user"}}"#),
            ]),
            outbound: vec![
                Out::Connected,
                initialized(0, v),
                err(-32600, "Invalid Request", Some("call_in_flight"), r#""call-4""#),
                pong(1),
            ],
        },
        Row {
            name: "V49",
            inbound: vec![c(), In::Body(format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"s":"{}"}}}}"#, "a".repeat(2_097_152))), ping(1)],
            outbound: vec![Out::Connected, err(-32600, "Invalid Request", Some("request_too_large"), "null"), pong(1)],
        },
        Row { name: "V55", inbound: with_h(vec![In::HalfClose]), outbound: vec![Out::Connected, initialized(0, v), end(Code::Ok, "")] },
        Row { name: "V55 before connect", inbound: vec![In::HalfClose], outbound: vec![end(Code::FailedPrecondition, "connect_required")] },
    ]
}
