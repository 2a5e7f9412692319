//! models.md §3.2, §4.1, §5: one model site against a loopback HTTP/1.1 server: the exact request line and
//! headers, the warm pool (a 200 keeps its connection, a refusal closes it, at most `max_idle` stay idle),
//! and a timeout that closes the connection in flight.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::time::Instant;

use super::chat::ModelDefaults;
use super::client::Failed;
use super::{ModelSite, ModelSpec};
use crate::codes::model::ModelFailure;
use crate::codes::provider::Dispatch;
use crate::events::counters::PairSlots;
use crate::providers::http::endpoint::Endpoint;

const ANSWER: &str =
    r#"{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}"#;

/// A 200 body that breaks models.md §4.3 (a role other than `assistant`), with text that must never reach
/// the log.
const BAD_ANSWER: &str = r#"{"choices":[{"message":{"role":"user","content":"sk-body-secret"}}]}"#;

/// What the server saw: each request's head, and how many connections it accepted and saw closed.
#[derive(Default)]
struct Seen {
    heads: Mutex<Vec<String>>,
    accepted: AtomicUsize,
    closed: AtomicUsize,
}

/// A server answering `/v1/chat/completions` with 200 [`ANSWER`], `/v1/bad/…` with 200 [`BAD_ANSWER`], `/status/<n>` paths with that status, and
/// `/v1/hold/chat/completions` never.
async fn server() -> (u16, Arc<Seen>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Seen::default());
    let shared = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            shared.accepted.fetch_add(1, Ordering::SeqCst);
            let seen = shared.clone();
            tokio::spawn(async move {
                let handler = seen.clone();
                let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                    let seen = handler.clone();
                    async move {
                        let mut head = format!("{} {}", req.method(), req.uri());
                        let mut names: Vec<_> = req
                            .headers()
                            .iter()
                            .map(|(k, v)| format!("{k}: {}", v.to_str().unwrap()))
                            .collect();
                        names.sort();
                        for line in names {
                            head.push('\n');
                            head.push_str(&line);
                        }
                        let path = req.uri().path().to_owned();
                        let _ = req.into_body().collect().await;
                        seen.heads.lock().unwrap().push(head);
                        if path.starts_with("/v1/hold") {
                            std::future::pending::<()>().await;
                        }
                        let status = path
                            .strip_prefix("/status/")
                            .and_then(|s| s.split('/').next())
                            .and_then(|s| s.parse().ok())
                            .unwrap_or(200);
                        let answer = if path.starts_with("/v1/bad") { BAD_ANSWER } else { ANSWER };
                        let mut response = Response::new(Full::new(Bytes::from_static(answer.as_bytes())));
                        *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
                seen.closed.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    (port, seen)
}

fn site(port: u16, path: &str, max_idle: usize, timeout: Duration) -> ModelSite {
    let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}{path}"), true).unwrap();
    let spec = ModelSpec {
        tool: ("t", 0),
        declaration: "llm",
        endpoint,
        credential: "sk-test",
        defaults: ModelDefaults { model: "m".into(), temperature: None, max_tokens: None },
        timeout,
        max_idle,
        gateway_version: "0.1.0",
    };
    ModelSite::new(spec, PairSlots::detached("t", "llm")).unwrap()
}

fn body() -> Vec<u8> {
    br#"{"messages":[{"content":"hi","role":"user"}],"model":"m"}"#.to_vec()
}

async fn until(what: &str, done: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(5), "{what} within 5 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn never() -> std::future::Pending<()> {
    std::future::pending()
}

// models.md §4.1: the exact request line and header set; models.md §3.2: a 200 leaves its connection warm and the
// next call reuses it.
#[tokio::test]
async fn the_request_is_exact_and_a_success_keeps_its_connection() {
    let (port, seen) = server().await;
    let site = site(port, "/v1/", 4, Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(5);
    for _ in 0..2 {
        let answer = site.client().chat(body(), deadline, true, never()).await.unwrap();
        assert_eq!(answer.finish_reason.as_deref(), Some("stop"));
        assert_eq!(site.idle_connections(), 1);
    }
    assert_eq!(seen.accepted.load(Ordering::SeqCst), 1, "the second call reused the warm connection");
    let heads = seen.heads.lock().unwrap().clone();
    let want = format!(
        "POST /v1/chat/completions\naccept: application/json\nauthorization: Bearer sk-test\ncontent-length: {}\ncontent-type: application/json\nhost: 127.0.0.1:{port}\nuser-agent: ptc-gateway/0.1.0",
        body().len()
    );
    assert_eq!(heads, vec![want.clone(), want]);
}

// models.md §5.1 step 6: a refusal's body is not read and its connection is closed, not pooled.
#[tokio::test]
async fn a_refusal_closes_its_connection() {
    let (port, seen) = server().await;
    let site = site(port, "/status/429", 4, Duration::from_secs(5));
    let got = site.client().chat(body(), Instant::now() + Duration::from_secs(5), true, never()).await;
    assert_eq!(got.err(), Some(Failed::from((ModelFailure::RateLimited, Dispatch::True))));
    assert_eq!(site.idle_connections(), 0);
    until("the server saw the close", || seen.closed.load(Ordering::SeqCst) == 1).await;
}

// models.md §3.2: at most `max_idle` connections stay warm after concurrent calls.
#[tokio::test]
async fn at_most_max_idle_connections_stay_warm() {
    let (port, seen) = server().await;
    let site = Arc::new(site(port, "/v1", 2, Duration::from_secs(5)));
    let deadline = Instant::now() + Duration::from_secs(5);
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let site = site.clone();
            tokio::spawn(async move { site.client().chat(body(), deadline, true, never()).await.is_ok() })
        })
        .collect();
    for call in calls {
        assert!(call.await.unwrap());
    }
    assert!(site.idle_connections() <= 2, "{} idle", site.idle_connections());
    let accepted = seen.accepted.load(Ordering::SeqCst);
    until("the connections beyond the bound closed", || {
        seen.closed.load(Ordering::SeqCst) == accepted - site.idle_connections()
    })
    .await;
    site.close();
    assert_eq!(site.idle_connections(), 0);
}

// models.md §5.2: the site's own timeout ends a held request as `model_timeout`, dispatch `unknown`, and
// closes its connection; with the run's deadline first it is `model_cancelled`.
#[tokio::test]
async fn a_timeout_closes_the_request_in_flight() {
    let (port, seen) = server().await;
    let site = site(port, "/v1/hold", 4, Duration::from_millis(50));
    for (timeout_first, class) in [(true, ModelFailure::Timeout), (false, ModelFailure::Cancelled)] {
        let closed = seen.closed.load(Ordering::SeqCst);
        let got = site
            .client()
            .chat(body(), Instant::now() + Duration::from_millis(50), timeout_first, never())
            .await;
        assert_eq!(got.err(), Some(Failed::from((class, Dispatch::Unknown))));
        until("the server saw the close", || seen.closed.load(Ordering::SeqCst) == closed + 1).await;
    }
    assert_eq!(site.idle_connections(), 0);
}

// models.md §5.1 step 5: nothing listening: `model_transport_error`, nothing written.
#[tokio::test]
async fn no_listener_is_a_transport_error_with_nothing_sent() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let site = site(port, "/v1", 4, Duration::from_secs(5));
    let log = crate::support::log_capture::capture();
    let got = site.client().chat(body(), Instant::now() + Duration::from_secs(5), true, never()).await;
    assert_eq!(got.err(), Some(Failed::from((ModelFailure::TransportError, Dispatch::False))));
    // Why nothing was sent is in the debug log: the OS's reason, and not the endpoint.
    assert_eq!(
        log.lines_with("not opened"),
        [format!(
            "DEBUG upstream connection not opened error={}",
            std::io::Error::from_raw_os_error(nix::errno::Errno::ECONNREFUSED as i32)
        )]
    );
}

// models.md §3.2 and §5.1 step 3: once the runtime closed its model sites (shutdown stage S5, or a
// startup failure), a call is `provider_unavailable`, nothing sent; before that the same call is answered.
#[tokio::test]
async fn a_closed_site_refuses_calls_unsent() {
    use crate::codes::domain::DomainContext;
    use crate::events::EventLog;
    use crate::json::{decode, Limits};
    use crate::providers::admission::CallAdmission;
    use crate::providers::runtime::ProviderRuntime;
    use ptc_actors::{AdmissionPool, RefusalOrder};

    let (port, seen) = server().await;
    let model = Arc::new(site(port, "/v1", 4, Duration::from_secs(5)));
    let admission = CallAdmission::new(4, 0, AdmissionPool::new("p", 4, RefusalOrder::UnavailableFirst));
    let domain = DomainContext::new(Arc::new(EventLog::disabled()));
    let runtime = ProviderRuntime::new(
        (Vec::new(), vec![model.clone()]),
        admission,
        domain,
        EventLog::disabled(),
        "0.1.0".into(),
    );
    let request = decode(br#"{"messages":[{"role":"user","content":"hi"}]}"#, Limits::DOCUMENT).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let answered = runtime.chat(&model, &request, deadline, never).await;
    assert!(answered.is_ok(), "{answered:?}");
    assert!(runtime.close_all().await);
    assert!(model.is_closed());
    let refused = runtime.chat(&model, &request, deadline, never).await;
    assert_eq!(refused.err(), Some((ModelFailure::Unavailable, Dispatch::False)));
    assert_eq!(seen.heads.lock().unwrap().len(), 1, "the refused call sent nothing");
}

/// The runtime of one model site, with no tool sites and no event log.
fn runtime_of(model: Arc<ModelSite>) -> crate::providers::runtime::ProviderRuntime {
    use crate::codes::domain::DomainContext;
    use crate::events::EventLog;
    use crate::providers::admission::CallAdmission;
    use crate::providers::runtime::ProviderRuntime;
    use ptc_actors::{AdmissionPool, RefusalOrder};

    let admission = CallAdmission::new(4, 0, AdmissionPool::new("p", 4, RefusalOrder::UnavailableFirst));
    let domain = DomainContext::new(Arc::new(EventLog::disabled()));
    ProviderRuntime::new((Vec::new(), vec![model]), admission, domain, EventLog::disabled(), "0.1.0".into())
}

// models.md §4.3, §6 and §9 "Diagnostics": a 200 answer that breaks the answer's rule is `model_protocol_error`,
// dispatch `true`, as before; the debug log names the tool, the provider and the rule broken, and none of
// the body's text. Other failures leave no such line.
#[tokio::test]
async fn a_refused_answer_names_its_member_in_the_debug_log_only() {
    use crate::json::{decode, Limits};

    let (port, _seen) = server().await;
    let request = decode(br#"{"messages":[{"role":"user","content":"hi"}]}"#, Limits::DOCUMENT).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let log = crate::support::log_capture::capture();
    let table = [
        (
            "/v1/bad",
            Err((ModelFailure::ProtocolError, Dispatch::True)),
            vec![
                r#"DEBUG model answer refused tool=t provider=llm class="model_protocol_error" mismatch=/choices/0/message/role: expected "assistant", null or absent"#,
            ],
        ),
        ("/status/500/v1", Err((ModelFailure::UpstreamError, Dispatch::True)), vec![]),
        ("/v1", Ok(()), vec![]),
    ];
    let mut seen = 0;
    for (path, want, lines) in table {
        let runtime = runtime_of(Arc::new(site(port, path, 4, Duration::from_secs(5))));
        let model = runtime.models()[0].clone();
        let got = runtime.chat(&model, &request, deadline, never).await.map(|_| ());
        assert_eq!(got, want, "{path}");
        let logged = log.lines_with("model answer refused");
        assert_eq!(logged[seen..], lines, "{path}");
        seen = logged.len();
    }
    assert_eq!(log.lines_with("sk-body-secret"), Vec::<String>::new());
}
