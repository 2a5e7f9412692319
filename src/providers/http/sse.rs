//! The event-stream reader of one exchange (providers.md §5.3, HTML event-stream rules): lines end in LF,
//! CRLF or CR; `:` lines are comments; `data:` fields accumulate joined with LF until a blank line
//! dispatches; only events whose type is absent or `message` carry a JSON-RPC message; `id:`, `retry:` and
//! other types are ignored and the stream is never resumed.
//!
//! This file is pure and incremental (chunks in, payloads out) and owns the two bounds: a line longer than
//! 8,388,608 bytes and more than 16,777,216 bytes read on one exchange are protocol violations. It does
//! not parse payloads as JSON-RPC or decide what they mean (`exchange.rs`).

/// SSE line limit, terminator excluded (providers.md §15).
pub const MAX_LINE: usize = 8_388_608;
/// Bytes read on one exchange (providers.md §15).
pub const MAX_EXCHANGE: usize = 16_777_216;

/// A bound was exceeded (providers.md §5.3): the call fails `mcp_protocol_error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseError {
    LineTooLong,
    ExchangeTooLarge,
}

/// The incremental parser.
#[derive(Default)]
pub struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    /// The `event` field of the event being built; `None` is the default type `message`.
    kind: Option<Vec<u8>>,
    after_cr: bool,
    total: usize,
    started: bool,
    /// Bytes of a leading byte order mark matched so far: the mark may arrive split across chunks.
    bom: usize,
}

/// The UTF-8 byte order mark, which a stream may start with (HTML event-stream rules).
const BOM: &[u8] = "\u{feff}".as_bytes();

impl SseParser {
    /// Feed one chunk; every dispatched `message` payload is appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), SseError> {
        self.total = self.total.saturating_add(chunk.len());
        if self.total > MAX_EXCHANGE {
            return Err(SseError::ExchangeTooLarge);
        }
        let mut rest = chunk;
        // One leading byte order mark is not part of the stream, wherever the chunks split it.
        while !self.started {
            let Some((&byte, tail)) = rest.split_first() else { return Ok(()) };
            if BOM.get(self.bom) == Some(&byte) {
                self.bom += 1;
                self.started = self.bom == BOM.len();
                rest = tail;
            } else {
                // Not a mark after all: the bytes held back are the start of the first line.
                self.started = true;
                self.bytes(BOM.get(..self.bom).unwrap_or_default(), out)?;
            }
        }
        self.bytes(rest, out)
    }

    /// Feeds stream bytes (the leading mark already removed).
    fn bytes(&mut self, bytes: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), SseError> {
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.line_done(&line, out);
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() == MAX_LINE {
                        return Err(SseError::LineTooLong);
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(())
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<Vec<u8>>) {
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line.first() == Some(&b':') {
            return;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_data = true;
            }
            b"event" => self.kind = Some(value.to_vec()),
            // `id`, `retry` and unknown fields are ignored: the stream is never resumed (providers.md §5.3).
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Vec<u8>>) {
        let kind = self.kind.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        if matches!(kind.as_deref(), None | Some(b"message")) {
            out.push(data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Result<Vec<String>, SseError> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, &mut out)?;
        }
        Ok(out.into_iter().map(|p| String::from_utf8(p).unwrap()).collect())
    }

    /// A leading byte order mark split across chunks is removed like a whole one (found by the generated
    /// inputs of `sse_props.rs`, docs/reliability.md): without it, the first line's field is `\u{feff}data`
    /// and the first message is lost.
    #[test]
    fn a_byte_order_mark_split_across_chunks_is_removed() {
        let rows: &[(&[&[u8]], &[&str])] = &[
            (&[b"\xef", b"\xbb\xbfdata: a\n\n"], &["a"]),
            (&[b"\xef\xbb", b"\xbf", b"data: b\n\n"], &["b"]),
            (&[b"", b"\xef", b"", b"\xbb", b"\xbfdata: c\n\n"], &["c"]),
            // Held-back bytes that turn out not to be a mark stay in the line.
            (&[b"\xef", b"data: d\n\ndata: e\n\n"], &["e"]),
        ];
        for (chunks, expected) in rows {
            assert_eq!(parse(chunks), Ok(expected.iter().map(|s| s.to_string()).collect()), "{chunks:?}");
        }
    }

    #[test]
    fn event_stream_vectors() {
        let rows: &[(&[&[u8]], &[&str])] = &[
            (&[b"data: {\"a\":1}\n\n"], &["{\"a\":1}"]),
            (&[b"data: a\r\ndata: b\r\n\r\n"], &["a\nb"]),
            (&[b"data: a\rdata:b\r\r"], &["a\nb"]),
            (&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"], &["a\nb"]),
            (&[b": comment\ndata: x\n\n"], &["x"]),
            (&[b"event: message\ndata: x\n\n"], &["x"]),
            (&[b"event: other\ndata: x\n\nevent: message\ndata: y\n\n"], &["y"]),
            (&[b"id: 7\nretry: 10\ndata: x\n\n"], &["x"]),
            (&[b"data\n\n"], &[""]),
            (&[b"data:  two spaces\n\n"], &[" two spaces"]),
            (&[b"event: x\n\ndata: y\n\n"], &["y"]),
            (&[b"\n\ndata: unterminated"], &[]),
            (&["\u{feff}data: bom\n\n".as_bytes()], &["bom"]),
            (&[b"da", b"ta: split", b"\n", b"\n"], &["split"]),
        ];
        for (chunks, expected) in rows {
            assert_eq!(parse(chunks).unwrap(), *expected, "{chunks:?}");
        }
    }

    #[test]
    fn bounds_are_exact() {
        let fits = vec![b'x'; MAX_LINE];
        assert!(parse(&[&fits, b"\n"]).is_ok());
        let over = vec![b'x'; MAX_LINE + 1];
        assert_eq!(parse(&[&over]), Err(SseError::LineTooLong));
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        let half = vec![b'\n'; MAX_EXCHANGE / 2];
        parser.feed(&half, &mut out).unwrap();
        parser.feed(&half, &mut out).unwrap();
        assert_eq!(parser.feed(b"\n", &mut out), Err(SseError::ExchangeTooLarge));
    }
}

#[cfg(test)]
#[path = "sse_props.rs"]
mod props;
