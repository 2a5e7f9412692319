//! The connection and the bytes of a message (pcc.md §3, §5.2, §6): a `request_body` that is not UTF-8,
//! and the close of a connection without streams.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use ptc_gateway::pcc::proto::served::create_mcp_transport_request::{Connect, Request};
use ptc_gateway::pcc::proto::served::create_mcp_transport_response::Response;
use ptc_gateway::pcc::proto::served::pcc_tool_gateway_client::PccToolGatewayClient;
use ptc_gateway::pcc::proto::served::CreateMcpTransportRequest;
use tokio_stream::wrappers::ReceiverStream;

use crate::client::WAIT;
use crate::fixture::{auth, deployment, start};

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

/// §3: a connection with no open stream for 30,000 ms is closed. The client sends the HTTP/2 preface
/// and an empty SETTINGS frame, answers nothing else, and reads until the server closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_without_streams_is_closed_after_30_s() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let port = d.pcc_port;
    let (closed_after, got_goaway_or_eof) = tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let started = Instant::now();
        s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
        s.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).unwrap();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf) {
                Ok(0) => return (started.elapsed(), true),
                Ok(_) => continue,
                // A reset after the server's close is a close too.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    return (started.elapsed(), true)
                }
                Err(_) => return (started.elapsed(), false),
            }
        }
    })
    .await
    .unwrap();
    assert!(got_goaway_or_eof, "the connection was not closed within 60 s");
    assert!(
        closed_after >= Duration::from_millis(29_500) && closed_after < Duration::from_secs(45),
        "closed after {closed_after:?}"
    );
}
