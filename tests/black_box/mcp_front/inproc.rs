//! The rows of http-mcp.md §12 that need the domain in a given state, with the §12.1 fixture started
//! in-process through the library: both request leases held by clients withholding their bodies
//! (rows 24, 79, 80, 85, 236), a half-close releasing its lease (row 86), request admission unavailable
//! (row 81), and a fenced domain (rows 164, 169,
//! 190, 191, 243, 245–247).

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use ptc_gateway::testing::startup::gateway::Gateway;

use super::check;
use super::rows::Row;
use crate::support::mcp::{connect, discover_result, fixture, result, rpc_error, Req};
use crate::support::{http_get, read_response, wait_until, Deployment};

/// How long a lease or a fence may take to show.
const WAIT: Duration = Duration::from_secs(5);

async fn start(d: &Deployment) -> Gateway {
    crate::support::start_inproc(d).await
}

/// Runs rows from a blocking thread (the sockets are blocking).
async fn rows(addr: SocketAddr, rows: Vec<Row>) {
    tokio::task::spawn_blocking(move || rows.iter().for_each(|row| check(addr, row))).await.expect("rows");
}

/// A client that sent the head of B-list and withholds its body.
fn withholding(addr: SocketAddr, host: &str) -> TcpStream {
    let mut stream = connect(addr);
    stream.write_all(&Req::b_list(host).head()).expect("head");
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_leases_and_lost_request_admission() {
    let d = fixture("127.0.0.1");
    let gateway = start(&d).await;
    let addr = gateway.http_addr();
    let host = crate::support::authority(addr);
    let requests = gateway.pools().requests.clone();
    // Withheld headers cost no request slot (§6.8, §2.2): three clients stop mid-head, and a full
    // request still gets its answer while no lease is held.
    let partial_heads: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut s = crate::support::mcp::connect(addr);
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: ").expect("partial head");
            s
        })
        .collect();
    let list = crate::support::mcp::result("1", &crate::support::mcp::listing_result());
    rows(
        addr,
        vec![Row {
            n: 0,
            req: Req::b_list(&host),
            head_only: false,
            status: 200,
            body: list,
            close: false,
            sse: false,
        }],
    )
    .await;
    // With capacity 2 and three incomplete heads open, the answer above proves they hold no lease.
    wait_until("no lease held by incomplete heads", WAIT, || requests.in_use() == 0).await;
    drop(partial_heads);
    let holders = [withholding(addr, &host), withholding(addr, &host)];
    wait_until("both leases held", WAIT, || requests.in_use() == 2).await;
    let held_at = Instant::now();
    let busy = r#"{"error":{"code":-31999,"data":{"reason":"request_capacity_exhausted"},"message":"Server busy"},"jsonrpc":"2.0"}"#;
    rows(
        addr,
        vec![
            Row {
                n: 79,
                req: Req::b_list(&host),
                head_only: false,
                status: 429,
                body: busy.into(),
                close: true,
                sse: false,
            },
            Row {
                n: 80,
                req: Req::b_list(&host).set("Accept", "application/json"),
                head_only: false,
                status: 406,
                body: r#"{"error":"not_acceptable"}"#.into(),
                close: true,
                sse: false,
            },
            Row {
                n: 236,
                req: Req::b_list(&host).body_bytes(vec![b' '; 10_000_000]),
                head_only: true,
                status: 429,
                body: busy.into(),
                close: true,
                sse: false,
            },
        ],
    )
    .await;
    // Row 24: saturation stays ready.
    let health = tokio::task::spawn_blocking(move || http_get(addr, "/health/ready").expect("health"))
        .await
        .expect("join");
    assert_eq!((health.status, health.body.as_slice()), (200, &br#"{"status":"ready"}"#[..]), "row 24");
    // Row 85 on the holders: 408 once their 2,000 ms budget ran out; the leases come back.
    let answers =
        tokio::task::spawn_blocking(move || holders.map(|mut s| read_response(&mut s, false).expect("408")))
            .await
            .expect("join");
    assert!(held_at.elapsed() <= Duration::from_millis(2_500), "408 within 2.5 s: {:?}", held_at.elapsed());
    for a in &answers {
        assert_eq!((a.status, a.body.as_slice()), (408, &br#"{"error":"request_timeout"}"#[..]), "row 85");
    }
    wait_until("leases released", WAIT, || requests.in_use() == 0).await;
    // Row 86 and §5: a client that half-closes mid-body gets nothing, and its lease comes back.
    let mut half = withholding(addr, &host);
    wait_until("the half-closing client's lease", WAIT, || requests.in_use() == 1).await;
    let written = tokio::task::spawn_blocking(move || {
        crate::support::mcp::send_and_shutdown(&mut half, &Req::b_list("x").body[..100])
    })
    .await
    .expect("join");
    assert!(written.is_empty(), "row 86: nothing is written");
    wait_until("the half-closing client's lease released", WAIT, || requests.in_use() == 0).await;
    // Row 81: request admission's owner stops; its pool is unavailable.
    gateway.owners()[1].actor().stop(Some("test: request admission lost".into()));
    wait_until("request pool fenced", WAIT, || requests.is_fenced()).await;
    let unavailable = r#"{"error":{"code":-31998,"message":"Server unavailable"},"jsonrpc":"2.0"}"#;
    rows(
        addr,
        vec![Row {
            n: 81,
            req: Req::b_list(&host),
            head_only: false,
            status: 503,
            body: unavailable.into(),
            close: true,
            sse: false,
        }],
    )
    .await;
    gateway.context().trigger().signal();
    gateway.serve_until_stopped().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_domain_rows() {
    let d = fixture("127.0.0.1");
    let gateway = start(&d).await;
    let addr = gateway.http_addr();
    let host = crate::support::authority(addr);
    // Losing run admission fences the domain (lifecycle.md §6.3); request admission stays open.
    gateway.owners()[0].actor().stop(Some("test: run admission lost".into()));
    let readiness = gateway.readiness().clone();
    wait_until("fenced", WAIT, || !readiness.is_ready()).await;
    let discover = Req::discover(&host);
    let call = || Req::b_call(&host);
    let invalid_input = || call().edit(r#"{"text":"hi"}"#, r#"{"text":5}"#);
    let unavailable = rpc_error(-31998, Some("1"));
    let row = |n, req, status, body: String| Row {
        n,
        req,
        head_only: false,
        status,
        body,
        close: false,
        sse: false,
    };
    rows(
        addr,
        vec![
            row(164, discover, 200, result("1", &discover_result())),
            row(169, Req::b_list(&host), 503, unavailable.clone()),
            row(190, call(), 503, unavailable.clone()),
            row(191, invalid_input(), 503, unavailable.clone()),
            row(
                243,
                Req::b_list(&host).edit(r#""params":{"#, r#""params":{"cursor":"x","#),
                200,
                rpc_error(-32602, Some("1")),
            ),
            row(245, call().set("Mcp-Name", "other"), 400, rpc_error(-32020, Some("1"))),
            row(246, Req::b_weather(&host, r#"{"region":"x"}"#, &[]), 400, rpc_error(-32020, Some("1"))),
            row(247, invalid_input(), 503, unavailable),
        ],
    )
    .await;
    gateway.context().trigger().signal();
    gateway.serve_until_stopped().await;
}
