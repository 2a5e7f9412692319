//! Generated inputs for stdio framing and the upstream JSON-RPC reader (providers.md §4.2; issue 18,
//! docs/reliability.md): stdout streams of LF, CRLF and stray CR, read through buffers of 1 to 16 bytes;
//! and upstream messages of the four envelope shapes with ids and error objects near every rule's edge,
//! mutated byte by byte. The Streamable HTTP transport reads its JSON bodies and SSE payloads with the
//! same `parse_message` (`http/exchange.rs`), so this target covers its JSON-RPC reader too.
//!
//! Properties: no panic; the lines read are exactly the LF-separated non-empty lines with one CR
//! before the LF removed, the unterminated tail discarded, whatever the buffer size; a message is
//! `NotJson` exactly when the strict decoder refuses it with the upstream limits, and a classified
//! message carries the id and code its text holds.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use super::*;
use crate::support::prop_support::{check, interesting_byte, mutated};

/// The lines providers.md §4.2 reads from `input`.
fn model(input: &[u8]) -> Vec<Vec<u8>> {
    let mut segments: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
    // Bytes after the last LF are discarded at end of file.
    segments.pop();
    segments
        .into_iter()
        .map(|s| s.strip_suffix(b"\r").unwrap_or(s).to_vec())
        .filter(|s| !s.is_empty())
        .collect()
}

#[test]
fn prop_stdio_framing_lines() {
    let stream = vec(prop_oneof![4 => interesting_byte(), 1 => select(vec![b'\n', b'\r'])], 0..96);
    check("stdio_framing", 2048, (stream, 1usize..17), |(input, capacity)| {
        let mut reader = tokio::io::BufReader::with_capacity(capacity, input.as_slice());
        let mut got = Vec::new();
        loop {
            // A slice never pends, so the future completes on its first poll.
            match futures::executor::block_on(read_line(&mut reader)) {
                Ok(Line::Bytes(line)) => got.push(line),
                Ok(Line::Eof) => break,
                Ok(Line::TooLong) => return Err(TestCaseError::fail("a short line was too long")),
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            }
        }
        prop_assert_eq!(got, model(&input));
        Ok(())
    });
}

fn message() -> impl Strategy<Value = Vec<u8>> {
    let id = select(vec!["1", "7", "-1", "0", "null", "\"s\"", "1.0", "18446744073709551615", "{}"]);
    let params = select(vec!["", r#","params":{}"#, r#","params":[]"#, r#","params":1"#]);
    let error = select(vec![
        r#"{"code":-32601,"message":"m"}"#,
        r#"{"code":1,"message":"m","data":{"x":[1]}}"#,
        r#"{"code":1.5,"message":"m"}"#,
        r#"{"code":1}"#,
        r#"{"code":1,"message":"m","extra":1}"#,
        "[]",
    ]);
    let shape = prop_oneof![
        (id.clone(), params.clone())
            .prop_map(|(i, p)| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"{p}}}"#)),
        params.clone().prop_map(|p| format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress"{p}}}"#)),
        (id.clone(), params)
            .prop_map(|(i, p)| format!(r#"{{"jsonrpc":"2.0","id":{i},"result":{{"content":[]}}{p}}}"#)),
        (id, error).prop_map(|(i, e)| format!(r#"{{"jsonrpc":"2.0","id":{i},"error":{e}}}"#)),
    ];
    mutated(shape.prop_map(String::into_bytes))
}

#[test]
fn prop_upstream_jsonrpc_reader() {
    check("upstream_jsonrpc", 4096, message(), |line| {
        let decoded = json::decode(&line, Limits::UPSTREAM_MESSAGE);
        match parse_message(&line) {
            Err(Violation::NotJson(error)) => prop_assert_eq!(decoded.err(), Some(error)),
            Err(Violation::NotAnEnvelope) => prop_assert!(decoded.is_ok()),
            Err(other) => return Err(TestCaseError::fail(format!("a line is never {other:?}"))),
            Ok(message) => {
                let Ok(value) = decoded else { return Err(TestCaseError::fail("classified a refused text")) };
                prop_assert_eq!(value.get("jsonrpc"), Some(&Value::from("2.0")));
                let id = value.get("id");
                match message {
                    Message::Request { id: got, .. } => prop_assert_eq!(Some(&got), id),
                    Message::Notification => prop_assert!(id.is_none()),
                    Message::Result { id: got, .. } | Message::Error { id: got, .. } => {
                        let expected = match (id, id.and_then(crate::json::as_integer)) {
                            (Some(_), Some(n)) => WireId::Number(n),
                            (Some(Value::Null), None) => WireId::Null,
                            (Some(other), None) => WireId::Other(other.clone()),
                            (None, _) => return Err(TestCaseError::fail("a response without id")),
                        };
                        prop_assert_eq!(got, expected);
                    }
                }
            }
        }
        Ok(())
    });
}
