//! One run's artifact file (traces.md §6.2, §7): records in the order they were made, one write each,
//! within `max_file_bytes` with room kept for the closing record, and nothing more after a failed write.
//!
//! Owns the ceiling and the failure state; the trace (`run.rs`) and the inspection file (`inspection.rs`)
//! say what the records are.

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, MutexGuard};

use super::record::Draft;

/// traces.md §6.2: the room every other record leaves for the closing record: `run_end` with the error
/// field of a failed run (traces.md §5.5) takes at most this much.
pub(crate) const CLOSING_ROOM: u64 = 4_096;

struct State {
    /// `None` once a write failed (traces.md §7) or the file was closed.
    file: Option<File>,
    size: u64,
    seq: u64,
    omitted: u64,
    failed: bool,
}

/// A run's file, or the memory of one that could not be created.
pub struct RunFile {
    state: Mutex<State>,
    max_file_bytes: u64,
}

/// Whether a record opens or closes the file (always written) or is one of the records between.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Framing,
    Between,
}

impl RunFile {
    pub fn new(file: File, max_file_bytes: u64) -> RunFile {
        let state = State { file: Some(file), size: 0, seq: 0, omitted: 0, failed: false };
        RunFile { state: Mutex::new(state), max_file_bytes }
    }

    /// A file that could not be created: it writes nothing and reports the failure when closed.
    pub fn failed() -> RunFile {
        let state = State { file: None, size: 0, seq: 0, omitted: 0, failed: true };
        RunFile { state: Mutex::new(state), max_file_bytes: 0 }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The records left out so far by the ceiling.
    pub fn omitted(&self) -> u64 {
        self.lock().omitted
    }

    /// Writes one record in one write, or leaves it out under the ceiling (traces.md §6.2); a record that
    /// could not be encoded is left out and counted the same way.
    pub fn write(&self, draft: Draft, place: Place) {
        let mut state = self.lock();
        if state.file.is_none() {
            return;
        }
        let Some(line) = draft.line(state.seq + 1) else {
            state.omitted += 1;
            return;
        };
        let room = if place == Place::Framing { 0 } else { CLOSING_ROOM };
        if state.size + line.len() as u64 + room > self.max_file_bytes {
            state.omitted += 1;
            return;
        }
        let written = match state.file.as_mut() {
            Some(file) => file.write_all(&line),
            None => return,
        };
        match written {
            Ok(()) => {
                state.seq += 1;
                state.size += line.len() as u64;
            }
            Err(_) => {
                // traces.md §7: nothing more is written to this file.
                state.failed = true;
                state.file = None;
            }
        }
    }

    /// Closes the file. True iff every write succeeded.
    pub fn close(&self) -> bool {
        let mut state = self.lock();
        state.file = None;
        !state.failed
    }
}
