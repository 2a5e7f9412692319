//! The contract lives in the repository (issue 13): every `§` in `src/`, `actors/`, `benches/` and
//! `build.rs` names its document (`providers.md §12.1`), the named section exists in `docs/spec/`, and no
//! file of the repository points at a file outside it (the frozen copy of the spec and the first design
//! that a clone does not have).
//!
//! A `§` is named when it is immediately preceded by `<doc>.md ` (one of the eight documents of
//! `docs/spec/`) or by `RFC <n> `, or when it continues a list or range whose head is named: `§a–§b`,
//! `§a, §b`, `§a; §b`, `§a and §b`, `§a/§b`, `§a or §b`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

const DOCS: [&str; 11] = [
    "audit-events",
    "config",
    "execution",
    "http-mcp",
    "lifecycle",
    "models",
    "pcc",
    "pins",
    "providers",
    "replay",
    "traces",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file below `dir` (recursively), skipping build output and installed third-party trees.
fn files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if ["target", "node_modules", ".venv", "__pycache__"].contains(&name) {
            continue;
        }
        if path.is_dir() {
            files_below(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn text_files(roots: &[&str]) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    for r in roots {
        let path = root().join(r);
        if path.is_file() {
            paths.push(path);
        } else {
            files_below(&path, &mut paths);
        }
    }
    paths
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            let rel = p.strip_prefix(root()).ok()?.display().to_string();
            Some((rel, text))
        })
        .collect()
}

struct Rules {
    section: Regex,
    head_doc: Regex,
    head_rfc: Regex,
    continuation: Regex,
}

impl Rules {
    fn new() -> Rules {
        let docs = DOCS.join("|");
        Rules {
            section: Regex::new(r"§(\d+(?:\.\d+)*)").expect("regex"),
            head_doc: Regex::new(&format!(r"(?:^|[^A-Za-z0-9_-])({docs})\.md $")).expect("regex"),
            head_rfc: Regex::new(r"RFC \d+ $").expect("regex"),
            continuation: Regex::new(r"(?:\s*[–—-]\s*|\s*[,;/]\s*|\s*,?\s+(?:and|or)\s+)$").expect("regex"),
        }
    }

    /// The document the `§` at byte `at` of `line` names: `Some(doc)`, `Some("RFC")`, or `None`.
    fn document(&self, line: &str, at: usize) -> Option<String> {
        let before = &line[..at];
        if let Some(m) = self.head_doc.captures(before) {
            return Some(m[1].to_owned());
        }
        if self.head_rfc.is_match(before) {
            return Some("RFC".to_owned());
        }
        let separator = self.continuation.find(before)?;
        let previous =
            self.section.find_iter(&line[..separator.start()]).find(|m| m.end() == separator.start())?;
        self.document(line, previous.start())
    }

    /// `(document, section)` of every `§` in `text`, or the offending line for one that names none.
    fn references(&self, text: &str) -> Vec<Result<(String, String), String>> {
        let mut out = Vec::new();
        for line in text.lines() {
            for (at, _) in line.match_indices('§') {
                let number = self.section.captures(&line[at..]).map(|c| c[1].to_owned()).unwrap_or_default();
                match self.document(line, at) {
                    Some(doc) => out.push(Ok((doc, number))),
                    None => out.push(Err(line.trim().to_owned())),
                }
            }
        }
        out
    }
}

/// The top-level sections (`## N.`) of each document of `docs/spec/`.
fn spec_sections() -> BTreeSet<(String, String)> {
    let heading = Regex::new(r"(?m)^## (\d+)\.").expect("regex");
    let mut sections = BTreeSet::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root().join(format!("docs/spec/{doc}.md")))
            .unwrap_or_else(|e| panic!("docs/spec/{doc}.md: {e}"));
        for c in heading.captures_iter(&text) {
            sections.insert((doc.to_owned(), c[1].to_owned()));
        }
    }
    sections
}

#[test]
fn the_rules_tell_named_from_bare_references() {
    let rules = Rules::new();
    let table: [(&str, Vec<Option<&str>>); 7] = [
        ("// providers.md §12.1: a loss", vec![Some("providers")]),
        ("// §10: the run slot", vec![None]),
        ("// (execution.md §2–§10)", vec![Some("execution"), Some("execution")]),
        ("// lifecycle.md §6.3, §7.5 and §7.4", vec![Some("lifecycle"); 3]),
        ("// RFC 9112 §9.6 lingering close", vec![Some("RFC")]),
        ("// mypins.md §3", vec![None]),
        ("// pins.md §9 then §10", vec![Some("pins"), None]),
    ];
    for (line, want) in table {
        let got: Vec<Option<String>> =
            rules.references(line).into_iter().map(|r| r.ok().map(|(d, _)| d)).collect();
        let want: Vec<Option<String>> = want.into_iter().map(|d| d.map(str::to_owned)).collect();
        assert_eq!(got, want, "{line}");
    }
}

#[test]
fn every_section_sign_in_code_names_an_existing_section_of_its_document() {
    let rules = Rules::new();
    let sections = spec_sections();
    assert!(sections.len() > 60, "the spec's sections were read: {}", sections.len());
    let mut bare = Vec::new();
    let mut missing = Vec::new();
    let mut named = 0usize;
    for (path, text) in text_files(&["src", "actors/src", "actors/tests", "benches", "build.rs"]) {
        for reference in rules.references(&text) {
            match reference {
                Err(line) => bare.push(format!("{path}: {line}")),
                Ok((doc, number)) if doc != "RFC" => {
                    named += 1;
                    let top = number.split('.').next().unwrap_or("").to_owned();
                    if !sections.contains(&(doc.clone(), top)) {
                        missing.push(format!("{path}: {doc}.md §{number}"));
                    }
                }
                Ok(_) => named += 1,
            }
        }
    }
    assert!(named > 1_000, "only {named} references found");
    assert_eq!(bare, Vec::<String>::new(), "every § names its document");
    assert_eq!(missing, Vec::<String>::new(), "every named section exists in docs/spec/");
}

#[test]
fn nothing_points_outside_the_repository() {
    let outside = Regex::new(r"\.\./shared|shared/spec|DESIGN\.md|shared/seeds").expect("regex");
    let roots =
        ["README.md", "docs", "src", "actors", "tests", "config-examples", "benches", ".ci", "build.rs"];
    let offenders: Vec<String> = text_files(&roots)
        .into_iter()
        .filter(|(path, _)| path != "tests/repo/spec_references.rs")
        .flat_map(|(path, text)| {
            let found: Vec<String> = text
                .lines()
                .filter(|line| outside.is_match(line))
                .map(|line| format!("{path}: {}", line.trim()))
                .collect();
            found
        })
        .collect();
    assert_eq!(offenders, Vec::<String>::new());
}

#[test]
fn the_contract_and_its_companions_are_in_the_repository() {
    for path in ["docs/spec/README.md", "docs/architecture.md", "docs/glossary.md", "docs/decisions.md"] {
        assert!(root().join(path).is_file(), "{path} is missing");
    }
    for doc in DOCS {
        assert!(root().join(format!("docs/spec/{doc}.md")).is_file(), "docs/spec/{doc}.md is missing");
    }
}
