//! Step M9 (http-mcp.md §6.9): reading the request body after the lease was taken.
//!
//! Owns the size bound (a `Content-Length` above it is refused before anything is read; a chunked body
//! as soon as it exceeds), the idle budget (each wait for more bytes lasts at most 2,000 ms and restarts
//! whenever bytes arrive), framing and transport errors, and the half-close rule (the peer ended its
//! write side early: no response at all). `100 Continue` is sent by hyper when the body is first polled,
//! which happens only here (http-mcp.md §2.5).

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::{Body, Incoming};

use tokio::time::Instant;

use crate::http::soon::ready_soon;
use crate::http::ReadActivity;
use crate::mcp::refusal::Refusal;

/// http-mcp.md §6.9: the body has at most this many bytes.
pub const MAX_BODY_BYTES: usize = 2_097_152;
/// http-mcp.md §6.9: the longest wait for further body bytes.
pub const BODY_IDLE: Duration = Duration::from_millis(2_000);

/// Why the body read failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFailure {
    /// Answered with a fixed body (413, 408 or 400), `connection: close`.
    Refused(Refusal),
    /// The peer ended its write side before the body was complete: write nothing, close at once.
    HalfClosed,
}

/// What a body read needs to know; tests shorten nothing (the spec's numbers are used as they are).
#[derive(Clone, Copy, Debug)]
pub struct BodyLimits {
    pub max_bytes: usize,
    pub idle: Duration,
}

impl BodyLimits {
    /// The bounds of http-mcp.md §6.9.
    pub const SPEC: BodyLimits = BodyLimits { max_bytes: MAX_BODY_BYTES, idle: BODY_IDLE };
}

/// Reads the whole body within `limits`. `activity` is the connection's record of arriving bytes
/// (`crate::http::ReadActivity`): bytes that complete no frame (a chunk-size line, an extension, a
/// trailer) restart the idle budget too. Without it, only frames do.
pub async fn read(
    mut body: Incoming,
    limits: BodyLimits,
    activity: Option<&ReadActivity>,
) -> Result<Bytes, BodyFailure> {
    // A declared `Content-Length` above the bound is refused before any byte is read (hyper's hint for
    // a length-delimited body is exact; a chunked body's lower bound is 0).
    if body.size_hint().lower() > limits.max_bytes as u64 {
        return Err(BodyFailure::Refused(Refusal::RequestTooLarge));
    }
    let mut out = BytesMut::new();
    let mut deadline = Instant::now() + limits.idle;
    loop {
        // Most frames are in hyper's buffer already: they need no timer (`crate::http::soon`).
        let ready = ready_soon(&mut body.frame()).await;
        let polled = match ready {
            Some(polled) => polled,
            None => tokio::select! {
            biased;
            polled = body.frame() => polled,
            () = tokio::time::sleep_until(deadline) => {
                // The budget restarts whenever bytes arrived, framed or not.
                match activity.map(|a| a.last() + limits.idle) {
                    Some(later) if later > deadline => {
                        deadline = later;
                        continue;
                    }
                    _ => return Err(BodyFailure::Refused(Refusal::RequestTimeout)),
                }
            }
            },
        };
        deadline = Instant::now() + limits.idle;
        let frame = match polled {
            None => return Ok(out.freeze()),
            Some(Err(error)) => return Err(classify(&error)),
            Some(Ok(frame)) => frame,
        };
        // Trailer frames carry no body bytes; only data counts toward the bound.
        if let Ok(data) = frame.into_data() {
            if out.len().saturating_add(data.len()) > limits.max_bytes {
                return Err(BodyFailure::Refused(Refusal::RequestTooLarge));
            }
            out.extend_from_slice(&data);
        }
    }
}

/// An end of stream before the body ended reaches the body as a body error caused by an `io::Error` of
/// kind `UnexpectedEof` (hyper's length and chunked decoders), or as hyper's "incomplete message"; every
/// other error (a bad chunk-size line, a chunk without its CRLF, a transport read error) is unreadable
/// framing.
fn classify(error: &hyper::Error) -> BodyFailure {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    let mut early_end = error.is_incomplete_message();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            early_end |= io.kind() == std::io::ErrorKind::UnexpectedEof;
        }
        source = cause.source();
    }
    if early_end {
        BodyFailure::HalfClosed
    } else {
        BodyFailure::Refused(Refusal::RequestInvalid)
    }
}
