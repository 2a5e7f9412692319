//! Vectors of the cold tools (traces.md §12 H1–H5) and of captures (traces.md §9.3) over trace files
//! written by hand in the record format of traces.md §5.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use tempfile::TempDir;

use super::capture::Capture;
use super::{call, validate_directory, HistFailure, HistTool, HIST_TOOLS};
use crate::json::{decode, to_deterministic_string, Limits};
use crate::storage::error::ErrorKind;

const START: &str = "0006400a1b2c3d4e9f8e7d6c5b4a3921";
const CALL: &str = "6f1c0a4e9b2d4c7f8a0b1c2d3e4f5061";
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

fn rr(n: u64) -> String {
    format!("{START}-{n:020}")
}

fn at(n: u64) -> String {
    format!("2026-09-16T08:03:40.{n:06}Z")
}

fn start_line(n: u64, tool: &str) -> String {
    format!(
        "{{\"at\":\"{}\",\"call_id\":\"{CALL}\",\"deadline_ms\":30000,\"front\":\"mcp\",\"input\":{{\"value\":{{}}}},\
         \"kind\":\"run_start\",\"run_ref\":\"{}\",\"seq\":1,\"tool\":\"{tool}\",\"trace_id\":\"{TRACE}\"}}",
        at(n),
        rr(n)
    )
}

fn middle_line(n: u64, seq: usize) -> String {
    format!(
        "{{\"alias\":\"fs.read\",\"arguments\":{{\"value\":{{}}}},\"at\":\"{}\",\"class\":null,\"dispatch\":\"true\",\
         \"duration_us\":10,\"kind\":\"tool_call\",\"mission\":\"default\",\"ok\":true,\"request_id\":{seq},\
         \"seq\":{seq},\"started_at\":\"{}\",\"value\":{{\"value\":null}}}}",
        at(n),
        at(n)
    )
}

fn end_line(n: u64, outcome: &str, seq: usize) -> String {
    format!(
        "{{\"at\":\"{}\",\"disconnected\":false,\"dispatch\":\"true\",\"duration_us\":6900,\"kind\":\"run_end\",\
         \"omitted_records\":0,\"outcome\":\"{outcome}\",\"seq\":{seq}}}",
        at(n)
    )
}

/// The lines of a complete run `n` of `tool` with `middle` `tool_call` records, each ended with LF.
fn run_text(n: u64, tool: &str, outcome: &str, middle: usize) -> String {
    let mut text = start_line(n, tool) + "\n";
    for seq in 2..middle + 2 {
        text += &(middle_line(n, seq) + "\n");
    }
    text + &end_line(n, outcome, middle + 2) + "\n"
}

fn write_run(dir: &Path, n: u64, tool: &str, outcome: &str, middle: usize) {
    write_file(dir, n, &run_text(n, tool, outcome, middle));
}

fn write_file(dir: &Path, n: u64, text: &str) {
    let path = dir.join(format!("{}.jsonl", rr(n)));
    fs::write(&path, text).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
}

/// The summary of `run_text(n, tool, outcome, middle)` (traces.md §9.4).
fn summary(n: u64, tool: &str, outcome: &str, middle: usize) -> String {
    format!(
        "{{\"dispatch\":\"true\",\"duration_us\":6900,\"outcome\":\"{outcome}\",\"records\":{},\"run_ref\":\"{}\",\
         \"started_at\":\"{}\",\"tool\":\"{tool}\"}}",
        middle + 2,
        rr(n),
        at(n)
    )
}

fn runs_result(summaries: &[String], next: Option<u64>) -> String {
    let next = next.map_or("null".to_owned(), |n| format!("\"{}\"", rr(n)));
    format!("{{\"next_cursor\":{next},\"runs\":[{}]}}", summaries.join(","))
}

fn hist(dir: &Path, tool: HistTool, input: &str) -> Result<String, HistFailure> {
    let input = decode(input.as_bytes(), Limits::REQUEST).unwrap();
    call(dir, tool, &input).map(|value| to_deterministic_string(&value))
}

fn three_runs() -> TempDir {
    let tmp = TempDir::new().unwrap();
    write_run(tmp.path(), 1, "briefs", "success", 0);
    write_run(tmp.path(), 2, "notes", "execution_failed", 1);
    write_run(tmp.path(), 3, "briefs", "cancelled", 2);
    tmp
}

/// traces.md §12 H2: three runs, newest first, no further page.
#[test]
fn h2_runs_newest_first() {
    let tmp = three_runs();
    let want = runs_result(
        &[
            summary(3, "briefs", "cancelled", 2),
            summary(2, "notes", "execution_failed", 1),
            summary(1, "briefs", "success", 0),
        ],
        None,
    );
    assert_eq!(hist(tmp.path(), HistTool::Runs, "{}"), Ok(want));
}

/// traces.md §12 H3: two runs and a cursor, then the oldest run and `null`.
#[test]
fn h3_limit_and_cursor() {
    let tmp = three_runs();
    let first = runs_result(
        &[summary(3, "briefs", "cancelled", 2), summary(2, "notes", "execution_failed", 1)],
        Some(2),
    );
    assert_eq!(hist(tmp.path(), HistTool::Runs, r#"{"limit":2}"#), Ok(first));
    let input = format!(r#"{{"cursor":"{}","limit":2}}"#, rr(2));
    let second = runs_result(&[summary(1, "briefs", "success", 0)], None);
    assert_eq!(hist(tmp.path(), HistTool::Runs, &input), Ok(second));
    // A limit that ends exactly at the last run: no further page.
    let input = format!(r#"{{"cursor":"{}","limit":1}}"#, rr(2));
    let last = runs_result(&[summary(1, "briefs", "success", 0)], None);
    assert_eq!(hist(tmp.path(), HistTool::Runs, &input), Ok(last));
}

/// traces.md §9.4: a cursor need not be in the capture; it only bounds the run references listed.
#[test]
fn cursor_outside_the_capture() {
    let tmp = three_runs();
    let input = format!(r#"{{"cursor":"{}"}}"#, rr(9));
    let all = hist(tmp.path(), HistTool::Runs, "{}");
    assert_eq!(hist(tmp.path(), HistTool::Runs, &input), all);
    let input = format!(r#"{{"cursor":"{}"}}"#, rr(1));
    assert_eq!(hist(tmp.path(), HistTool::Runs, &input), Ok(runs_result(&[], None)));
}

/// The run of traces.md §5.6 (vector T4).
const EXAMPLE: &str = include_str!("example_trace.jsonl");
const EXAMPLE_REF: &str = "0006400a1b2c3d4e9f8e7d6c5b4a3921-00000000000000000001";

/// traces.md §12 H4: the summary with its extra members; the five records, and from `offset` 3 the last two.
#[test]
fn h4_open_and_read() {
    let tmp = TempDir::new().unwrap();
    fs::write(tmp.path().join(format!("{EXAMPLE_REF}.jsonl")), EXAMPLE).unwrap();
    let input = format!(r#"{{"run_ref":"{EXAMPLE_REF}"}}"#);
    let want = format!(
        "{{\"call_id\":\"{CALL}\",\"dispatch\":\"true\",\"duration_us\":6900,\"front\":\"mcp\",\
         \"omitted_records\":0,\"outcome\":\"success\",\"records\":5,\"run_ref\":\"{EXAMPLE_REF}\",\
         \"started_at\":\"2026-09-16T08:03:40.100000Z\",\"tool\":\"briefs\",\"trace_id\":\"{TRACE}\"}}"
    );
    assert_eq!(hist(tmp.path(), HistTool::Open, &input), Ok(want));
    let lines: Vec<&str> = EXAMPLE.lines().collect();
    let all = format!("{{\"next_offset\":null,\"records\":[{}]}}", lines.join(","));
    assert_eq!(hist(tmp.path(), HistTool::Read, &input), Ok(all));
    let input = format!(r#"{{"offset":3,"run_ref":"{EXAMPLE_REF}"}}"#);
    let tail = format!("{{\"next_offset\":null,\"records\":[{}]}}", lines[3..].join(","));
    assert_eq!(hist(tmp.path(), HistTool::Read, &input), Ok(tail));
    let input = format!(r#"{{"limit":2,"offset":1,"run_ref":"{EXAMPLE_REF}"}}"#);
    let page = format!("{{\"next_offset\":3,\"records\":[{}]}}", lines[1..3].join(","));
    assert_eq!(hist(tmp.path(), HistTool::Read, &input), Ok(page));
    let input = format!(r#"{{"offset":5,"run_ref":"{EXAMPLE_REF}"}}"#);
    assert_eq!(hist(tmp.path(), HistTool::Read, &input), Ok("{\"next_offset\":null,\"records\":[]}".into()));
}

/// traces.md §12 H5: an unknown run; a `run_ref` that is not a run reference.
#[test]
fn h5_unknown_and_invalid_run_refs() {
    let tmp = three_runs();
    let unknown = format!(r#"{{"run_ref":"{}"}}"#, rr(4));
    let table: [(HistTool, &str, HistFailure); 8] = [
        (HistTool::Open, &unknown, HistFailure::UnknownRun),
        (HistTool::Read, &unknown, HistFailure::UnknownRun),
        (HistTool::Open, r#"{"run_ref":7}"#, HistFailure::InvalidInput),
        (HistTool::Read, r#"{"run_ref":7}"#, HistFailure::InvalidInput),
        (
            HistTool::Open,
            r#"{"run_ref":"0006400A1B2C3D4E9F8E7D6C5B4A3921-00000000000000000001"}"#,
            HistFailure::InvalidInput,
        ),
        (
            HistTool::Open,
            r#"{"run_ref":"0006400a1b2c3d4e9f8e7d6c5b4a3921-00000000000000000001.jsonl"}"#,
            HistFailure::InvalidInput,
        ),
        (HistTool::Open, r#"{"run_ref":"../x"}"#, HistFailure::InvalidInput),
        (HistTool::Open, "{}", HistFailure::InvalidInput),
    ];
    for (tool, input, want) in table {
        assert_eq!(hist(tmp.path(), tool, input), Err(want), "{tool:?} {input}");
    }
}

/// traces.md §9.4: only the listed members, of their types, within their bounds.
#[test]
fn invalid_inputs() {
    let tmp = three_runs();
    let run = rr(1);
    let table: [(HistTool, String); 19] = [
        (HistTool::Runs, "[]".into()),
        (HistTool::Runs, "null".into()),
        (HistTool::Runs, r#"{"x":1}"#.into()),
        (HistTool::Runs, r#"{"tool":null}"#.into()),
        (HistTool::Runs, r#"{"tool":1}"#.into()),
        (HistTool::Runs, r#"{"outcome":true}"#.into()),
        (HistTool::Runs, r#"{"limit":0}"#.into()),
        (HistTool::Runs, r#"{"limit":101}"#.into()),
        (HistTool::Runs, r#"{"limit":20.0}"#.into()),
        (HistTool::Runs, r#"{"limit":"20"}"#.into()),
        (HistTool::Runs, r#"{"cursor":"abc"}"#.into()),
        (HistTool::Runs, r#"{"cursor":7}"#.into()),
        (HistTool::Read, format!(r#"{{"run_ref":"{run}","offset":-1}}"#)),
        (HistTool::Read, format!(r#"{{"run_ref":"{run}","limit":0}}"#)),
        (HistTool::Read, format!(r#"{{"run_ref":"{run}","limit":201}}"#)),
        (HistTool::Read, format!(r#"{{"run_ref":"{run}","cursor":"{run}"}}"#)),
        (HistTool::Open, format!(r#"{{"run_ref":"{run}","offset":0}}"#)),
        (HistTool::Counters, r#"{"outcome":"success"}"#.into()),
        (HistTool::Counters, r#"{"tool":["briefs"]}"#.into()),
    ];
    for (tool, input) in table {
        assert_eq!(hist(tmp.path(), tool, &input), Err(HistFailure::InvalidInput), "{tool:?} {input}");
    }
    // The bounds themselves are accepted.
    for input in [r#"{"limit":1}"#, r#"{"limit":100}"#] {
        assert!(hist(tmp.path(), HistTool::Runs, input).is_ok(), "{input}");
    }
    let input = format!(r#"{{"limit":200,"offset":18446744073709551615,"run_ref":"{run}"}}"#);
    assert_eq!(hist(tmp.path(), HistTool::Read, &input), Ok("{\"next_offset\":null,\"records\":[]}".into()));
}

/// traces.md §12 H1: an empty directory, then one run; the `tool` filter.
#[test]
fn h1_counters() {
    let tmp = TempDir::new().unwrap();
    let empty = Ok("{\"by_tool\":{},\"runs\":0}".to_owned());
    assert_eq!(hist(tmp.path(), HistTool::Counters, "{}"), empty);
    write_run(tmp.path(), 1, "briefs", "success", 0);
    let one = Ok("{\"by_tool\":{\"briefs\":{\"success\":1}},\"runs\":1}".to_owned());
    assert_eq!(hist(tmp.path(), HistTool::Counters, "{}"), one);
    write_run(tmp.path(), 2, "notes", "execution_failed", 1);
    write_run(tmp.path(), 3, "briefs", "cancelled", 2);
    write_run(tmp.path(), 4, "briefs", "success", 0);
    let all = "{\"by_tool\":{\"briefs\":{\"cancelled\":1,\"success\":2},\"notes\":{\"execution_failed\":1}},\"runs\":4}";
    assert_eq!(hist(tmp.path(), HistTool::Counters, "{}"), Ok(all.to_owned()));
    let briefs = "{\"by_tool\":{\"briefs\":{\"cancelled\":1,\"success\":2}},\"runs\":3}";
    assert_eq!(hist(tmp.path(), HistTool::Counters, r#"{"tool":"briefs"}"#), Ok(briefs.to_owned()));
    assert_eq!(hist(tmp.path(), HistTool::Counters, r#"{"tool":"other"}"#), empty);
}

/// traces.md §9.4: `tool` and `outcome` filter `hist.runs`; the cursor continues among the matching runs.
#[test]
fn runs_filters() {
    let tmp = TempDir::new().unwrap();
    for n in 1..=6 {
        let (tool, outcome) = if n % 2 == 0 { ("notes", "success") } else { ("briefs", "cancelled") };
        write_run(tmp.path(), n, tool, outcome, 0);
    }
    let briefs: Vec<String> = [5, 3, 1].iter().map(|n| summary(*n, "briefs", "cancelled", 0)).collect();
    let input = r#"{"tool":"briefs"}"#;
    assert_eq!(hist(tmp.path(), HistTool::Runs, input), Ok(runs_result(&briefs, None)));
    let input = r#"{"limit":2,"outcome":"cancelled"}"#;
    assert_eq!(hist(tmp.path(), HistTool::Runs, input), Ok(runs_result(&briefs[..2], Some(3))));
    let input = format!(r#"{{"cursor":"{}","limit":2,"outcome":"cancelled"}}"#, rr(3));
    assert_eq!(hist(tmp.path(), HistTool::Runs, &input), Ok(runs_result(&briefs[2..], None)));
    let input = r#"{"outcome":"success","tool":"briefs"}"#;
    assert_eq!(hist(tmp.path(), HistTool::Runs, input), Ok(runs_result(&[], None)));
}

/// traces.md §9.3: incomplete files, foreign names and other entries are never part of a capture.
#[test]
fn incomplete_and_foreign_entries_are_skipped() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    write_run(dir, 1, "briefs", "success", 0);
    let complete = run_text(2, "briefs", "success", 1);
    let no_end = start_line(3, "briefs") + "\n" + &middle_line(3, 2) + "\n";
    let torn = &complete[..complete.len() - 1];
    let torn_mid = &complete[..complete.len() - 10];
    let end_only = end_line(8, "success", 1) + "\n";
    let bad_end = run_text(9, "briefs", "success", 0).replace("\"seq\":2", "\"seq\":\"2\"");
    let garbage = "\u{0}\u{1}garbage\n{\"kind\":\"run_end\"\n";
    write_file(dir, 3, &no_end);
    write_file(dir, 4, torn);
    write_file(dir, 5, torn_mid);
    write_file(dir, 6, "");
    write_file(dir, 7, garbage);
    write_file(dir, 8, &end_only);
    write_file(dir, 9, &bad_end);
    for foreign in [
        "notes.txt".to_owned(),
        format!("{}.jsonl", rr(20).to_uppercase()),
        format!("{}.ptcins", rr(21)),
        format!("{}.jsonl.tmp", rr(22)),
        format!("{}.json", rr(23)),
    ] {
        fs::write(dir.join(foreign), run_text(20, "briefs", "success", 0)).unwrap();
    }
    fs::create_dir(dir.join(format!("{}.jsonl", rr(24)))).unwrap();
    let want = runs_result(&[summary(1, "briefs", "success", 0)], None);
    assert_eq!(hist(dir, HistTool::Runs, "{}"), Ok(want));
    assert_eq!(
        hist(dir, HistTool::Counters, "{}"),
        Ok("{\"by_tool\":{\"briefs\":{\"success\":1}},\"runs\":1}".into())
    );
    for n in [3, 4, 5, 6, 7, 8, 9, 24] {
        let input = format!(r#"{{"run_ref":"{}"}}"#, rr(n));
        assert_eq!(hist(dir, HistTool::Open, &input), Err(HistFailure::UnknownRun), "{n}");
        assert_eq!(hist(dir, HistTool::Read, &input), Err(HistFailure::UnknownRun), "{n}");
    }
}

/// traces.md §9.3: a symbolic link and a FIFO under a trace name are skipped, and the FIFO never blocks.
#[test]
fn links_and_fifos_are_skipped() {
    let tmp = TempDir::new().unwrap();
    let elsewhere = TempDir::new().unwrap();
    let dir = tmp.path();
    write_run(dir, 1, "briefs", "success", 0);
    write_run(elsewhere.path(), 2, "briefs", "success", 0);
    symlink(elsewhere.path().join(format!("{}.jsonl", rr(2))), dir.join(format!("{}.jsonl", rr(2)))).unwrap();
    let fifo = dir.join(format!("{}.jsonl", rr(3)));
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let want = runs_result(&[summary(1, "briefs", "success", 0)], None);
    assert_eq!(hist(dir, HistTool::Runs, "{}"), Ok(want));
    for n in [2, 3] {
        let input = format!(r#"{{"run_ref":"{}"}}"#, rr(n));
        assert_eq!(hist(dir, HistTool::Open, &input), Err(HistFailure::UnknownRun), "{n}");
        assert_eq!(hist(dir, HistTool::Read, &input), Err(HistFailure::UnknownRun), "{n}");
    }
}

/// traces.md §9.2 and §9.3: a missing, linked or non-directory path is refused at startup and answers
/// `provider_unavailable` in a call.
#[test]
fn directories() {
    let tmp = TempDir::new().unwrap();
    let traces = tmp.path().join("traces");
    fs::create_dir(&traces).unwrap();
    write_run(&traces, 1, "briefs", "success", 0);
    assert_eq!(validate_directory(&traces), Ok(()));
    let missing = tmp.path().join("missing");
    let linked = tmp.path().join("linked");
    symlink(&traces, &linked).unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "").unwrap();
    let table = [
        (&missing, ErrorKind::DirectoryUnavailable),
        (&linked, ErrorKind::DirectoryIsSymlink),
        (&file, ErrorKind::DirectoryNotDirectory),
    ];
    for (path, kind) in table {
        assert_eq!(validate_directory(path).map_err(|e| e.kind), Err(kind), "{path:?}");
        for tool in HIST_TOOLS {
            let input = format!(r#"{{"run_ref":"{}"}}"#, rr(1));
            let input = if matches!(tool, HistTool::Open | HistTool::Read) { input } else { "{}".into() };
            assert_eq!(hist(path, tool, &input), Err(HistFailure::Unavailable), "{path:?} {tool:?}");
        }
    }
}

/// traces.md §9.3: `hist.runs {}` reads about the newest 21 files, never the old unreadable one; the
/// counters read everything the capture holds.
#[test]
fn runs_reads_lazily() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    write_file(dir, 1, &run_text(1, "briefs", "success", 0));
    fs::set_permissions(dir.join(format!("{}.jsonl", rr(1))), fs::Permissions::from_mode(0o000)).unwrap();
    for n in 2..=501 {
        write_run(dir, n, "briefs", "success", 0);
    }
    let newest: Vec<String> = (482..=501).rev().map(|n| summary(n, "briefs", "success", 0)).collect();
    assert_eq!(hist(dir, HistTool::Runs, "{}"), Ok(runs_result(&newest, Some(482))));
    let mut capture = Capture::open(dir).unwrap();
    let mut listed = 0;
    while listed < 21 && capture.next_summary().is_some() {
        listed += 1;
    }
    assert_eq!(capture.files_opened, 21);
    let input = format!(r#"{{"cursor":"{}","limit":100}}"#, rr(102));
    let page: Vec<String> = (2..=101).rev().map(|n| summary(n, "briefs", "success", 0)).collect();
    let result = hist(dir, HistTool::Runs, &input).unwrap();
    // The unreadable file is left out when the process cannot read it (root can).
    let readable = fs::read(dir.join(format!("{}.jsonl", rr(1)))).is_ok();
    let mut want = page.clone();
    if readable {
        want.push(summary(1, "briefs", "success", 0));
        assert_eq!(result, runs_result(&want[..100], Some(2)));
    } else {
        assert_eq!(result, runs_result(&want, None));
    }
    let counted = if readable { 501 } else { 500 };
    let want = format!("{{\"by_tool\":{{\"briefs\":{{\"success\":{counted}}}}},\"runs\":{counted}}}");
    assert_eq!(hist(dir, HistTool::Counters, "{}"), Ok(want));
}

/// traces.md §9.3: the capture's 1 GiB bound, by file size newest first; a file larger than 64 MiB is no
/// trace and does not count.
#[test]
fn byte_bound() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    write_run(dir, 100, "briefs", "success", 0);
    let sparse = |n: u64, len: u64| {
        let file = fs::File::create(dir.join(format!("{}.jsonl", rr(n)))).unwrap();
        file.set_len(len).unwrap();
    };
    sparse(99, 67_108_865);
    for n in 80..=98 {
        sparse(n, 60 << 20);
    }
    write_run(dir, 1, "briefs", "success", 0);
    let want = runs_result(&[summary(100, "briefs", "success", 0)], None);
    assert_eq!(hist(dir, HistTool::Runs, "{}"), Ok(want));
    let input = format!(r#"{{"run_ref":"{}"}}"#, rr(1));
    assert_eq!(hist(dir, HistTool::Open, &input), Err(HistFailure::UnknownRun));
    let input = format!(r#"{{"cursor":"{}"}}"#, rr(50));
    assert_eq!(hist(dir, HistTool::Runs, &input), Ok(runs_result(&[], None)));
    assert_eq!(
        hist(dir, HistTool::Counters, "{}"),
        Ok("{\"by_tool\":{\"briefs\":{\"success\":1}},\"runs\":1}".into())
    );
}

/// Long first and last lines are read by chunks; `records` is `run_end.seq`; a middle line that is not a
/// JSON object reads as `null`.
#[test]
fn long_lines_and_garbage_records() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let long = "x".repeat(40_000);
    let start = start_line(1, "briefs")
        .replace("\"input\":{\"value\":{}}", &format!("\"input\":{{\"value\":\"{long}\"}}"));
    let end = end_line(1, "success", 4).replace("\"at\"", &format!("\"note\":\"{long}\",\"at\""));
    let text = format!("{start}\n{}\nnot json\n{end}\n", middle_line(1, 2));
    write_file(dir, 1, &text);
    write_file(dir, 2, &text[..text.len() - 1]);
    let want = runs_result(&[summary(1, "briefs", "success", 2)], None);
    assert_eq!(hist(dir, HistTool::Runs, "{}"), Ok(want));
    let input = format!(r#"{{"limit":2,"offset":1,"run_ref":"{}"}}"#, rr(1));
    let page = format!("{{\"next_offset\":3,\"records\":[{},null]}}", middle_line(1, 2));
    assert_eq!(hist(dir, HistTool::Read, &input), Ok(page));
}

/// traces.md §9.4: names, descriptions and input schemas.
#[test]
fn tools_and_schemas() {
    for tool in HIST_TOOLS {
        assert_eq!(HistTool::from_name(tool.name()), Some(tool));
        let description = tool.description();
        assert!(description.ends_with('.') && description.len() < 300, "{description}");
        let schema = tool.input_schema();
        assert_eq!(schema.get("type").and_then(|t| t.as_str()), Some("object"));
        assert_eq!(schema.get("additionalProperties").and_then(|a| a.as_bool()), Some(false));
    }
    assert_eq!(HistTool::from_name("hist.runs"), None);
    // The descriptions are the ones traces.md §9.4 lists.
    let spec = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/spec/traces.md")).unwrap();
    for tool in HIST_TOOLS {
        let row = format!("| `hist.{}` | {} |", tool.name(), tool.description());
        assert!(spec.contains(&row), "{row}");
    }
    assert_eq!(
        to_deterministic_string(&HistTool::Open.input_schema()),
        "{\"additionalProperties\":false,\"properties\":{\"run_ref\":{\"description\":\"The run reference, as \
         hist.runs lists it.\",\"pattern\":\"^[0-9a-f]{32}-[0-9]{20}$\",\"type\":\"string\"}},\"required\":\
         [\"run_ref\"],\"type\":\"object\"}"
    );
    let read = to_deterministic_string(&HistTool::Read.input_schema());
    assert!(read.contains("\"limit\":{\"default\":50,\"description\":\"The most records to return.\",\"maximum\":200,\"minimum\":1,\"type\":\"integer\"}"), "{read}");
    assert!(read.contains("\"offset\":{\"default\":0,\"description\":\"The position of the first record to return.\",\"minimum\":0,\"type\":\"integer\"}"), "{read}");
    let runs = to_deterministic_string(&HistTool::Runs.input_schema());
    assert!(runs.contains("\"maximum\":100,\"minimum\":1") && !runs.contains("required"), "{runs}");
}

/// Waits until the directory's times are settled for a listing that begins now (traces.md §9.3), within
/// a deadline.
fn wait_settled(dir: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let fd = super::capture::open_directory(dir).unwrap();
        let names = super::listing::newest_names(&fd).unwrap();
        if std::sync::Arc::ptr_eq(&names, &super::listing::newest_names(&fd).unwrap()) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the directory's times never settled");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// traces.md §9.3: a capture takes its names from an earlier listing only while the directory did not
/// change: a new file is listed at once, and a file that became complete since is read anew.
#[test]
fn kept_listing_follows_every_change() {
    let tmp = three_runs();
    write_file(tmp.path(), 4, &(start_line(4, "briefs") + "\n"));
    wait_settled(tmp.path());
    let three = |newest: Vec<String>| {
        let mut runs = newest;
        runs.extend([summary(3, "briefs", "cancelled", 2), summary(2, "notes", "execution_failed", 1)]);
        runs.push(summary(1, "briefs", "success", 0));
        runs_result(&runs, None)
    };
    assert_eq!(hist(tmp.path(), HistTool::Runs, "{}"), Ok(three(vec![])));
    // Run 4 completes: the directory is unchanged, its file is read anew.
    write_run(tmp.path(), 4, "notes", "success", 0);
    assert_eq!(hist(tmp.path(), HistTool::Runs, "{}"), Ok(three(vec![summary(4, "notes", "success", 0)])));
    // A new file changes the directory: listed at once, settled or not.
    write_run(tmp.path(), 5, "briefs", "success", 0);
    let five = three(vec![summary(5, "briefs", "success", 0), summary(4, "notes", "success", 0)]);
    assert_eq!(hist(tmp.path(), HistTool::Runs, "{}"), Ok(five));
    // A removed file too.
    fs::remove_file(tmp.path().join(format!("{}.jsonl", rr(5)))).unwrap();
    assert_eq!(hist(tmp.path(), HistTool::Runs, "{}"), Ok(three(vec![summary(4, "notes", "success", 0)])));
    assert_eq!(hist(tmp.path(), HistTool::Counters, "{}").map(|c| c.contains("\"runs\":4")), Ok(true));
}
