//! The HTTP/1.1 exchange of `ptc call`: one request on one loopback connection (`Connection: close`),
//! the whole response read to the end of the stream, de-chunked.
//!
//! Owns the request bytes, the 5 s connection bound (lifecycle.md §1.2) and the response framing. Does
//! not interpret bodies (`super::response`). No read timeout: a call is bounded by the gateway's run
//! deadline, and its heartbeats keep a slow call's stream alive (execution.md §5.1).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::args::Endpoint;
use super::failure::{Failure, Step};

/// lifecycle.md §1.2.
const CONNECT_BOUND: Duration = Duration::from_secs(5);
/// A JSON response is at most 4,194,304 bytes (http-mcp.md §10.1); the stream adds framing and comments.
/// Twice that bounds what the client keeps in memory.
const MAX_RESPONSE_BYTES: u64 = 8_388_608 + 65_536;

/// A response: status, lowercased header names with trimmed values, and the de-chunked body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// POSTs `body` to `/mcp` with `headers` (name, value) after the fixed ones.
pub fn post(
    endpoint: &Endpoint,
    token: &str,
    step: Step,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<Response, Failure> {
    let mut stream = TcpStream::connect_timeout(&endpoint.addr, CONNECT_BOUND)
        .map_err(|e| Failure::Connect { authority: endpoint.authority.clone(), error: e.kind() })?;
    let io = |e: std::io::Error| Failure::Io { step, error: e.kind() };
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {}\r\n",
        endpoint.authority,
        step.method()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n", body.len()));
    // The token goes straight to the socket; it is never part of a string that could reach an error.
    let mut request = head.into_bytes();
    request.extend_from_slice(b"Authorization: Bearer ");
    request.extend_from_slice(token.as_bytes());
    request.extend_from_slice(b"\r\n\r\n");
    request.extend_from_slice(body);
    stream.write_all(&request).map_err(io)?;
    let mut raw = Vec::new();
    (&mut stream).take(MAX_RESPONSE_BYTES + 1).read_to_end(&mut raw).map_err(io)?;
    if raw.len() as u64 > MAX_RESPONSE_BYTES {
        return Err(Failure::Malformed { step, what: "response too large" });
    }
    parse(&raw).ok_or(Failure::Malformed { step, what: "unreadable HTTP response" })
}

/// Parses a complete response (the connection was closed after it).
fn parse(raw: &[u8]) -> Option<Response> {
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(raw.get(..head_end)?).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let mut parts = status_line.splitn(3, ' ');
    if !parts.next()?.starts_with("HTTP/1.") {
        return None;
    }
    let status: u16 = parts.next()?.parse().ok()?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let rest = raw.get(head_end + 4..)?;
    let response = Response { status, headers, body: Vec::new() };
    let body = if response.header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        dechunk(rest)?
    } else if let Some(length) = response.header("content-length") {
        rest.get(..length.parse::<usize>().ok()?)?.to_vec()
    } else {
        rest.to_vec()
    };
    Some(Response { body, ..response })
}

/// RFC 9112 §7.1 chunked coding; extensions ignored, trailers skipped. `None` on a framing error or a
/// missing terminator (the stream ended early).
fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(rest.get(..line_end)?).ok()?;
        let size_text = size_text.split(';').next()?.trim();
        let size = usize::from_str_radix(size_text, 16).ok()?;
        rest = rest.get(line_end + 2..)?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        if rest.get(size..size + 2)? != b"\r\n" {
            return None;
        }
        rest = rest.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_vectors() {
        type Parsed<'a> = Option<(u16, &'a [u8])>;
        let cases: &[(&[u8], Parsed)] = &[
            (b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", Some((200, b"{}"))),
            (b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 3\r\n\r\nabcdef", Some((401, b"abc"))),
            (
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nc\r\n: accepted\n\n\r\n3;x=y\r\nabc\r\n0\r\n\r\n",
                Some((200, b": accepted\n\nabc")),
            ),
            (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nc\r\n: accepted\n\n\r\n", None),
            (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", None),
            (b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nshort", None),
            (b"HTTP/1.1 200 OK\r\n", None),
            (b"SSH-2.0\r\n\r\n", None),
            (b"HTTP/1.0 200 OK\r\nconnection: close\r\n\r\nto the end", Some((200, b"to the end"))),
        ];
        for (raw, expected) in cases {
            let got = parse(raw).map(|r| (r.status, r.body));
            assert_eq!(
                got.as_ref().map(|(s, b)| (*s, b.as_slice())),
                *expected,
                "{:?}",
                String::from_utf8_lossy(raw)
            );
        }
    }
}
