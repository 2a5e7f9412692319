//! The connection and the bytes of a message (pcc.md §3, §5.2, §6): a `request_body` that is not UTF-8,
//! and the close of a connection without streams.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use ptc_gateway::testing::pcc::proto::served::create_mcp_transport_request::{Connect, Request};
use ptc_gateway::testing::pcc::proto::served::create_mcp_transport_response::Response;
use ptc_gateway::testing::pcc::proto::served::pcc_tool_gateway_client::PccToolGatewayClient;
use ptc_gateway::testing::pcc::proto::served::CreateMcpTransportRequest;
use tokio_stream::wrappers::ReceiverStream;

use super::client::WAIT;
use super::fixture::{auth, deployment, start};

/// §5.2 ("invalid UTF-8 text" → -32700, `id` `null`): sent through the `bytes` view of the same
/// message, which is wire-identical to the `string` field a PCC node writes; the stream stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_is_not_utf8_is_a_parse_error() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let channel = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{}", d.pcc_port))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    let mut request = tonic::Request::new(ReceiverStream::new(rx));
    request.metadata_mut().insert("authorization", auth().parse().unwrap());
    let mut inbound =
        PccToolGatewayClient::new(channel).create_mcp_transport(request).await.unwrap().into_inner();
    let connect = Connect { server_id: "srv-1".into(), request_id: "req-1".into(), ..Default::default() };
    let bodies: [&[u8]; 3] = [
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}",
        b"\xc3\x28",
        br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
    ];
    tx.send(CreateMcpTransportRequest { request: Some(Request::Connect(connect)) }).await.unwrap();
    for b in bodies {
        tx.send(CreateMcpTransportRequest { request: Some(Request::RequestBody(b.to_vec())) }).await.unwrap();
    }
    let parse_error = r#"{"error":{"code":-32700,"message":"Parse error"},"id":null,"jsonrpc":"2.0"}"#;
    let expected = ["connected", parse_error, parse_error, r#"{"id":9,"jsonrpc":"2.0","result":{}}"#];
    for (i, want) in expected.into_iter().enumerate() {
        let got =
            match tokio::time::timeout(WAIT, inbound.message()).await.unwrap().unwrap().unwrap().response {
                Some(Response::Json(j)) => j,
                Some(Response::Connected(_)) => "connected".to_owned(),
                None => panic!("an empty response"),
            };
        assert_eq!(got, want, "message {i}");
    }
}

/// The client side of a raw HTTP/2 connection: the preface and an empty SETTINGS frame.
fn h2_connect(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    s.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
    s
}

/// A HEADERS frame (END_STREAM, END_HEADERS) on stream 1 opening `CreateMcpTransport` with the bearer:
/// every field a literal without indexing with a new name (RFC 7541 §6.2.2), all lengths below 127.
/// The stream is admitted and, its inbound side ended before `connect`, ends at once (§5.2).
fn open_and_end_a_stream(s: &mut TcpStream) {
    let bearer = auth();
    let fields = [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/pcc.toolgateway.v1.PccToolGateway/CreateMcpTransport"),
        (":authority", "127.0.0.1"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
        ("authorization", bearer.as_str()),
    ];
    let mut block = Vec::new();
    for (name, value) in fields {
        block.push(0);
        block.push(name.len() as u8);
        block.extend_from_slice(name.as_bytes());
        block.push(value.len() as u8);
        block.extend_from_slice(value.as_bytes());
    }
    let len = block.len() as u32;
    let mut frame = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, 1, 0x4 | 0x1, 0, 0, 0, 1];
    frame.extend_from_slice(&block);
    s.write_all(&frame).unwrap();
}

/// Reads until the server closes; false if it did not within the read timeout.
fn read_until_closed(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            // A reset after the server's close is a close too.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// §3: a connection with no open stream for 30,000 ms is closed: one that never opened a stream 30 s
/// after its start, and one whose stream ended 10 s after its start 30 s after that end (the clock
/// restarts when the last stream ends, so it is not closed at 30 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_without_streams_are_closed_after_30_s() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let port = d.pcc_port;
    let never = tokio::task::spawn_blocking(move || {
        let mut s = h2_connect(port);
        let started = Instant::now();
        (read_until_closed(&mut s), started.elapsed())
    });
    let after_stream = tokio::task::spawn_blocking(move || {
        let mut s = h2_connect(port);
        let started = Instant::now();
        // Ten quiet seconds first: nothing closes the connection meanwhile (its clock is at 10 s).
        s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let mut buf = [0u8; 4096];
        while started.elapsed() < Duration::from_secs(10) {
            match s.read(&mut buf) {
                Ok(0) => panic!("closed after {:?}, before its stream", started.elapsed()),
                Ok(_) => {}
                Err(e) => assert!(
                    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
                    "{e}"
                ),
            }
        }
        open_and_end_a_stream(&mut s);
        let ended = Instant::now();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        (read_until_closed(&mut s), ended.elapsed(), started.elapsed())
    });
    let (closed, after) = never.await.unwrap();
    assert!(closed, "the connection without streams was not closed within 60 s");
    assert!(
        after >= Duration::from_millis(29_500) && after < Duration::from_secs(45),
        "closed after {after:?}"
    );
    let (closed, after_end, after_start) = after_stream.await.unwrap();
    assert!(closed, "the connection was not closed within 60 s of its stream's end");
    assert!(
        after_end >= Duration::from_millis(29_500) && after_end < Duration::from_secs(45),
        "closed {after_end:?} after its stream ended ({after_start:?} after its start)"
    );
}
