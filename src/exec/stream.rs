//! The committed event stream of a `tools/call` (execution.md §4.1, §5.1, §5.2, §9).
//!
//! Owns the response head of the commit and the two halves of the stream: [`EventStream`], the body
//! hyper pulls frames from, and [`StreamWriter`], which the call driver writes through. A write completes
//! only when its bytes were handed to the operating system (a flush of the connection completed after hyper
//! took the frame, see `crate::http::progress`), which is what execution.md §4.2 needs before activation
//! and execution.md §10 before the run slot is released. The client is *gone* when hyper drops the body:
//! hyper does so when it finds end of stream or an error on the read side of a busy connection (it checks the
//! read side while it waits for the body, and pipelined bytes it only buffers), or when a write fails.
//!
//! It does not own what is written or when (the call driver does).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use hyper::header::{HeaderName, HeaderValue, CACHE_CONTROL, CONNECTION, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use tokio::sync::{mpsc, Notify};

use crate::http::progress::WriteProgress;
use crate::http::response::{with_header_room, BodyAbandoned, ResponseBody};
use crate::mcp::rpc::PROTOCOL_VERSION;

/// The first body bytes of every committed stream (12 bytes, execution.md §4.1).
pub const ACCEPTED: &[u8] = b": accepted\n\n";
/// The heartbeat comment (13 bytes, execution.md §5.1).
pub const HEARTBEAT: &[u8] = b": heartbeat\n\n";

/// What the writer hands the body.
enum Piece {
    Bytes(Bytes),
    /// Fail the body: hyper closes the connection without the chunked terminator.
    Abandon,
}

/// State both halves see.
struct Shared {
    /// The connection's flush counter; absent when the response is not served by the listener (tests).
    progress: Option<Arc<WriteProgress>>,
    /// `(pieces taken by hyper, flush epoch when the last one was taken)`; the end of the body counts as a
    /// piece.
    taken: Mutex<(u64, u64)>,
    /// hyper dropped the body: the client is gone or the connection failed.
    gone: AtomicBool,
    changed: Notify,
}

impl Shared {
    fn epoch(&self) -> u64 {
        self.progress.as_ref().map_or(0, |p| p.flushes())
    }

    fn record_take(&self) {
        let epoch = self.epoch();
        if let Ok(mut taken) = self.taken.lock() {
            taken.0 += 1;
            taken.1 = epoch;
        }
        self.changed.notify_waiters();
    }

    fn taken(&self) -> (u64, u64) {
        self.taken.lock().map(|t| *t).unwrap_or((0, 0))
    }

    fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }

    /// Completes when hyper dropped the body. Never completes otherwise.
    async fn gone(&self) {
        loop {
            let changed = self.changed.notified();
            if self.is_gone() {
                return;
            }
            changed.await;
        }
    }
}

/// Where the body is in its life, as hyper sees it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BodyState {
    /// Pieces may still come.
    Open,
    /// The writer abandoned it: hyper got the error and closes the connection.
    Abandoned,
    /// hyper took its end: dropping it now is no sign of a gone client.
    Finished,
}

/// The body of a committed stream.
pub struct EventStream {
    pieces: mpsc::Receiver<Piece>,
    shared: Arc<Shared>,
    state: BodyState,
}

impl Body for EventStream {
    type Data = Bytes;
    type Error = BodyAbandoned;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyAbandoned>>> {
        if self.state != BodyState::Open {
            return Poll::Ready(None);
        }
        let next = match self.pieces.poll_recv(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(next) => next,
        };
        self.shared.record_take();
        match next {
            Some(Piece::Bytes(bytes)) => Poll::Ready(Some(Ok(Frame::data(bytes)))),
            Some(Piece::Abandon) => {
                self.state = BodyState::Abandoned;
                Poll::Ready(Some(Err(BodyAbandoned)))
            }
            None => {
                self.state = BodyState::Finished;
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        // hyper drops a finished body as soon as it took the end, before it flushes the terminator: the
        // writer then waits for that flush, or for the connection to fail or end before it
        // (`WriteProgress::closed`), not for a gone client (execution.md §9).
        if self.state == BodyState::Finished {
            return;
        }
        self.shared.gone.store(true, Ordering::Release);
        self.shared.changed.notify_waiters();
    }
}

/// The client is gone: nothing more can be written on the stream (execution.md §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gone;

/// The call driver's end of the stream.
pub struct StreamWriter {
    pieces: Option<mpsc::Sender<Piece>>,
    shared: Arc<Shared>,
    sent: u64,
}

impl StreamWriter {
    /// True once hyper dropped the body.
    pub fn is_gone(&self) -> bool {
        self.shared.is_gone()
    }

    /// Completes when the client is found gone. Never completes otherwise.
    pub async fn gone(&self) {
        self.shared.gone().await
    }

    /// Writes `bytes` as one chunk and waits until they were handed to the operating system.
    pub async fn write(&mut self, bytes: Bytes) -> Result<(), Gone> {
        self.send(bytes).await?;
        self.written().await
    }

    /// Queues `bytes` as one chunk without waiting for them to be written (heartbeats: the next wait
    /// covers them).
    pub async fn send(&mut self, bytes: Bytes) -> Result<(), Gone> {
        let pieces = self.pieces.as_ref().ok_or(Gone)?;
        pieces.send(Piece::Bytes(bytes)).await.map_err(|_| Gone)?;
        self.sent += 1;
        Ok(())
    }

    /// Queues `bytes` as one chunk at once, without waiting for room: for the first piece of a stream,
    /// queued before hyper polls the body so that the head and that piece leave in one write.
    pub fn queue(&mut self, bytes: Bytes) -> Result<(), Gone> {
        let pieces = self.pieces.as_ref().ok_or(Gone)?;
        pieces.try_send(Piece::Bytes(bytes)).map_err(|_| Gone)?;
        self.sent += 1;
        Ok(())
    }

    /// Queues `bytes` as the last chunk and ends the body at once, without waiting for room or for the
    /// write: for a stream whose every piece is known before hyper polls it (execution.md §4.5), so that
    /// the head, the pieces and the chunked terminator leave in one write.
    /// [`StreamWriter::queued_written`] then waits for that write.
    pub fn queue_last(&mut self, bytes: Bytes) -> Result<(), Gone> {
        self.queue(bytes)?;
        self.pieces = None;
        self.sent += 1;
        Ok(())
    }

    /// Queues `bytes` as the last chunk and ends the body, then waits until everything was written: the
    /// event and the chunked terminator leave in one write.
    pub async fn finish_with(&mut self, bytes: Bytes) -> Result<(), Gone> {
        self.send(bytes).await?;
        self.finish().await
    }

    /// Ends the body (the chunked terminator) and waits until everything was written.
    pub async fn finish(&mut self) -> Result<(), Gone> {
        if self.pieces.take().is_none() {
            return Err(Gone);
        }
        self.sent += 1;
        self.written().await
    }

    /// Fails the body so that hyper closes the connection at its next poll (a bound expired).
    pub fn abandon(&mut self) {
        if let Some(pieces) = self.pieces.take() {
            let _ = pieces.try_send(Piece::Abandon);
        }
    }

    /// Waits until every piece sent so far was taken by hyper and then flushed.
    async fn written(&self) -> Result<(), Gone> {
        written(self.shared.clone(), self.sent).await
    }

    /// Completes when every piece queued so far was written, like the wait of [`StreamWriter::write`],
    /// without holding the writer: the call driver watches an early-activated run's commit with it while
    /// it still writes heartbeats (execution.md §4.5).
    pub fn queued_written(&self) -> impl std::future::Future<Output = Result<(), Gone>> + Send + 'static {
        written(self.shared.clone(), self.sent)
    }
}

/// Waits until `sent` pieces were taken by hyper and then flushed.
async fn written(shared: Arc<Shared>, sent: u64) -> Result<(), Gone> {
    loop {
        let changed = shared.changed.notified();
        let (taken, epoch) = shared.taken();
        if taken >= sent {
            return match &shared.progress {
                Some(progress) => {
                    // Biased: a flush that completed counts even if the connection ended right after.
                    tokio::select! {
                        biased;
                        _ = progress.flushed_after(epoch) => Ok(()),
                        _ = progress.closed() => Err(Gone),
                        _ = shared.gone() => Err(Gone),
                    }
                }
                None => Ok(()),
            };
        }
        if shared.is_gone() {
            return Err(Gone);
        }
        changed.await;
    }
}

/// The stream's own header names, made at compile time: a name given as text is parsed at every insert.
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

/// The commit's response head (execution.md §4.1) with its stream, and the writer for it. The driver
/// queues `: accepted` with [`queue_commit`] before handing the response to hyper and waits with
/// [`committed`]. `http10` gives `connection: close` instead of chunked coding.
pub fn open(progress: Option<Arc<WriteProgress>>, http10: bool) -> (Response<ResponseBody>, StreamWriter) {
    // Two pieces in flight at most: a heartbeat and the event, or the event and the end.
    let (tx, rx) = mpsc::channel(4);
    let shared = Arc::new(Shared {
        progress,
        taken: Mutex::new((0, 0)),
        gone: AtomicBool::new(false),
        changed: Notify::new(),
    });
    let body = EventStream { pieces: rx, shared: shared.clone(), state: BodyState::Open };
    // Room for the connection's next request head, which hyper parses into this map (`http::response`).
    let mut response = with_header_room(body.boxed());
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream; charset=utf-8"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(MCP_PROTOCOL_VERSION, HeaderValue::from_static(PROTOCOL_VERSION));
    headers.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    if http10 {
        headers.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    (response, StreamWriter { pieces: Some(tx), shared, sent: 0 })
}

/// Queues the commit comment on a stream nothing was written to yet (execution.md §4.2); [`committed`]
/// then waits until it was written. Queued before the response goes to hyper, the comment leaves with
/// the head.
pub fn queue_commit(writer: &mut StreamWriter) -> Result<(), Gone> {
    writer.queue(Bytes::from_static(ACCEPTED))
}

/// Waits until everything queued so far, the commit comment included, was written.
pub async fn committed(writer: &mut StreamWriter) -> Result<(), Gone> {
    writer.written().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_complete_when_taken_and_the_end_is_a_piece() {
        let (response, mut writer) = open(None, false);
        let mut body = response.into_body();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(frame) = body.frame().await {
                got.extend_from_slice(&frame.unwrap().into_data().unwrap());
            }
            got
        });
        queue_commit(&mut writer).unwrap();
        committed(&mut writer).await.unwrap();
        writer.write(Bytes::from_static(b"event: message\ndata: {}\n\n")).await.unwrap();
        writer.finish().await.unwrap();
        let got = reader.await.unwrap();
        assert_eq!(got, b": accepted\n\nevent: message\ndata: {}\n\n");
    }

    /// The queued commit is the body's first frame before anyone polls it, and `committed` waits until
    /// it was taken; the event queued with the end is the last frame, then the end.
    #[tokio::test]
    async fn a_queued_commit_is_ready_before_the_first_poll_and_the_event_leaves_with_the_end() {
        let (response, mut writer) = open(None, false);
        queue_commit(&mut writer).unwrap();
        let mut body = response.into_body();
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(&first[..], b": accepted\n\n");
        committed(&mut writer).await.unwrap();
        let finished = tokio::spawn(async move {
            writer.finish_with(Bytes::from_static(b"event: message\ndata: {}\n\n")).await
        });
        let event = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(&event[..], b"event: message\ndata: {}\n\n");
        assert!(body.frame().await.is_none(), "the end follows the event at once");
        assert_eq!(finished.await.unwrap(), Ok(()));
    }

    #[tokio::test]
    async fn a_body_dropped_after_its_end_waits_for_the_flush_not_a_gone_client() {
        // hyper's order: take the end, drop the body, then flush the terminator.
        let progress = Arc::new(WriteProgress::default());
        let (response, mut writer) = open(Some(progress.clone()), false);
        let mut body = response.into_body();
        let flusher = progress.clone();
        let hyper = tokio::spawn(async move {
            while let Some(frame) = body.frame().await {
                frame.unwrap();
                flusher.record_flush();
            }
            drop(body);
            // Long enough for the writer to look at the stream between the drop and the flush.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            flusher.record_flush();
        });
        queue_commit(&mut writer).unwrap();
        committed(&mut writer).await.unwrap();
        writer.write(Bytes::from_static(b"event: message\ndata: {}\n\n")).await.unwrap();
        assert_eq!(writer.finish().await, Ok(()), "the end was written: the publication succeeded");
        hyper.await.unwrap();
    }

    #[tokio::test]
    async fn a_connection_that_ends_before_flushing_the_end_is_a_gone_client() {
        // hyper took the end and dropped the body, then the connection failed before the flush.
        let progress = Arc::new(WriteProgress::default());
        let (response, mut writer) = open(Some(progress.clone()), false);
        let mut body = response.into_body();
        let connection = progress.clone();
        let hyper = tokio::spawn(async move {
            while let Some(frame) = body.frame().await {
                frame.unwrap();
                connection.record_flush();
            }
            drop(body);
            connection.record_closed();
        });
        queue_commit(&mut writer).unwrap();
        committed(&mut writer).await.unwrap();
        writer.write(Bytes::from_static(b"event: message\ndata: {}\n\n")).await.unwrap();
        // The last frame's flush was recorded above, the end's never is: only the close ends the wait.
        let finished = tokio::time::timeout(std::time::Duration::from_secs(5), writer.finish()).await;
        assert_eq!(finished.expect("at once, not at the publication bound"), Err(Gone));
        hyper.await.unwrap();
    }

    #[tokio::test]
    async fn a_dropped_body_is_a_gone_client() {
        let (response, mut writer) = open(None, false);
        drop(response);
        assert!(writer.is_gone());
        assert_eq!(queue_commit(&mut writer), Err(Gone));
        tokio::time::timeout(std::time::Duration::from_secs(5), writer.gone()).await.unwrap();
    }

    #[tokio::test]
    async fn the_commit_head_is_exact() {
        for http10 in [false, true] {
            let (response, _writer) = open(None, http10);
            let mut got: Vec<(String, String)> = response
                .headers()
                .iter()
                .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
                .collect();
            got.sort();
            let mut expected = vec![
                ("cache-control".to_owned(), "no-store".to_owned()),
                ("content-type".to_owned(), "text/event-stream; charset=utf-8".to_owned()),
                ("mcp-protocol-version".to_owned(), "2026-07-28".to_owned()),
                ("x-accel-buffering".to_owned(), "no".to_owned()),
            ];
            if http10 {
                expected.insert(1, ("connection".to_owned(), "close".to_owned()));
            }
            assert_eq!(got, expected);
            assert_eq!(response.body().size_hint().exact(), None, "chunked, never a content-length");
        }
    }
}
