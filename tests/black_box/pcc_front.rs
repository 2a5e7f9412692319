//! The PCC tool gateway front against the real binary (pcc.md §17), driven by a tonic client generated
//! from the same `schemas/pcc_tool_gateway.proto`: the test-vector rows as a table, stream admission,
//! cancellation, drain, and the same Luau tool over `/mcp` and over PCC.
//!
//! Every row of pcc.md §17 and the test that shows it (`vectors` = the table of `test_vector_rows`):
//!
//! | Rows | Test |
//! | --- | --- |
//! | V1–V6, V57 | `stream_start_metadata_rows` |
//! | V7, V59 | `stream_admission_is_separate_from_mcp` |
//! | V8–V11, V13–V35, V49, V55 | `vectors` (V36/V42/V43 also, with the read tool `hang`) |
//! | V12 | `connect_timeout` |
//! | V36, V43 (write tool, one audit record) | `writes::a_write_call_in_flight_refuses_a_second_and_leaves_one_record` |
//! | V37–V39 | `apple_request_uuid_binds_the_call_id` |
//! | V40 (and V36, V42, V44 on run capacity) | `cancellation_and_run_capacity` |
//! | V41 | `pcc_inproc::a_fenced_domain_answers_list_and_call_unavailable` |
//! | V42, V44 (audit `cancelled`, `disconnected` false / true) | `writes::cancelled_write_calls_are_audited_once_each` |
//! | V45, V58 (upstream half) | `providers_gateway::v45_v58_an_invalid_trace_id_is_replaced_and_connect_metadata_never_reaches_the_upstream` |
//! | V46 | `providers_gateway::f33_the_pcc_stream_trace_id_reaches_every_provider_call` |
//! | V47, V48 | `idle_timeout` |
//! | V50 | `an_oversized_grpc_message_is_resource_exhausted` |
//! | V51 | `drain::drain_ends_idle_streams` |
//! | V52, V54 (black-box) | `drain::drain_answers_a_call_that_ends_before_the_deadline` |
//! | V53 | `drain::drain_answers_the_call_in_flight_with_its_real_outcome` |
//! | lifecycle.md §7.3 S1 (a stream cut at the cutoff, exit 70) | `drain::a_stream_cut_at_the_cutoff_makes_the_exit_70` |
//! | execution.md §6.2 (a run lost outside Luau, over the stream) | `writes::a_run_lost_outside_luau_is_audited_answered_and_fences` |
//! | V54 (exact status) | `pcc_inproc::a_new_stream_during_a_drain_is_refused_draining` |
//! | V56 | `drain::half_close_waits_for_the_call_in_flight` |
//! | V58 (not the upstream part) | `writes::connect_metadata_never_leaves_the_stream` |
//! | V60 | `admission::a_mcp_lease_is_not_a_stream_slot` |
//! | V61 | `admission::the_stream_bound_leaves_mcp_alone` |
//! | §5.2 invalid UTF-8 → -32700 | `connection::a_body_that_is_not_utf8_is_a_parse_error` |
//! | §3 idle connection close | `connection::connections_without_streams_are_closed_after_30_s` |
//! | §3 keepalive `PING` unacknowledged | `keepalive::an_unacknowledged_ping_closes_the_connection_and_resets_its_streams` |
//! | §4 client deadline | `writes::the_client_deadline_cancels_the_stream` |
//! | §15 step 3 before S1 stops the listeners | `drain::a_call_between_the_signal_and_the_listener_stop_is_unavailable` |
//! | same `structuredContent` as `/mcp` | `the_same_tool_over_both_fronts_has_the_same_structured_content` |
//!
//! Without upstreams, §17's `beta` ("held until released") is two tools: `beta` runs until cancelled
//! (the held call) and `delta` computes for a few seconds and returns `{"done":true}` (the released one).
//! tests/pcc_upstream runs V36, V42, V43, V48, V52, V53 and V56 again with §17's own `beta`: a mission
//! over an upstream `slow` tool that the test holds and releases.

#[path = "pcc_front/admission.rs"]
mod admission;
#[path = "pcc_front/connection.rs"]
mod connection;
#[path = "pcc_front/drain.rs"]
mod drain;
#[path = "pcc_front/keepalive.rs"]
mod keepalive;
use crate::support;
use crate::support::{pcc_client as client, pcc_fixture as fixture};
#[path = "pcc_front/vectors.rs"]
mod vectors;
#[path = "pcc_front/writes.rs"]
mod writes;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use client::{bearer, body, c, call, end, err, h, initialized, open, ping, pong, In, Out};
use fixture::{alpha_success, deployment, ready_stream, start};
use serde_json::Value;
use support::mcp::{exchange, Req};
use tonic::Code;
use vectors::rows;

/// The `/mcp` `tools/list` result's `tools` entries by name, as the gateway sends them (http-mcp.md §10.3).
fn mcp_entries(port: u16) -> Vec<(String, String)> {
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let response = exchange(addr, &Req::b_list(&support::authority(addr)).bytes()).response;
    assert_eq!(response.status, 200);
    let body: Value = serde_json::from_slice(&response.body).unwrap();
    // The gateway's encoding is deterministic (sorted keys, no whitespace), as serde_json's is for these
    // ASCII-only fixture values; the PCC side is compared byte for byte against this.
    body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), serde_json::to_string(t).unwrap()))
        .collect()
}

/// The rows of §17 that need no special setup, each on its own stream of one gateway.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_vector_rows() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let meta = bearer();
    let meta: Vec<(&str, &str)> = meta.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mcp = mcp_entries(d.port);
    assert_eq!(mcp.len(), 5, "the /mcp listing has every served tool, gamma included");
    for row in rows(&mcp) {
        let mut conv =
            open(d.pcc_port, &meta).await.unwrap_or_else(|s| panic!("{}: refused {s:?}", row.name));
        for step in &row.inbound {
            conv.send(step).await;
        }
        for (i, expected) in row.outbound.iter().enumerate() {
            assert_eq!(&conv.next().await, expected, "{} message {i}", row.name);
        }
    }
}

/// §4 and §17 V1–V6, V57: the checks before any message is read, as trailers-only statuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_start_metadata_rows() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let token = support::TOKEN;
    let good = format!("Bearer {token}");
    let other = format!("Bearer {}", "b".repeat(32));
    let tab = format!("Bearer\t{token}");
    let mixed = format!("bEaReR   {token}");
    let uuid = "9b2c1e4a-77d0-4f43-a1de-3c5f0e2b8d61";
    let unauthorized = Some((Code::Unauthenticated, "unauthorized"));
    type MetadataRow<'a> = (&'a str, Vec<(&'a str, &'a str)>, Option<(Code, &'a str)>);
    let cases: Vec<MetadataRow> = vec![
        ("V1", vec![], unauthorized),
        ("V2", vec![("authorization", &other)], unauthorized),
        ("V3", vec![("authorization", &tab)], unauthorized),
        ("V4", vec![("authorization", &good), ("authorization", &good)], unauthorized),
        ("V5", vec![("authorization", &mixed)], None),
        (
            "V6",
            vec![("authorization", &good), ("apple-request-uuid", uuid), ("apple-request-uuid", uuid)],
            Some((Code::InvalidArgument, "invalid_metadata")),
        ),
        ("uuid ok", vec![("authorization", &good), ("apple-request-uuid", uuid)], None),
    ];
    for (name, meta, expected) in cases {
        match (open(d.pcc_port, &meta).await, expected) {
            (Err(status), Some((code, message))) => {
                assert_eq!((status.code(), status.message()), (code, message), "{name}");
            }
            (Ok(mut conv), None) => {
                conv.send(&c()).await;
                assert_eq!(conv.next().await, Out::Connected, "{name}");
            }
            (Ok(_), Some(e)) => panic!("{name}: admitted, expected {e:?}"),
            (Err(status), None) => panic!("{name}: refused {status:?}"),
        }
    }
    // V57: another method path on the same port.
    let channel = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{}", d.pcc_port))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path =
        tonic::codegen::http::uri::PathAndQuery::from_static("/pcc.toolgateway.v1.PccToolGateway/Other");
    let codec = tonic_prost::ProstCodec::<
        ptc_gateway::testing::pcc::proto::CreateMcpTransportRequest,
        ptc_gateway::testing::pcc::proto::CreateMcpTransportResponse,
    >::default();
    let status = grpc
        .unary(
            tonic::Request::new(ptc_gateway::testing::pcc::proto::CreateMcpTransportRequest {
                request: None,
            }),
            path,
            codec,
        )
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unimplemented, "V57");
}

/// docs/security.md section 3, lifecycle.md §2.1: with every diagnostic on (`PTC_LOG=trace`, the HTTP/2
/// and gRPC crates included), neither the gateway bearer of an admitted stream nor a refused credential
/// reaches the gateway's diagnostics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credential_reaches_the_diagnostics() {
    let d = deployment(64, 4);
    let mut cmd = d.command();
    cmd.env("PTC_LOG", "trace");
    let mut gw = support::Gateway::start(cmd, fixture::http_addr(&d));
    let drained = gw.drain_stderr();
    let good = format!("Bearer {}", support::TOKEN);
    let refused = "SentinelRefused-3b9d0c7e1f2a4b6c8d0e";
    let mut conv = open(d.pcc_port, &[("authorization", &good)]).await.expect("admitted");
    conv.send(&c()).await;
    assert_eq!(conv.next().await, Out::Connected);
    let bad = format!("Bearer {refused}");
    let status = open(d.pcc_port, &[("authorization", &bad)]).await.err().expect("refused");
    assert_eq!((status.code(), status.message()), (Code::Unauthenticated, "unauthorized"));
    conv.send(&In::HalfClose).await;
    assert_eq!(conv.next().await, end(Code::Ok, ""));
    drop(conv);
    let (code, _, _, _) = tokio::task::spawn_blocking(move || {
        gw.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(40))
    })
    .await
    .unwrap();
    let stderr = drained.join().unwrap();
    let stderr = String::from_utf8_lossy(&stderr);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("ready"), "the diagnostics were on: {stderr}");
    for secret in [support::TOKEN, refused] {
        assert!(!stderr.contains(secret), "{secret} found in the diagnostics");
    }
}

/// §13 and §17 V37–V39: with `apple-request-uuid`, every call's id must equal it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apple_request_uuid_binds_the_call_id() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let uuid = "9b2c1e4a-77d0-4f43-a1de-3c5f0e2b8d61";
    let auth = format!("Bearer {}", support::TOKEN);
    let meta = [("authorization", auth.as_str()), ("apple-request-uuid", uuid)];
    let mut conv = open(d.pcc_port, &meta).await.unwrap();
    for step in std::iter::once(c()).chain(h()) {
        conv.send(&step).await;
    }
    assert_eq!(conv.next().await, Out::Connected);
    assert_eq!(conv.next().await, initialized(0, "2025-11-25"));
    let quoted = format!("\"{uuid}\"");
    let cases: Vec<(&str, Out)> = vec![
        (r#""other""#, err(-32600, "Invalid Request", Some("request_uuid_mismatch"), r#""other""#)),
        ("7", err(-32600, "Invalid Request", Some("request_uuid_mismatch"), "7")),
        (
            &quoted,
            Out::Json(format!(
                r#"{{"id":{quoted},"jsonrpc":"2.0","result":{{"content":[{{"text":"{{\"text\":\"hi\"}}","type":"text"}}],"isError":false,"structuredContent":{{"text":"hi"}}}}}}"#
            )),
        ),
    ];
    for (id, expected) in cases {
        conv.send(&call(id, "alpha", r#"{"text":"hi"}"#)).await;
        assert_eq!(conv.next().await, expected, "id {id}");
    }
}

/// Sends `alpha` calls with id `id` until one is accepted (a cancelled call's cleanup may still hold the
/// stream or the run slot), within a deadline; every refusal must be one of `allowed`.
async fn call_until_accepted(conv: &mut client::Conv, id: &str, allowed: &[Out]) {
    let start = Instant::now();
    loop {
        conv.send(&call(id, "alpha", r#"{"text":"hi"}"#)).await;
        let got = conv.next().await;
        if got == alpha_success(id) {
            return;
        }
        assert!(allowed.contains(&got), "unexpected {got:?}");
        assert!(start.elapsed() < Duration::from_secs(20), "no call accepted within 20 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// §11 and §17 V36, V40, V42, V44: one call in flight, run capacity, cancellation by notification and
/// by reset. One run slot: a call that was not cancelled would hold it for 30 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_and_run_capacity() {
    let d = deployment(64, 1);
    let _gw = start(&d);
    let busy = err(-31999, "Server busy", Some("run_capacity_exhausted"), r#""call-5""#);
    // V42: cancelled by notification; no response for call-3, and a later call is accepted.
    let mut a = ready_stream(d.pcc_port).await;
    a.send(&call(r#""call-3""#, "hang", "{}")).await;
    a.send(&call(r#""call-4""#, "alpha", r#"{"text":"hi"}"#)).await;
    assert_eq!(a.next().await, err(-32600, "Invalid Request", Some("call_in_flight"), r#""call-4""#), "V36");
    // V40: another stream finds the one run slot held.
    let mut b = ready_stream(d.pcc_port).await;
    b.send(&call(r#""call-5""#, "alpha", r#"{"text":"hi"}"#)).await;
    assert_eq!(b.next().await, busy, "V40");
    a.send(&body(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-3","reason":"user"}}"#)).await;
    let in_flight = err(-32600, "Invalid Request", Some("call_in_flight"), r#""call-6""#);
    let busy6 = err(-31999, "Server busy", Some("run_capacity_exhausted"), r#""call-6""#);
    call_until_accepted(&mut a, r#""call-6""#, &[in_flight, busy6.clone()]).await;
    // V44: a held call on a stream the client resets; the slot comes back.
    let mut c2 = ready_stream(d.pcc_port).await;
    c2.send(&call(r#""call-7""#, "hang", "{}")).await;
    // Messages are processed in order: once the ping is answered, the call is in flight.
    c2.send(&ping(2)).await;
    assert_eq!(c2.next().await, pong(2));
    b.send(&call(r#""call-5""#, "alpha", r#"{"text":"hi"}"#)).await;
    assert_eq!(b.next().await, busy, "the reset stream's call holds the slot until it is cancelled");
    drop(c2);
    let busy8 = err(-31999, "Server busy", Some("run_capacity_exhausted"), r#""call-8""#);
    call_until_accepted(&mut b, r#""call-8""#, &[busy8]).await;
    drop(busy6);
}

/// §10 and §17 V7, V59: the stream bound is its own pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_admission_is_separate_from_mcp() {
    let d = deployment(1, 4);
    let _gw = start(&d);
    let auth = format!("Bearer {}", support::TOKEN);
    let meta = [("authorization", auth.as_str())];
    let mut first = open(d.pcc_port, &meta).await.unwrap();
    first.send(&c()).await;
    assert_eq!(first.next().await, Out::Connected);
    let status = open(d.pcc_port, &meta).await.err().expect("V7: a second stream is refused");
    assert_eq!(
        (status.code(), status.message()),
        (Code::ResourceExhausted, "stream_capacity_exhausted"),
        "V7"
    );
    // V59: the idle PCC stream holds no /mcp lease.
    assert_eq!(mcp_entries(d.port).len(), 5, "V59");
    // The slot returns when the stream ends.
    first.send(&In::HalfClose).await;
    assert_eq!(first.next().await, end(Code::Ok, ""));
    let start = Instant::now();
    loop {
        match open(d.pcc_port, &meta).await {
            Ok(_) => break,
            Err(s) => assert_eq!(s.message(), "stream_capacity_exhausted"),
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the slot did not return");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// §17 V12: nothing for 10 s after the stream starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_timeout() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let auth = format!("Bearer {}", support::TOKEN);
    let started = Instant::now();
    let mut conv = open(d.pcc_port, &[("authorization", auth.as_str())]).await.unwrap();
    assert_eq!(conv.next().await, end(Code::DeadlineExceeded, "connect_timeout"));
    let after = started.elapsed();
    assert!(
        after >= Duration::from_millis(9_900) && after < Duration::from_millis(15_000),
        "after {after:?}"
    );
}

/// The same Luau tool over `/mcp` and over PCC returns the same `structuredContent` bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_tool_over_both_fronts_has_the_same_structured_content() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().unwrap();
    let arguments = r#"{"text":"h\u00e9llo \"w\" \\ \ud83d\ude00"}"#;
    let mcp_body = support::mcp::call_body("1", "alpha", arguments);
    let request = Req::b_list(&support::authority(addr))
        .set("Mcp-Method", "tools/call")
        .add("Mcp-Name", "alpha")
        .body(&mcp_body);
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    std::io::Write::write_all(&mut stream, &request.bytes()).unwrap();
    let sse = String::from_utf8(support::sse::read_stream(&mut stream).body()).unwrap();
    let data =
        sse.split("data: ").nth(1).and_then(|d| d.split("\n\n").next()).expect("a message event").to_owned();
    let mut conv = ready_stream(d.pcc_port).await;
    conv.send(&call("1", "alpha", arguments)).await;
    let Out::Json(pcc) = conv.next().await else { panic!("no json") };
    let structured = |s: &str| {
        s[s.find(r#""structuredContent":"#).expect("structuredContent") + 20..s.len() - 2].to_owned()
    };
    assert_eq!(structured(&pcc), structured(&data));
    assert!(structured(&pcc).starts_with(r#"{"text":"#), "{pcc}");
}

/// §14 and §17 V50: an inbound gRPC message over 4,194,304 bytes ends the stream with the library's
/// `RESOURCE_EXHAUSTED`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_grpc_message_is_resource_exhausted() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let auth = format!("Bearer {}", support::TOKEN);
    let mut conv = open(d.pcc_port, &[("authorization", auth.as_str())]).await.unwrap();
    conv.send(&c()).await;
    assert_eq!(conv.next().await, Out::Connected);
    conv.send(&In::Body("x".repeat(4_194_305))).await;
    match conv.next().await {
        Out::End(code, _) => assert_eq!(code, Code::ResourceExhausted, "V50"),
        other => panic!("V50: {other:?}"),
    }
}

/// §5.1 and §17 V47, V48: 60 s without an inbound message while no call is in flight ends a stream; a
/// stream whose held call is in flight is not timed out (its last message is older than the idle
/// stream's, so once that one has ended, this one has been quiet for longer than 60 s too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_timeout() {
    let d = deployment(64, 4);
    let _gw = start(&d);
    let mut busy = ready_stream(d.pcc_port).await;
    busy.send(&call(r#""call-1""#, "beta", "{}")).await;
    busy.send(&ping(1)).await;
    assert_eq!(busy.next().await, pong(1));
    let mut conv = ready_stream(d.pcc_port).await;
    let started = Instant::now();
    let read = tokio::time::timeout(Duration::from_secs(90), conv.next_unbounded())
        .await
        .expect("an end within 90 s");
    assert_eq!(read, end(Code::DeadlineExceeded, "idle_timeout"), "V47");
    let after = started.elapsed();
    assert!(after >= Duration::from_millis(59_500), "after {after:?}");
    // V48: the stream with the call in flight is still open and answers.
    busy.send(&ping(2)).await;
    assert_eq!(busy.next().await, pong(2), "V48: no idle timeout while a call is in flight");
    busy.send(&body(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}"#,
    ))
    .await;
    let records = fixture::audit_records(&d, 1).await;
    assert_eq!(fixture::summary(&records[0]), ("beta", "cancelled", false));
}

/// traces.md §5.2: a PCC call is traced like a `/mcp` one, with `front` `"pcc"` and the stream's trace id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pcc_call_is_traced_with_front_pcc() {
    let d = fixture::deployment_with(64, 4, |d| d.gateway["artifacts"]["trace"] = serde_json::json!(true));
    let _gw = start(&d);
    let mut conv = ready_stream(d.pcc_port).await;
    conv.send(&call("1", "alpha", r#"{"text":"x"}"#)).await;
    let Out::Json(answer) = conv.next().await else { panic!("no json") };
    assert!(answer.contains(r#""structuredContent""#), "{answer}");
    let dir = d.path("artifacts/traces");
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(names.len(), 1, "one trace for one call");
    let text = std::fs::read_to_string(names[0].path()).unwrap();
    let records: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = records.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["run_start", "run_end"]);
    assert_eq!((records[0]["front"].as_str(), records[0]["tool"].as_str()), (Some("pcc"), Some("alpha")));
    assert_eq!(records[0]["trace_id"].as_str().map(str::len), Some(32));
    assert_eq!(records[1]["outcome"], "success");
}
