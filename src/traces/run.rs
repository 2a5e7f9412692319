//! One run's trace (traces.md §5): `run_start` at the reservation, the run's own records as they end,
//! `run_end` before publication.
//!
//! Owns [`RunTrace`], the run's observer (`apps::runtime::RunObserver`), and [`Held`], which keeps the
//! records of a run tried on the async worker until the try is known to count (a try that is abandoned and
//! run again from the start leaves nothing, execution.md §12.8). Does not own the records' members
//! (`record.rs`), the ceiling (`file.rs`) or the file's creation (`dir.rs`).

use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use super::file::{Place, RunFile};
use super::record::{
    listed_tools, Closing, Draft, Listing, Mission, ModelCall, Published, ReplayBlocked, RunEnd,
    RunEndRecord, RunStart, RunStartRecord, ToolCall,
};
use crate::apps::runtime::{MissionEnded, ModelReturned, RunObserver, ToolReturned, ToolsListed};

/// The trace of one run.
pub struct RunTrace {
    file: RunFile,
    started: Instant,
    /// `artifacts.trace.replay` (traces.md §6.3).
    replay: bool,
    /// A record of the trace holds a value a replay needs cut at the ceiling.
    cut: AtomicBool,
}

impl RunTrace {
    /// A trace over the freshly created `file`, beginning with `run_start` (traces.md §5.2); with `replay`,
    /// its input whole when that leaves room for the records between (traces.md §6.3), otherwise cut.
    pub fn begin(file: File, max_file_bytes: u64, replay: bool, start: &RunStart<'_>) -> RunTrace {
        let trace = RunTrace::with(RunFile::new(file, max_file_bytes), replay);
        let at = SystemTime::now();
        let opened = replay && trace.file.open_within(Draft::new(&RunStartRecord::of(start, true), at));
        if !opened {
            trace.write(Draft::new(&RunStartRecord::of(start, false), at), Place::Framing);
        }
        trace
    }

    /// A trace whose file could not be created: it writes nothing and reports the failure.
    pub fn failed() -> RunTrace {
        RunTrace::with(RunFile::failed(), false)
    }

    fn with(file: RunFile, replay: bool) -> RunTrace {
        RunTrace { file, started: Instant::now(), replay, cut: AtomicBool::new(false) }
    }

    fn write(&self, draft: Draft, place: Place) {
        if draft.cut() {
            self.cut.store(true, Ordering::Relaxed);
        }
        self.file.write(draft, place);
    }

    /// traces.md §6.3: the first reason that applies why the trace cannot be replayed, if any.
    fn blocked(&self, omitted: u64, interrupted: bool) -> Option<ReplayBlocked> {
        if self.cut.load(Ordering::Relaxed) {
            Some(ReplayBlocked::ValueCut)
        } else if omitted > 0 {
            Some(ReplayBlocked::RecordsOmitted)
        } else if interrupted {
            Some(ReplayBlocked::Interrupted)
        } else {
            None
        }
    }

    /// Ends the trace with `run_end` (traces.md §5.5) and closes the file: its `result` in the largest
    /// form that fits the file (traces.md §6.2). True iff every write of the trace succeeded (a false is
    /// counted as `artifact_failed`, traces.md §7).
    pub fn end(&self, end: &RunEnd<'_>) -> bool {
        let omitted_records = self.file.omitted();
        let blocked = self.blocked(omitted_records, end.interrupted);
        let closing = Closing { duration: self.started.elapsed(), omitted_records, blocked };
        let published = Published::of(end.published);
        let at = SystemTime::now();
        let mut forms = published.results(self.replay).into_iter().peekable();
        while let Some(result) = forms.next() {
            let draft = Draft::new(&RunEndRecord::of(end, closing, &published, result), at);
            if forms.peek().is_none() {
                self.file.write(draft, Place::Framing);
            } else if self.file.close_within(draft) {
                break;
            }
        }
        self.file.close()
    }

    /// A holder for the records of a run tried on the async worker, recording as this trace does.
    pub fn held(&self) -> Held {
        Held { drafts: Mutex::default(), replay: self.replay }
    }

    /// The records `held` kept, in their order, as if they had been written when made.
    pub fn take(&self, held: &Held) {
        let drafts = std::mem::take(&mut *held.drafts.lock().unwrap_or_else(|p| p.into_inner()));
        for draft in drafts {
            self.write(draft, Place::Between);
        }
    }
}

impl RunObserver for RunTrace {
    fn mission_ended(&self, ended: MissionEnded) {
        self.write(Draft::now(&Mission::of(&ended, self.replay)), Place::Between);
    }

    fn tool_returned(&self, returned: ToolReturned) {
        self.write(Draft::now(&ToolCall::of(&returned, self.replay)), Place::Between);
    }

    fn model_returned(&self, returned: ModelReturned) {
        self.write(Draft::now(&ModelCall::of(&returned, self.replay)), Place::Between);
    }

    fn tools_listed(&self, listed: ToolsListed) {
        let tools = listed_tools(&listed.tools);
        self.write(Draft::now(&Listing::of(&listed, &tools, self.replay)), Place::Between);
    }
}

/// Records of a run tried on the async worker, kept until the try is known to count.
pub struct Held {
    drafts: Mutex<Vec<Draft>>,
    replay: bool,
}

impl Held {
    fn keep(&self, draft: Draft) {
        self.drafts.lock().unwrap_or_else(|p| p.into_inner()).push(draft);
    }
}

impl RunObserver for Held {
    fn mission_ended(&self, ended: MissionEnded) {
        self.keep(Draft::now(&Mission::of(&ended, self.replay)));
    }

    fn tool_returned(&self, returned: ToolReturned) {
        self.keep(Draft::now(&ToolCall::of(&returned, self.replay)));
    }

    fn model_returned(&self, returned: ModelReturned) {
        self.keep(Draft::now(&ModelCall::of(&returned, self.replay)));
    }

    fn tools_listed(&self, listed: ToolsListed) {
        let tools = listed_tools(&listed.tools);
        self.keep(Draft::now(&Listing::of(&listed, &tools, self.replay)));
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
