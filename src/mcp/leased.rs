//! Holding the request lease of request admission (http-mcp.md §6.8) until a JSON answer has been written
//! (http-mcp.md §5, last paragraph).
//!
//! Owns one thing: a response body that carries the lease, so the slot is returned when hyper drops the
//! body after writing its last byte, or when the exchange is dropped because the connection is gone.
//! It does not own the lease's pool or the answer's bytes.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, SizeHint};
use hyper::Response;
use ptc_actors::Lease;

use crate::http::response::{BodyAbandoned, ResponseBody};

/// A body that returns `lease` when it is dropped.
struct Leased {
    inner: ResponseBody,
    _lease: Lease,
}

impl Body for Leased {
    type Data = Bytes;
    type Error = BodyAbandoned;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyAbandoned>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // Kept exact, so hyper still writes `content-length`.
        self.inner.size_hint()
    }
}

/// `response` whose body holds `lease` until it is dropped.
pub fn hold_until_written(response: Response<ResponseBody>, lease: Lease) -> Response<ResponseBody> {
    response.map(|inner| Leased { inner, _lease: lease }.boxed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::rpc::RpcError;
    use ptc_actors::{AdmissionPool, RefusalOrder};

    #[tokio::test]
    async fn the_lease_lives_as_long_as_the_body() {
        let pool = AdmissionPool::new("requests", 1, RefusalOrder::UnavailableFirst);
        let lease = pool.try_reserve().unwrap();
        let response = hold_until_written(RpcError::ParseError.response(None, false), lease);
        assert_eq!(pool.in_use(), 1);
        assert_eq!(response.body().size_hint().exact(), Some(65));
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], br#"{"error":{"code":-32700,"message":"Parse error"},"jsonrpc":"2.0"}"#);
        assert_eq!(pool.in_use(), 0);
    }
}
