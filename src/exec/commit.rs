//! When a call's commit leaves (execution.md §4.2, §4.5): the response head and `: accepted` either go to
//! hyper before the run is activated, or, for a run that can reach no provider, are held back while the
//! run takes its first slice, so that a run that settles in it leaves with its commit in one write.
//!
//! Owns the held head: the signal that hands the response to hyper (the `/mcp` front returns the response
//! only then) and the grouping hold. Does not own the stream's mechanics (`stream`) nor the order of the
//! call (`driver`).

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;

use super::stream::{self, Gone, StreamWriter};

/// execution.md §4.5: how long a settled run's commit may wait for its message event (a write tool's
/// audit record becoming durable, section 10) before it is written alone.
pub const GROUPING_HOLD: Duration = Duration::from_millis(1_000);

/// The commit of one call: queued for hyper already, or held back with the response.
pub(crate) struct Head {
    /// Fired when the response may go to hyper; `None` once it went.
    release: Option<oneshot::Sender<()>>,
    /// Whether queueing the commit succeeded (a client gone before it is `Gone`).
    queued: Result<(), Gone>,
}

impl Head {
    /// The commit queued before the response went to hyper: it leaves with the head, before the run is
    /// activated (execution.md §4.2).
    pub(crate) fn queued(writer: &mut StreamWriter) -> Head {
        Head { release: None, queued: stream::queue_commit(writer) }
    }

    /// The commit of a provider-free run, held back with the response; the receiver completes when the
    /// response may go to hyper (or when the head is dropped).
    pub(crate) fn held() -> (Head, oneshot::Receiver<()>) {
        let (release, released) = oneshot::channel();
        (Head { release: Some(release), queued: Ok(()) }, released)
    }

    /// The response has not gone to hyper yet.
    pub(crate) fn is_held(&self) -> bool {
        self.release.is_some()
    }

    /// Queues the commit, if it is still held, and hands the response to hyper.
    pub(crate) fn release(&mut self, writer: &mut StreamWriter) -> Result<(), Gone> {
        if let Some(release) = self.release.take() {
            self.queued = stream::queue_commit(writer);
            let _ = release.send(());
        }
        self.queued
    }

    /// Queues the commit, `last` and the end of the body, then hands the response to hyper: the head and
    /// every byte of the stream leave in one write (execution.md §4.5). Only for a held head.
    pub(crate) fn release_with_last(&mut self, writer: &mut StreamWriter, last: Bytes) -> Result<(), Gone> {
        let release = self.release.take();
        self.queued = stream::queue_commit(writer).and_then(|()| writer.queue_last(last));
        if let Some(release) = release {
            let _ = release.send(());
        }
        self.queued
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// The frames hyper would take from the body, to its end.
    async fn frames(body: crate::http::response::ResponseBody) -> Vec<Vec<u8>> {
        let mut body = body;
        let mut got = Vec::new();
        while let Some(frame) = body.frame().await {
            got.push(frame.unwrap().into_data().unwrap().to_vec());
        }
        got
    }

    #[tokio::test]
    async fn a_held_commit_goes_with_the_last_piece_and_releases_the_response_once() {
        let (response, mut writer) = stream::open(None, false);
        let (mut head, mut released) = Head::held();
        assert!(head.is_held());
        assert!(released.try_recv().is_err(), "nothing goes to hyper while the run takes its slice");
        let event = Bytes::from_static(b"event: message\ndata: {}\n\n");
        assert_eq!(head.release_with_last(&mut writer, event), Ok(()));
        assert!(!head.is_held());
        assert_eq!(released.try_recv(), Ok(()));
        // A second release changes nothing: the commit is queued once.
        assert_eq!(head.release(&mut writer), Ok(()));
        let got = frames(response.into_body()).await;
        assert_eq!(got, vec![b": accepted\n\n".to_vec(), b"event: message\ndata: {}\n\n".to_vec()]);
        assert_eq!(writer.queued_written().await, Ok(()));
    }

    #[tokio::test]
    async fn a_released_commit_leaves_alone_and_the_stream_goes_on() {
        let (response, mut writer) = stream::open(None, false);
        let (mut head, released) = Head::held();
        assert_eq!(head.release(&mut writer), Ok(()));
        assert_eq!(released.await, Ok(()));
        let mut body = response.into_body();
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(&first[..], b": accepted\n\n");
        let rest = tokio::spawn(frames(body));
        writer.finish_with(Bytes::from_static(b"event: message\ndata: {}\n\n")).await.unwrap();
        assert_eq!(rest.await.unwrap(), vec![b"event: message\ndata: {}\n\n".to_vec()]);
    }

    #[tokio::test]
    async fn a_commit_queued_before_the_response_is_never_held() {
        let (response, mut writer) = stream::open(None, false);
        let mut head = Head::queued(&mut writer);
        assert!(!head.is_held());
        assert_eq!(head.release(&mut writer), Ok(()));
        let got = tokio::spawn(frames(response.into_body()));
        writer.finish().await.unwrap();
        assert_eq!(got.await.unwrap(), vec![b": accepted\n\n".to_vec()]);
    }

    #[tokio::test]
    async fn a_client_gone_before_the_release_is_gone_for_the_commit() {
        let (response, mut writer) = stream::open(None, false);
        drop(response);
        let (mut head, released) = Head::held();
        assert_eq!(head.release(&mut writer), Err(Gone));
        assert_eq!(released.await, Ok(()), "the front is still told, so its future ends");
    }
}
