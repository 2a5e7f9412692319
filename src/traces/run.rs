//! One run's trace (traces.md §5): `run_start` at the reservation, the run's own records as they end,
//! `run_end` before publication.
//!
//! Owns [`RunTrace`], the run's observer (`apps::runtime::RunObserver`), and [`Held`], which keeps the
//! records of a run tried on the async worker until the try is known to count (a try that is abandoned and
//! run again from the start leaves nothing, execution.md §12.8). Does not own the records' members
//! (`record.rs`), the ceiling (`file.rs`) or the file's creation (`dir.rs`).

use std::fs::File;
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use super::file::{Place, RunFile};
use super::record::{Draft, Mission, ModelCall, RunEnd, RunEndRecord, RunStart, ToolCall};
use crate::apps::runtime::{MissionEnded, ModelReturned, RunObserver, ToolReturned};

/// The trace of one run.
pub struct RunTrace {
    file: RunFile,
    started: Instant,
}

impl RunTrace {
    /// A trace over the freshly created `file`, beginning with `run_start` (traces.md §5.2).
    pub fn begin(file: File, max_file_bytes: u64, start: &RunStart<'_>) -> RunTrace {
        let trace = RunTrace { file: RunFile::new(file, max_file_bytes), started: Instant::now() };
        trace.file.write(Draft::new(start, SystemTime::now()), Place::Framing);
        trace
    }

    /// A trace whose file could not be created: it writes nothing and reports the failure.
    pub fn failed() -> RunTrace {
        RunTrace { file: RunFile::failed(), started: Instant::now() }
    }

    /// Ends the trace with `run_end` (traces.md §5.5) and closes the file. True iff every write of the
    /// trace succeeded (a false is counted as `artifact_failed`, traces.md §7).
    pub fn end(&self, end: &RunEnd<'_>) -> bool {
        let draft = Draft::now(&RunEndRecord::of(end, self.started.elapsed(), self.file.omitted()));
        self.file.write(draft, Place::Framing);
        self.file.close()
    }

    /// The records `held` kept, in their order, as if they had been written when made.
    pub fn take(&self, held: &Held) {
        let drafts = std::mem::take(&mut *held.0.lock().unwrap_or_else(|p| p.into_inner()));
        for draft in drafts {
            self.file.write(draft, Place::Between);
        }
    }
}

impl RunObserver for RunTrace {
    fn mission_ended(&self, ended: MissionEnded) {
        self.file.write(Draft::now(&Mission::of(&ended)), Place::Between);
    }

    fn tool_returned(&self, returned: ToolReturned) {
        self.file.write(Draft::now(&ToolCall::of(&returned)), Place::Between);
    }

    fn model_returned(&self, returned: ModelReturned) {
        self.file.write(Draft::now(&ModelCall::of(&returned)), Place::Between);
    }
}

/// Records of a run tried on the async worker, kept until the try is known to count.
#[derive(Default)]
pub struct Held(Mutex<Vec<Draft>>);

impl RunObserver for Held {
    fn mission_ended(&self, ended: MissionEnded) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(Draft::now(&Mission::of(&ended)));
    }

    fn tool_returned(&self, returned: ToolReturned) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(Draft::now(&ToolCall::of(&returned)));
    }

    fn model_returned(&self, returned: ModelReturned) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(Draft::now(&ModelCall::of(&returned)));
    }
}
