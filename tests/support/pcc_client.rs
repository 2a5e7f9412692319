//! A PCC client over the generated tonic client of `schemas/pcc_tool_gateway.proto` (pcc.md §2), for
//! the PCC tests of every binary (pcc_front, pcc_upstream, providers_gateway, pcc_inproc, the soak).

use std::time::Duration;

use crate::support::pcc_proto::create_mcp_transport_request::{Connect, Request};
use crate::support::pcc_proto::create_mcp_transport_response::Response;
use crate::support::pcc_proto::pcc_tool_gateway_client::PccToolGatewayClient;
use crate::support::pcc_proto::{
    CreateMcpTransportRequest, CreateMcpTransportResponse, TenantInfo, TraceContext,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::metadata::MetadataValue;
use tonic::{Code, Status, Streaming};

/// How long any one expected message may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// One inbound step.
#[derive(Clone, Debug)]
pub enum In {
    /// `connect{server_id, request_id}` with the trace context of `C` (pcc.md §17).
    Connect(&'static str, &'static str),
    Body(String),
    /// A message with neither field set.
    Empty,
    /// Any message as built by the test (for example a `connect` with `tenant_info`).
    Raw(CreateMcpTransportRequest),
    HalfClose,
}

/// One thing read from the stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    Connected,
    Json(String),
    /// The final status: code and message (`Code::Ok` for a clean end).
    End(Code, String),
}

pub fn c() -> In {
    In::Connect("srv-1", "req-1")
}

pub fn body(s: &str) -> In {
    In::Body(s.to_owned())
}

/// `H`: `initialize` with id 0, then `notifications/initialized`.
pub fn h() -> Vec<In> {
    vec![
        body(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        ),
        body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
    ]
}

/// The `initialize` answer of `H` (pcc.md §7.1).
pub fn initialized(id: i64, version: &str) -> Out {
    Out::Json(format!(
        r#"{{"id":{id},"jsonrpc":"2.0","result":{{"capabilities":{{"tools":{{"listChanged":false}}}},"protocolVersion":"{version}","serverInfo":{{"name":"ptc-gateway","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    ))
}

fn message(step: &In) -> Option<CreateMcpTransportRequest> {
    let request = match step {
        In::Connect(server, request_id) => Some(Request::Connect(Connect {
            server_id: (*server).into(),
            request_id: (*request_id).into(),
            trace_context: Some(TraceContext {
                trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
                span_id: "00f067aa0ba902b7".into(),
            }),
            tenant_info: None,
            server_cloudos_version: String::new(),
        })),
        In::Body(s) => Some(Request::RequestBody(s.clone())),
        In::Empty => None,
        In::Raw(m) => return Some(m.clone()),
        In::HalfClose => return None,
    };
    Some(CreateMcpTransportRequest { request })
}

/// One open stream.
pub struct Conv {
    tx: Option<mpsc::Sender<CreateMcpTransportRequest>>,
    rx: Streaming<CreateMcpTransportResponse>,
}

/// Opens a stream with `metadata` (name, value; repeated names are appended). `Err` is the status of a
/// trailers-only refusal.
pub async fn open(port: u16, metadata: &[(&str, &str)]) -> Result<Conv, Status> {
    try_open(port, metadata).await.map_err(|e| e.unwrap_or_else(|| panic!("no connection to {port}")))
}

/// As [`open`], but a failed connection is `Err(None)` (the listener is closed during a drain).
pub async fn try_open(port: u16, metadata: &[(&str, &str)]) -> Result<Conv, Option<Status>> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await
        .map_err(|_| None)?;
    let mut client = PccToolGatewayClient::new(channel)
        .max_decoding_message_size(8 << 20)
        .max_encoding_message_size(8 << 20);
    let (tx, rx) = mpsc::channel(64);
    let mut request = tonic::Request::new(ReceiverStream::new(rx));
    for (name, value) in metadata {
        let key: tonic::metadata::MetadataKey<tonic::metadata::Ascii> = name.parse().unwrap();
        request.metadata_mut().append(key, MetadataValue::try_from(*value).unwrap());
    }
    let response = client.create_mcp_transport(request).await.map_err(server_status)?;
    Ok(Conv { tx: Some(tx), rx: response.into_inner() })
}

/// A status the server sent, or `None` when the connection itself failed under the client (a connection
/// the kernel had queued and that the closing listener then reset: no stream reached the server, which is
/// the same fact as a refused connection).
fn server_status(status: Status) -> Option<Status> {
    let transport = std::error::Error::source(&status)
        .is_some_and(|source| source.downcast_ref::<tonic::transport::Error>().is_some());
    (!transport).then_some(status)
}

/// The bearer metadata of every vector unless stated.
pub fn bearer() -> Vec<(&'static str, String)> {
    vec![("authorization", format!("Bearer {}", crate::support::TOKEN))]
}

impl Conv {
    pub async fn send(&mut self, step: &In) {
        match message(step) {
            Some(m) => self.tx.as_ref().expect("not half-closed").send(m).await.unwrap(),
            None => self.tx = None,
        }
    }

    /// The next message or the final status, within [`WAIT`].
    pub async fn next(&mut self) -> Out {
        tokio::time::timeout(WAIT, self.next_unbounded()).await.expect("a message within the wait")
    }

    /// The next message or the final status; the caller bounds the wait.
    pub async fn next_unbounded(&mut self) -> Out {
        match self.rx.message().await {
            Ok(Some(CreateMcpTransportResponse { response: Some(Response::Connected(_)) })) => Out::Connected,
            Ok(Some(CreateMcpTransportResponse { response: Some(Response::Json(j)) })) => Out::Json(j),
            Ok(Some(CreateMcpTransportResponse { response: None })) => panic!("an empty response"),
            Ok(None) => Out::End(Code::Ok, String::new()),
            Err(status) => Out::End(status.code(), status.message().to_owned()),
        }
    }
}

impl Conv {
    /// Polls `tools/list` (id 2) until a drain has made readiness false (pcc.md §15 step 3: -31998),
    /// within 5 s.
    pub async fn until_unavailable(&mut self) {
        let started = std::time::Instant::now();
        loop {
            self.send(&body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)).await;
            let got = self.next().await;
            if got == err(-31998, "Server unavailable", None, "2") {
                return;
            }
            assert!(matches!(&got, Out::Json(j) if j.contains(r#""tools":["#)), "{got:?}");
            assert!(started.elapsed() < Duration::from_secs(5), "readiness did not turn false");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// pcc.md §13's connect metadata, each field a distinct sentinel that a privacy test (V58) then looks
/// for wherever the gateway writes: the tenant information, `request_id`, `server_cloudos_version`, and
/// `apple-request-uuid` (which also becomes the call id, §13).
pub struct Sentinels {
    pub bundle_id: &'static str,
    pub feature_id: &'static str,
    pub client_info: &'static str,
    pub device_group: &'static str,
    pub request_id: &'static str,
    pub cloudos: &'static str,
    pub uuid: &'static str,
}

impl Sentinels {
    pub fn all(&self) -> [&'static str; 7] {
        let s = self;
        [s.bundle_id, s.feature_id, s.client_info, s.device_group, s.request_id, s.cloudos, s.uuid]
    }

    /// `apple-request-uuid` as a JSON-RPC id (a string).
    pub fn call_id(&self) -> String {
        format!("\"{}\"", self.uuid)
    }
}

/// A stream opened with the bearer and `apple-request-uuid`, connected to `srv-1` with `trace_id` and
/// every sentinel, after the handshake (`connected` and the `initialize` answer read).
pub async fn open_with_sentinels(port: u16, s: &Sentinels, trace_id: &str) -> Conv {
    let auth = format!("Bearer {}", crate::support::TOKEN);
    let mut conv =
        open(port, &[("authorization", auth.as_str()), ("apple-request-uuid", s.uuid)]).await.unwrap();
    let connect = Connect {
        server_id: "srv-1".into(),
        request_id: s.request_id.into(),
        trace_context: Some(TraceContext { trace_id: trace_id.into(), span_id: "00f067aa0ba902b7".into() }),
        tenant_info: Some(TenantInfo {
            bundle_id: s.bundle_id.into(),
            feature_id: s.feature_id.into(),
            client_info: s.client_info.into(),
            automated_device_group: s.device_group.into(),
        }),
        server_cloudos_version: s.cloudos.into(),
    };
    conv.send(&In::Raw(CreateMcpTransportRequest { request: Some(Request::Connect(connect)) })).await;
    for step in h() {
        conv.send(&step).await;
    }
    assert_eq!(conv.next().await, Out::Connected);
    assert_eq!(conv.next().await, initialized(0, "2025-11-25"));
    conv
}

pub fn err(code: i64, message: &str, reason: Option<&str>, id: &str) -> Out {
    let data = reason.map(|r| format!(r#","data":{{"reason":"{r}"}}"#)).unwrap_or_default();
    // Keys sorted: code, data, message.
    let (before, after) =
        if data.is_empty() { (String::new(), String::new()) } else { (data, String::new()) };
    Out::Json(format!(
        r#"{{"error":{{"code":{code}{before},"message":"{message}"{after}}},"id":{id},"jsonrpc":"2.0"}}"#
    ))
}

pub fn end(code: Code, message: &str) -> Out {
    Out::End(code, message.to_owned())
}

pub fn ping(id: u32) -> In {
    body(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
}

pub fn pong(id: u32) -> Out {
    Out::Json(format!(r#"{{"id":{id},"jsonrpc":"2.0","result":{{}}}}"#))
}

pub fn call(id: &str, name: &str, arguments: &str) -> In {
    body(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
    ))
}
