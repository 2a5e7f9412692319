//! `ptc replay` (replay.md §1–§2, §7) as a startup command: its arguments, CONFIG loaded by the stages of
//! serve mode that need no port, process, connection or credential, a refusal explained as `ptc pin`
//! explains one, and then the replay (`crate::replay`).
//!
//! Owns which stages run for a replay and in which order: 1, 2, 3's declaration check (the bearer's value is
//! not read) and 5 with the content pin compared. Not 4, 6, 7, 8, 9 (no credential, no acquisition: no
//! upstream process, no connection), 10, 11 or 12. Does not own the replay itself.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use crate::apps::Built;
use crate::config::Mode;
use crate::explain::Refusal;
use crate::os::signals::StopRequest;
use crate::replay::{self, USAGE_LINE};
use crate::startup::{check, report_explained_failure, report_failure, templates, StartupCode};

/// The command to its exit status (replay.md §7): the replay's 0 or 1; 2 for a usage error or a PATH that
/// cannot be read; 78 for CONFIG refused; 70 when interrupted (nothing printed).
pub async fn run(args: Vec<OsString>, cwd: &Path, mut stop: StopRequest) -> u8 {
    let Some(args) = replay::parse(&args, cwd) else {
        let _ = std::io::stderr().write_all(USAGE_LINE.as_bytes());
        return 2;
    };
    let work = tokio::task::spawn_blocking(move || {
        let built = match load(&args.config) {
            Ok(built) => built,
            Err(refusal) => return report_explained_failure(&refusal),
        };
        match replay::files(&args.paths) {
            Ok(files) => replay::replay_files(&built, files, args.json),
            Err(line) => {
                let _ = std::io::stderr().write_all(line.as_bytes());
                2
            }
        }
    });
    tokio::select! {
        biased;
        _ = stop.requested() => 70,
        done = work => match done {
            Ok(status) => status,
            Err(_panic) => report_failure(StartupCode::InternalError),
        },
    }
}

/// replay.md §2: stages 1, 2, 3 (the binding declared, its value not read) and 5 with 5d, as serve mode
/// runs them, each refusal naming its stage (lifecycle.md §1.5).
fn load(config: &Path) -> Result<Built, Refusal> {
    let docs = check::documents(config)?;
    templates::build(&docs, Mode::Serve).map_err(check::at("5 templates"))
}
