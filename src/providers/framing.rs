//! stdio framing (providers.md §4.2): splitting stdout into bounded lines and classifying each line as one
//! JSON-RPC 2.0 message shape.
//!
//! This file owns the byte rules (LF split, one CR stripped, empty lines ignored, the 8,388,608-byte line
//! bound, strict JSON with the upstream limits, the four envelope shapes). It does not correlate ids or
//! decide what a message means for a request: the transport owner does.

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::json::{self, as_integer, DecodeError, Limits};

/// The stdout line limit, terminator excluded (providers.md §15).
pub const MAX_LINE: usize = 8_388_608;

/// One outcome of reading stdout.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A non-empty line, terminator (and one CR before it) removed.
    Bytes(Vec<u8>),
    /// A line longer than [`MAX_LINE`]: a protocol violation (providers.md §4.2).
    TooLong,
    /// End of file; bytes after the last LF are discarded (providers.md §4.2).
    Eof,
}

/// Read the next non-empty line. The buffer never grows past `MAX_LINE + 1` bytes: the reader stops
/// buffering at 8,388,609 bytes (providers.md §4.2).
pub async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Line> {
    let mut line = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(Line::Eof);
        }
        let (chunk, found) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (&available[..at], true),
            None => (available, false),
        };
        let room = MAX_LINE + 1 - line.len();
        let take = chunk.len().min(room);
        let overflow = chunk.len() > take;
        line.extend_from_slice(&chunk[..take]);
        let consumed = if found { chunk.len() + 1 } else { chunk.len() };
        reader.consume(consumed);
        if overflow {
            return Ok(Line::TooLong);
        }
        if found {
            // One CR immediately before the LF belongs to the terminator (providers.md §4.2).
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.len() > MAX_LINE {
                return Ok(Line::TooLong);
            }
            if line.is_empty() {
                continue;
            }
            return Ok(Line::Bytes(line));
        }
        // A full buffer may still end in the CR of a CRLF terminator; anything else is already too long.
        if line.len() == MAX_LINE + 1 && line.last() != Some(&b'\r') {
            return Ok(Line::TooLong);
        }
    }
}

/// A JSON-RPC id as the child wrote it; only positive integers can name a gateway request
/// (providers.md §4.3).
#[derive(Clone, Debug, PartialEq)]
pub enum WireId {
    Number(i128),
    Null,
    /// A string or another non-integer id.
    Other(Value),
}

/// One well-formed message from the child (providers.md §4.2).
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Request { id: Value, method: String },
    Notification,
    Result { id: WireId, result: Value },
    Error { id: WireId, code: i128, data: Option<Value> },
}

/// Why a line or a message is a protocol violation (providers.md §4.2, §4.3, §12.1); kept for the debug
/// log, never for the wire or a record. Holds no text of the line (an upstream may write anything): the
/// decoder's kind and position at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error("the line is not {0}")]
    NotJson(DecodeError),
    #[error("the message is not a JSON-RPC 2.0 request, notification or response")]
    NotAnEnvelope,
    #[error("the line is longer than 8,388,608 bytes")]
    TooLong,
    #[error("a response to an id the gateway never issued, or an error with a null id")]
    UnissuedId,
    #[error("a response that does not answer the request")]
    NotTheAnswer,
    #[error("more than 64 replies to the server's requests wait for the writer")]
    RepliesFull,
}

/// Classify one line as a message shape, or a violation.
pub fn parse_message(line: &[u8]) -> Result<Message, Violation> {
    let value = json::decode(line, Limits::UPSTREAM_MESSAGE).map_err(Violation::NotJson)?;
    let Value::Object(map) = value else {
        return Err(Violation::NotAnEnvelope);
    };
    envelope(map)
}

fn envelope(mut map: Map<String, Value>) -> Result<Message, Violation> {
    if !matches!(map.remove("jsonrpc"), Some(Value::String(version)) if version == "2.0") {
        return Err(Violation::NotAnEnvelope);
    }
    let id = map.remove("id");
    let method = map.remove("method");
    let params = map.remove("params");
    let result = map.remove("result");
    let error = map.remove("error");
    if !map.is_empty() {
        return Err(Violation::NotAnEnvelope);
    }
    if let Some(params) = &params {
        if !matches!(params, Value::Object(_) | Value::Array(_)) {
            return Err(Violation::NotAnEnvelope);
        }
    }
    match (id, method, result, error) {
        (id, Some(Value::String(method)), None, None) => match id {
            None => Ok(Message::Notification),
            Some(id) if id.is_string() || as_integer(&id).is_some() => Ok(Message::Request { id, method }),
            Some(_) => Err(Violation::NotAnEnvelope),
        },
        (Some(id), None, Some(result), None) if params.is_none() => {
            Ok(Message::Result { id: wire_id(id), result })
        }
        (Some(id), None, None, Some(Value::Object(mut error))) if params.is_none() => {
            let code = error.remove("code").as_ref().and_then(as_integer);
            let message = error.remove("message");
            let data = error.remove("data");
            match (code, message) {
                (Some(code), Some(Value::String(_))) if error.is_empty() => {
                    Ok(Message::Error { id: wire_id(id), code, data })
                }
                _ => Err(Violation::NotAnEnvelope),
            }
        }
        _ => Err(Violation::NotAnEnvelope),
    }
}

fn wire_id(id: Value) -> WireId {
    match (as_integer(&id), id) {
        (Some(n), _) => WireId::Number(n),
        (None, Value::Null) => WireId::Null,
        (None, other) => WireId::Other(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::DecodeErrorKind;

    async fn lines(input: &[u8]) -> Vec<Line> {
        let mut reader = tokio::io::BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut reader).await.unwrap();
            let end = line == Line::Eof || line == Line::TooLong;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn line_splitting_table() {
        let b = |s: &str| Line::Bytes(s.as_bytes().to_vec());
        let cases: Vec<(&[u8], Vec<Line>)> = vec![
            (b"a\nbc\n", vec![b("a"), b("bc"), Line::Eof]),
            (b"a\r\n\r\n\n b\n", vec![b("a"), b(" b"), Line::Eof]),
            (b"a\r\r\n", vec![b("a\r"), Line::Eof]),
            (b"tail without lf", vec![Line::Eof]),
            (b"", vec![Line::Eof]),
        ];
        for (input, expected) in cases {
            assert_eq!(lines(input).await, expected, "{:?}", String::from_utf8_lossy(input));
        }
    }

    #[tokio::test]
    async fn the_line_bound_is_exact() {
        let exact = [vec![b'x'; MAX_LINE], b"\n".to_vec()].concat();
        assert_eq!(lines(&exact).await, vec![Line::Bytes(vec![b'x'; MAX_LINE]), Line::Eof]);
        let exact_cr = [vec![b'x'; MAX_LINE], b"\r\n".to_vec()].concat();
        assert_eq!(lines(&exact_cr).await, vec![Line::Bytes(vec![b'x'; MAX_LINE]), Line::Eof]);
        let over = [vec![b'x'; MAX_LINE + 1], b"\n".to_vec()].concat();
        assert_eq!(lines(&over).await, vec![Line::TooLong]);
        let unterminated = vec![b'x'; MAX_LINE + 2];
        assert_eq!(lines(&unterminated).await, vec![Line::TooLong]);
    }

    #[test]
    fn envelope_table() {
        use Violation::*;
        let ok: &[(&str, Message)] = &[
            (
                r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
                Message::Result { id: WireId::Number(3), result: Value::Object(Map::new()) },
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#,
                Message::Request { id: Value::String("x".into()), method: "ping".into() },
            ),
            (r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#, Message::Notification),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}"#,
                Message::Error { id: WireId::Null, code: -32600, data: None },
            ),
        ];
        for (line, expected) in ok {
            assert_eq!(parse_message(line.as_bytes()).as_ref(), Ok(expected), "{line}");
        }
        let bad: &[(&str, Violation)] = &[
            (
                "hello world",
                NotJson(DecodeError { kind: DecodeErrorKind::Syntax, offset: 0, line: 1, column: 1 }),
            ),
            (
                r#"{"a":1,"a":2}"#,
                NotJson(DecodeError { kind: DecodeErrorKind::DuplicateKey, offset: 7, line: 1, column: 8 }),
            ),
            ("[]", NotAnEnvelope),
            (r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#, NotAnEnvelope),
            (r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#, NotAnEnvelope),
            (r#"{"jsonrpc":"1.0","id":1,"result":{}}"#, NotAnEnvelope),
            (r#"{"id":1,"result":{}}"#, NotAnEnvelope),
            (r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}"#, NotAnEnvelope),
            (r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#, NotAnEnvelope),
            (r#"{"jsonrpc":"2.0","id":1}"#, NotAnEnvelope),
            (r#"{"jsonrpc":"2.0","id":1,"result":{},"extra":0}"#, NotAnEnvelope),
            (r#"{"jsonrpc":"2.0","method":7}"#, NotAnEnvelope),
        ];
        for (line, expected) in bad {
            assert_eq!(parse_message(line.as_bytes()), Err(*expected), "{line}");
        }
    }
}

#[cfg(test)]
#[path = "framing_props.rs"]
mod props;
