//! One capture of a trace directory (traces.md §9.3): what a `hist.*` call reads, anew on every call.
//!
//! Owns opening the directory without following a final symbolic link, the capture's byte bound, opening one file without following a
//! link and without blocking on a FIFO, and recognising a complete trace by its first and last lines.
//! Reads lazily: a file is opened only when a tool asks for the next run, and a summary reads only the
//! file's first and last lines. Does not own the tools' inputs, filters and results (`tools.rs`), the
//! trace file names newest first within the capture's file bound (`listing.rs`), or the startup check of
//! the directory (`mod.rs`).

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::Path;

use nix::fcntl::{openat, OFlag, AT_FDCWD};
use nix::sys::stat::Mode;
use serde_json::Value;

pub use super::listing::{for_each_name, MAX_FILES};
use super::listing::{newest_names, Names};
use crate::json::{as_integer, decode, Limits};
use crate::storage::error::{Op, StorageError};
use crate::storage::inventory::is_run_ref_file_name;
use crate::storage::sys::{lstat_at, open_dir_at, stat_fd, EntryKind};

/// traces.md §9.3, §11: and at most 1 GiB of their content.
pub const MAX_BYTES: u64 = 1 << 30;
/// traces.md §9.3: a file larger than the largest `max_file_bytes` (traces.md §2) is not a trace.
pub const MAX_FILE_BYTES: u64 = 67_108_864;

const SUFFIX: &str = ".jsonl";
/// The unit of the head and tail reads of a summary.
const CHUNK: u64 = 16_384;
/// One trace line: within any file, never deeper than the values a run can hold plus the record's wrapping.
const LINE: Limits = Limits { max_bytes: MAX_FILE_BYTES as usize, max_depth: 128, max_nodes: 1_000_000 };

/// Whether `s` is a run reference (traces.md §4.1): 32 lowercase hexadecimal characters, `-`, 20 digits.
pub fn is_run_ref(s: &str) -> bool {
    is_run_ref_file_name(s.as_bytes(), b"")
}

/// Opens `dir` with `O_DIRECTORY | O_NOFOLLOW` (traces.md §9.2, §9.3): a final symbolic link is refused.
pub fn open_directory(dir: &Path) -> Result<OwnedFd, StorageError> {
    open_dir_at(AT_FDCWD, dir.as_os_str()).map_err(|e| StorageError::io(Op::Open, e))
}

/// What a summary says about a complete run (traces.md §9.4), taken from its `run_start` and `run_end`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub run_ref: String,
    pub tool: String,
    pub front: String,
    pub call_id: String,
    pub trace_id: String,
    pub started_at: String,
    pub outcome: String,
    pub dispatch: String,
    pub duration_us: i128,
    /// `run_end.seq`: the number of records of the file (traces.md §5.1).
    pub records: i128,
    pub omitted_records: i128,
}

/// One line as a JSON object, or `None` (garbage, another type, beyond the decoder's bounds).
pub fn parse_line(line: &[u8]) -> Option<Value> {
    match decode(line, LINE) {
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    }
}

fn text(record: &Value, key: &str) -> Option<String> {
    record.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn count(record: &Value, key: &str) -> Option<i128> {
    record.get(key).and_then(as_integer).filter(|n| *n >= 0)
}

/// traces.md §9.3: the run is complete when its first line is a `run_start` and its last a `run_end`, each
/// with the members a summary needs, of the types of traces.md §5.2 and §5.5.
pub fn summarize(run_ref: &str, first: &[u8], last: &[u8]) -> Option<RunSummary> {
    let start = parse_line(first)?;
    let end = parse_line(last)?;
    if start.get("kind")?.as_str()? != "run_start" || end.get("kind")?.as_str()? != "run_end" {
        return None;
    }
    Some(RunSummary {
        run_ref: run_ref.to_owned(),
        tool: text(&start, "tool")?,
        front: text(&start, "front")?,
        call_id: text(&start, "call_id")?,
        trace_id: text(&start, "trace_id")?,
        started_at: text(&start, "at")?,
        outcome: text(&end, "outcome")?,
        dispatch: text(&end, "dispatch")?,
        duration_us: count(&end, "duration_us")?,
        records: count(&end, "seq")?,
        omitted_records: count(&end, "omitted_records")?,
    })
}

/// A complete run read whole: its summary and its lines, without their LFs.
pub struct RunContent {
    pub summary: RunSummary,
    pub bytes: Vec<u8>,
}

impl RunContent {
    /// The file's lines in order (every line ended with LF; the empty rest after the last one is not a line).
    pub fn lines(&self) -> impl Iterator<Item = &[u8]> {
        let body = self.bytes.strip_suffix(b"\n").unwrap_or(&self.bytes);
        body.split(|b| *b == b'\n')
    }
}

/// The trace file names of a directory, newest first, and how far a tool has gone through them.
pub struct Capture {
    dir: OwnedFd,
    /// At most [`MAX_FILES`] names, in descending byte order (perhaps an earlier capture's listing of the
    /// unchanged directory, `listing.rs`).
    names: Names,
    /// The next name to consider.
    next: usize,
    /// The sizes of the files taken so far, against [`MAX_BYTES`].
    taken_bytes: u64,
    /// The byte bound was reached: this name and every older one are left out.
    exhausted: bool,
    /// Files opened for reading so far (what laziness saves).
    pub files_opened: usize,
}

impl Capture {
    /// Lists `dir` (traces.md §9.3): the newest [`MAX_FILES`] trace file names. A directory that cannot be
    /// opened or listed is an error (`provider_unavailable`).
    pub fn open(dir: &Path) -> Result<Capture, StorageError> {
        let fd = open_directory(dir)?;
        let names = newest_names(&fd)?;
        Ok(Capture { dir: fd, names, next: 0, taken_bytes: 0, exhausted: false, files_opened: 0 })
    }

    /// Takes the next name into the capture's byte bound (traces.md §9.3) and moves past it: by its
    /// `lstat`, a regular file of at most [`MAX_FILE_BYTES`] counts its size; anything else (a link, a
    /// FIFO, a directory, a name that vanished) is skipped without counting. Returns the name when it may be
    /// read. Sets `exhausted` at the byte bound, which leaves this name and every older one out.
    fn take(&mut self) -> Option<String> {
        let name = self.names.get(self.next)?.as_str();
        self.next += 1;
        let st = lstat_at(self.dir.as_fd(), OsStr::new(name)).ok()?;
        if st.kind != EntryKind::Regular || st.size > MAX_FILE_BYTES {
            return None;
        }
        if self.taken_bytes + st.size > MAX_BYTES {
            self.exhausted = true;
            return None;
        }
        self.taken_bytes += st.size;
        Some(name.to_owned())
    }

    /// Whether a name is left to consider.
    fn remaining(&self) -> Option<&str> {
        self.names.get(self.next).filter(|_| !self.exhausted).map(|name| name.as_str())
    }

    /// The next name newest first that the capture holds, or `None` at the end of the capture.
    fn next_name(&mut self) -> Option<String> {
        while self.remaining().is_some() {
            if let Some(name) = self.take() {
                return Some(name);
            }
        }
        None
    }

    /// Moves past every name for which `newer` holds, counting their sizes against the byte bound.
    fn skip_while(&mut self, newer: impl Fn(&str) -> bool) {
        while self.remaining().is_some_and(&newer) {
            let _ = self.take();
        }
    }

    /// Moves past every name that is not smaller than `cursor` (traces.md §9.4).
    pub fn skip_to_after(&mut self, cursor: &str) {
        let key = format!("{cursor}{SUFFIX}");
        self.skip_while(|name| name >= key.as_str());
    }

    /// The next complete run, newest first, read by its first and last lines only.
    pub fn next_summary(&mut self) -> Option<RunSummary> {
        while let Some(name) = self.next_name() {
            let run_ref = name.strip_suffix(SUFFIX).unwrap_or(&name).to_owned();
            let Some((file, size)) = self.open_file(&name) else { continue };
            if let Some((first, last)) = read_ends(&file, size) {
                if let Some(summary) = summarize(&run_ref, &first, &last) {
                    return Some(summary);
                }
            }
        }
        None
    }

    /// The complete run `run_ref`, read whole, when the capture holds it (`None`: unknown run).
    pub fn find(&mut self, run_ref: &str) -> Option<RunContent> {
        let name = format!("{run_ref}{SUFFIX}");
        self.skip_while(|newer| newer > name.as_str());
        if self.remaining() != Some(name.as_str()) {
            return None;
        }
        let name = self.take()?;
        let (file, size) = self.open_file(&name)?;
        let bytes = read_all(&file, size)?;
        let (first, last) = ends(&bytes)?;
        let summary = summarize(run_ref, first, last)?;
        Some(RunContent { summary, bytes })
    }

    /// Opens `name` read-only without following a link and without blocking on a FIFO, and requires a
    /// regular file of at most [`MAX_FILE_BYTES`]. Returns the file and its size at the open.
    fn open_file(&mut self, name: &str) -> Option<(File, u64)> {
        self.files_opened += 1;
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
        let fd = openat(self.dir.as_fd(), OsStr::from_bytes(name.as_bytes()), flags, Mode::empty()).ok()?;
        let st = stat_fd(&fd).ok()?;
        if st.kind != EntryKind::Regular || st.size > MAX_FILE_BYTES {
            return None;
        }
        Some((File::from(fd), st.size))
    }
}

/// The first and last lines of a whole file, without their LFs; `None` unless it ends with LF.
fn ends(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let body = bytes.strip_suffix(b"\n")?;
    let first_end = body.iter().position(|b| *b == b'\n').unwrap_or(body.len());
    let last_start = body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    Some((&body[..first_end], &body[last_start..]))
}

/// The first `size` bytes of `file` (a file that shrank meanwhile fails the read and is skipped).
fn read_all(file: &File, size: u64) -> Option<Vec<u8>> {
    read_range(file, 0, size)
}

fn read_range(file: &File, offset: u64, len: u64) -> Option<Vec<u8>> {
    let mut buf = vec![0; usize::try_from(len).ok()?];
    file.read_exact_at(&mut buf, offset).ok()?;
    Some(buf)
}

/// The first and last lines of a file of `size` bytes, without their LFs, or `None` when the file does not
/// end with LF (a torn last record) or cannot be read. A small file is read once; a large one by its head
/// up to the first LF and its tail back to the LF before the last one, each in chunks.
pub fn read_ends(file: &File, size: u64) -> Option<(Vec<u8>, Vec<u8>)> {
    if size == 0 {
        return None;
    }
    if size <= 2 * CHUNK {
        let bytes = read_all(file, size)?;
        let (first, last) = ends(&bytes)?;
        return Some((first.to_vec(), last.to_vec()));
    }
    let last = last_line(file, size)?;
    let first = first_line(file, size)?;
    Some((first, last))
}

/// The bytes before the file's first LF, read forward in chunks.
fn first_line(file: &File, size: u64) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut offset = 0;
    while offset < size {
        let chunk = read_range(file, offset, CHUNK.min(size - offset))?;
        if let Some(i) = chunk.iter().position(|b| *b == b'\n') {
            head.extend_from_slice(&chunk[..i]);
            return Some(head);
        }
        head.extend_from_slice(&chunk);
        offset += chunk.len() as u64;
    }
    None
}

/// The last line of a file that ends with LF, without that LF, read backward in chunks.
fn last_line(file: &File, size: u64) -> Option<Vec<u8>> {
    if read_range(file, size - 1, 1)? != b"\n" {
        return None;
    }
    let end = size - 1;
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut start = end;
    while start > 0 {
        let len = CHUNK.min(start);
        let chunk = read_range(file, start - len, len)?;
        if let Some(i) = chunk.iter().rposition(|b| *b == b'\n') {
            chunks.push(chunk[i + 1..].to_vec());
            break;
        }
        start -= len;
        chunks.push(chunk);
    }
    Some(chunks.into_iter().rev().flatten().collect())
}
