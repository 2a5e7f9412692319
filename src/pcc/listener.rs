//! The PCC listener (pcc.md §3, §15): tonic over h2c on the bound loopback socket, its HTTP/2 limits,
//! and its stop.
//!
//! Owns the server's settings and the accept loop's lifetime. It does not own the service (`service`)
//! or the supervision of the loop (`startup::listeners`).

use std::time::Duration;

use tokio::sync::watch;

use crate::pcc::drain::Drain;
use crate::pcc::proto::served::pcc_tool_gateway_server::PccToolGatewayServer;
use crate::pcc::service::PccService;

/// pcc.md §14: the largest inbound gRPC message (decoded); larger is `RESOURCE_EXHAUSTED`.
pub const MAX_INBOUND_MESSAGE: usize = 4_194_304;
/// pcc.md §14: the largest outbound gRPC message.
pub const MAX_OUTBOUND_MESSAGE: usize = 4_194_320;
/// pcc.md §3: concurrent streams per connection.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 64;
/// pcc.md §3: `SETTINGS_MAX_HEADER_LIST_SIZE`.
pub const MAX_HEADER_LIST_BYTES: u32 = 16_384;
/// pcc.md §3: a `PING` after this long without a frame while streams are open ...
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_millis(30_000);
/// ... and the connection closes without its acknowledgement within this.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_millis(10_000);

/// Serves `service` on `listener` until `drain` leaves `Serving` (stop listeners, S1): then tonic stops
/// accepting and sends `GOAWAY`, and the streams end as pcc.md §15 says. Returns when the server has stopped;
/// its owner (`startup::listeners`) hears that end.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: PccService,
    mut drain: watch::Receiver<Drain>,
) {
    let service = PccToolGatewayServer::new(service)
        .max_decoding_message_size(MAX_INBOUND_MESSAGE)
        .max_encoding_message_size(MAX_OUTBOUND_MESSAGE);
    let stopped = async move {
        let _ = drain.wait_for(|d| *d != Drain::Serving).await;
    };
    let served = tonic::transport::Server::builder()
        .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION)
        .http2_max_header_list_size(MAX_HEADER_LIST_BYTES)
        .http2_keepalive_interval(Some(KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(KEEPALIVE_TIMEOUT))
        .add_service(service)
        .serve_with_incoming_shutdown(crate::pcc::slots::incoming(listener), stopped)
        .await;
    if let Err(error) = served {
        tracing::error!(%error, "pcc listener stopped");
    }
}
