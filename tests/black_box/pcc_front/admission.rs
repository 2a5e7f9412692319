//! Stream admission beside `/mcp` request admission (pcc.md §10; §17 V60, V61): the two pools never
//! take from each other.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use tonic::Code;

use super::client::{c, open, Out};
use super::fixture::{auth, deployment, http_addr, start};
use crate::support::mcp::{call_body, exchange, Req};
use crate::support::{self};

/// The status of a `/mcp` `tools/list` (http-mcp.md B-list).
fn mcp_list_status(d: &support::Deployment) -> u16 {
    let addr = http_addr(d);
    exchange(addr, &Req::b_list(&support::authority(addr)).bytes()).response.status
}

/// §17 V60: one `/mcp` request holds the only request lease (a `tools/call` of `hang`, whose exchange
/// lasts while it runs; a withheld body would hold it for at most 2 s); a PCC stream still connects,
/// because a lease is not a stream slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mcp_lease_is_not_a_stream_slot() {
    let d = deployment(1, 4);
    let _gw = start(&d);
    let addr = http_addr(&d);
    let request =
        Req::post(&support::authority(addr), "tools/call", Some("hang"), &call_body("1", "hang", "{}"));
    let mut held = TcpStream::connect(addr).unwrap();
    held.write_all(&request.bytes()).unwrap();
    // The call's committed `200` (execution.md §4.2) shows it holds the lease: a second request is then
    // refused 429 (http-mcp.md M8). Nothing else is sent before the lease is taken, so no race.
    held.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut status_line = [0u8; 12];
    held.read_exact(&mut status_line).unwrap();
    assert_eq!(&status_line, b"HTTP/1.1 200");
    assert_eq!(mcp_list_status(&d), 429, "the lease is held");
    let auth = auth();
    let mut conv = open(d.pcc_port, &[("authorization", auth.as_str())]).await.unwrap();
    conv.send(&c()).await;
    assert_eq!(conv.next().await, Out::Connected, "V60");
    drop(held);
}

/// §17 V61: with `max_inflight_requests` 2 and two PCC streams open, a third stream is refused before
/// `connected`; a `/mcp` `tools/list` meanwhile is answered 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_bound_leaves_mcp_alone() {
    let d = deployment(2, 4);
    let _gw = start(&d);
    let auth = auth();
    let meta = [("authorization", auth.as_str())];
    let mut streams = Vec::new();
    for _ in 0..2 {
        let mut conv = open(d.pcc_port, &meta).await.unwrap();
        conv.send(&c()).await;
        assert_eq!(conv.next().await, Out::Connected);
        streams.push(conv);
    }
    let status = open(d.pcc_port, &meta).await.err().expect("V61: the third stream is refused");
    assert_eq!((status.code(), status.message()), (Code::ResourceExhausted, "stream_capacity_exhausted"));
    assert_eq!(mcp_list_status(&d), 200, "V61");
}
