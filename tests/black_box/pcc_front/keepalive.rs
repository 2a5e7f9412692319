//! The HTTP/2 keepalive of a connection with open streams (pcc.md §3): after 30,000 ms without a frame
//! the server sends a `PING`, and closes the connection when no acknowledgement arrives within
//! 10,000 ms; its streams count as reset (§11), so a write call in flight is cancelled as disconnected.
//!
//! An HTTP/2 client acknowledges every `PING` by itself, so the test puts a loopback relay between a
//! real tonic client and the gateway that passes every byte except the server's unacknowledged `PING`
//! frames, and notes when it swallowed each.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::client::{call, ping, pong, Out};
use super::fixture::{audit_records, deployment, ready_stream, start, summary};

/// RFC 9113 §6.7: frame type 0x6; flag 0x1 is ACK.
const PING: u8 = 0x6;
const ACK: u8 = 0x1;

/// When the relay swallowed each server `PING`, and when the server closed the connection.
#[derive(Default)]
struct Seen {
    pings: Vec<Instant>,
    closed: Option<Instant>,
}

/// A relay for one connection, on a free loopback port, to the gateway's PCC port.
async fn relay(upstream: u16) -> (u16, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    tokio::spawn(async move {
        let (client, _) = listener.accept().await.unwrap();
        let server = TcpStream::connect(("127.0.0.1", upstream)).await.unwrap();
        let (mut client_read, mut client_write) = client.into_split();
        let (mut server_read, mut server_write) = server.into_split();
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        });
        // Server to client, frame by frame (the server sends no preface; RFC 9113 §3.4).
        loop {
            let mut header = [0u8; 9];
            if server_read.read_exact(&mut header).await.is_err() {
                break;
            }
            let len = (usize::from(header[0]) << 16) | (usize::from(header[1]) << 8) | usize::from(header[2]);
            let mut payload = vec![0u8; len];
            if server_read.read_exact(&mut payload).await.is_err() {
                break;
            }
            if header[3] == PING && header[4] & ACK == 0 {
                record.lock().unwrap().pings.push(Instant::now());
                continue;
            }
            if client_write.write_all(&header).await.is_err()
                || client_write.write_all(&payload).await.is_err()
            {
                break;
            }
        }
        record.lock().unwrap().closed = Some(Instant::now());
        let _ = client_write.shutdown().await;
    });
    (port, seen)
}

/// §3: a write call in flight on a connection that stops acknowledging `PING`s: the first `PING` comes
/// 30 s after the last frame, the close 10 s after it, and the call is audited once as cancelled by a
/// disconnect (§16: a keepalive failure is `disconnected` true).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unacknowledged_ping_closes_the_connection_and_resets_its_streams() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let (port, seen) = relay(d.pcc_port).await;
    let mut conv = ready_stream(port).await;
    conv.send(&call(r#""call-k""#, "beta", "{}")).await;
    conv.send(&ping(1)).await;
    assert_eq!(conv.next().await, pong(1));
    // The pong is the last frame either way: from here on the connection is quiet.
    let quiet = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(60), conv.next_unbounded()).await;
    let got = ended.expect("the stream did not end within 60 s of the last frame");
    assert!(matches!(got, Out::End(..)), "the stream ends without a response: {got:?}");
    let (first_ping, closed) = {
        let seen = seen.lock().unwrap();
        (seen.pings.first().copied(), seen.closed)
    };
    let first_ping = first_ping.expect("the server sent no PING");
    let closed = closed.expect("the server did not close the connection");
    let to_ping = first_ping - quiet;
    assert!(
        to_ping >= Duration::from_millis(29_500) && to_ping < Duration::from_secs(40),
        "the first PING came {to_ping:?} after the last frame"
    );
    let to_close = closed - first_ping;
    assert!(
        to_close >= Duration::from_millis(9_500) && to_close < Duration::from_secs(20),
        "the connection closed {to_close:?} after the unacknowledged PING"
    );
    let records = audit_records(&d, 1).await;
    assert_eq!(summary(&records[0]), ("beta", "cancelled", true), "a keepalive failure is a disconnect");
}
