//! models.md §4: the request and answer vectors (R1–R14, A1–A10), each row a case of one table.

use super::*;
use crate::json::{decode, Limits};
use crate::providers::model::body::request_body;

fn parse(text: &str) -> Value {
    decode(text.as_bytes(), Limits::DOCUMENT).unwrap()
}

fn defaults() -> ModelDefaults {
    ModelDefaults { model: "small".into(), temperature: None, max_tokens: None }
}

// models.md §4.1–§4.2, vectors R1–R14: the Luau-form request (as JSON) and the exact wire body, or the
// refusal.
#[test]
fn request_vectors() {
    let table: &[(&str, &str, Result<&str, ModelFailure>)] = &[
        (
            "R1 one user message",
            r#"{"messages":[{"role":"user","content":"hi"}]}"#,
            Ok(r#"{"messages":[{"content":"hi","role":"user"}],"model":"small"}"#),
        ),
        (
            "R2 tools, a named choice, the call's own bounds",
            r#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],
               "tools":[{"name":"add","description":"Adds.","parameters":{"type":"object"}}],
               "tool_choice":"add","temperature":0.5,"max_tokens":64}"#,
            Ok(concat!(
                r#"{"max_tokens":64,"messages":[{"content":"s","role":"system"},{"content":"u","role":"user"}],"#,
                r#""model":"small","temperature":0.5,"tool_choice":{"function":{"name":"add"},"type":"function"},"#,
                r#""tools":[{"function":{"description":"Adds.","name":"add","parameters":{"type":"object"}},"type":"function"}]}"#
            )),
        ),
        (
            "R3 an assistant tool call and its tool answer, converted to the wire form",
            r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","name":"add","arguments":{"b":2,"a":1}}]},
               {"role":"tool","tool_call_id":"c1","content":"3"}]}"#,
            Ok(concat!(
                r#"{"messages":[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1,\"b\":2}","name":"add"},"#,
                r#""id":"c1","type":"function"}]},{"content":"3","role":"tool","tool_call_id":"c1"}],"model":"small"}"#
            )),
        ),
        (
            "R4 response_format is a JSON schema",
            r#"{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"object"}}"#,
            Ok(concat!(
                r#"{"messages":[{"content":"x","role":"user"}],"model":"small","#,
                r#""response_format":{"json_schema":{"name":"result","schema":{"type":"object"},"strict":true},"type":"json_schema"}}"#
            )),
        ),
        (
            "R13 the wire forms of a tool call, a tool and a named choice are accepted too",
            r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"b\":2, \"a\":1}"}}]},
               {"role":"tool","tool_call_id":"c1","content":"3"}],
               "tools":[{"type":"function","function":{"name":"add"}}],"tool_choice":{"type":"function","function":{"name":"add"}}}"#,
            Ok(concat!(
                r#"{"messages":[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1,\"b\":2}","name":"add"},"#,
                r#""id":"c1","type":"function"}]},{"content":"3","role":"tool","tool_call_id":"c1"}],"model":"small","#,
                r#""tool_choice":{"function":{"name":"add"},"type":"function"},"tools":[{"function":{"name":"add"},"type":"function"}]}"#
            )),
        ),
        (
            "R14 wire-form arguments that are not a JSON object",
            r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"[1]"}}]}]}"#,
            Err(ModelFailure::RequestInvalid),
        ),
        ("R5 no messages", r#"{"messages":[]}"#, Err(ModelFailure::RequestInvalid)),
        (
            "R6 an unknown role",
            r#"{"messages":[{"role":"robot","content":"x"}]}"#,
            Err(ModelFailure::RequestInvalid),
        ),
        (
            "R7 an unknown member",
            r#"{"messages":[{"role":"user","content":"x"}],"stream":true}"#,
            Err(ModelFailure::RequestInvalid),
        ),
        (
            "R8 a tool message without its call id",
            r#"{"messages":[{"role":"tool","content":"x"}]}"#,
            Err(ModelFailure::RequestInvalid),
        ),
        (
            "R9 temperature above 2",
            r#"{"messages":[{"role":"user","content":"x"}],"temperature":2.5}"#,
            Err(ModelFailure::RequestInvalid),
        ),
        (
            "R10 a tool name outside the pattern",
            r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a.b"}]}"#,
            Err(ModelFailure::RequestInvalid),
        ),
        (
            "R11 tool_choice names no tool",
            r#"{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a"}],"tool_choice":"b"}"#,
            Err(ModelFailure::RequestInvalid),
        ),
        (
            "R12 an assistant message with neither content nor calls",
            r#"{"messages":[{"role":"assistant"}]}"#,
            Err(ModelFailure::RequestInvalid),
        ),
    ];
    for (what, request, want) in table {
        let got = request_body(&defaults(), &parse(request)).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(got.as_deref().map_err(|e| *e), *want, "{what}");
    }
}

// models.md §4.1: the installation's `params` apply when the call gives none.
#[test]
fn installation_params_are_the_defaults() {
    let defaults =
        ModelDefaults { model: "m".into(), temperature: Some(Value::from(1)), max_tokens: Some(9) };
    let body = request_body(&defaults, &parse(r#"{"messages":[{"role":"user","content":"x"}]}"#)).unwrap();
    assert_eq!(
        String::from_utf8(body).unwrap(),
        r#"{"max_tokens":9,"messages":[{"content":"x","role":"user"}],"model":"m","temperature":1}"#
    );
}

// models.md §4.3, vectors A1–A10: a 200 body and the Luau-form answer, or the rule it breaks as the debug
// log writes it (models.md §9 "Diagnostics"; the class is always `model_protocol_error`).
#[test]
fn answer_vectors() {
    let usage = r#""usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}"#;
    type Want = Result<(&'static str, Option<&'static str>, Usage), &'static str>;
    let table: Vec<(&str, String, Want)> = vec![
        (
            "A1 text",
            format!(r#"{{"choices":[{{"message":{{"role":"assistant","content":"hi"}},"finish_reason":"stop"}}],{usage}}}"#),
            Ok((r#"{"content":"hi","role":"assistant"}"#, Some("stop"), Usage { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 })),
        ),
        (
            "A2 a tool call, its arguments decoded",
            r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}"#.into(),
            Ok((r#"{"role":"assistant","tool_calls":[{"arguments":{"a":1},"id":"c1","name":"add"}]}"#, Some("tool_calls"), Usage::default())),
        ),
        ("A3 not JSON", "{not json".into(), Err("the body is not strict JSON: syntax at byte 1 (line 1, column 2)")),
        ("A4 no choices", r#"{"choices":[]}"#.into(), Err("/choices: expected a non-empty array")),
        ("A5 choices not an array", r#"{"choices":"nope"}"#.into(), Err("/choices: expected a non-empty array")),
        ("A6 arguments that are not a JSON object", r#"{"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"f","arguments":"[1]"}}]}}]}"#.into(), Err("/choices/0/message/tool_calls/0/function/arguments: expected an object, or a string that decodes to one")),
        ("A7 another role", r#"{"choices":[{"message":{"role":"user","content":"x"}}]}"#.into(), Err(r#"/choices/0/message/role: expected "assistant", null or absent"#)),
        ("A8 a negative token count", r#"{"choices":[{"message":{"content":"x"}}],"usage":{"total_tokens":-1}}"#.into(), Err("/usage/total_tokens: expected a non-negative integer, null or absent")),
        ("A9 no finish_reason, no usage", r#"{"choices":[{"message":{"content":"x"}}]}"#.into(), Ok((r#"{"content":"x","role":"assistant"}"#, None, Usage::default()))),
        ("A10 a duplicate key", r#"{"choices":[{"message":{"content":"x","content":"y"}}]}"#.into(), Err("the body is not strict JSON: duplicate_key at byte 38 (line 1, column 39)")),
        // The other rules of models.md §4.3, one row each: where the log says the answer broke.
        ("not an object", "[1]".into(), Err("the body: expected an object")),
        ("no message", r#"{"choices":[{"text":"secret"}]}"#.into(), Err("/choices/0/message: expected an object")),
        ("content a number", r#"{"choices":[{"message":{"content":7}}]}"#.into(), Err("/choices/0/message/content: expected a string, null or absent")),
        ("tool_calls an object", r#"{"choices":[{"message":{"tool_calls":{}}}]}"#.into(), Err("/choices/0/message/tool_calls: expected an array of at most 128 calls, null or absent")),
        ("a second call without id", r#"{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}},{"function":{"name":"f"}}]}}]}"#.into(), Err("/choices/0/message/tool_calls/1/id: expected a string of 1 to 256 bytes")),
        ("a call of another type", r#"{"choices":[{"message":{"tool_calls":[{"id":"a","type":"code"}]}}]}"#.into(), Err(r#"/choices/0/message/tool_calls/0/type: expected "function", null or absent"#)),
        ("a call without function", r#"{"choices":[{"message":{"tool_calls":[{"id":"a"}]}}]}"#.into(), Err("/choices/0/message/tool_calls/0/function: expected an object")),
        ("a name of 65 bytes", format!(r#"{{"choices":[{{"message":{{"tool_calls":[{{"id":"a","function":{{"name":"{}"}}}}]}}}}]}}"#, "n".repeat(65)), Err("/choices/0/message/tool_calls/0/function/name: expected a string of 1 to 64 bytes")),
        ("arguments not JSON", r#"{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"k\": sk-secret}"}}]}}]}"#.into(), Err("/choices/0/message/tool_calls/0/function/arguments: the string is not strict JSON: syntax at byte 6 (line 1, column 7)")),
        ("finish_reason a number", r#"{"choices":[{"message":{},"finish_reason":1}]}"#.into(), Err("/choices/0/finish_reason: expected a string of at most 64 bytes, null or absent")),
        ("usage a string", r#"{"choices":[{"message":{}}],"usage":"many"}"#.into(), Err("/usage: expected an object, null or absent")),
        ("prompt_tokens a float", r#"{"choices":[{"message":{}}],"usage":{"prompt_tokens":1.5}}"#.into(), Err("/usage/prompt_tokens: expected a non-negative integer, null or absent")),
        ("completion_tokens a string", r#"{"choices":[{"message":{}}],"usage":{"completion_tokens":"2"}}"#.into(), Err("/usage/completion_tokens: expected a non-negative integer, null or absent")),
    ];
    for (what, body, want) in table {
        let got = parse_answer(body.as_bytes())
            .map(|a| (json::to_deterministic_string(&a.message), a.finish_reason, a.usage))
            .map_err(|mismatch| mismatch.to_string());
        let want = want.map(|(m, f, u)| (m.to_owned(), f.map(str::to_owned), u)).map_err(str::to_owned);
        assert_eq!(got, want, "{what}");
    }
}

// models.md §5: the status classes.
#[test]
fn status_classes() {
    for (status, class) in [
        (401, ModelFailure::AuthenticationFailed),
        (403, ModelFailure::AuthenticationFailed),
        (429, ModelFailure::RateLimited),
        (400, ModelFailure::UpstreamError),
        (404, ModelFailure::UpstreamError),
        (500, ModelFailure::UpstreamError),
        (503, ModelFailure::UpstreamError),
        (302, ModelFailure::UpstreamError),
    ] {
        assert_eq!(status_class(status), class, "{status}");
    }
}
