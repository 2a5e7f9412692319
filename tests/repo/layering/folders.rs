//! The fourth check of the layering guard: no import circle between the files of one folder (issue 24).
//!
//! A folder is a directory of a crate's source tree (the crate root included); its nodes are its direct
//! children: each `.rs` file by its stem, each subdirectory by its name (everything below a subdirectory
//! counts as that subdirectory). The folder's own file (`mod.rs`, `<dir>.rs` beside the directory, or
//! the crate root) is the parent of the nodes, not one of them. A file declared by a
//! `#[path = "x_tests.rs"]` module belongs to the file that declares it.
//!
//! An edge `a -> b` inside a folder is a path written in a file of `a` outside comments and string
//! literals that leads to sibling `b`: `crate::…`, `super::…` (also `super::super::…`), `self::…`, or a
//! bare path that starts with a module the file declares, each followed into `{…}` groups at any depth
//! and resolved from the inline `mod x { … }` the path sits in. A path that ends at an item the folder's
//! own file imports from a child (a `pub use` re-export, or a private `use`, which the children see too)
//! leads to that child: that is the file the importer depends on. An item the folder's own file defines
//! leads to no sibling. Test code (`#[cfg(test)]` modules, inline or in their own files) is left out:
//! it is not part of the build's graph, and a round-trip test may use two siblings at once.
//!
//! Std only, like the rest of the guard; the parsers are checked on small inline sources first, so
//! that the check cannot pass by reading nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use super::{circles, describe_circle, is_ident, leading_ident, names, rust_files, src_dir};

/// One file of a crate as the folder check sees it.
struct CrateFile {
    /// Its path under the crate's source root, `/`-separated.
    path: String,
    /// The module its text sits in (`apps::runtime::host` as `["apps", "runtime", "host"]`).
    module: Vec<String>,
    /// The module whose file it belongs to as a node: its own module, or for a `#[path]` file, the
    /// module of the file that declares it.
    owner: Vec<String>,
    /// Whether it is test code: its module, or one above it, is declared under `#[cfg(test)]`.
    test: bool,
    text: String,
}

/// One path a file writes, resolved from the crate root, and whether it sits in a `pub use`.
#[derive(Debug, PartialEq, Eq, Clone)]
struct Reference {
    path: Vec<String>,
    /// The name the path binds when it is a `use` (its last segment or its `as` alias).
    binds: Option<String>,
    reexport: bool,
    /// Whether the path was written in a `use` item (the folder file's imports re-route its items).
    in_use: bool,
}

/// A folder's edges, each with the files that make it.
type FolderEdges = BTreeMap<(String, String), BTreeSet<String>>;

/// `text` without comments (`//…` and nested `/*…*/`) and with every string and char literal's content
/// blanked, so that neither can make an edge or shift a brace. Lifetimes are kept as they are.
fn strip_comments_and_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !out.chars().next_back().is_some_and(is_ident)
        {
            // A raw string `r"…"` or `r#"…"#`.
            let mut hashes = 0;
            let mut probe = at + 1;
            while chars.get(probe) == Some(&'#') {
                hashes += 1;
                probe += 1;
            }
            if chars.get(probe) != Some(&'"') {
                out.push(c);
                at += 1;
                continue;
            }
            at = probe + 1;
            while at < chars.len() {
                if chars[at] == '"' && (0..hashes).all(|h| chars.get(at + 1 + h) == Some(&'#')) {
                    at += 1 + hashes;
                    break;
                }
                at += 1;
            }
            out.push_str("\"\"");
        } else if c == '"' {
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            out.push_str("\"\"");
        } else if c == '\'' && next.is_some() && chars.get(at + 2) == Some(&'\'') {
            // A one-char literal such as `'{'` or `'"'`, which would otherwise open a string or shift the
            // brace depth that inline modules are tracked by.
            out.push_str("' '");
            at += 3;
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal such as `'\''` or `'\\'`.
            let mut end = at + 2;
            while end < chars.len() && chars[end] != '\'' {
                end += 1;
            }
            if chars.get(at + 2) == Some(&'\'') && chars.get(at + 3) == Some(&'\'') {
                end = at + 3;
            }
            out.push_str("' '");
            at = end + 1;
        } else {
            out.push(c);
            at += 1;
        }
    }
    out
}

/// A token of a source text, comments and strings already stripped.
#[derive(Debug, PartialEq, Eq, Clone)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other(char),
}

fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c.is_ascii_alphabetic() || c == '_' {
            let start = at;
            while at < chars.len() && is_ident(chars[at]) {
                at += 1;
            }
            found.push(Token::Ident(chars[start..at].iter().collect()));
            continue;
        }
        if c.is_ascii_digit() {
            while at < chars.len() && is_ident(chars[at]) {
                at += 1;
            }
            found.push(Token::Other('0'));
            continue;
        }
        at += 1;
        match c {
            ':' if chars.get(at) == Some(&':') => {
                at += 1;
                found.push(Token::PathSep);
            }
            '{' => found.push(Token::Open),
            '}' => found.push(Token::Close),
            ',' => found.push(Token::Comma),
            ';' => found.push(Token::Semi),
            '*' => found.push(Token::Star),
            c if c.is_whitespace() => {}
            c => found.push(Token::Other(c)),
        }
    }
    found
}

/// One leaf of a path tree: its segments as written, and the name it binds.
type Leaf = (Vec<String>, Option<String>);

/// A path tree at `tokens[at..]`: `a::b::c`, `a::{b, c::{d, self}, e as f, *}`. Returns each leaf path
/// with the name it binds, and the index after the tree.
fn path_tree(tokens: &[Token], mut at: usize) -> (Vec<Leaf>, usize) {
    let mut prefix = Vec::new();
    loop {
        match tokens.get(at) {
            Some(Token::Ident(name)) => {
                prefix.push(name.clone());
                at += 1;
            }
            Some(Token::Star) => {
                prefix.push("*".to_owned());
                return (vec![(prefix, None)], at + 1);
            }
            Some(Token::Open) => {
                let mut leaves = Vec::new();
                at += 1;
                loop {
                    match tokens.get(at) {
                        None => return (leaves, at),
                        Some(Token::Close) => return (leaves, at + 1),
                        Some(Token::Comma) => at += 1,
                        Some(_) => {
                            let (inner, next) = path_tree(tokens, at);
                            for (mut path, binds) in inner {
                                if path.first().is_some_and(|s| s == "self") {
                                    path.remove(0);
                                }
                                let binds =
                                    binds.or_else(|| prefix.last().cloned().filter(|_| path.is_empty()));
                                let mut full = prefix.clone();
                                full.extend(path);
                                leaves.push((full, binds));
                            }
                            at = next.max(at + 1);
                        }
                    }
                }
            }
            _ => return (vec![(prefix.clone(), prefix.last().cloned())], at),
        }
        match (tokens.get(at), tokens.get(at + 1)) {
            (Some(Token::PathSep), _) => at += 1,
            (Some(Token::Ident(word)), Some(Token::Ident(alias))) if word == "as" => {
                return (vec![(prefix, Some(alias.clone()))], at + 2);
            }
            _ => {
                let binds = prefix.last().cloned();
                return (vec![(prefix, binds)], at);
            }
        }
    }
}

/// Every path `text` writes from a module (`crate::`, `super::`, `self::`, or one of `local_modules`, the
/// modules the file declares), resolved from the crate root as seen from `module`, the module of the
/// file's text. Inline `mod x { … }` blocks shift the module their contents resolve from.
fn references(text: &str, module: &[String], local_modules: &BTreeSet<String>) -> Vec<Reference> {
    let toks = tokens(&strip_comments_and_strings(text));
    let mut found = Vec::new();
    // The inline modules open at this point, each with the brace depth its body starts at.
    let mut scopes: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0;
    let mut at = 0;
    while at < toks.len() {
        match &toks[at] {
            Token::Open => {
                depth += 1;
                at += 1;
                continue;
            }
            Token::Close => {
                if scopes.last().is_some_and(|(_, d, _)| *d == depth) {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
                at += 1;
                continue;
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some(Token::Ident(name)), Some(Token::Open)) = (toks.get(at + 1), toks.get(at + 2)) {
                    scopes.push((name.clone(), depth + 1, under_cfg_test(&toks, at)));
                }
                at += 1;
                continue;
            }
            _ => {}
        }
        let in_test = scopes.iter().any(|(_, _, test)| *test);
        let starts_path = !in_test
            && match (&toks[at], toks.get(at + 1)) {
                (Token::Ident(word), Some(Token::PathSep)) => {
                    let after_sep = at > 0 && matches!(toks[at - 1], Token::PathSep | Token::Other('.'));
                    !after_sep
                        && (word == "crate"
                            || word == "super"
                            || word == "self"
                            || (scopes.is_empty() && local_modules.contains(word)))
                }
                _ => false,
            };
        if !starts_path {
            at += 1;
            continue;
        }
        let in_use = at > 0 && matches!(&toks[at - 1], Token::Ident(w) if w == "use");
        let reexport = in_use && {
            // `pub use`, `pub(crate) use`, `pub(super) use`, `pub(in …) use`.
            let mut back = at - 1;
            while back > 0 && !matches!(&toks[back - 1], Token::Semi | Token::Open | Token::Close) {
                back -= 1;
                if matches!(&toks[back], Token::Ident(w) if w == "pub") {
                    break;
                }
            }
            matches!(&toks[back], Token::Ident(w) if w == "pub")
        };
        let here: Vec<String> =
            module.iter().cloned().chain(scopes.iter().map(|(n, _, _)| n.clone())).collect();
        let (leaves, next) = path_tree(&toks, at);
        for (path, binds) in leaves {
            if let Some(resolved) = resolve(&here, &path) {
                found.push(Reference { path: resolved, binds: binds.filter(|_| in_use), reexport, in_use });
            }
        }
        at = next.max(at + 1);
    }
    found
}

/// `path` (as written) resolved from the crate root, seen from module `here`.
fn resolve(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String>;
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base = Vec::new();
            rest = &rest[1..];
        }
        Some("self") => {
            base = here.to_vec();
            rest = &rest[1..];
        }
        Some("super") => {
            base = here.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => base = here.to_vec(),
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The modules `text` declares as files (`mod x;`, not inline ones), each with whether it is declared
/// under `#[cfg(test)]`.
fn declared_modules(text: &str) -> BTreeMap<String, bool> {
    let toks = tokens(&strip_comments_and_strings(text));
    (0..toks.len())
        .filter_map(|at| match (&toks[at], toks.get(at + 1), toks.get(at + 2)) {
            (Token::Ident(m), Some(Token::Ident(name)), Some(Token::Semi)) if m == "mod" => {
                Some((name.clone(), under_cfg_test(&toks, at)))
            }
            _ => None,
        })
        .collect()
}

/// Whether the item whose keyword is `toks[at]` (`mod`) carries `#[cfg(test)]` among its attributes
/// (a visibility such as `pub(crate)` may stand between them).
fn under_cfg_test(toks: &[Token], at: usize) -> bool {
    let mut at = at;
    // Skip the visibility: `pub`, `pub(crate)`, `pub(super)`.
    if at >= 4 && toks[at - 1] == Token::Other(')') && matches!(&toks[at - 4], Token::Ident(w) if w == "pub")
    {
        at -= 4;
    } else if at >= 1 && matches!(&toks[at - 1], Token::Ident(w) if w == "pub") {
        at -= 1;
    }
    while at >= 1 && toks[at - 1] == Token::Other(']') {
        let Some(open) = (0..at - 1).rev().find(|&i| toks[i] == Token::Other('[')) else { return false };
        let cfg_test =
            [Token::Ident("cfg".into()), Token::Other('('), Token::Ident("test".into()), Token::Other(')')];
        if toks[open + 1..at - 1] == cfg_test {
            return true;
        }
        if open == 0 || toks[open - 1] != Token::Other('#') {
            return false;
        }
        at = open - 1;
    }
    false
}

/// The `#[path = "file"] mod name;` declarations of `text`, as (file, module name). Read from the raw
/// text, since the file name is a string literal.
fn path_declarations(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[path = \"") {
        rest = &rest[at + "#[path = \"".len()..];
        let Some(end) = rest.find('"') else { break };
        let file = rest[..end].to_owned();
        let after = &rest[end..];
        if let Some(m) = after.find("mod ") {
            let name = leading_ident(&after[m + 4..]);
            if !name.is_empty() {
                found.push((file, name.to_owned()));
            }
        }
    }
    found
}

/// The module a file path under a source root stands for: `a/b.rs` is `a::b`, `a/mod.rs` is `a`,
/// `lib.rs` is the root; `main.rs` is another crate and gives `None`.
fn module_of_path(relative: &str) -> Option<Vec<String>> {
    let stem = relative.strip_suffix(".rs")?;
    if stem == "main" {
        return None;
    }
    let mut segments: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if segments.last().is_some_and(|s| s == "mod" || s == "lib") {
        segments.pop();
    }
    Some(segments)
}

/// The files of a crate's source root: texts, modules and owners (`#[path]` files given to their
/// declaring file).
fn crate_files(sources: Vec<(String, String)>) -> Vec<CrateFile> {
    // file path -> (module, owner) for `#[path]`-declared files.
    let mut declared: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (path, text) in &sources {
        let Some(module) = module_of_path(path) else { continue };
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        for (file, name) in path_declarations(text) {
            let target = if dir.is_empty() { file } else { format!("{dir}/{file}") };
            let mut inner = module.clone();
            inner.push(name);
            declared.insert(target, (inner, module.clone()));
        }
    }
    // The modules declared under `#[cfg(test)]`.
    let mut tests: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut files: Vec<CrateFile> = sources
        .into_iter()
        .filter_map(|(path, text)| {
            let (module, owner) = match declared.get(&path) {
                Some((module, owner)) => (module.clone(), owner.clone()),
                None => {
                    let module = module_of_path(&path)?;
                    (module.clone(), module)
                }
            };
            for (name, test) in declared_modules(&text) {
                if test {
                    tests.insert(module.iter().cloned().chain([name]).collect());
                }
            }
            Some(CrateFile { path, module, owner, test: false, text })
        })
        .collect();
    for f in &mut files {
        f.test = (1..=f.module.len()).any(|n| tests.contains(&f.module[..n]));
    }
    files
}

/// Every folder of a crate as a module path: the root and each module that has children.
fn folders(files: &[CrateFile]) -> BTreeSet<Vec<String>> {
    files.iter().filter(|f| !f.owner.is_empty()).map(|f| f.owner[..f.owner.len() - 1].to_vec()).collect()
}

/// The node a file of module `owner` is in folder `folder`: the child's name; `None` for the folder's
/// own file and outside the folder.
fn node_in(folder: &[String], owner: &[String]) -> Option<String> {
    owner.strip_prefix(folder).and_then(|rest| rest.first().cloned())
}

/// The edges inside `folder` (test files left out).
fn folder_edges(folder: &[String], files: &[CrateFile]) -> FolderEdges {
    let files: Vec<&CrateFile> = files.iter().filter(|f| !f.test).collect();
    let children: BTreeSet<String> = files.iter().filter_map(|f| node_in(folder, &f.owner)).collect();
    let refs: Vec<(&CrateFile, Vec<Reference>)> = files
        .iter()
        .map(|f| (*f, references(&f.text, &f.module, &declared_modules(&f.text).into_keys().collect())))
        .collect();
    // The items the folder's own file imports from a child: item name -> child.
    let mut routed: BTreeMap<String, String> = BTreeMap::new();
    for (f, list) in &refs {
        if f.module != folder {
            continue;
        }
        for r in list.iter().filter(|r| r.in_use && r.path.len() > folder.len() + 1) {
            if let (Some(child), Some(binds)) = (node_in(folder, &r.path), &r.binds) {
                if children.contains(&child) {
                    routed.insert(binds.clone(), child);
                }
            }
        }
    }
    let mut edges = FolderEdges::new();
    for (f, list) in &refs {
        let Some(from) = node_in(folder, &f.owner) else { continue };
        for r in list {
            let Some(first) = node_in(folder, &r.path) else { continue };
            let to = if children.contains(&first) { Some(first) } else { routed.get(&first).cloned() };
            if let Some(to) = to.filter(|to| *to != from) {
                edges.entry((from.clone(), to)).or_default().insert(f.path.clone());
            }
        }
    }
    edges
}

/// Every circle inside any folder of a crate, described with the files that make its edges.
fn folder_circles(files: &[CrateFile]) -> Vec<String> {
    let mut report = Vec::new();
    for folder in folders(files) {
        let edges = folder_edges(&folder, files);
        for circle in circles(&edges) {
            let name = if folder.is_empty() { "(root)".to_owned() } else { folder.join("/") };
            report.push(format!("in {name}/: {}", describe_circle(&edges, &circle)));
        }
    }
    report
}

/// The `.rs` files under `root`, as (path under root, text).
fn read_sources(root: &Path) -> Vec<(String, String)> {
    rust_files(root)
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            let text = fs::read_to_string(&path).expect("source file is readable");
            (relative, text)
        })
        .collect()
}

fn sources(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
}

#[test]
fn folder_paths_are_parsed_through_groups_scopes_and_strings() {
    let here: Vec<String> = vec!["a".into(), "b".into()];
    let none = BTreeSet::new();
    let paths = |text: &str, local: &BTreeSet<String>| -> Vec<Vec<String>> {
        references(text, &here, local).into_iter().map(|r| r.path).collect()
    };
    let p = |s: &str| -> Vec<String> { s.split("::").map(str::to_owned).collect() };
    assert_eq!(paths("use super::c::X;", &none), vec![p("a::c::X")]);
    assert_eq!(paths("use super::super::z::Y;", &none), vec![p("z::Y")]);
    assert_eq!(paths("use self::d::X;", &none), vec![p("a::b::d::X")]);
    assert_eq!(paths("let v = crate::m::n::f(1);", &none), vec![p("m::n::f")]);
    assert_eq!(
        paths("use crate::{a::{c::{self, X}, d as e}, m::*};", &none),
        vec![p("a::c"), p("a::c::X"), p("a::d"), p("m::*")]
    );
    // Inline modules shift `super`; comments and strings make nothing; method chains are not paths.
    assert_eq!(
        paths("mod inner { use super::*; use super::super::c::Y; }", &none),
        vec![p("a::b::*"), p("a::c::Y")]
    );
    // Test code makes nothing.
    assert_eq!(
        paths("#[cfg(test)]\nmod tests { use super::super::c::Y; }\nuse super::d::Z;", &none),
        vec![p("a::d::Z")]
    );
    assert_eq!(
        paths("// use super::c;\n/* super::d */ let s = \"super::e\"; x.self::f", &none),
        Vec::<Vec<String>>::new()
    );
    assert_eq!(paths("let c = '\"'; use super::c::X; let s = r#\"super::q\"#;", &none), vec![p("a::c::X")]);
    // A brace in a char literal does not end the test module early; a lifetime is not a literal.
    let text = "#[cfg(test)]\nmod tests { fn f<'a>(x: &'a str) { let c = '}'; let d = b'{'; } use super::super::c::Y; }\n\
                use super::d::Z;";
    assert_eq!(paths(text, &none), vec![p("a::d::Z")]);
    // Declared modules are reachable by their bare name at the file's own level only.
    let local = names(&["d"]);
    assert_eq!(paths("mod d; fn f() { d::g(); e::h(); }", &local), vec![p("a::b::d::g")]);
    // Aliases and re-exports.
    let refs = references("pub(crate) use super::c::X as Y;\nuse super::d::Z;", &here, &none);
    assert_eq!(refs[0].binds.as_deref(), Some("Y"));
    assert!(refs[0].reexport && !refs[1].reexport);
    assert_eq!(refs[1].binds.as_deref(), Some("Z"));
}

#[test]
fn module_declarations_know_test_code() {
    let text = "mod a;\n#[cfg(test)]\nmod b;\n#[cfg(test)]\n#[path = \"c_tests.rs\"]\npub(crate) mod c;\n\
                #[cfg(feature = \"x\")]\npub mod d;\n#[cfg(test)]\nmod e {}";
    let found: Vec<(String, bool)> = declared_modules(text).into_iter().collect();
    let expected: Vec<(String, bool)> =
        vec![("a".into(), false), ("b".into(), true), ("c".into(), true), ("d".into(), false)];
    assert_eq!(found, expected);
    assert_eq!(path_declarations(text), vec![("c_tests.rs".to_owned(), "c".to_owned())]);
}

#[test]
fn folder_edges_follow_the_folder_files_imports() {
    let files = crate_files(sources(&[
        ("lib.rs", "mod f;"),
        // The folder file defines `Limits`, re-exports `Tool` from `tools` and imports `Deadline`.
        (
            "f/mod.rs",
            "mod a; mod b; mod c; mod tools; pub use tools::Tool;\nuse self::b::Deadline;\npub struct Limits;\n\
             fn g() { c::h() }",
        ),
        ("f/a.rs", "use super::{Limits, Tool};\nuse super::Deadline;"),
        ("f/b.rs", "use crate::f::a::helper;\n#[cfg(test)]\n#[path = \"b_tests.rs\"]\nmod tests;\n#[path = \"b_more.rs\"]\nmod more;"),
        ("f/b_tests.rs", "use super::super::tools::T;"),
        ("f/b_more.rs", "use super::super::tools::T;"),
        ("f/c.rs", "use super::Limits;"),
        ("f/tools.rs", "pub struct Tool;\n#[cfg(test)]\nmod tests { use crate::f::a::X; }"),
    ]));
    let b_more =
        files.iter().find(|f| f.path == "f/b_more.rs").map(|f| (f.module.clone(), f.owner.clone(), f.test));
    assert_eq!(
        b_more,
        Some((vec!["f".into(), "b".into(), "more".into()], vec!["f".into(), "b".into()], false))
    );
    let b_tests = files.iter().find(|f| f.path == "f/b_tests.rs").map(|f| f.test);
    assert_eq!(b_tests, Some(true));
    assert_eq!(folders(&files), BTreeSet::from([vec![], vec!["f".to_owned()]]));
    let found = folder_edges(&["f".to_owned()], &files);
    let keys: Vec<(String, String)> = found.keys().cloned().collect();
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    // `a` -> `tools` (the re-exported Tool), `a` -> `b` (Deadline, imported by the folder file),
    // `b` -> `a`, `b` -> `tools` (its non-test `#[path]` file); `Limits` and the folder file's own
    // paths make none, and neither do the test files.
    assert_eq!(keys, vec![pair("a", "b"), pair("a", "tools"), pair("b", "a"), pair("b", "tools")]);
    assert_eq!(found[&pair("b", "tools")], names(&["f/b_more.rs"]));
    let report = folder_circles(&files);
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(report[0].starts_with("in f/: circle between {\"a\", \"b\"}"), "{report:?}");
}

#[test]
fn subfolders_are_one_node_of_their_parent_folder() {
    let files = crate_files(sources(&[
        ("lib.rs", "mod x; mod y; mod z;"),
        ("x/mod.rs", "mod inner;"),
        ("x/inner.rs", "use crate::y::Thing;"),
        ("y.rs", "use crate::x::inner::f;"),
        ("z/mod.rs", "mod v; mod w;"),
        ("z/w.rs", "use crate::z::v::g;"),
        ("z/v.rs", "use super::w::h;"),
    ]));
    let root = folder_edges(&[], &files);
    let keys: Vec<(String, String)> = root.keys().cloned().collect();
    assert_eq!(keys, vec![("x".into(), "y".into()), ("y".into(), "x".into())]);
    let report = folder_circles(&files);
    assert_eq!(report.len(), 2, "{report:?}");
    assert!(report[0].starts_with("in (root)/: circle between {\"x\", \"y\"}"), "{report:?}");
    assert!(report[1].starts_with("in z/: circle between {\"v\", \"w\"}"), "{report:?}");
}

fn circles_under(root: &Path) -> (usize, Vec<String>) {
    let files = crate_files(read_sources(root));
    (files.len(), folder_circles(&files))
}

#[test]
fn the_real_folders_are_read() {
    let files = crate_files(read_sources(&src_dir()));
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    let folder = |path: &str| -> Vec<String> { path.split('/').map(str::to_owned).collect() };
    // `use super::vm::{…}`, `use super::settle::{self, …}` and `use crate::http::io::…`.
    for (dir, edge) in [
        ("apps/luau", pair("sandbox", "vm")),
        ("exec", pair("driver", "settle")),
        ("http", pair("connection", "io")),
        // `startup/serve.rs` names `crate::startup::pools::Pools` and calls `listeners::bind`.
        ("startup", pair("serve", "pools")),
        ("startup", pair("serve", "listeners")),
    ] {
        let edges = folder_edges(&folder(dir), &files);
        assert!(
            edges.contains_key(&edge),
            "{dir}: no {edge:?} edge in {:?}",
            edges.keys().collect::<Vec<_>>()
        );
    }
}

#[test]
fn no_folder_of_src_has_an_import_circle() {
    let (read, report) = circles_under(&src_dir());
    assert!(read > 100, "only {read} files read under src/");
    assert!(
        report.is_empty(),
        "import circles inside folders of src/ ({}):\n{}",
        report.len(),
        report.join("")
    );
}

#[test]
fn no_folder_of_actors_has_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("actors").join("src");
    let (read, report) = circles_under(&root);
    assert!(read > 10, "only {read} files read under actors/src/");
    assert!(
        report.is_empty(),
        "import circles inside folders of actors/src/ ({}):\n{}",
        report.len(),
        report.join("")
    );
}
