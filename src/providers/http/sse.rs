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
}

impl SseParser {
    /// Feed one chunk; every dispatched `message` payload is appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), SseError> {
        self.total = self.total.saturating_add(chunk.len());
        if self.total > MAX_EXCHANGE {
            return Err(SseError::ExchangeTooLarge);
        }
        let mut rest = chunk;
        if !self.started && !rest.is_empty() {
            self.started = true;
            // One leading byte order mark is not part of the stream.
            if let Some(stripped) = rest.strip_prefix("\u{feff}".as_bytes()) {
                rest = stripped;
            }
        }
        for &byte in rest {
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
