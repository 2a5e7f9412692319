//! Reading a committed `tools/call` event stream off a raw socket (execution.md §4.1, §9), and the exact
//! bodies tests compare it with.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// A committed stream as read off the wire: the head and each chunk with the instant it was complete.
pub struct Stream {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<(Instant, Vec<u8>)>,
    /// The chunked terminator arrived.
    pub ended: bool,
}

impl Stream {
    pub fn body(&self) -> Vec<u8> {
        self.chunks.iter().flat_map(|(_, c)| c.clone()).collect()
    }
}

/// Reads bytes from `stream` into `buf` until `buf` holds at least `n` bytes.
pub fn fill(stream: &mut impl Read, buf: &mut Vec<u8>, n: usize) -> std::io::Result<()> {
    let mut chunk = [0u8; 8192];
    while buf.len() < n {
        let got = stream.read(&mut chunk)?;
        if got == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..got]);
    }
    Ok(())
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Reads one response whose body is chunked, chunk by chunk, until the terminator (or EOF).
pub fn read_stream(stream: &mut impl Read) -> Stream {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(p) = find(&buf, b"\r\n\r\n") {
            break p;
        }
        let len = buf.len() + 1;
        fill(stream, &mut buf, len).expect("response head");
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    buf.drain(..head_end + 4);
    let mut chunks = Vec::new();
    // A refusal instead of a stream (429, 503) has a `content-length` body: it is one "chunk".
    let length =
        headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse::<usize>().ok());
    if let Some(length) = length {
        let ended = fill(stream, &mut buf, length).is_ok();
        chunks.push((Instant::now(), buf[..length.min(buf.len())].to_vec()));
        return Stream { status, headers, chunks, ended };
    }
    loop {
        let line_end = loop {
            if let Some(p) = find(&buf, b"\r\n") {
                break p;
            }
            let len = buf.len() + 1;
            if fill(stream, &mut buf, len).is_err() {
                return Stream { status, headers, chunks, ended: false };
            }
        };
        let size = usize::from_str_radix(std::str::from_utf8(&buf[..line_end]).unwrap(), 16).unwrap();
        buf.drain(..line_end + 2);
        if fill(stream, &mut buf, size + 2).is_err() {
            return Stream { status, headers, chunks, ended: false };
        }
        assert_eq!(&buf[size..size + 2], b"\r\n", "chunk ends with CRLF");
        if size == 0 {
            return Stream { status, headers, chunks, ended: true };
        }
        chunks.push((Instant::now(), buf[..size].to_vec()));
        buf.drain(..size + 2);
    }
}

/// Sends `request` on a fresh connection to `addr` and reads once, as a client already waiting in `read`
/// does: what the gateway's first write of the response carried (execution.md §4.5). Returns the
/// connection (for what follows) and the bytes, with the time from the request to the read.
pub fn first_read(addr: SocketAddr, request: &[u8]) -> (TcpStream, Vec<u8>, Duration) {
    let mut connection = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).expect("connect");
    connection.set_read_timeout(Some(Duration::from_secs(20))).expect("read timeout");
    let sent = Instant::now();
    connection.write_all(request).expect("request");
    let mut buf = vec![0u8; 256 * 1024];
    let got = connection.read(&mut buf).expect("first read");
    buf.truncate(got);
    (connection, buf, sent.elapsed())
}

/// The response in `bytes` as [`read_stream`] reads it, and its body bytes as they were on the wire.
pub fn parse_stream(bytes: &[u8]) -> (Stream, Vec<u8>) {
    let stream = read_stream(&mut std::io::Cursor::new(bytes));
    let body = find(bytes, b"\r\n\r\n").map_or_else(Vec::new, |end| bytes[end + 4..].to_vec());
    (stream, body)
}

/// `pieces` in chunked coding, one chunk each, and the terminator when `end`.
pub fn chunked(pieces: &[&[u8]], end: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in pieces {
        out.extend_from_slice(format!("{:X}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    if end {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    out
}

pub fn meta() -> String {
    format!(
        r#""_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"ptc-gateway","version":"{}"}}}}"#,
        env!("CARGO_PKG_VERSION")
    )
}

/// The de-chunked body of a stream whose message carries `result` (without `_meta`) for id `id`.
pub fn sse(id: u64, result_members: &str) -> String {
    format!(": accepted\n\nevent: message\ndata: {{\"id\":{id},\"jsonrpc\":\"2.0\",\"result\":{{{},{result_members}}}}}\n\n", meta())
}

pub fn tool_error(id: u64, texts: &[&str]) -> String {
    let blocks: Vec<String> = texts
        .iter()
        .map(|t| format!(r#"{{"text":{},"type":"text"}}"#, serde_json::to_string(t).unwrap()))
        .collect();
    sse(id, &format!(r#""content":[{}],"isError":true,"resultType":"complete""#, blocks.join(",")))
}

pub fn assert_committed_head(s: &Stream) {
    assert_eq!(s.status, 200);
    let mut names: Vec<(&str, &str)> =
        s.headers.iter().filter(|(n, _)| n != "date").map(|(n, v)| (n.as_str(), v.as_str())).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            ("cache-control", "no-store"),
            ("content-type", "text/event-stream; charset=utf-8"),
            ("mcp-protocol-version", "2026-07-28"),
            ("transfer-encoding", "chunked"),
            ("x-accel-buffering", "no"),
        ]
    );
}

/// "SSE ok": the stream whose message is the success result carrying `value` (deterministic JSON).
pub fn success(id: u64, value: &str) -> String {
    sse(
        id,
        &format!(
            r#""content":[{{"text":{},"type":"text"}}],"isError":false,"resultType":"complete","structuredContent":{value}"#,
            serde_json::to_string(value).unwrap()
        ),
    )
}

/// "SSE input": the stream whose message is the invalid-input tool error.
pub fn invalid_input(id: u64) -> String {
    tool_error(id, &["Tool input did not satisfy its contract"])
}
