//! Test vectors of the head scanner: byte inputs to pass or refusal (http-mcp.md §2.4, §12.4 rows 26–37).

use super::*;

const BAD: EmptyBodyStatus = EmptyBodyStatus::BadRequest;
const LONG: EmptyBodyStatus = EmptyBodyStatus::UriTooLong;
const LARGE: EmptyBodyStatus = EmptyBodyStatus::HeaderFieldsTooLarge;

/// The absolute offset and status of the first refusal, if any.
type Outcome = Option<(usize, EmptyBodyStatus)>;

/// Feeds `pieces` in order; the absolute offset and status of the first refusal, if any.
fn run(pieces: &[&[u8]]) -> Outcome {
    let mut scanner = HeadScanner::default();
    let mut offset = 0;
    for piece in pieces {
        if let Scan::Refuse { at, status } = scanner.scan(piece) {
            return Some((offset + at, status));
        }
        offset += piece.len();
    }
    None
}

fn whole(input: &[u8]) -> Outcome {
    run(&[input])
}

/// The outcome must not depend on how the socket splits the bytes: at every single boundary, and one
/// byte at a time.
fn assert_split_invariant(input: &[u8]) {
    let expected = whole(input);
    for cut in 0..=input.len() {
        let (a, b) = input.split_at(cut);
        assert_eq!(run(&[a, b]), expected, "cut at {cut} of {:?}", String::from_utf8_lossy(input));
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(run(&bytes), expected, "byte by byte");
}

fn request_line(xs: usize) -> Vec<u8> {
    let mut line = b"GET /".to_vec();
    line.extend(std::iter::repeat_n(b'x', xs));
    line.extend_from_slice(b" HTTP/1.1\r\nHost: h\r\n\r\n");
    line
}

fn field_line(xs: usize) -> Vec<u8> {
    let mut head = b"GET / HTTP/1.1\r\nHost: h\r\nX-Line: ".to_vec();
    head.extend(std::iter::repeat_n(b'x', xs));
    head.extend_from_slice(b"\r\n\r\n");
    head
}

fn many_fields(n: usize) -> Vec<u8> {
    let mut head = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..n {
        head.extend_from_slice(format!("X-H{i}: 1\r\n").as_bytes());
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// Where the 65th field line starts in `many_fields(65)`.
fn sixty_fifth(head: &[u8]) -> usize {
    let needle = b"X-H64:";
    head.windows(needle.len()).position(|w| w == needle).unwrap()
}

#[test]
fn exact_boundaries() {
    // Row 26/27: "GET /" + 8,176 x + " HTTP/1.1" + CRLF is 8,192 bytes; the 8,193rd byte is refused.
    assert_eq!(whole(&request_line(8_176)), None);
    assert_eq!(whole(&request_line(8_177)), Some((8_192, LONG)));
    // Row 28/29: the field line is 16 + 8,182 + ... : refused at the 8,193rd byte of that line.
    let start = b"GET / HTTP/1.1\r\nHost: h\r\n".len();
    assert_eq!(whole(&field_line(8_182)), None);
    assert_eq!(whole(&field_line(8_183)), Some((start + 8_192, LARGE)));
    // Row 30/31: 64 field lines pass; the first byte of the 65th is refused.
    assert_eq!(whole(&many_fields(64)), None);
    let head = many_fields(65);
    assert_eq!(whole(&head), Some((sixty_fifth(&head), LARGE)));
}

#[test]
fn heads_and_their_outcome() {
    // (input, None = passes, Some(offset of the refused byte, status)).
    let cases: &[(&[u8], Outcome)] = &[
        (b"GET / HTTP/1.1\r\n\r\n", None),
        (b"GET / HTTP/1.0\r\n\r\n", None),
        (b"\r\n\r\nGET / HTTP/1.1\r\n\r\n", None),
        (b"M-SEARCH * HTTP/1.1\r\n\r\n", None),
        (b"GET /a?b=%20&c=\"d\" HTTP/1.1\r\nA: \t v\x80\xff \r\n\r\n", None),
        // Syntax (400).
        (b"G(T / HTTP/1.1\r\n\r\n", Some((1, BAD))),
        (b" GET / HTTP/1.1\r\n\r\n", Some((0, BAD))),
        (b"GET  / HTTP/1.1\r\n\r\n", Some((4, BAD))),
        (b"GET /\x7f HTTP/1.1\r\n\r\n", Some((5, BAD))),
        (b"GET /\xc3\xa9 HTTP/1.1\r\n\r\n", Some((5, BAD))),
        (b"GET / HTTP/2.0\r\n\r\n", Some((11, BAD))),
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", Some((11, BAD))),
        (b"GET / HTTP/1.2\r\n\r\n", Some((13, BAD))),
        (b"GET / HTTP/1.10\r\n\r\n", Some((14, BAD))),
        (b"GET / http/1.1\r\n\r\n", Some((6, BAD))),
        (b"GET /\r\n\r\n", Some((5, BAD))),
        (b"GET / HTTP/1.1\n\r\n", Some((14, BAD))),
        (b"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", Some((22, BAD))),
        (b"GET / HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n", Some((22, BAD))),
        (b"GET / HTTP/1.1\r\nA : b\r\n\r\n", Some((17, BAD))),
        (b"GET / HTTP/1.1\r\nA\t: b\r\n\r\n", Some((17, BAD))),
        (b"GET / HTTP/1.1\r\nA(B: b\r\n\r\n", Some((17, BAD))),
        (b"GET / HTTP/1.1\r\n: b\r\n\r\n", Some((16, BAD))),
        (b"GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", Some((21, BAD))),
        (b"GET / HTTP/1.1\r\nA: b\x00\r\n\r\n", Some((20, BAD))),
        (b"GET / HTTP/1.1\r\nA: b\nB: c\r\n\r\n", Some((20, BAD))),
        (b"GET / HTTP/1.1\r\n\rX", Some((17, BAD))),
        // Framing (400).
        (b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", Some((65, BAD))),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", Some((65, BAD))),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", Some((36, BAD))),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked;q=1\r\n\r\n", Some((43, BAD))),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunk\r\n\r\n", Some((42, BAD))),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", Some((62, BAD))),
        (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", Some((46, BAD))),
        (b"POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n", Some((33, BAD))),
        (b"POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", Some((35, BAD))),
        (b"POST / HTTP/1.1\r\nContent-Length: 1,1\r\n\r\n", Some((34, BAD))),
        (b"POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", Some((33, BAD))),
        (b"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", Some((52, BAD))),
        (b"POST / HTTP/1.1\r\ncontent-length: 1\r\nContent-Length: 1\r\n\r\n", Some((50, BAD))),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\n\r\n0\r\n\r\n", None),
        (b"POST / HTTP/1.1\r\nContent-Length:\t 007 \r\n\r\n1234567", None),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(input, expected)| whole(input) != *expected)
        .map(|(input, expected)| {
            format!("{:?}: {:?} != {expected:?}", String::from_utf8_lossy(input), whole(input))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn later_heads_are_found_after_each_body() {
    let cases: &[(&[u8], Outcome)] = &[
        // Content-Length body, then a second head whose version is refused; body bytes are not a head.
        (b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n PRI\rGET / HTTP/2.0\r\n", Some((54, BAD))),
        // Chunked body with an extension and trailers, then a folded header in the next head.
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;a=b\r\n\x00\r\n\r\n0\r\nT: v\r\n\r\nGET / HTTP/1.1\r\n x\r\n",
            Some((86, BAD)),
        ),
        // A blank line between keep-alive requests is skipped.
        (b"GET / HTTP/1.1\r\n\r\n\r\nGET / HTTP/1.1\r\n\r\n", None),
        // Upper-case hex chunk sizes.
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n", None),
        // A framing field in any case frames the body, also when its line arrives whole (the line-at-a-time
        // check leaves both fields to the machine): the body's bytes are skipped, the next head is read.
        (b"POST / HTTP/1.1\r\nA: b\r\nCONTENT-LENGTH: 5\r\nC: d\r\n\r\n PRI\rGET / HTTP/2.0\r\n", Some((66, BAD))),
        (
            b"POST / HTTP/1.1\r\ntransfer-ENCODING: chunked\r\n\r\n5\r\nGET /\r\n0\r\n\r\nGET / HTTP/2.0\r\n",
            Some((73, BAD)),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(whole(input), *expected, "{:?}", String::from_utf8_lossy(input));
        assert_split_invariant(input);
    }
}

#[test]
fn framing_it_cannot_follow_turns_inspection_off() {
    // A malformed chunk line: hyper answers it; later bytes are not inspected (not even a bad "head").
    let cases: &[&[u8]] = &[
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nGET / HTTP/2.0\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\nGET / HTTP/2.0\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n",
    ];
    for input in cases {
        assert_eq!(whole(input), None, "{:?}", String::from_utf8_lossy(input));
    }
}

#[test]
fn every_split_gives_the_same_outcome() {
    let inputs: Vec<Vec<u8>> = vec![
        b"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nabGET / HTTP/1.1\r\nA : b\r\n\r\n".to_vec(),
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec(),
        b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx".to_vec(),
        b"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n".to_vec(),
        request_line(8_177),
        field_line(8_183),
        many_fields(65),
    ];
    for input in &inputs {
        assert_split_invariant(input);
    }
    // The boundaries that pass, split at a few places only (each is 8 KiB long).
    for input in [request_line(8_176), field_line(8_182), many_fields(64)] {
        for cut in [1, 5, 100, 8_190, 8_191, 8_192, 8_193, input.len() - 1] {
            let (a, b) = input.split_at(cut.min(input.len()));
            assert_eq!(run(&[a, b]), None, "cut at {cut}");
        }
    }
}

/// The byte classes used by the runs, over every byte: `tchar` of RFC 9110 §5.6.2 and the field-value
/// bytes of RFC 9110 §5.5, as their grammar spells them.
#[test]
fn byte_classes_are_the_grammar() {
    for b in 0..=u8::MAX {
        let tchar = b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        let value = b == b'\t' || (b' '..=b'~').contains(&b) || b >= 0x80;
        assert_eq!((is_tchar(b), is_value_byte(b)), (tchar, value), "{b:#04x}");
    }
}
