//! The layering guard (issue 13): the top-level modules of `src/` (`src/<name>.rs` and `src/<name>/`,
//! not `lib.rs` or `main.rs`) import each other without a circle, no module below `startup` (the top
//! layer, which wires the others together) names `crate::startup`, and the generic runtime
//! (`actors/src/`) names no gateway stage or cause, cites no gateway spec document and writes no gateway
//! exit status. A further check (`tests/repo/layering/folders.rs`, issue 24) finds import circles between the files
//! of any one folder of `src/` and `actors/src/`.
//!
//! An edge `a -> b` is a `crate::b` path, or a `b` inside a `crate::{...}` group, written in any file of
//! module `a` outside a `//` comment. A gateway code is a type name, a variant name or a wire spelling of
//! `NotReadyCause`, `AbnormalCause` or `StageId`, read from their files in `src/codes/`; `actors/src/`
//! names one when it writes it outside a `//` comment as an identifier or as a whole string literal. A spec
//! document (a file of `docs/spec/`, `README.md` aside) is cited when its file name appears anywhere in a
//! file, comments included; an exit status (70 or 78) is written when it appears as a number outside a
//! comment, or in a comment line that speaks of an exit or a status.
//! Reads the source tree with std only; the parsers and the circle search are checked on small inline
//! sources first, so that the guard cannot pass by reading nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The fourth check: no import circle between the files of one folder (issue 24).
mod folders;

/// The top layer of the gateway: it may import every module, and none below it may import it.
const TOP: &str = "startup";

/// The modules above `startup`: the whole process (`ptc_gateway::main`) and the tests' door to the
/// internals (`testing`). They may import `startup`; nothing imports them.
const ABOVE_TOP: [&str; 2] = ["process", "testing"];

/// One source file: the top-level module it belongs to, its path under `src/` and its text.
struct SourceFile {
    module: String,
    path: String,
    text: String,
}

/// The edges between top-level modules, each with the files that make it.
type Edges = BTreeMap<(String, String), BTreeSet<String>>;

// ---------------------------------------------------------------------------------------------------
// Reading the tree.

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `src/<name>.rs` (but `lib.rs` and `main.rs`) and `src/<name>/`.
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for entry in fs::read_dir(src).expect("src/ is readable") {
        let entry = entry.expect("src/ entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            modules.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "lib" && stem != "main" {
                modules.insert(stem.to_owned());
            }
        }
    }
    modules
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).expect("directory is readable") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The top-level module a path under `src/` belongs to; `None` for `lib.rs` and `main.rs`.
fn owning_module(relative: &str) -> Option<String> {
    let first = relative.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_owned())
}

/// Every file of a top-level module, with its text.
fn source_files(src: &Path) -> Vec<SourceFile> {
    rust_files(src)
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(src).ok()?.to_string_lossy().replace('\\', "/");
            let module = owning_module(&relative)?;
            let text = fs::read_to_string(&path).expect("source file is readable");
            Some(SourceFile { module, path: relative, text })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------------
// The parser.

/// `text` without its `//` comments (line, doc and inner doc comments alike).
fn strip_line_comments(text: &str) -> String {
    text.lines().map(|line| line.find("//").map_or(line, |at| &line[..at])).collect::<Vec<_>>().join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier at the start of `text`.
fn leading_ident(text: &str) -> &str {
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    &text[..end]
}

/// Every name `crate::` leads to in `text` (comments already stripped): the first segment of each
/// `crate::x` path, and every identifier inside a `crate::{...}` group up to its first `}`.
fn crate_references(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        let preceded_by_ident = rest[..at].chars().next_back().is_some_and(is_ident);
        rest = &rest[at + "crate::".len()..];
        if preceded_by_ident {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(body.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()).map(str::to_owned));
        } else {
            let name = leading_ident(rest);
            if !name.is_empty() {
                names.insert(name.to_owned());
            }
        }
    }
    names
}

/// The edges between `modules` that `files` make; a module's references to itself are not edges.
fn edges_of(modules: &BTreeSet<String>, files: &[SourceFile]) -> Edges {
    let mut edges = Edges::new();
    for file in files {
        for target in crate_references(&strip_line_comments(&file.text)) {
            if target != file.module && modules.contains(&target) {
                edges.entry((file.module.clone(), target)).or_default().insert(file.path.clone());
            }
        }
    }
    edges
}

// ---------------------------------------------------------------------------------------------------
// The checks.

/// The modules reachable from `from` along `edges` (not `from` itself unless it lies on a circle).
fn reachable(edges: &Edges, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut pending = vec![from.to_owned()];
    while let Some(at) = pending.pop() {
        for (a, b) in edges.keys() {
            if *a == at && seen.insert(b.clone()) {
                pending.push(b.clone());
            }
        }
    }
    seen
}

/// The strongly connected components with more than one module: each is a set of modules that all reach
/// each other, i.e. a circle.
fn circles(edges: &Edges) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<String> = edges.keys().flat_map(|(a, b)| [a.clone(), b.clone()]).collect();
    let reach: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (n, reachable(edges, n))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for node in &nodes {
        if !reach[node].contains(node) || found.iter().any(|c| c.contains(node)) {
            continue;
        }
        let component =
            nodes.iter().filter(|other| reach[node].contains(*other) && reach[*other].contains(node));
        found.push(component.cloned().collect());
    }
    found
}

/// One line per edge inside `circle`, naming the files that make it.
fn describe_circle(edges: &Edges, circle: &BTreeSet<String>) -> String {
    let mut out = format!("circle between {circle:?}:\n");
    for ((a, b), files) in edges {
        if circle.contains(a) && circle.contains(b) {
            out.push_str(&format!("  {a} -> {b}: {files:?}\n"));
        }
    }
    out
}

/// The files below the top layer that name `crate::startup`.
fn files_importing_the_top(files: &[SourceFile]) -> Vec<String> {
    files
        .iter()
        .filter(|f| f.module != TOP && !ABOVE_TOP.contains(&f.module.as_str()))
        .filter(|f| crate_references(&strip_line_comments(&f.text)).contains(TOP))
        .map(|f| f.path.clone())
        .collect()
}

// ---------------------------------------------------------------------------------------------------
// The guard on the real tree.

fn real_tree() -> (BTreeSet<String>, Vec<SourceFile>) {
    let src = src_dir();
    (top_level_modules(&src), source_files(&src))
}

#[test]
fn the_real_tree_is_read() {
    let (modules, files) = real_tree();
    for expected in ["codes", "config", "exec", "json", "startup", "process", "os", "support", "client"] {
        assert!(modules.contains(expected), "module {expected} not found in {modules:?}");
    }
    assert!(!modules.contains("lib") && !modules.contains("main"), "{modules:?}");
    assert!(files.len() > 100, "only {} source files read", files.len());
    let edges = edges_of(&modules, &files);
    assert!(edges.contains_key(&(TOP.to_owned(), "config".to_owned())), "no startup -> config edge found");
}

#[test]
fn the_top_level_modules_form_no_circle() {
    let (modules, files) = real_tree();
    let edges = edges_of(&modules, &files);
    let found = circles(&edges);
    let report: String = found.iter().map(|c| describe_circle(&edges, c)).collect();
    assert!(found.is_empty(), "the top-level modules of src/ must form a DAG; found:\n{report}");
}

#[test]
fn nothing_imports_the_modules_above_startup() {
    let (_, files) = real_tree();
    let offenders: Vec<(String, &str)> = files
        .iter()
        .flat_map(|f| {
            let refs = crate_references(&strip_line_comments(&f.text));
            ABOVE_TOP
                .into_iter()
                .filter(move |m| *m != f.module && refs.contains(*m))
                .map(|m| (f.path.clone(), m))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "`process` and `testing` are the top; nothing may import them: {offenders:?}"
    );
}

#[test]
fn nothing_below_startup_imports_startup() {
    let (_, files) = real_tree();
    let offenders = files_importing_the_top(&files);
    assert!(
        offenders.is_empty(),
        "modules below `{TOP}` must not name `crate::{TOP}` (move the shared item to a lower module, e.g. \
         `crate::codes` or `crate::fault`): {offenders:?}"
    );
}

// ---------------------------------------------------------------------------------------------------
// The third check: `actors/` is generic in fact (issue 13).

/// The gateway's code enums that must not be named in `actors/src/`, with the file under `src/` that
/// defines each.
const GATEWAY_CODES: [(&str, &str); 3] = [
    ("NotReadyCause", "codes/readiness.rs"),
    ("AbnormalCause", "codes/abnormal.rs"),
    ("StageId", "codes/stage.rs"),
];

/// Words that are gateway codes and also the runtime's own generic vocabulary: the staged `shutdown`
/// itself and an admission pool's `quiesce` (`AdmissionPool::quiesce`, `OwnerMsg::Quiesce`). As
/// identifiers they are allowed; as a whole string literal (a wire spelling) they are not. (The audit
/// committer's `CommitLoss::OwnerLost` left the runtime in issue 24.)
const SHARED_VOCABULARY: [&str; 3] = ["shutdown", "quiesce", "Quiesce"];

/// The names `enum_name` gives away in `text` (its defining file): the type name, its variants (the
/// identifiers that open a line of its body), and every string literal a match arm of the file maps to
/// (`=> "x"` or `=> Some("x")`), i.e. its wire spellings.
fn enum_names(enum_name: &str, text: &str) -> BTreeSet<String> {
    let text = strip_line_comments(text);
    let mut found = BTreeSet::from([enum_name.to_owned()]);
    let header = format!("pub enum {enum_name} {{");
    if let Some(at) = text.find(&header) {
        let body = &text[at + header.len()..];
        let body = &body[..body.find('}').unwrap_or(body.len())];
        for line in body.lines() {
            let variant = leading_ident(line.trim_start());
            if !variant.is_empty() {
                found.insert(variant.to_owned());
            }
        }
    }
    for arm in text.split("=>").skip(1) {
        let arm = arm.trim_start();
        let arm = arm.strip_prefix("Some(").unwrap_or(arm);
        if let Some(literal) = arm.strip_prefix('"') {
            if let Some(end) = literal.find('"') {
                found.insert(literal[..end].to_owned());
            }
        }
    }
    found
}

/// Every gateway code name, read from `src/codes/`.
fn gateway_code_names() -> BTreeSet<String> {
    let src = src_dir();
    GATEWAY_CODES
        .iter()
        .flat_map(|(name, file)| {
            let text = fs::read_to_string(src.join(file)).expect("a code file is readable");
            enum_names(name, &text)
        })
        .collect()
}

/// A word of a source text: an identifier, or the whole content of a string literal.
#[derive(Debug, PartialEq, Eq)]
enum Word<'a> {
    Ident(&'a str),
    Literal(&'a str),
}

/// The identifiers and string literals of `text` (comments already stripped), in order.
fn words(text: &str) -> Vec<Word<'_>> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let c = bytes[at] as char;
        if c == '"' {
            let start = at + 1;
            let mut end = start;
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            found.push(Word::Literal(&text[start..end.min(bytes.len())]));
            at = end + 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let ident = leading_ident(&text[at..]);
            found.push(Word::Ident(ident));
            at += ident.len();
        } else if c.is_ascii_digit() {
            at += leading_ident(&text[at..]).len().max(1);
        } else {
            at += 1;
        }
    }
    found
}

/// The gateway codes `text` names: every identifier among `codes` but the shared vocabulary, and every
/// string literal that is exactly one of `codes`.
fn gateway_codes_named(text: &str, codes: &BTreeSet<String>) -> BTreeSet<String> {
    let text = strip_line_comments(text);
    words(&text)
        .into_iter()
        .filter_map(|word| match word {
            Word::Ident(name) if codes.contains(name) && !SHARED_VOCABULARY.contains(&name) => Some(name),
            Word::Literal(content) if codes.contains(content) => Some(content),
            _ => None,
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_gateway_codes_are_read_from_src() {
    let codes = gateway_code_names();
    for expected in [
        "NotReadyCause",
        "ProviderRuntimeLost",
        "provider_runtime_lost",
        "shutdown",
        "AbnormalCause",
        "PccListenerLost",
        "audit_write_failed",
        "StageId",
        "StopListeners",
        "EventLogClose",
        "checkpoint_events",
        "quiesce",
    ] {
        assert!(codes.contains(expected), "{expected} not read from src/codes/: {codes:?}");
    }
    // 6 + 5 + 8 variants, 6 + 5 + 7 spellings, 3 type names.
    assert_eq!(codes.len(), 40, "{codes:?}");
}

#[test]
fn actors_names_no_gateway_stage_or_cause() {
    let actors = Path::new(env!("CARGO_MANIFEST_DIR")).join("actors").join("src");
    let codes = gateway_code_names();
    let files = rust_files(&actors);
    assert!(files.len() > 10, "only {} files read under actors/src/", files.len());
    let mut offenders = BTreeMap::new();
    for path in files {
        let text = fs::read_to_string(&path).expect("source file is readable");
        let named = gateway_codes_named(&text, &codes);
        if !named.is_empty() {
            offenders.insert(path.strip_prefix(&actors).unwrap_or(&path).display().to_string(), named);
        }
    }
    assert!(
        offenders.is_empty(),
        "actors/ must stay generic: the gateway's causes and stages live in src/codes/ and reach the \
         runtime through `ptc_actors::Domain`; found: {offenders:?}"
    );
}

// ---------------------------------------------------------------------------------------------------
// The fourth check: `actors/` cites no gateway spec document and writes no gateway exit status (issue 24).

/// The gateway's exit statuses: unclean shutdown or abnormal stop, and a failed startup
/// (lifecycle.md §2.2). The runtime gets the first through `ptc_actors::Domain::UNCLEAN_EXIT`.
const GATEWAY_EXIT_STATUSES: [&str; 2] = ["70", "78"];

/// The file names of the gateway's spec documents, read from `docs/spec/` (`README.md` is the index,
/// not a document the code cites).
fn spec_documents() -> BTreeSet<String> {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join("spec");
    fs::read_dir(&spec)
        .expect("docs/spec/ is readable")
        .map(|entry| entry.expect("docs/spec/ entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md") && name != "README.md")
        .collect()
}

/// The documents of `documents` whose file name `text` contains as a whole word (not preceded by a
/// letter, digit, `_` or `-`), comments included: a citation is written in a comment.
fn spec_documents_cited(text: &str, documents: &BTreeSet<String>) -> BTreeSet<String> {
    documents
        .iter()
        .filter(|doc| {
            text.match_indices(doc.as_str())
                .any(|(at, _)| !text[..at].chars().next_back().is_some_and(|c| is_ident(c) || c == '-'))
        })
        .cloned()
        .collect()
}

/// The whole numbers of `text` (digits not inside an identifier; a type suffix such as `u8` is allowed).
fn numbers(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let Some(c) = rest.chars().next() else { break };
        if c.is_ascii_digit() && !text[..at].chars().next_back().is_some_and(is_ident) {
            let token = leading_ident(rest);
            let digits = &token[..token.find(|c: char| !c.is_ascii_digit()).unwrap_or(token.len())];
            found.push(digits);
            at += token.len();
        } else {
            at += c.len_utf8();
        }
    }
    found
}

/// The gateway exit statuses `text` writes: as a number outside a `//` comment, or in a comment of a
/// line that speaks of an exit or a status. String literals are skipped.
fn exit_statuses_written(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let (code, comment) = line.find("//").map_or((line, ""), |at| (&line[..at], &line[at..]));
        let code: String = without_literals(code);
        let lower = comment.to_ascii_lowercase();
        let comment_counts = lower.contains("exit") || lower.contains("status");
        let in_code = numbers(&code);
        let in_comment = if comment_counts { numbers(comment) } else { Vec::new() };
        for number in in_code.into_iter().chain(in_comment) {
            if GATEWAY_EXIT_STATUSES.contains(&number) {
                found.insert(number.to_owned());
            }
        }
    }
    found
}

/// `code` with the content of its string literals blanked out.
fn without_literals(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut in_literal = false;
    let mut escaped = false;
    for c in code.chars() {
        if in_literal {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_literal = false;
                out.push(c);
            }
            continue;
        }
        if c == '"' {
            in_literal = true;
        }
        out.push(c);
    }
    out
}

/// Every `.rs` file under `actors/src/`, with its path relative to it and its text.
fn actors_sources() -> Vec<(String, String)> {
    let actors = Path::new(env!("CARGO_MANIFEST_DIR")).join("actors").join("src");
    let files = rust_files(&actors);
    assert!(files.len() > 10, "only {} files read under actors/src/", files.len());
    files
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).expect("source file is readable");
            (path.strip_prefix(&actors).unwrap_or(&path).display().to_string(), text)
        })
        .collect()
}

#[test]
fn the_spec_documents_are_read_from_docs_spec() {
    let documents = spec_documents();
    for expected in [
        "lifecycle.md",
        "audit-events.md",
        "config.md",
        "http-mcp.md",
        "pcc.md",
        "pins.md",
        "providers.md",
        "execution.md",
        "models.md",
        "traces.md",
    ] {
        assert!(documents.contains(expected), "{expected} not read from docs/spec/: {documents:?}");
    }
    assert!(!documents.contains("README.md"), "{documents:?}");
}

#[test]
fn actors_cites_no_gateway_spec_document() {
    let documents = spec_documents();
    let offenders: BTreeMap<String, BTreeSet<String>> = actors_sources()
        .into_iter()
        .map(|(path, text)| (path, spec_documents_cited(&text, &documents)))
        .filter(|(_, cited)| !cited.is_empty())
        .collect();
    assert!(
        offenders.is_empty(),
        "actors/ must describe its own contract: a gateway spec citation belongs where the gateway \
         supplies the value (`src/codes/domain.rs`, the `Domain` impl); found: {offenders:?}"
    );
}

#[test]
fn actors_writes_no_gateway_exit_status() {
    let offenders: BTreeMap<String, BTreeSet<String>> = actors_sources()
        .into_iter()
        .map(|(path, text)| (path, exit_statuses_written(&text)))
        .filter(|(_, written)| !written.is_empty())
        .collect();
    assert!(
        offenders.is_empty(),
        "actors/ must not hard-code the gateway's exit statuses: the gateway supplies the unclean status \
         through `ptc_actors::Domain::UNCLEAN_EXIT`; found: {offenders:?}"
    );
}

// ---------------------------------------------------------------------------------------------------
// The guard's own parts, on inline sources.

fn file(module: &str, path: &str, text: &str) -> SourceFile {
    SourceFile { module: module.to_owned(), path: path.to_owned(), text: text.to_owned() }
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn edges(list: &[(&str, &str)]) -> Edges {
    list.iter().map(|(a, b)| ((a.to_string(), b.to_string()), names(&["x.rs"]))).collect()
}

#[test]
fn the_parser_finds_paths_and_groups_but_not_comments() {
    let cases: &[(&str, &[&str])] = &[
        ("use crate::json::Value;", &["json"]),
        ("let x = crate::fault::injected(p);", &["fault"]),
        ("use crate::{apps, config::host};", &["apps", "config", "host"]),
        // Every word of a group is a candidate; `edges_of` keeps only the module names.
        ("use crate::{\n    apps::Built,\n    json,\n};", &["Built", "apps", "json"]),
        ("// use crate::startup;", &[]),
        ("//! see `crate::startup` for the order", &[]),
        ("/// [`crate::exec`] runs it", &[]),
        ("let a = 1; // crate::exec", &[]),
        ("use other_crate::json;", &[]),
        ("use ptc_gateway::startup;", &[]),
        ("use super::json;", &[]),
        ("use crate::json; use crate::codes::StartupCode;", &["codes", "json"]),
        ("use crate::os::logging; crate::support::fault::injected()", &["os", "support"]),
    ];
    for (text, expected) in cases {
        assert_eq!(crate_references(&strip_line_comments(text)), names(expected), "{text:?}");
    }
}

#[test]
fn a_file_belongs_to_its_first_path_segment() {
    let cases: &[(&str, Option<&str>)] = &[
        ("json/decode.rs", Some("json")),
        ("json/mod.rs", Some("json")),
        ("calendar.rs", Some("calendar")),
        ("apps/tests/rows.rs", Some("apps")),
        ("lib.rs", None),
        ("main.rs", None),
        ("os/logging.rs", Some("os")),
        ("support/mod.rs", Some("support")),
    ];
    for (path, expected) in cases {
        assert_eq!(owning_module(path).as_deref(), *expected, "{path}");
    }
}

#[test]
fn edges_skip_self_references_unknown_names_and_comments() {
    let modules = names(&["a", "b", "c"]);
    let files = [
        file("a", "a/mod.rs", "use crate::a::x;\nuse crate::b::y;\n// crate::c\nuse crate::std_like::z;"),
        file("b", "b.rs", "fn f() { crate::c::g() }"),
    ];
    let found = edges_of(&modules, &files);
    let keys: Vec<(String, String)> = found.keys().cloned().collect();
    assert_eq!(keys, vec![("a".into(), "b".into()), ("b".into(), "c".into())]);
    assert_eq!(found[&("a".to_owned(), "b".to_owned())], names(&["a/mod.rs"]));
}

#[test]
fn circles_are_found_and_chains_are_not() {
    // (edges, the expected circles)
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a [&'a str]]);
    let cases: &[Case] = &[
        (&[("a", "b"), ("b", "c")], &[]),
        (&[("a", "b"), ("b", "a")], &[&["a", "b"]]),
        (&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")], &[&["a", "b", "c"]]),
        (&[("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")], &[&["a", "b"], &["c", "d"]]),
        (&[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")], &[]),
    ];
    for (list, expected) in cases {
        let expected: Vec<BTreeSet<String>> = expected.iter().map(|c| names(c)).collect();
        assert_eq!(circles(&edges(list)), expected, "{list:?}");
    }
}

#[test]
fn a_two_module_circle_in_sources_is_reported_with_its_files() {
    let modules = names(&["events", "providers", "json"]);
    let files = [
        file("events", "events/record.rs", "use crate::providers::FailureClass;\nuse crate::json::Value;"),
        file("providers", "providers/runtime.rs", "use crate::events::EventLog;"),
    ];
    let found_edges = edges_of(&modules, &files);
    let found = circles(&found_edges);
    assert_eq!(found, vec![names(&["events", "providers"])]);
    let report = describe_circle(&found_edges, &found[0]);
    assert!(report.contains("events -> providers: {\"events/record.rs\"}"), "{report}");
    assert!(report.contains("providers -> events: {\"providers/runtime.rs\"}"), "{report}");
    assert!(!report.contains("json"), "{report}");
}

#[test]
fn an_import_of_the_top_is_found_below_it_only() {
    let files = [
        file("startup", "startup/serve.rs", "use crate::startup::StartupCode;"),
        file("config", "config/host.rs", "use crate::startup::StartupCode;"),
        file("pins", "pins/mod.rs", "use crate::{json, startup};"),
        file("http", "http/socket.rs", "// was crate::startup::StartupCode\nuse crate::codes::StartupCode;"),
    ];
    assert_eq!(files_importing_the_top(&files), vec!["config/host.rs".to_owned(), "pins/mod.rs".to_owned()]);
}

#[test]
fn enum_names_are_the_type_its_variants_and_its_spellings() {
    let text = "/// Doc.\npub enum Cause {\n    /// First.\n    FirstLost,\n    Second,\n}\n\n\
                impl Cause {\n    fn as_str(self) -> &'static str {\n        match self {\n            \
                Cause::FirstLost => \"first_lost\",\n            Cause::Second => \"second\",\n        }\n    }\n    \
                fn record(self) -> Option<&'static str> {\n        match self {\n            \
                Cause::FirstLost => Some(\"first_record\"),\n            Cause::Second => None,\n        }\n    }\n}\n";
    assert_eq!(
        enum_names("Cause", text),
        names(&["Cause", "FirstLost", "Second", "first_lost", "first_record", "second"])
    );
}

#[test]
fn a_gateway_code_in_runtime_source_is_found_outside_comments_and_shared_words() {
    let codes =
        names(&["NotReadyCause", "ProviderRuntimeLost", "stop_listeners", "shutdown", "quiesce", "Quiesce"]);
    let cases: &[(&str, &[&str])] = &[
        ("let c = NotReadyCause::ProviderRuntimeLost;", &["NotReadyCause", "ProviderRuntimeLost"]),
        ("fn name() -> &'static str { \"stop_listeners\" }", &["stop_listeners"]),
        ("tracing::info!(\"shutdown\");", &["shutdown"]),
        // The runtime's own vocabulary: allowed as identifiers, and inside longer literals.
        ("pub mod shutdown; fn quiesce(&self) {} OwnerMsg::Quiesce", &[]),
        ("tracing::info!(\"shutdown finished\");", &[]),
        // Longer identifiers and comments are not codes.
        ("fn stop_listeners_now() {} // ProviderRuntimeLost", &[]),
        ("/// [`NotReadyCause`] is the gateway's", &[]),
        ("let s = \"a \\\" quote\"; let t = \"stop_listeners\";", &["stop_listeners"]),
    ];
    for (text, expected) in cases {
        assert_eq!(gateway_codes_named(text, &codes), names(expected), "{text:?}");
    }
}

#[test]
fn a_spec_citation_is_found_in_code_and_comments_but_not_inside_longer_names() {
    let documents = names(&["lifecycle.md", "config.md", "pcc.md"]);
    let cases: &[(&str, &[&str])] = &[
        ("//! The drain deadline (lifecycle.md §7.2).", &["lifecycle.md"]),
        ("/// See config.md §10 and pcc.md §4.", &["config.md", "pcc.md"]),
        ("let s = \"lifecycle.md\";", &["lifecycle.md"]),
        // Other file names that end like a spec document are not citations.
        ("// docs/my-config.md and gateway_config.md", &[]),
        ("// the runtime's own words, no citation", &[]),
    ];
    for (text, expected) in cases {
        assert_eq!(spec_documents_cited(text, &documents), names(expected), "{text:?}");
    }
}

#[test]
fn an_exit_status_is_found_as_a_number_or_in_a_comment_on_the_exit() {
    let cases: &[(&str, &[&str])] = &[
        ("ExitStatus::Unclean => 70,", &["70"]),
        ("const STARTUP_FAILED: u8 = 78u8;", &["78"]),
        ("/// 70: shutdown was not clean.\n/// The exit status is 70.", &["70"]),
        ("// exits 78 on a failed startup", &["78"]),
        // Other numbers, longer numbers, identifiers, literals and unrelated comments are not statuses.
        ("let d = Duration::from_millis(700); let x = 1_070; let v70 = 0;", &[]),
        ("let s = \"exit 70\";", &[]),
        ("// a queue of 70 records", &[]),
        ("const UNCLEAN_EXIT: u8 = 1;", &[]),
    ];
    for (text, expected) in cases {
        assert_eq!(exit_statuses_written(text), names(expected), "{text:?}");
    }
}
