//! `ptc replay CONFIG PATH… [--env-file FILE] [--json]` (replay.md): recorded runs run again, offline,
//! against the tools as CONFIG now pins them, each with a verdict.
//!
//! * `trace` reads a trace file back into the run's input, its host calls and what it published;
//! * `port` answers the replayed run's host calls from the trace, through the runtime's own seams
//!   (`ToolPort`, `ModelPort`), and finds the first divergence;
//! * `run` replays one run and gives its verdict;
//! * `render` prints the verdicts for a person or as JSON.
//!
//! This module owns the command's arguments, which files are read, the progress line and the exit status
//! of the verdicts. Loading CONFIG (the stages of serve mode that need no port, process, connection or
//! credential, replay.md §2) and its refusal are startup's (`startup::replay`), which calls in here. It binds
//! nothing, starts no upstream, opens no connection and reads no credential.

mod port;
mod render;
mod run;
mod trace;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::apps::Built;
use crate::cli;
use crate::config::paths;
use crate::traces::hist::capture::is_run_ref;

/// replay.md §1: the usage line of a usage error.
pub(crate) const USAGE_LINE: &str = "ptc replay: usage: ptc replay CONFIG PATH… [--env-file FILE] [--json]\n";

/// replay.md §6.1: with more runs than this, a progress line on stderr after each this many.
pub(crate) const PROGRESS_EVERY: usize = 100;

/// The arguments of `ptc replay`, paths anchored at the invocation directory (config.md §3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReplayArgs {
    pub config: PathBuf,
    pub paths: Vec<PathBuf>,
    /// Accepted so a command line of `ptc check` carries over; never read (replay.md §1).
    pub env_file: Option<PathBuf>,
    pub json: bool,
}

/// replay.md §1: CONFIG, then one or more PATHs; `--env-file FILE` (or `=FILE`) and `--json` at most once
/// each, anywhere; `--` ends options. `None` is a usage error.
pub(crate) fn parse(args: &[OsString], cwd: &Path) -> Option<ReplayArgs> {
    let mut json = false;
    let scanned = cli::scan(args, |option| option == "--json" && !std::mem::replace(&mut json, true))?;
    let mut positional = scanned.positional.iter().map(|p| paths::anchor(p, cwd));
    let config = positional.next()?;
    let paths: Vec<PathBuf> = positional.collect();
    if paths.is_empty() {
        return None;
    }
    Some(ReplayArgs { config, paths, env_file: scanned.env_file.map(|p| paths::anchor(&p, cwd)), json })
}

/// Replays `files` against `built` and prints the verdicts (replay.md §6): a progress line on stderr after
/// every [`PROGRESS_EVERY`] runs when there are more, then the person's text or the JSON object on stdout.
/// The exit status of replay.md §7: 0 every run `same`, 1 any other verdict, 70 stdout not written.
/// Blocking: each run is a Luau run on this thread.
pub(crate) fn replay_files(built: &Built, files: Vec<trace::TraceFile>, json: bool) -> u8 {
    let total = files.len();
    let mut results = Vec::with_capacity(total);
    for (done, file) in files.into_iter().enumerate() {
        results.push(run::replay(built, file));
        if total > PROGRESS_EVERY && (done + 1) % PROGRESS_EVERY == 0 {
            let _ =
                std::io::stderr().write_all(format!("ptc replay: {} of {total} runs\n", done + 1).as_bytes());
        }
    }
    let text = if json { render::json(&results) } else { render::person(&results) };
    let mut out = std::io::stdout().lock();
    if out.write_all(text.as_bytes()).and_then(|_| out.flush()).is_err() {
        return 70;
    }
    if results.iter().all(|r| matches!(r.verdict, run::Verdict::Same { .. })) {
        0
    } else {
        1
    }
}

/// The trace files PATHs name, in order: a file as named; a directory's files whose names are run
/// references (traces.md §4.1) in byte order, the incomplete ones (a run still being written) left out.
/// A PATH that cannot be read, or a named file that is not a complete trace, is the line to print.
pub(crate) fn files(paths: &[PathBuf]) -> Result<Vec<trace::TraceFile>, String> {
    let mut files = Vec::new();
    for path in paths {
        let shown = path.display();
        let meta =
            std::fs::metadata(path).map_err(|e| format!("ptc replay: {shown}: {}\n", os_reason(&e)))?;
        if !meta.is_dir() {
            let file = trace::read(path).map_err(|unread| {
                let reason = match &unread {
                    trace::Unread::Io(error) => os_reason(error),
                    trace::Unread::Incomplete(_) => unread.to_string(),
                };
                format!("ptc replay: {shown}: {reason}\n")
            })?;
            files.push(file);
            continue;
        }
        let entries =
            std::fs::read_dir(path).map_err(|e| format!("ptc replay: {shown}: {}\n", os_reason(&e)))?;
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.strip_suffix(".jsonl").is_some_and(is_run_ref))
            .collect();
        names.sort();
        files.extend(names.iter().filter_map(|n| trace::read(&path.join(n)).ok()));
    }
    Ok(files)
}

/// The system's description of an I/O error, without Rust's ` (os error N)` suffix.
fn os_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn arguments() {
        let cwd = Path::new("/srv");
        let ok = |config: &str, paths: &[&str], env: Option<&str>, json: bool| {
            Some(ReplayArgs {
                config: PathBuf::from(config),
                paths: paths.iter().map(PathBuf::from).collect(),
                env_file: env.map(PathBuf::from),
                json,
            })
        };
        let cases: &[(&[&str], Option<ReplayArgs>)] = &[
            (&["g.json", "t"], ok("/srv/g.json", &["/srv/t"], None, false)),
            (&["--json", "g.json", "a", "/b"], ok("/srv/g.json", &["/srv/a", "/b"], None, true)),
            (&["g.json", "t", "--env-file=e"], ok("/srv/g.json", &["/srv/t"], Some("/srv/e"), false)),
            (&["g.json", "--", "-t"], ok("/srv/g.json", &["/srv/-t"], None, false)),
            (&["g.json"], None),
            (&["g.json", "t", "--json", "--json"], None),
            (&["g.json", "t", "--verbose"], None),
            (&["g.json", "t", "--env-file"], None),
            (&["g.json", "t", "--env-file="], None),
            (&["g.json", ""], None),
        ];
        for (argv, want) in cases {
            assert_eq!(&parse(&args(argv), cwd), want, "{argv:?}");
        }
    }
}
