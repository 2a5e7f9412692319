//! One run's inspection file (traces.md §8): the raw bodies of the run's upstream requests and responses,
//! keyed by request id, between `inspection_start` and `inspection_end`.
//!
//! Owns the records and the body ceiling. The provider calls hand it the bytes they wrote and read
//! (`providers::provider_call`, `providers::http::transport`), so bodies are attributed by request id
//! even on a transport shared by concurrent calls. Does not own the ceiling of the file (`file.rs`).

use std::fs::File;
use std::time::SystemTime;

use serde_json::{Map, Value};

use super::file::{Place, RunFile};
use super::record::{char_boundary, Draft};

/// traces.md §8: the body ceiling.
pub const BODY_CEILING: usize = 65_536;

/// The inspection file of one run.
pub struct RunInspection {
    file: RunFile,
}

fn text(s: &str) -> Value {
    Value::String(s.to_owned())
}

/// `body`, `bytes` and `truncated` for `bytes` (traces.md §8): lossy UTF-8 of at most the body ceiling,
/// cut back to a character boundary.
fn body_members(m: &mut Map<String, Value>, bytes: &[u8]) {
    let cut = char_boundary(bytes, BODY_CEILING);
    m.insert("body".to_owned(), Value::String(String::from_utf8_lossy(&bytes[..cut]).into_owned()));
    m.insert("bytes".to_owned(), Value::from(bytes.len()));
    m.insert("truncated".to_owned(), Value::Bool(cut < bytes.len()));
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
        let mut m = Map::new();
        m.insert("run_ref".to_owned(), text(run_ref));
        m.insert("tool".to_owned(), text(tool));
        m.insert("trace_id".to_owned(), text(trace_id));
        inspection
            .file
            .write(Draft { kind: "inspection_start", at: SystemTime::now(), members: m }, Place::Framing);
        inspection
    }

    /// A file that could not be created.
    pub fn failed() -> RunInspection {
        RunInspection { file: RunFile::failed() }
    }

    /// A `tools/call` request handed to the transport.
    pub fn request(&self, provider: &str, alias: &str, request_id: u64, traceparent: &str, body: &[u8]) {
        let mut m = Map::new();
        m.insert("provider".to_owned(), text(provider));
        m.insert("alias".to_owned(), text(alias));
        m.insert("request_id".to_owned(), Value::from(request_id));
        m.insert("traceparent".to_owned(), text(traceparent));
        body_members(&mut m, body);
        self.file.write(Draft { kind: "request", at: SystemTime::now(), members: m }, Place::Between);
    }

    /// That request's response as received; `status` is the HTTP status, `None` on stdio.
    pub fn response(&self, provider: &str, request_id: u64, status: Option<u16>, body: &[u8]) {
        let mut m = Map::new();
        m.insert("provider".to_owned(), text(provider));
        m.insert("request_id".to_owned(), Value::from(request_id));
        m.insert("status".to_owned(), status.map(Value::from).unwrap_or(Value::Null));
        body_members(&mut m, body);
        self.file.write(Draft { kind: "response", at: SystemTime::now(), members: m }, Place::Between);
    }

    /// `inspection_end` and the close. True iff every write succeeded.
    pub fn end(&self) -> bool {
        let mut m = Map::new();
        m.insert("omitted_records".to_owned(), Value::from(self.file.omitted()));
        self.file.write(Draft { kind: "inspection_end", at: SystemTime::now(), members: m }, Place::Framing);
        self.file.close()
    }
}
