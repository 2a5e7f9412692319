//! Generated inputs for the event-stream reader (providers.md §5.3; issue 18, docs/reliability.md):
//! streams of `data:`, `event:`, `id:`, comment and blank lines with LF, CRLF and CR terminators, an
//! optional leading BOM, and arbitrary bytes, fed in random pieces.
//!
//! Properties: no panic; the payloads do not depend on how the stream is split (a CRLF split between
//! two chunks is one terminator); and they equal those of a direct reading of the HTML event-stream
//! rules over the whole stream.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use super::*;
use crate::support::prop_support::{check, cuts, interesting_byte, pieces};

/// The HTML event-stream rules over a whole stream: the `message` payloads dispatched.
fn model(stream: &[u8]) -> Vec<Vec<u8>> {
    let stream = stream.strip_prefix("\u{feff}".as_bytes()).unwrap_or(stream);
    let mut lines = Vec::new();
    let mut line = Vec::new();
    let mut i = 0;
    while let Some(&b) = stream.get(i) {
        match b {
            b'\r' | b'\n' => {
                lines.push(std::mem::take(&mut line));
                if b == b'\r' && stream.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            _ => line.push(b),
        }
        i += 1;
    }
    let (mut out, mut data, mut has_data, mut kind) = (Vec::new(), Vec::new(), false, None::<Vec<u8>>);
    for line in lines {
        if line.is_empty() {
            if has_data && matches!(kind.as_deref(), None | Some(b"message")) {
                out.push(data.clone());
            }
            (data, has_data, kind) = (Vec::new(), false, None);
            continue;
        }
        if line.first() == Some(&b':') {
            continue;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(at) => (&line[..at], line[at + 1..].strip_prefix(b" ").unwrap_or(&line[at + 1..])),
            None => (&line[..], &b""[..]),
        };
        match field {
            b"data" => {
                if has_data {
                    data.push(b'\n');
                }
                data.extend_from_slice(value);
                has_data = true;
            }
            b"event" => kind = Some(value.to_vec()),
            _ => {}
        }
    }
    out
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    let field = select(vec![
        "data:",
        "data: ",
        "data",
        "event: message",
        "event: other",
        "id: 1",
        ": c",
        "retry: 5",
        "",
    ]);
    let eol = select(vec!["\n", "\r\n", "\r"]);
    let line = (field, vec(prop_oneof![4 => "[ -~]".prop_map(String::into_bytes), 1 => interesting_byte().prop_map(|b| vec![b])], 0..6), eol)
        .prop_map(|(f, v, e)| [f.as_bytes(), &v.concat(), e.as_bytes()].concat());
    (any::<bool>(), vec(line, 0..12)).prop_map(|(bom, lines)| {
        let mut out = if bom { "\u{feff}".as_bytes().to_vec() } else { Vec::new() };
        out.extend(lines.concat());
        out
    })
}

#[test]
fn prop_sse_reader() {
    check("sse_reader", 4096, (stream(), vec(any::<usize>(), 0..6)), |(bytes, raw)| {
        let mut parser = SseParser::default();
        let mut got = Vec::new();
        for piece in pieces(&bytes, &cuts(bytes.len(), &raw)) {
            prop_assert_eq!(parser.feed(piece, &mut got), Ok(()));
        }
        prop_assert_eq!(got, model(&bytes), "{:?}", String::from_utf8_lossy(&bytes));
        Ok(())
    });
}
