//! http-mcp.md §6.9 and §12.6 rows 82–88 as scripted exchanges: the body size bound, the idle budget,
//! framing errors, the half-close rule, and `100 Continue` only at M9 (§2.5).
//! The pauses here are the stimulus (a client that is slow on purpose), never a synchronisation.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::{assert_json_headers, check};
use crate::support::mcp::{closes, connect, listing_result, result, send_and_shutdown, Req, B_LIST_BODY};
use crate::support::read_response;

const MAX: usize = 2_097_152;

fn chunked(host: &str) -> Req {
    let mut req = Req::b_list(host).add("Transfer-Encoding", "chunked");
    req.no_length = true;
    req.body = Vec::new();
    req
}

pub fn run(addr: SocketAddr, host: &str) {
    let list = result("1", &listing_result());
    // Row 82: padded with spaces to exactly 2,097,152 bytes.
    let padded = format!("{B_LIST_BODY}{}", " ".repeat(MAX - B_LIST_BODY.len()));
    check(
        addr,
        &super::rows::Row {
            n: 82,
            req: Req::b_list(host).body(&padded),
            head_only: false,
            status: 200,
            body: list.clone(),
            close: false,
            sse: false,
        },
    );
    // Row 83: `Content-Length: 2097153` is refused before any byte is read (the body is never sent).
    let over = Req::b_list(host).body_bytes(vec![b' '; MAX + 1]);
    check(
        addr,
        &super::rows::Row {
            n: 83,
            req: over,
            head_only: true,
            status: 413,
            body: r#"{"error":"request_too_large"}"#.into(),
            close: true,
            sse: false,
        },
    );
    row_84(addr, host);
    row_85(addr, host);
    row_86(addr, host);
    // Row 87: an invalid chunk-size line.
    let mut bad = chunked(host);
    bad.body = b"zz\r\n".to_vec();
    check(
        addr,
        &super::rows::Row {
            n: 87,
            req: bad,
            head_only: false,
            status: 400,
            body: r#"{"error":"request_invalid"}"#.into(),
            close: true,
            sse: false,
        },
    );
    row_88(addr, host, &list);
    framing_bytes_restart_the_budget(addr, host, &list);
    continue_only_at_m9(addr, host, &list);
    keep_alive_after_a_read_body(addr, host, &list);
}

/// Row 84: chunks totalling 2,097,153 bytes are refused once the bound is passed.
fn row_84(addr: SocketAddr, host: &str) {
    let mut stream = connect(addr);
    stream.write_all(&chunked(host).head()).expect("head");
    let mut writer = stream.try_clone().expect("clone");
    let sender = std::thread::spawn(move || {
        let chunk = vec![b' '; 65_536];
        let mut sent = 0usize;
        while sent < MAX + 1 {
            let n = chunk.len().min(MAX + 1 - sent);
            let framed = [format!("{n:x}\r\n").as_bytes(), &chunk[..n], b"\r\n"].concat();
            if writer.write_all(&framed).is_err() {
                return;
            }
            sent += n;
        }
        let _ = writer.write_all(b"0\r\n\r\n");
    });
    let response = read_response(&mut stream, false).expect("response");
    assert_eq!(
        (response.status, response.body.as_slice()),
        (413, &br#"{"error":"request_too_large"}"#[..]),
        "row 84"
    );
    assert_json_headers(84, &response, true);
    assert!(closes(&mut stream, Duration::from_secs(5)), "row 84: closed");
    drop(stream);
    sender.join().expect("sender");
}

/// Row 85: 100 of 170 bytes, then nothing: 408 after the 2,000 ms budget (§6.9), then close.
fn row_85(addr: SocketAddr, host: &str) {
    let mut stream = connect(addr);
    let bytes = Req::b_list(host).bytes();
    let cut = bytes.len() - 70;
    stream.write_all(&bytes[..cut]).expect("write");
    let sent = Instant::now();
    let response = read_response(&mut stream, false).expect("response");
    let waited = sent.elapsed();
    assert_eq!(
        (response.status, response.body.as_slice()),
        (408, &br#"{"error":"request_timeout"}"#[..]),
        "row 85"
    );
    assert_json_headers(85, &response, true);
    assert!(
        waited >= Duration::from_millis(1_900) && waited <= Duration::from_millis(2_500),
        "row 85: {waited:?}"
    );
    assert!(closes(&mut stream, Duration::from_secs(3)), "row 85: closed");
}

/// Row 86: 100 of 170 bytes, then the client ends its write side: nothing at all is written, and the
/// connection closes at once (well before the 2,000 ms budget could answer 408).
fn row_86(addr: SocketAddr, host: &str) {
    let mut stream = connect(addr);
    let bytes = Req::b_list(host).bytes();
    let start = Instant::now();
    let written = send_and_shutdown(&mut stream, &bytes[..bytes.len() - 70]);
    assert!(written.is_empty(), "row 86: {:?}", String::from_utf8_lossy(&written));
    assert!(start.elapsed() < Duration::from_millis(1_500), "row 86: closed at once, not by a timer");
}

/// Row 88: 85 bytes, a pause of 1,500 ms (the stimulus, shorter than the budget), the last 85 bytes.
fn row_88(addr: SocketAddr, host: &str, list: &str) {
    let mut stream = connect(addr);
    let req = Req::b_list(host);
    stream.write_all(&req.head()).expect("head");
    stream.write_all(&req.body[..85]).expect("first half");
    std::thread::sleep(Duration::from_millis(1_500));
    stream.write_all(&req.body[85..]).expect("second half");
    let response = read_response(&mut stream, false).expect("response");
    assert_eq!((response.status, String::from_utf8_lossy(&response.body).as_ref()), (200, list), "row 88");
    assert_json_headers(88, &response, false);
}

/// §6.9: "the budget restarts whenever bytes arrive", also bytes that complete no body frame: a
/// chunk-size line sent in pieces 1,200 ms apart (2,400 ms before the first data byte) is still read.
fn framing_bytes_restart_the_budget(addr: SocketAddr, host: &str, list: &str) {
    let mut stream = connect(addr);
    stream.write_all(&chunked(host).head()).expect("head");
    for piece in [&b"a"[..], b"a"] {
        stream.write_all(piece).expect("size line");
        std::thread::sleep(Duration::from_millis(1_200));
    }
    assert_eq!(B_LIST_BODY.len(), 0xaa);
    stream.write_all(format!("\r\n{B_LIST_BODY}\r\n0\r\n\r\n").as_bytes()).expect("chunk");
    let response = read_response(&mut stream, false).expect("response");
    assert_eq!(
        (response.status, String::from_utf8_lossy(&response.body).as_ref()),
        (200, list),
        "trickled size line"
    );
}

/// §2.5: with `Expect: 100-continue`, `100 Continue` comes when M9 starts reading, then the answer.
fn continue_only_at_m9(addr: SocketAddr, host: &str, list: &str) {
    let mut stream = connect(addr);
    let req = Req::b_list(host).add("Expect", "100-continue");
    stream.write_all(&req.head()).expect("head");
    let mut interim = [0u8; 25];
    stream.read_exact(&mut interim).expect("100 Continue");
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(&req.body).expect("body");
    let response = read_response(&mut stream, false).expect("response");
    assert_eq!((response.status, String::from_utf8_lossy(&response.body).as_ref()), (200, list));
}

/// §2.5: after a body was read completely the connection stays open for the next request.
fn keep_alive_after_a_read_body(addr: SocketAddr, host: &str, list: &str) {
    let mut stream = connect(addr);
    let req = Req::b_list(host).bytes();
    for i in 0..2 {
        stream.write_all(&req).expect("request");
        let response = read_response(&mut stream, false).expect("response");
        assert_eq!((response.status, String::from_utf8_lossy(&response.body).as_ref()), (200, list), "#{i}");
        assert_json_headers(0, &response, false);
    }
}
