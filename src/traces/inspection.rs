//! One run's inspection file (traces.md §8): the raw bodies of the run's upstream requests and responses,
//! keyed by request id, between `inspection_start` and `inspection_end`.
//!
//! Owns the records and the body ceiling. The provider calls hand it the bytes they wrote and read
//! (`providers::provider_call`, `providers::http::transport`), so bodies are attributed by request id
//! even on a transport shared by concurrent calls. Does not own the ceiling of the file (`file.rs`).

use std::fs::File;

use serde::Serialize;

use super::file::{Place, RunFile};
use super::record::{char_boundary, Draft, TraceRecord};

/// traces.md §8: the body ceiling.
pub const BODY_CEILING: usize = 65_536;

/// The inspection file of one run.
pub struct RunInspection {
    file: RunFile,
}

/// `body`, `bytes` and `truncated` of one raw body (traces.md §8): lossy UTF-8 of at most the body
/// ceiling, cut back to a character boundary.
#[derive(Serialize)]
struct Body {
    body: String,
    bytes: usize,
    truncated: bool,
}

impl Body {
    fn of(bytes: &[u8]) -> Body {
        let cut = char_boundary(bytes, BODY_CEILING);
        let body = String::from_utf8_lossy(&bytes[..cut]).into_owned();
        Body { body, bytes: bytes.len(), truncated: cut < bytes.len() }
    }
}

/// `inspection_start`.
#[derive(Serialize)]
struct Start<'a> {
    run_ref: &'a str,
    tool: &'a str,
    trace_id: &'a str,
}

impl TraceRecord for Start<'_> {
    const KIND: &'static str = "inspection_start";
}

/// `request`: a `tools/call` request handed to the transport.
#[derive(Serialize)]
struct Request<'a> {
    provider: &'a str,
    alias: &'a str,
    request_id: u64,
    traceparent: &'a str,
    #[serde(flatten)]
    body: Body,
}

impl TraceRecord for Request<'_> {
    const KIND: &'static str = "request";
}

/// `response`: that request's response as received.
#[derive(Serialize)]
struct Response<'a> {
    provider: &'a str,
    request_id: u64,
    /// The HTTP status, `null` on stdio.
    status: Option<u16>,
    #[serde(flatten)]
    body: Body,
}

impl TraceRecord for Response<'_> {
    const KIND: &'static str = "response";
}

/// `inspection_end`.
#[derive(Serialize)]
struct End {
    omitted_records: u64,
}

impl TraceRecord for End {
    const KIND: &'static str = "inspection_end";
}

impl RunInspection {
    /// The file, beginning with `inspection_start`.
    pub fn begin(
        file: File,
        max_file_bytes: u64,
        run_ref: &str,
        tool: &str,
        trace_id: &str,
    ) -> RunInspection {
        let inspection = RunInspection { file: RunFile::new(file, max_file_bytes) };
        inspection.file.write(Draft::now(&Start { run_ref, tool, trace_id }), Place::Framing);
        inspection
    }

    /// A file that could not be created.
    pub fn failed() -> RunInspection {
        RunInspection { file: RunFile::failed() }
    }

    /// A `tools/call` request handed to the transport.
    pub fn request(&self, provider: &str, alias: &str, request_id: u64, traceparent: &str, body: &[u8]) {
        let request = Request { provider, alias, request_id, traceparent, body: Body::of(body) };
        self.file.write(Draft::now(&request), Place::Between);
    }

    /// That request's response as received; `status` is the HTTP status, `None` on stdio.
    pub fn response(&self, provider: &str, request_id: u64, status: Option<u16>, body: &[u8]) {
        let response = Response { provider, request_id, status, body: Body::of(body) };
        self.file.write(Draft::now(&response), Place::Between);
    }

    /// `inspection_end` and the close. True iff every write succeeded.
    pub fn end(&self) -> bool {
        self.file.write(Draft::now(&End { omitted_records: self.file.omitted() }), Place::Framing);
        self.file.close()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    fn line<R: TraceRecord>(record: &R) -> String {
        let at = UNIX_EPOCH + Duration::from_micros(1_789_545_600_010_203);
        String::from_utf8(Draft::new(record, at).line(2).unwrap()).unwrap()
    }

    /// traces.md §8: the exact members of each inspection record; a body over the ceiling is cut on a
    /// character boundary and marked.
    #[test]
    fn exact_lines() {
        let at = "\"at\":\"2026-09-16T08:00:00.010203Z\"";
        let start = Start { run_ref: "r1", tool: "briefs", trace_id: "0af7" };
        assert_eq!(
            line(&start),
            format!("{{{at},\"kind\":\"inspection_start\",\"run_ref\":\"r1\",\"seq\":2,\"tool\":\"briefs\",\"trace_id\":\"0af7\"}}\n")
        );
        let request = Request {
            provider: "fx",
            alias: "fx.echo",
            request_id: 5,
            traceparent: "00-a-b-01",
            body: Body::of(b"{}"),
        };
        assert_eq!(
            line(&request),
            format!(
                "{{\"alias\":\"fx.echo\",{at},\"body\":\"{{}}\",\"bytes\":2,\"kind\":\"request\",\"provider\":\"fx\",\
                 \"request_id\":5,\"seq\":2,\"traceparent\":\"00-a-b-01\",\"truncated\":false}}\n"
            )
        );
        let mut big = vec![b'a'; BODY_CEILING - 1];
        big.extend("é".as_bytes());
        let response = Response { provider: "fx", request_id: 5, status: Some(200), body: Body::of(&big) };
        let want_body = "a".repeat(BODY_CEILING - 1);
        assert_eq!(
            line(&response),
            format!(
                "{{{at},\"body\":\"{want_body}\",\"bytes\":65537,\"kind\":\"response\",\"provider\":\"fx\",\
                 \"request_id\":5,\"seq\":2,\"status\":200,\"truncated\":true}}\n"
            )
        );
        assert_eq!(
            line(&End { omitted_records: 0 }),
            format!("{{{at},\"kind\":\"inspection_end\",\"omitted_records\":0,\"seq\":2}}\n")
        );
    }
}
