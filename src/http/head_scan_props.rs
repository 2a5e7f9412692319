//! Generated inputs for the head scanner (http-mcp.md §2.4; issue 18, docs/reliability.md): streams of
//! pipelined requests with `Content-Length` and chunked bodies, some lines near and past the 8,192-byte
//! bound and some heads past 64 fields, then mutated byte by byte and fed in random pieces.
//!
//! Properties: no panic; a stream of well-formed requests within the bounds passes whole; the refusal
//! (offset and status) does not depend on how the socket splits the bytes; once refused, a scanner refuses
//! every later byte at once.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use super::*;
use crate::support::prop_support::{check, cuts, mutated, pieces};

/// A body and the framing fields that announce it.
#[derive(Clone, Debug)]
enum Framing {
    None,
    Length(Vec<u8>),
    Chunked(Vec<Vec<u8>>),
}

fn framing() -> impl Strategy<Value = Framing> {
    prop_oneof![
        Just(Framing::None),
        vec(any::<u8>(), 0..80).prop_map(Framing::Length),
        vec(vec(any::<u8>(), 1..40), 0..4).prop_map(Framing::Chunked),
    ]
}

/// One well-formed request within the bounds (field names that are neither framing field; chunked
/// bodies only in HTTP/1.1).
fn request() -> impl Strategy<Value = Vec<u8>> {
    let method = prop_oneof![select(vec!["POST", "GET", "PUT"]).prop_map(str::to_owned), "[A-Z]{1,8}"];
    let target = prop_oneof![4 => Just("/mcp".to_owned()), 4 => "/[!-~]{0,40}", 1 => (8000usize..8171).prop_map(|n| format!("/{}", "t".repeat(n)))];
    let field = (
        "[A-Za-z][A-Za-z0-9]{0,11}",
        prop_oneof![8 => "[ -~]{0,40}", 1 => (8000usize..8151).prop_map(|n| "v".repeat(n))],
    );
    (method, target, select(vec!["0", "1"]), vec(field, 0..8), framing()).prop_map(
        |(method, target, minor, fields, framing)| {
            // RFC 9112 §6.1: a chunked HTTP/1.0 request is faulty framing, refused on purpose.
            let minor = if matches!(framing, Framing::Chunked(_)) { "1" } else { minor };
            let mut out = format!("{method} {target} HTTP/1.{minor}\r\n").into_bytes();
            for (name, value) in fields {
                out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
            }
            match framing {
                Framing::None => out.extend_from_slice(b"\r\n"),
                Framing::Length(body) => {
                    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                    out.extend_from_slice(&body);
                }
                Framing::Chunked(chunks) => {
                    out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                    for chunk in chunks {
                        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                        out.extend_from_slice(&chunk);
                        out.extend_from_slice(b"\r\n");
                    }
                    out.extend_from_slice(b"0\r\n\r\n");
                }
            }
            out
        },
    )
}

/// One to three pipelined requests, sometimes after empty lines.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    (select(vec!["", "\r\n"]), vec(request(), 1..4)).prop_map(|(lead, requests)| {
        let mut out = lead.as_bytes().to_vec();
        out.extend(requests.concat());
        out
    })
}

/// A head of 60 to 70 fields (past the bound of 64 from 65 on).
fn many_fields() -> impl Strategy<Value = Vec<u8>> {
    (60usize..70).prop_map(|n| {
        let mut out = b"POST /mcp HTTP/1.1\r\n".to_vec();
        for i in 0..n {
            out.extend_from_slice(format!("X-F{i}: v\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out
    })
}

/// Feeds `pieces` in order: the absolute offset and status of the first refusal, if any. After a
/// refusal, every later piece must be refused at its first byte.
fn run(pieces: &[&[u8]]) -> Result<Option<(usize, EmptyBodyStatus)>, TestCaseError> {
    let mut scanner = HeadScanner::default();
    let mut offset = 0;
    let mut first = None;
    for piece in pieces {
        match scanner.scan(piece) {
            Scan::Refuse { at, status } => {
                prop_assert!(at <= piece.len());
                match first {
                    None => first = Some((offset + at, status)),
                    Some((_, was)) => prop_assert_eq!((at, status), (0, was), "refusal is final"),
                }
            }
            Scan::Pass => prop_assert!(first.is_none(), "passed after a refusal"),
        }
        offset += piece.len();
    }
    Ok(first)
}

#[test]
fn prop_head_scan_well_formed_streams_pass() {
    check("head_scan_valid", 1024, (stream(), vec(any::<usize>(), 0..6)), |(bytes, raw)| {
        let outcome = run(&pieces(&bytes, &cuts(bytes.len(), &raw)))?;
        prop_assert_eq!(outcome, None, "{:?}", String::from_utf8_lossy(&bytes));
        Ok(())
    });
}

#[test]
fn prop_head_scan_split_invariant() {
    let input = mutated(prop_oneof![4 => stream(), 1 => many_fields()]);
    check("head_scan", 4096, (input, vec(any::<usize>(), 0..6)), |(bytes, raw)| {
        let whole = run(&[&bytes])?;
        prop_assert_eq!(run(&pieces(&bytes, &cuts(bytes.len(), &raw)))?, whole);
        if let Some((at, _)) = whole {
            prop_assert!(at < bytes.len(), "refused at {at} of {}", bytes.len());
        }
        Ok(())
    });
}

#[test]
fn prop_head_scan_field_bound() {
    check("head_scan_fields", 64, many_fields(), |bytes| {
        let fields = bytes.windows(2).filter(|w| w == b"\r\n").count() - 2;
        let expected = (fields > MAX_FIELDS).then_some(EmptyBodyStatus::HeaderFieldsTooLarge);
        prop_assert_eq!(run(&[&bytes])?.map(|(_, status)| status), expected);
        Ok(())
    });
}

/// The scanner fed through `step` alone, one byte at a time, with bodies counted down byte by byte: the
/// reference the runs of [`HeadScanner::scan`] (bodies in bulk, plain head bytes in runs) must equal.
fn bytewise(bytes: &[u8]) -> Option<(usize, EmptyBodyStatus)> {
    let mut scanner = HeadScanner::default();
    for (at, &b) in bytes.iter().enumerate() {
        scanner.state = match scanner.state {
            State::Off => return None,
            State::Refused(status) => return Some((at, status)),
            State::Body(1) => State::Blank,
            State::Body(left) => State::Body(left - 1),
            State::ChunkData(1) => State::ChunkDataCr,
            State::ChunkData(left) => State::ChunkData(left - 1),
            _ => match scanner.step(b) {
                Ok(()) => scanner.state,
                Err(status) => return Some((at, status)),
            },
        };
    }
    None
}

#[test]
fn prop_head_scan_runs_equal_the_bytewise_scan() {
    let input = mutated(prop_oneof![4 => stream(), 1 => many_fields()]);
    check("head_scan_bytewise", 4096, (input, vec(any::<usize>(), 0..6)), |(bytes, raw)| {
        let expected = bytewise(&bytes);
        prop_assert_eq!(run(&[&bytes])?, expected, "{:?}", String::from_utf8_lossy(&bytes));
        prop_assert_eq!(run(&pieces(&bytes, &cuts(bytes.len(), &raw)))?, expected);
        Ok(())
    });
}
