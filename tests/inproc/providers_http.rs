//! The Streamable HTTP upstream client against the project's HTTP fault fixture (providers.md §16: F26–F32,
//! F36, the HTTP half of F33, modern and legacy acquisition with a static credential, the legacy session id
//! and `DELETE`, event streams with server requests, the result bound and the 128 in-flight slots).
//!
//! The fixture picks its own port and writes it to a file the test waits for; every wait is on a marker-file
//! condition with a deadline. The fixture process is killed and reaped when its guard drops.

use crate::support::http_fixture;
use crate::support::marker as support_marker;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use http_fixture::HttpFixture as Upstream;
use ptc_gateway::testing::config::host::{HeaderScheme, ProtocolEra, ToolEffect, ToolMapping};
use ptc_gateway::testing::config::secret::Secret;
use ptc_gateway::testing::log_capture;
use ptc_gateway::testing::providers::acquire::TransportKind;
use ptc_gateway::testing::providers::http::{acquire_http, CredentialHeader, HttpAcquired, HttpSpec};
use ptc_gateway::testing::providers::listing::Era;
use ptc_gateway::testing::providers::provider_call::{CallOutcome, CallRequest};
use ptc_gateway::testing::providers::transport::{LossFault, TransportFault};
use ptc_gateway::testing::providers::{CallFailure, Dispatch, FailureClass};
use serde_json::Value as Json;
use serde_json::{Map, Value};
use support_marker::MarkerFile;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TOOLS: [&str; 12] = [
    "echo",
    "slow",
    "weather",
    "status500",
    "status404",
    "status307",
    "status401",
    "garbage_sse",
    "short_sse",
    "big",
    "chatty",
    "forget",
];

impl MarkerFile for Upstream {
    fn marker_path(&self) -> &Path {
        &self.marker
    }
}

impl Upstream {
    fn spec(&self, protocol: ProtocolEra, token: &str) -> HttpSpec {
        let tools = TOOLS
            .map(|n| {
                (
                    n.to_owned(),
                    ToolMapping { alias: format!("fx.{n}"), effect: ToolEffect::Read, description: None },
                )
            })
            .into_iter()
            .collect::<BTreeMap<_, _>>();
        HttpSpec {
            endpoint: self.endpoint("?tenant=a"),
            allow_insecure_loopback: true,
            headers: vec![CredentialHeader {
                name: "Authorization".into(),
                scheme: HeaderScheme::Bearer,
                value: Secret::new(token.into()),
            }],
            protocol,
            start_timeout_ms: 5_000,
            tools,
            version: "0.1.0".into(),
        }
    }

    async fn acquire(&self, protocol: ProtocolEra) -> HttpAcquired {
        match acquire_http(&self.spec(protocol, "s3cret")).await {
            Ok(acquired) => acquired,
            Err(e) => panic!("acquisition failed: {e:?}"),
        }
    }

    fn calls(&self) -> Vec<Json> {
        self.of("recv").into_iter().filter(|e| e["method"] == "tools/call").collect()
    }
}

fn args(pairs: &[(&str, Value)]) -> Value {
    Value::Object(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<Map<String, Value>>())
}

fn request(
    era: Era,
    name: &'static str,
    arguments: Value,
    timeout_ms: u64,
    max: u64,
) -> CallRequest<'static> {
    CallRequest {
        era,
        version: "0.1.0",
        name,
        arguments,
        traceparent: TRACEPARENT,
        deadline: tokio::time::Instant::now() + Duration::from_millis(timeout_ms),
        max_result_bytes: max,
        inspect: None,
    }
}

async fn call(acquired: &HttpAcquired, name: &'static str, arguments: Value, timeout_ms: u64) -> CallOutcome {
    let request = request(acquired.facts.era, name, arguments, timeout_ms, 262_144);
    acquired.transport.call(request, std::future::pending()).await
}

fn failure_of(outcome: &CallOutcome) -> CallFailure {
    outcome.result.as_ref().unwrap_err().failure
}

async fn echo_succeeds(acquired: &HttpAcquired) {
    let outcome = call(acquired, "echo", args(&[("n", Value::from(7))]), 5_000).await;
    assert_eq!(outcome.result.unwrap().value.unwrap(), args(&[("n", Value::from(7))]));
}

fn loss(acquired: &HttpAcquired) -> Option<LossFault> {
    *acquired.transport.events().loss.borrow()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_acquisition_sends_the_modern_headers_and_never_a_session() {
    let up = Upstream::start("modern,auth");
    let acquired = up.acquire(ProtocolEra::Auto).await;
    assert_eq!((acquired.facts.transport, acquired.facts.era), (TransportKind::StreamableHttp, Era::Modern));
    assert_eq!(acquired.facts.executable_digest, None);
    let facts = ptc_gateway::testing::json::to_deterministic_string(&acquired.facts.to_value());
    assert!(
        facts.contains(r#""executable_digest":null"#) && facts.contains(r#""transport":"streamable_http""#)
    );
    echo_succeeds(&acquired).await;
    let padded = args(&[("region", Value::String(" padded ".into()))]);
    assert!(call(&acquired, "weather", padded, 5_000).await.result.is_ok());
    let unmirrorable = call(&acquired, "weather", args(&[("region", Value::from(1.5))]), 5_000).await;
    assert_eq!(failure_of(&unmirrorable), CallFailure::new(FailureClass::McpRequestInvalid, Dispatch::False));
    assert_eq!(up.methods(), ["server/discover", "tools/list", "tools/call", "tools/call"]);
    let recv = up.of("recv");
    for event in &recv {
        let h = &event["headers"];
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["accept"], "application/json, text/event-stream");
        assert_eq!(h["user-agent"], "ptc-gateway/0.1.0");
        assert_eq!(h["authorization"], "Bearer s3cret");
        assert_eq!(h["mcp-protocol-version"], "2026-07-28");
        assert_eq!(h["mcp-method"], event["method"]);
        assert!(h.get("mcp-session-id").is_none());
    }
    assert!(recv[0]["headers"].get("traceparent").is_none(), "acquisition requests carry no trace context");
    // F33, HTTP half: the header equals `_meta.traceparent`.
    let echo = &recv[2];
    assert_eq!(echo["headers"]["traceparent"], TRACEPARENT);
    assert_eq!(echo["params"]["_meta"]["traceparent"], TRACEPARENT);
    assert_eq!(echo["headers"]["mcp-name"], "echo");
    assert_eq!(recv[3]["headers"]["mcp-param-region"], "=?base64?IHBhZGRlZCA=?=");
    let end = acquired.transport.close().await;
    assert_eq!((end.fault, end.exit_status), (TransportFault::Close, None));
    assert!(up.of("delete").is_empty(), "a modern acquisition never sends DELETE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_acquisition_carries_the_session_id_and_deletes_it_on_close() {
    for protocol in [ProtocolEra::Auto, ProtocolEra::Legacy] {
        let up = Upstream::start("legacy,session,auth");
        let acquired = up.acquire(protocol).await;
        assert_eq!(
            (acquired.facts.era, acquired.facts.protocol_version.as_str()),
            (Era::Legacy, "2025-06-18")
        );
        echo_succeeds(&acquired).await;
        let mut expected = vec!["initialize", "notifications/initialized", "tools/list", "tools/call"];
        if protocol == ProtocolEra::Auto {
            expected.insert(0, "server/discover");
        }
        assert_eq!(up.methods(), expected, "{protocol:?}");
        let recv = up.of("recv");
        let init = recv.iter().find(|e| e["method"] == "initialize").unwrap();
        assert!(init["headers"].get("mcp-protocol-version").is_none(), "no era header on initialize");
        assert!(init["headers"].get("mcp-session-id").is_none());
        for later in recv.iter().skip_while(|e| e["method"] != "initialize").skip(1) {
            assert_eq!(later["headers"]["mcp-session-id"], "session-1", "{later}");
            assert_eq!(later["headers"]["mcp-protocol-version"], "2025-06-18");
            assert!(later["headers"].get("mcp-method").is_none());
        }
        let call = up.calls().pop().unwrap();
        assert_eq!(call["headers"]["traceparent"], TRACEPARENT);
        assert_eq!(call["params"]["_meta"], serde_json::json!({ "traceparent": TRACEPARENT }));
        let end = acquired.transport.close().await;
        assert_eq!(end.fault, TransportFault::Close);
        let deletes = up.of("delete");
        assert_eq!(deletes.len(), 1);
        assert_eq!(
            (deletes[0]["session"].as_str(), deletes[0]["authorization"].as_str()),
            (Some("session-1"), Some("Bearer s3cret"))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_statuses_decide_the_era_or_the_failure() {
    use FailureClass::*;
    // F36 and the probe half of F26: (mode, protocol, Ok = acquired legacy | Err = class).
    let rows: &[(&str, ProtocolEra, Result<(), FailureClass>)] = &[
        ("legacy,discover=400", ProtocolEra::Auto, Ok(())),
        ("legacy,discover=404", ProtocolEra::Auto, Ok(())),
        ("legacy,discover=405", ProtocolEra::Auto, Ok(())),
        ("legacy,discover=503", ProtocolEra::Auto, Ok(())),
        ("legacy,discover=500", ProtocolEra::Auto, Ok(())),
        ("legacy,discover=400", ProtocolEra::Modern, Err(ProviderProtocolVersionUnsupported)),
        ("legacy,discover=404", ProtocolEra::Modern, Err(ProviderProtocolVersionUnsupported)),
        ("legacy,discover=405", ProtocolEra::Modern, Err(ProviderProtocolVersionUnsupported)),
        ("legacy,discover=503", ProtocolEra::Modern, Err(McpTransportError)),
        ("legacy,discover=500", ProtocolEra::Modern, Err(McpTransportError)),
        ("legacy,discover=500,init=500", ProtocolEra::Auto, Err(McpTransportError)),
        ("legacy,discover=302", ProtocolEra::Auto, Err(McpTransportError)),
        ("legacy,discover=302", ProtocolEra::Modern, Err(McpTransportError)),
        ("legacy,discover=307", ProtocolEra::Auto, Err(McpTransportError)),
        ("legacy,discover=401", ProtocolEra::Auto, Err(McpAuthenticationFailed)),
        ("legacy,discover=401", ProtocolEra::Modern, Err(McpAuthenticationFailed)),
        ("legacy,discover=403", ProtocolEra::Auto, Err(McpAuthenticationFailed)),
        ("legacy,discover=403", ProtocolEra::Modern, Err(McpAuthenticationFailed)),
        ("modern,init=401", ProtocolEra::Legacy, Err(McpAuthenticationFailed)),
    ];
    for (mode, protocol, expected) in rows {
        let up = Upstream::start(mode);
        match (acquire_http(&up.spec(*protocol, "s3cret")).await, expected) {
            (Ok(acquired), Ok(())) => {
                assert_eq!(acquired.facts.era, Era::Legacy, "{mode}");
                assert_eq!(up.methods()[..2], ["server/discover", "initialize"], "{mode}");
                acquired.transport.close().await;
            }
            (Err(error), Err(class)) => {
                assert_eq!(error.class(), Some(*class), "{mode} {protocol:?}");
                let follows = mode.contains("init=") || *protocol == ProtocolEra::Legacy;
                assert_eq!(up.methods().contains(&"initialize".to_owned()), follows, "{mode} {protocol:?}");
            }
            (got, _) => panic!("{mode} {protocol:?}: {:?}", got.err()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silence_bad_annotations_and_bad_sessions_fail_the_acquisition() {
    use FailureClass::*;
    // (mode, protocol, start_timeout_ms, Ok = acquired legacy | Err = class) — §6.2 silent probe, §7.1,
    // §7.3 x-mcp-header, §5.4 session id rule, §6.3 step 4 over HTTP.
    let rows: &[(&str, ProtocolEra, u64, Result<(), FailureClass>)] = &[
        ("legacy,discover_silent", ProtocolEra::Auto, 2_000, Ok(())),
        ("legacy,discover_silent", ProtocolEra::Modern, 1_000, Err(ProviderAcquisitionTimeout)),
        ("modern,bad_header", ProtocolEra::Auto, 5_000, Err(ProviderToolMissing)),
        ("legacy,session,bad_session", ProtocolEra::Legacy, 5_000, Err(McpProtocolError)),
        ("legacy,old_version", ProtocolEra::Legacy, 5_000, Err(ProviderProtocolVersionUnsupported)),
    ];
    for (mode, protocol, timeout, expected) in rows {
        let up = Upstream::start(mode);
        let mut spec = up.spec(*protocol, "s3cret");
        spec.start_timeout_ms = *timeout;
        let started = Instant::now();
        let got = acquire_http(&spec).await;
        let elapsed = started.elapsed();
        match (got, expected) {
            (Ok(acquired), Ok(())) => {
                // The probe window is min(floor(2000 / 2), 10000) = 1000 ms.
                assert!(elapsed >= Duration::from_millis(1_000), "{mode}: the probe window was not waited");
                assert_eq!(acquired.facts.era, Era::Legacy);
                acquired.transport.close().await;
            }
            (Err(error), Err(class)) => {
                assert_eq!(error.class(), Some(*class), "{mode}");
                assert!(elapsed < Duration::from_millis(timeout + 2_000), "{mode}: too slow");
            }
            (got, _) => panic!("{mode}: {:?}", got.err()),
        }
        if mode.contains("silent") {
            // The abandoned probe's connection was closed, not left open.
            up.wait_for("the probe's closed connection", |e| e.iter().any(|e| e["event"] == "conn_closed"))
                .await;
        }
        if mode.contains("bad_session") {
            assert!(up.of("delete").is_empty(), "an invalid id is never sent back");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_credential_is_an_authentication_failure_at_the_probe() {
    // F30, probe half: no fallback and no initialize.
    for protocol in [ProtocolEra::Auto, ProtocolEra::Modern] {
        let up = Upstream::start("legacy,auth");
        let error = acquire_http(&up.spec(protocol, "wrong")).await.err().unwrap();
        assert_eq!(error.class(), Some(FailureClass::McpAuthenticationFailed));
        assert_eq!(up.methods(), ["server/discover"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_request_failures_have_their_class_and_never_fence() {
    use FailureClass::*;
    // F26, F27, F29, F30 (call half), F31 (redirect), F18, and a server request on a modern stream.
    let up = Upstream::start("modern");
    let acquired = up.acquire(ProtocolEra::Auto).await;
    let rows: &[(&'static str, FailureClass, Dispatch)] = &[
        ("status500", McpTransportError, Dispatch::True),
        ("status404", McpUpstreamError, Dispatch::True),
        ("status401", McpAuthenticationFailed, Dispatch::True),
        ("status307", McpTransportError, Dispatch::True),
        ("garbage_sse", McpProtocolError, Dispatch::Unknown),
        ("short_sse", McpTransportError, Dispatch::Unknown),
        ("chatty", McpProtocolError, Dispatch::Unknown),
    ];
    for (tool, class, dispatch) in rows {
        let outcome = call(&acquired, tool, args(&[]), 5_000).await;
        assert_eq!(failure_of(&outcome), CallFailure::new(*class, *dispatch), "{tool}");
        echo_succeeds(&acquired).await;
    }
    let big = request(Era::Modern, "big", args(&[("size", Value::from(2048))]), 5_000, 1024);
    let big = acquired.transport.call(big, std::future::pending()).await;
    assert_eq!(failure_of(&big), CallFailure::new(McpResultTooLarge, Dispatch::True));
    echo_succeeds(&acquired).await;
    assert_eq!(loss(&acquired), None);
    assert!(acquired.transport.idle_connections() <= 4);
    assert_eq!(acquired.transport.close().await.fault, TransportFault::Close);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_variables_are_never_consulted() {
    // F31, proxy half: a listener stands in for the proxy and must never see a connection.
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    proxy.set_nonblocking(true).unwrap();
    let url = format!("http://{}", proxy.local_addr().unwrap());
    for var in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"] {
        std::env::set_var(var, &url);
    }
    let up = Upstream::start("modern");
    let acquired = up.acquire(ProtocolEra::Auto).await;
    echo_succeeds(&acquired).await;
    acquired.transport.close().await;
    assert_eq!(proxy.accept().unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_event_streams_answer_server_requests_by_post() {
    // F22 over HTTP, and a whole legacy acquisition through event streams.
    let up = Upstream::start("legacy,session,sse");
    let acquired = up.acquire(ProtocolEra::Auto).await;
    let outcome = call(&acquired, "chatty", args(&[]), 10_000).await;
    assert_eq!(outcome.result.unwrap().value.unwrap(), args(&[("chatty", Value::Bool(true))]));
    let replies = up.of("reply");
    let lines: Vec<&str> = replies.iter().map(|e| e["line"].as_str().unwrap()).collect();
    assert_eq!(
        lines,
        [
            r#"{"id":"s1","jsonrpc":"2.0","result":{}}"#,
            r#"{"error":{"code":-32601,"message":"Method not found"},"id":"s2","jsonrpc":"2.0"}"#
        ]
    );
    assert!(replies.iter().all(|e| e["session"] == "session-1"));
    let big = request(Era::Legacy, "big", args(&[("size", Value::from(2048))]), 5_000, 1024);
    let big = acquired.transport.call(big, std::future::pending()).await;
    assert_eq!(failure_of(&big), CallFailure::new(FailureClass::McpResultTooLarge, Dispatch::True));
    echo_succeeds(&acquired).await;
    acquired.transport.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_closes_the_stream_or_posts_a_cancellation_per_era() {
    // F32.
    for mode in ["modern", "legacy,session"] {
        let up = Upstream::start(mode);
        let acquired = up.acquire(ProtocolEra::Auto).await;
        let started = Instant::now();
        let outcome = call(&acquired, "slow", args(&[]), 500).await;
        assert_eq!(
            failure_of(&outcome),
            CallFailure::new(FailureClass::McpTimeout, Dispatch::Unknown),
            "{mode}"
        );
        assert!(started.elapsed() >= Duration::from_millis(500));
        outcome.settlement.unwrap().settled().await.unwrap();
        let id = up.calls()[0]["id"].clone();
        up.wait_for("the closed connection", |e| {
            e.iter().any(|e| e["event"] == "conn_closed" && e["id"] == id)
        })
        .await;
        let cancelled = up.of("cancelled");
        if mode == "modern" {
            assert!(cancelled.is_empty(), "no notifications/cancelled over modern HTTP");
        } else {
            assert_eq!(cancelled.len(), 1);
            assert_eq!((&cancelled[0]["requestId"], &cancelled[0]["reason"]), (&id, &Json::from("timeout")));
            assert_eq!(cancelled[0]["session"], "session-1");
        }
        assert_eq!(acquired.transport.counters().detached.load(Ordering::Relaxed), 1);
        echo_succeeds(&acquired).await;
        assert_eq!(loss(&acquired), None);
        acquired.transport.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuing_task_that_ends_abandons_its_exchange() {
    // §10.1: the transport owner owns the request; the issuer going away abandons it as cancelled.
    for mode in ["modern", "legacy,session"] {
        let up = Upstream::start(mode);
        let acquired = std::sync::Arc::new(up.acquire(ProtocolEra::Auto).await);
        let issuer = {
            let acquired = acquired.clone();
            tokio::spawn(async move { call(&acquired, "slow", args(&[]), 60_000).await })
        };
        up.wait_for("the slow call", |e| e.iter().any(|e| e["method"] == "tools/call")).await;
        issuer.abort();
        up.wait_for("the closed connection", |e| e.iter().any(|e| e["event"] == "conn_closed")).await;
        let cancelled = up.of("cancelled");
        if mode == "modern" {
            assert!(cancelled.is_empty());
        } else {
            up.wait_for("the cancellation", |e| e.iter().any(|e| e["event"] == "cancelled")).await;
            assert_eq!(up.of("cancelled")[0]["reason"], "cancelled");
        }
        assert_eq!(acquired.transport.counters().detached.load(Ordering::Relaxed), 1);
        echo_succeeds(&acquired).await;
        let acquired = std::sync::Arc::into_inner(acquired).unwrap();
        assert_eq!(acquired.transport.close().await.fault, TransportFault::Close);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_session_reinitialises_once_and_a_second_loss_fences() {
    // F28.
    let up = Upstream::start("legacy,session");
    let acquired = up.acquire(ProtocolEra::Legacy).await;
    let lost = call(&acquired, "forget", args(&[]), 5_000).await;
    assert_eq!(failure_of(&lost), CallFailure::new(FailureClass::McpTransportError, Dispatch::True));
    echo_succeeds(&acquired).await;
    let inits = up.of("recv").into_iter().filter(|e| e["method"] == "initialize").count();
    assert_eq!(inits, 2);
    let last = up.calls().pop().unwrap();
    assert_eq!(last["headers"]["mcp-session-id"], "session-2");
    assert!(last["headers"].get("mcp-session-id").is_some());
    assert_eq!(loss(&acquired), None);
    // A second loss within 30 s: transport-owner loss, no further initialize.
    let again = call(&acquired, "forget", args(&[]), 5_000).await;
    assert_eq!(failure_of(&again), CallFailure::new(FailureClass::McpTransportError, Dispatch::True));
    assert_eq!(loss(&acquired), Some(LossFault::TransportError));
    let refused = call(&acquired, "echo", args(&[]), 5_000).await;
    assert_eq!(failure_of(&refused), CallFailure::new(FailureClass::ProviderUnavailable, Dispatch::False));
    assert_eq!(up.of("recv").iter().filter(|e| e["method"] == "initialize").count(), 2);
    assert_eq!(acquired.transport.close().await.fault, TransportFault::TransportError);

    // Changed facts on re-initialisation: loss with fault protocol_error.
    let up = Upstream::start("legacy,session,change_on_reinit");
    let acquired = up.acquire(ProtocolEra::Legacy).await;
    call(&acquired, "forget", args(&[]), 5_000).await;
    let mut events = acquired.transport.events();
    tokio::time::timeout(Duration::from_secs(10), events.loss.wait_for(Option::is_some))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(loss(&acquired), Some(LossFault::ProtocolError));
    assert!(up.of("delete").is_empty(), "nothing is deleted before the close");
    assert_eq!(acquired.transport.close().await.fault, TransportFault::ProtocolError);
    // §5.4 "Close": the session the re-initialisation opened (and did not adopt) is deleted; the
    // forgotten one is not (the server said it no longer has it).
    let deleted: Vec<Json> = up.of("delete").iter().map(|e| e["session"].clone()).collect();
    assert_eq!(deleted, [Json::from("session-2")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_129th_request_is_busy_before_dispatch() {
    // F19 without admission, over HTTP.
    let up = Upstream::start("modern");
    let acquired = up.acquire(ProtocolEra::Auto).await;
    let (outcomes, refused) = {
        let calls = (0..128).map(|_| call(&acquired, "slow", args(&[]), 60_000));
        let all = futures::future::join_all(calls);
        let busy = async {
            up.wait_for("128 calls", |e| e.iter().filter(|e| e["method"] == "tools/call").count() == 128)
                .await;
            let refused = call(&acquired, "slow", args(&[]), 60_000).await;
            up.release();
            refused
        };
        tokio::join!(all, busy)
    };
    let failure = failure_of(&refused);
    assert_eq!(failure, CallFailure::new(FailureClass::McpTransportBusy, Dispatch::False));
    assert!(failure.retryable());
    assert_eq!(acquired.transport.counters().busy.load(Ordering::Relaxed), 1);
    assert!(outcomes.iter().all(|o| o.result.is_ok()));
    assert_eq!(up.calls().len(), 128);
    echo_succeeds(&acquired).await;
    assert!(acquired.transport.idle_connections() <= 4);
    acquired.transport.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_verifies_the_server_before_anything_is_sent() {
    // §5.1: a loopback port that does not speak TLS fails the handshake; the probe is never written.
    let up = Upstream::start("modern");
    let mut spec = up.spec(ProtocolEra::Auto, "s3cret");
    spec.endpoint = format!("https://127.0.0.1:{}/mcp", up.port);
    spec.allow_insecure_loopback = false;
    let error = acquire_http(&spec).await.err().unwrap();
    assert_eq!(error.class(), Some(FailureClass::McpTransportError));
    assert!(up.methods().is_empty());
    assert!(up.dir.path().exists());
}

/// providers.md §12.2 (and §7.1): the request an acquisition deadline ended is named in one `debug` line,
/// the class unchanged. Current-thread, so every task of the acquisition logs to this thread's capture.
#[tokio::test(flavor = "current_thread")]
async fn the_debug_line_names_the_request_the_acquisition_deadline_ended() {
    let rows: &[(&str, ProtocolEra, &str)] = &[
        ("legacy,discover_silent", ProtocolEra::Modern, "server/discover"),
        ("legacy,init_silent", ProtocolEra::Legacy, "initialize"),
        ("legacy,list_silent", ProtocolEra::Legacy, "tools/list"),
    ];
    for (mode, protocol, step) in rows {
        let up = Upstream::start(mode);
        let mut spec = up.spec(*protocol, "s3cret");
        spec.start_timeout_ms = 500;
        let log = log_capture::capture();
        let got = acquire_http(&spec).await;
        let lines = log.lines_with("acquisition deadline");
        drop(log);
        assert_eq!(
            got.err().and_then(|e| e.class()),
            Some(FailureClass::ProviderAcquisitionTimeout),
            "{mode}"
        );
        assert_eq!(lines, [format!(r#"DEBUG the acquisition deadline passed step="{step}""#)], "{mode}");
    }
}
