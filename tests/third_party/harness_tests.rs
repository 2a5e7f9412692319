//! Tests of the harness itself, runnable without the front and without any install: the proxy's head
//! edits and its byte-faithful forwarding over keep-alive, the baseline and checks.json readers, the
//! child runner's deadline and pipe draining, and the missing-install failure.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::conformance::{failures, parse_baseline, Expected, SCENARIOS};
use crate::proxy::{edit_head, Framing, Proxy, Rewrite};
use crate::support::read_response;
use crate::{child, install};

const OWN: &str = "127.0.0.1:4000";
const UP: &str = "127.0.0.1:5000";
const AUTH: &str = "Authorization: Bearer tok\r\n";

#[test]
fn proxy_head_edits() {
    let rw = Rewrite::new(OWN, UP, "tok");
    // (request head, expected forwarded head, framing of the body)
    let rows: Vec<(String, String, Framing)> = vec![
        // The proxy's own authority becomes the gateway's; the bearer is appended last.
        (
            format!("POST /mcp HTTP/1.1\r\nHost: {OWN}\r\nContent-Length: 5\r\n\r\n"),
            format!("POST /mcp HTTP/1.1\r\nHost: {UP}\r\nContent-Length: 5\r\n{AUTH}\r\n"),
            Framing::Length(5),
        ),
        // A foreign Host (the DNS-rebinding probe) and Origin pass unchanged, name case and OWS kept.
        (
            "POST /mcp HTTP/1.1\r\nhOST:  evil.example.com \r\nOrigin: http://evil.example.com\r\n\r\n".into(),
            format!(
                "POST /mcp HTTP/1.1\r\nhOST:  evil.example.com \r\nOrigin: http://evil.example.com\r\n{AUTH}\r\n"
            ),
            Framing::Length(0),
        ),
        // OWS around the own authority is still the own authority; the field name's case is kept.
        (
            format!("GET /x HTTP/1.1\r\nhost:\t{OWN} \r\n\r\n"),
            format!("GET /x HTTP/1.1\r\nhost: {UP}\r\n{AUTH}\r\n"),
            Framing::Length(0),
        ),
        // A request that brings its own Authorization is not touched (the gateway judges it).
        (
            format!("POST /mcp HTTP/1.1\r\nHost: {UP}\r\nauthorization: Basic x\r\n\r\n"),
            format!("POST /mcp HTTP/1.1\r\nHost: {UP}\r\nauthorization: Basic x\r\n\r\n"),
            Framing::Length(0),
        ),
        (
            "POST /mcp HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n".into(),
            format!("POST /mcp HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n{AUTH}\r\n"),
            Framing::Chunked,
        ),
        // Framing the proxy cannot delimit is forwarded as it is, to the end of the stream.
        (
            "POST /mcp HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n".into(),
            format!("POST /mcp HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n{AUTH}\r\n"),
            Framing::UntilClose,
        ),
    ];
    for (head, want, framing) in rows {
        let (got, got_framing) = edit_head(head.as_bytes(), &rw);
        assert_eq!(String::from_utf8_lossy(&got), want, "head {head:?}");
        assert_eq!(got_framing, framing, "framing of {head:?}");
    }
}

/// A fake gateway: answers each request with a 200 whose body is the exact bytes it received for it.
fn echo_upstream(listener: TcpListener, requests: usize) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut writer = stream.try_clone().expect("clone");
        let mut reader = BufReader::new(stream);
        for _ in 0..requests {
            let mut raw = Vec::new();
            let mut chunked = false;
            let mut length = 0usize;
            loop {
                let before = raw.len();
                reader.read_until(b'\n', &mut raw).expect("head");
                let line = String::from_utf8_lossy(&raw[before..]).to_ascii_lowercase();
                chunked |= line.starts_with("transfer-encoding:") && line.contains("chunked");
                if let Some(v) = line.strip_prefix("content-length:") {
                    length = v.trim().parse().expect("length");
                }
                if line == "\r\n" {
                    break;
                }
            }
            if chunked {
                // Enough for the test's bodies: lines until the last chunk, then until the blank line
                // that ends the trailers.
                let mut last_chunk = false;
                loop {
                    let before = raw.len();
                    reader.read_until(b'\n', &mut raw).expect("chunk");
                    let line = &raw[before..];
                    if last_chunk && line == b"\r\n" {
                        break;
                    }
                    last_chunk |= line == b"0\r\n";
                }
            } else {
                let mut body = vec![0; length];
                reader.read_exact(&mut body).expect("body");
                raw.extend_from_slice(&body);
            }
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", raw.len());
            writer.write_all(head.as_bytes()).expect("write head");
            writer.write_all(&raw).expect("write body");
        }
    })
}

#[test]
fn proxy_forwards_byte_for_byte_over_keep_alive() {
    let upstream = TcpListener::bind(("127.0.0.1", 0)).expect("bind upstream");
    let up_addr = upstream.local_addr().expect("addr");
    let server = echo_upstream(upstream, 2);
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind proxy");
    let proxy = Proxy::start(listener, up_addr, "tok");
    let (own, up) = (crate::support::authority(proxy.addr), crate::support::authority(up_addr));
    let mut client = TcpStream::connect(proxy.addr).expect("connect");
    client.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let first = format!("POST /mcp HTTP/1.1\r\nHost: {own}\r\nContent-Length: 7\r\n\r\n{{\"a\":1}}");
    let second = format!(
        "POST /mcp HTTP/1.1\r\nHost: {own}\r\nMcp-Name:   echo  \r\nTransfer-Encoding: chunked\r\n\r\n\
         3;ext=1\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n"
    );
    let rows = [
        (first, format!("POST /mcp HTTP/1.1\r\nHost: {up}\r\nContent-Length: 7\r\n{AUTH}\r\n{{\"a\":1}}")),
        (
            second,
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {up}\r\nMcp-Name:   echo  \r\nTransfer-Encoding: chunked\r\n\
                 {AUTH}\r\n3;ext=1\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n"
            ),
        ),
    ];
    for (sent, want) in rows {
        client.write_all(sent.as_bytes()).expect("send");
        let resp = read_response(&mut client, false).expect("response");
        assert_eq!(resp.status, 200);
        assert_eq!(String::from_utf8_lossy(&resp.body), want, "what the gateway received for {sent:?}");
    }
    server.join().expect("upstream thread");
    assert_eq!(proxy.forwarded(), 2);
    drop(proxy);
}

#[test]
fn baseline_rows() {
    let ok = "# comment\nserver:\n  - caching:sep-2549-prompts-list-caching-hints # prompts are not served\n";
    assert_eq!(
        parse_baseline(ok),
        Ok(vec![Expected {
            check: "caching:sep-2549-prompts-list-caching-hints".into(),
            reason: "prompts are not served".into()
        }])
    );
    let bad = [
        "server:\n  - caching:sep-2549-prompts-list-caching-hints\n", // no reason
        "server:\n  - caching # whole scenario # r\n",                // not scenario:check
        "server:\n  - ping:ping # a scenario not run here\n",         // unknown scenario
        "server:\n  - caching: sep-2549-x # YAML mapping, not a string\n", // empty id after the colon
        "client:\n  - caching:x # client side\n",                     // other mode
        "  - caching:x # outside any list\n",
    ];
    for text in bad {
        assert!(parse_baseline(text).is_err(), "accepted {text:?}");
    }
}

#[test]
fn committed_baseline_is_well_formed() {
    let text = std::fs::read_to_string(install::baseline_path()).expect("read");
    let entries = parse_baseline(&text).expect("baseline parses");
    assert!(!entries.is_empty());
    for e in &entries {
        let scenario = e.check.split(':').next().unwrap_or_default();
        assert!(SCENARIOS.contains(&scenario), "{}", e.check);
    }
}

#[test]
fn failures_rows() {
    let checks = json!([
        {"id": "a", "status": "SUCCESS"}, {"id": "b", "status": "FAILURE", "errorMessage": "why"},
        {"id": "c", "status": "WARNING"}, {"id": "d", "status": "SKIPPED"}, {"id": "e", "status": "INFO"},
        {"id": "b", "status": "FAILURE"}
    ]);
    let got = failures("caching", &checks).expect("valid");
    assert_eq!(got.into_iter().collect::<Vec<_>>(), vec![("caching:b".to_string(), "why".to_string())]);
    for bad in [json!({}), json!([{"status": "FAILURE"}]), json!([{"id": "x", "status": "PASSED"}])] {
        assert!(failures("caching", &bad).is_err(), "accepted {bad}");
    }
}

#[test]
fn child_output_is_drained_past_the_pipe_buffer() {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "head -c 1048576 /dev/zero | tr '\\0' x; echo err >&2"]);
    let done = child::run("a chatty child", cmd, Duration::from_secs(30));
    assert!(done.status.success());
    assert_eq!(done.stdout.len(), 1_048_576);
    assert_eq!(done.stderr, "err\n");
}

#[test]
#[should_panic(expected = "a stuck child: did not finish within 200ms")]
fn child_overrunning_its_deadline_is_killed() {
    let mut cmd = Command::new("sleep");
    cmd.arg("30");
    child::run("a stuck child", cmd, Duration::from_millis(200));
}

#[test]
#[should_panic(expected = "run `bash tests/third_party/install.sh` from the repository root first")]
fn a_missing_install_fails_with_the_install_step() {
    install::require(std::env::temp_dir().join("ptc-no-such-install"), "a missing program");
}

#[test]
fn proxy_passes_an_oversized_head_on_raw() {
    let upstream = TcpListener::bind(("127.0.0.1", 0)).expect("bind upstream");
    let up_addr = upstream.local_addr().expect("addr");
    let capture = std::thread::spawn(move || {
        let (mut stream, _) = upstream.accept().expect("accept");
        let mut got = Vec::new();
        stream.read_to_end(&mut got).expect("read");
        got
    });
    let proxy = Proxy::start(TcpListener::bind(("127.0.0.1", 0)).expect("bind"), up_addr, "tok");
    let mut sent = b"POST /mcp HTTP/1.1\r\nX-Big: ".to_vec();
    sent.resize(200 * 1024, b'a');
    let mut client = TcpStream::connect(proxy.addr).expect("connect");
    client.write_all(&sent).expect("send");
    client.shutdown(std::net::Shutdown::Write).expect("half-close");
    let got = capture.join().expect("capture thread");
    assert!(got == sent, "the gateway must receive the oversized head unchanged ({} bytes)", got.len());
    assert_eq!(proxy.forwarded(), 0);
}
