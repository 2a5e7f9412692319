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

/// What became of one record: written (or the file is silent after a failure), or left out.
#[derive(PartialEq, Eq)]
enum Put {
    Done,
    Left,
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
        let room = if place == Place::Framing { 0 } else { CLOSING_ROOM };
        let mut state = self.lock();
        if self.put(&mut state, draft, room) == Put::Left {
            state.omitted += 1;
        }
    }

    /// Writes the opening record only if it leaves the room of a record between (traces.md §6.3: a
    /// `run_start` whose whole input does not fit): false, with nothing written or counted, otherwise.
    pub fn open_within(&self, draft: Draft) -> bool {
        let mut state = self.lock();
        self.put(&mut state, draft, CLOSING_ROOM) != Put::Left
    }

    /// Writes the closing record only if it fits the file (traces.md §6.2: a `run_end` whose `result`
    /// would not): false, with nothing written or counted, otherwise.
    pub fn close_within(&self, draft: Draft) -> bool {
        let mut state = self.lock();
        self.put(&mut state, draft, 0) != Put::Left
    }

    fn put(&self, state: &mut State, draft: Draft, room: u64) -> Put {
        if state.file.is_none() {
            return Put::Done;
        }
        let Some(line) = draft.line(state.seq + 1) else {
            return Put::Left;
        };
        if state.size + line.len() as u64 + room > self.max_file_bytes {
            return Put::Left;
        }
        let written = match state.file.as_mut() {
            Some(file) => file.write_all(&line),
            None => return Put::Done,
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
        Put::Done
    }

    /// Closes the file. True iff every write succeeded.
    pub fn close(&self) -> bool {
        let mut state = self.lock();
        state.file = None;
        !state.failed
    }
}
