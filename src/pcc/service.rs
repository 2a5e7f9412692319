//! Stream start (pcc.md §4): the checks made before any message is read, in the order of the table,
//! and the hand-over of an admitted stream to its task (`stream`).
//!
//! Owns the `PccToolGateway` service implementation and the metadata rules (bearer, `apple-request-uuid`).
//! It does not own the state machine (`stream`) or the listener (`crate::pcc::listener`).

use std::collections::BTreeMap;
use std::sync::Arc;

use ptc_actors::{AdmissionPool, Refusal};
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::codes::domain::Readiness;
use crate::exec::Shared;
use crate::mcp::bearer::{authorized, BearerDigest};
use crate::pcc::deadline::client_deadline;
use crate::pcc::drain::{drain_begun, Drain};
use crate::pcc::methods::Server;
use crate::pcc::proto::served::pcc_tool_gateway_server::PccToolGateway;
use crate::pcc::proto::served::{CreateMcpTransportRequest, CreateMcpTransportResponse};
use crate::pcc::slots::ConnectionInfo;
use crate::pcc::stream::{self, StreamContext};
use crate::pcc::wire::End;

/// pcc.md §14: at most 16 outbound messages wait per stream; inbound processing waits while it is full.
const OUTBOUND_QUEUE: usize = 16;
/// pcc.md §13: `apple-request-uuid` has 1 to 256 bytes in 0x21..0x7E.
const MAX_REQUEST_UUID_BYTES: usize = 256;

/// What the service needs, built once in the listener stage.
pub struct PccService {
    pub bearer: BearerDigest,
    pub servers: Arc<BTreeMap<String, Server>>,
    pub readiness: Readiness,
    pub streams: AdmissionPool,
    pub exec: Arc<Shared>,
    pub drain: watch::Receiver<Drain>,
}

type Outbound = ReceiverStream<Result<CreateMcpTransportResponse, Status>>;

/// pcc.md §4 check 3: at most one entry; when present, 1..=256 bytes in 0x21..0x7E. `Ok(None)` when absent.
fn request_uuid(metadata: &tonic::metadata::MetadataMap) -> Result<Option<String>, End> {
    let mut values = metadata.get_all("apple-request-uuid").iter();
    let Some(first) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(End::InvalidMetadata);
    }
    let bytes = first.as_bytes();
    let printable = bytes.iter().all(|b| (0x21..=0x7e).contains(b));
    if bytes.is_empty() || bytes.len() > MAX_REQUEST_UUID_BYTES || !printable {
        return Err(End::InvalidMetadata);
    }
    // Printable ASCII is UTF-8.
    String::from_utf8(bytes.to_vec()).map(Some).map_err(|_| End::InvalidMetadata)
}

impl PccService {
    /// pcc.md §4 checks 2–6, in order; the admitted stream's slot and `apple-request-uuid`.
    fn admit(
        &self,
        metadata: &tonic::metadata::MetadataMap,
    ) -> Result<(ptc_actors::Lease, Option<String>), End> {
        // Check 2: the same bearer rules and digest as `/mcp` (http-mcp.md §6.5 steps 3–5).
        if !authorized(&metadata.clone().into_headers(), &self.bearer) {
            return Err(End::Unauthorized);
        }
        let uuid = request_uuid(metadata)?;
        if drain_begun(&self.drain, &self.readiness) {
            return Err(End::Draining);
        }
        match self.streams.try_reserve() {
            Ok(slot) => Ok((slot, uuid)),
            Err(Refusal::Exhausted) => Err(End::StreamCapacityExhausted),
            Err(Refusal::Quiescing) => Err(End::Draining),
            Err(Refusal::Unavailable) => Err(End::Unavailable),
        }
    }
}

#[tonic::async_trait]
impl PccToolGateway for PccService {
    type CreateMcpTransportStream = Outbound;

    async fn create_mcp_transport(
        &self,
        request: Request<Streaming<CreateMcpTransportRequest>>,
    ) -> Result<Response<Outbound>, Status> {
        // Check 1 (the method path) is the router's: any other path is UNIMPLEMENTED.
        let (slot, request_uuid) = self.admit(request.metadata()).map_err(End::status)?;
        // pcc.md §4: the client deadline applies to the whole stream, not only to the response headers (which
        // is all tonic's own timeout layer bounds for a streaming method).
        let client_deadline = client_deadline(request.metadata(), std::time::Instant::now());
        let connection = request.extensions().get::<ConnectionInfo>().map(|c| c.activity.open_stream());
        let inbound = request.into_inner();
        let (out, rx) = mpsc::channel(OUTBOUND_QUEUE);
        let context = StreamContext {
            servers: self.servers.clone(),
            readiness: self.readiness.clone(),
            exec: self.exec.clone(),
            drain: self.drain.clone(),
            request_uuid,
            client_deadline,
        };
        tokio::spawn(async move {
            stream::run(context, inbound, out, slot).await;
            // pcc.md §3: the connection's idle clock starts when its last stream ends.
            drop(connection);
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
