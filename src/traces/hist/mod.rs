//! The cold trace-snapshot tools (traces.md §9): `hist.runs`, `hist.open`, `hist.read` and `hist.counters`
//! over another gateway's `traces/` directory.
//!
//! * `capture` owns one capture of the directory (traces.md §9.3): the bounds, opening and reading one
//!   file safely, and what a complete trace is;
//! * `listing` owns the capture's names: a fresh listing, or an earlier one of the unchanged directory;
//! * `tools` owns the tools' inputs, results, descriptions and schemas (traces.md §9.4).
//!
//! This module owns the surface the gateway calls: [`HistTool`], [`call`] and [`validate_directory`]
//! (traces.md §9.2). Everything here is blocking and keeps nothing of a file between calls: every call
//! captures the directory anew (its names perhaps an earlier listing of the unchanged directory,
//! `listing`), so concurrent calls own separate captures. Does not own selecting a cold tool, its
//! pins, when startup validates the directory, running a call on a blocking thread, its deadline and
//! cancellation, or the upstream-shaped answer `{ ok = true, value, content = {} }` (execution.md §12.5):
//! those are the mission's `tool()` dispatch and startup's.

pub mod capture;
mod listing;
pub mod tools;

use std::path::Path;

use nix::fcntl::AT_FDCWD;
use serde_json::Value;

use crate::codes::provider::FailureClass;
use crate::storage::error::{ErrorKind, StorageError};
use crate::storage::sys::{lstat_at, EntryKind};
use capture::{for_each_name, open_directory};

/// One of the four cold tools (traces.md §9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HistTool {
    Runs,
    Open,
    Read,
    Counters,
}

/// Every cold tool, in the order traces.md §9.4 lists them.
pub const HIST_TOOLS: [HistTool; 4] = [HistTool::Runs, HistTool::Open, HistTool::Read, HistTool::Counters];

impl HistTool {
    /// The tool of the upstream name (`runs`, `open`, `read`, `counters`; the alias is `hist.<name>`).
    pub fn from_name(name: &str) -> Option<HistTool> {
        HIST_TOOLS.into_iter().find(|tool| tool.name() == name)
    }

    /// The upstream name.
    pub fn name(self) -> &'static str {
        match self {
            HistTool::Runs => "runs",
            HistTool::Open => "open",
            HistTool::Read => "read",
            HistTool::Counters => "counters",
        }
    }

    /// The fixed description the mission lists (traces.md §9.4).
    pub fn description(self) -> &'static str {
        match self {
            HistTool::Runs => tools::RUNS_DESCRIPTION,
            HistTool::Open => tools::OPEN_DESCRIPTION,
            HistTool::Read => tools::READ_DESCRIPTION,
            HistTool::Counters => tools::COUNTERS_DESCRIPTION,
        }
    }

    /// The fixed input schema the mission lists (traces.md §9.4): a JSON Schema of an object with only
    /// the tool's members.
    pub fn input_schema(self) -> Value {
        match self {
            HistTool::Runs => tools::runs_schema(),
            HistTool::Open => tools::open_schema(),
            HistTool::Read => tools::read_schema(),
            HistTool::Counters => tools::counters_schema(),
        }
    }
}

/// Why a cold call failed (traces.md §9.3, §9.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistFailure {
    /// A member that is not listed, of another type, out of range, or a `run_ref`/`cursor` that is not a
    /// run reference: `mcp_request_invalid`.
    InvalidInput,
    /// `hist.open` or `hist.read` of a run the capture does not hold: `mcp_tool_error` with the content
    /// `[{"type":"text","text":"unknown run"}]`.
    UnknownRun,
    /// The directory cannot be opened or listed: `provider_unavailable` (dispatch `false`).
    Unavailable,
}

/// The text of the content of [`HistFailure::UnknownRun`] (traces.md §9.4).
pub const UNKNOWN_RUN_TEXT: &str = "unknown run";

impl HistFailure {
    /// The failure class the script receives (traces.md §9.4).
    pub fn class(self) -> FailureClass {
        match self {
            HistFailure::InvalidInput => FailureClass::McpRequestInvalid,
            HistFailure::UnknownRun => FailureClass::McpToolError,
            HistFailure::Unavailable => FailureClass::ProviderUnavailable,
        }
    }
}

/// Calls `tool` with `input` over the trace directory `dir`, capturing it anew (traces.md §9.3). Blocking:
/// run it on a blocking thread. The result is the `value` of the upstream-shaped answer.
pub fn call(dir: &Path, tool: HistTool, input: &Value) -> Result<Value, HistFailure> {
    match tool {
        HistTool::Runs => tools::runs(dir, input),
        HistTool::Open => tools::open(dir, input),
        HistTool::Read => tools::read(dir, input),
        HistTool::Counters => tools::counters(dir, input),
    }
}

/// traces.md §9.2: `lstat` of `dir` shows a directory (a symbolic link is refused), and opening it with
/// `O_DIRECTORY | O_NOFOLLOW` and listing it succeed. Nothing of it is kept.
pub fn validate_directory(dir: &Path) -> Result<(), StorageError> {
    let seen = lstat_at(AT_FDCWD, dir.as_os_str())
        .map_err(|e| StorageError::with_errno(ErrorKind::DirectoryUnavailable, e))?;
    match seen.kind {
        EntryKind::Directory => {}
        EntryKind::Symlink => return Err(StorageError::rule(ErrorKind::DirectoryIsSymlink)),
        EntryKind::Regular | EntryKind::Other => {
            return Err(StorageError::rule(ErrorKind::DirectoryNotDirectory))
        }
    }
    let fd = open_directory(dir)?;
    for_each_name(&fd, |_| {})
}

#[cfg(test)]
mod tests;
