//! The startup scan behind a mission's `handle:api()` (execution.md §12.5, §12.7): which functions each
//! mission component exports, and the doc comment of each, computed once while the application is built.
//!
//! Owns the two halves of that scan and how they are joined: [`exported_names`] reads a module table as
//! its chunk returned it in the startup probe (the probe's sandbox calls it, `sandbox`), and
//! [`doc_comments`] reads the doc comments out of the component's source text (compilation calls it,
//! `apps::luau`); [`functions`] joins them into the sorted, bounded list a mission's environment keeps.
//! Does not own the Luau value `handle:api()` returns nor the tools part of it (`apps::runtime::api`),
//! and scans nothing at run time (execution.md §12.7).

use std::collections::BTreeMap;

use mlua::{Table, Value};

/// execution.md §12.5: a doc is at most 4,096 bytes, cut at a UTF-8 boundary.
pub const MAX_DOC_BYTES: usize = 4_096;
/// execution.md §12.5: `functions` lists at most 256 entries (the first in byte order).
pub const MAX_FUNCTIONS: usize = 256;
/// execution.md §12.3, §12.5: a function name is `^[A-Za-z_][A-Za-z0-9_]{0,63}$`.
const MAX_NAME_BYTES: usize = 64;

/// One entry of `functions` (execution.md §12.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportedFunction {
    /// `<component id>.<function name>`.
    pub name: String,
    /// The doc comment above the function's definition, when there is one.
    pub doc: Option<String>,
}

/// `^[A-Za-z_][A-Za-z0-9_]{0,63}$`, the function-name form of execution.md §12.3.
pub(crate) fn is_function_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let starts = bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    starts && name.len() <= MAX_NAME_BYTES && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// execution.md §12.5: the exported function names of a module table: its own keys (raw, no metamethod)
/// that are function names and hold functions, sorted by byte order. Errs only when Luau does (memory).
pub(crate) fn exported_names(module: &Table) -> mlua::Result<Vec<String>> {
    let mut names = Vec::new();
    module.for_each::<Value, Value>(|key, value| {
        if let (Value::String(key), Value::Function(_)) = (&key, &value) {
            if let Ok(key) = key.to_str() {
                if is_function_name(&key) {
                    names.push(key.to_owned());
                }
            }
        }
        Ok(())
    })?;
    names.sort_unstable();
    Ok(names)
}

/// What one source line defines (execution.md §12.5, the four forms of a documented definition).
#[derive(Debug, PartialEq, Eq)]
enum Definition<'a> {
    /// `function t.k(`, `function t:k(` or `t.k = function(`: the exported key `k`.
    Field(&'a str),
    /// `local function l(`.
    Local(&'a str),
    /// `t.k = l` (an optional `;`): key `k` exported as the local function `l`.
    Alias { key: &'a str, local: &'a str },
}

/// The longest identifier (`[A-Za-z_][A-Za-z0-9_]*`) at the start of `s`, and the rest.
fn identifier(s: &str) -> Option<(&str, &str)> {
    s.bytes().next().filter(|b| b.is_ascii_alphabetic() || *b == b'_')?;
    let end = s.bytes().position(|b| !(b.is_ascii_alphanumeric() || b == b'_')).unwrap_or(s.len());
    Some((s.get(..end)?, s.get(end..)?))
}

/// `s` without the leading spaces and tabs.
fn skip_blanks(s: &str) -> &str {
    s.trim_start_matches([' ', '\t'])
}

/// `<keyword><blank>+` at the start of `s` (the keyword not followed by an identifier character).
fn keyword<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let rest = s.strip_prefix(word)?;
    let after = skip_blanks(rest);
    (after.len() < rest.len()).then_some(after)
}

/// `t.k` or, with `colon`, `t:k` at the start of `s`: the key `k` (a function name) and the rest.
fn field(s: &str, colon: bool) -> Option<(&str, &str)> {
    let (_, rest) = identifier(s)?;
    let rest = rest.strip_prefix('.').or_else(|| if colon { rest.strip_prefix(':') } else { None })?;
    let (key, rest) = identifier(rest)?;
    is_function_name(key).then_some((key, rest))
}

/// Whether `s` is, after blanks, `(`.
fn opens_parameters(s: &str) -> bool {
    skip_blanks(s).starts_with('(')
}

/// The definition `line` makes, if it has one of the forms of execution.md §12.5.
fn definition(line: &str) -> Option<Definition<'_>> {
    let line = skip_blanks(line);
    if let Some(rest) = keyword(line, "local") {
        let (local, rest) = identifier(keyword(rest, "function")?)?;
        return opens_parameters(rest).then_some(Definition::Local(local));
    }
    if let Some(rest) = keyword(line, "function") {
        let (key, rest) = field(rest, true)?;
        return opens_parameters(rest).then_some(Definition::Field(key));
    }
    let (key, rest) = field(line, false)?;
    let value = skip_blanks(skip_blanks(rest).strip_prefix('=')?);
    if let Some(rest) = value.strip_prefix("function") {
        return opens_parameters(rest).then_some(Definition::Field(key));
    }
    let (local, rest) = identifier(value)?;
    let rest = skip_blanks(rest);
    let rest = skip_blanks(rest.strip_prefix(';').unwrap_or(rest));
    rest.is_empty().then_some(Definition::Alias { key, local })
}

/// The text of a doc comment line (`--` or more dashes, not a block comment), or `None` for any other line.
fn comment_text(line: &str) -> Option<&str> {
    let line = skip_blanks(line);
    let rest = line.strip_prefix("--")?;
    // `--[[` and `--[=[` (any number of `=`) open block comments, which are not doc lines.
    if rest.strip_prefix('[').is_some_and(|r| r.trim_start_matches('=').starts_with('[')) {
        return None;
    }
    let text = rest.trim_start_matches('-');
    Some(text.strip_prefix(' ').unwrap_or(text).trim_end())
}

/// The doc comment of the definition on line `at`: the comment lines right above it (execution.md §12.5).
fn doc_above(lines: &[&str], at: usize) -> Option<String> {
    let above = lines.get(..at).unwrap_or(&[]);
    let start = above.iter().rposition(|l| comment_text(l).is_none()).map_or(0, |i| i + 1);
    let texts: Vec<&str> = above.get(start..).unwrap_or(&[]).iter().filter_map(|l| comment_text(l)).collect();
    let first = texts.iter().position(|t| !t.is_empty())?;
    let last = texts.iter().rposition(|t| !t.is_empty())?;
    let joined = texts.get(first..=last)?.join("\n");
    Some(cut(joined, MAX_DOC_BYTES))
}

/// `text` cut to at most `max` bytes at a UTF-8 boundary.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let end = (0..=max).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        text.truncate(end);
    }
    text
}

/// execution.md §12.5: the doc comment of each exported key a component's source defines in one of the
/// documented forms; the last definition of a key in the source decides (an undocumented one clears it).
pub(crate) fn doc_comments(source: &[u8]) -> BTreeMap<String, String> {
    let text = String::from_utf8_lossy(source);
    let lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut locals: BTreeMap<&str, Option<String>> = BTreeMap::new();
    let mut docs: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (at, line) in lines.iter().enumerate() {
        match definition(line) {
            Some(Definition::Field(key)) => {
                docs.insert(key.to_owned(), doc_above(&lines, at));
            }
            Some(Definition::Local(local)) => {
                locals.insert(local, doc_above(&lines, at));
            }
            Some(Definition::Alias { key, local }) => {
                docs.insert(key.to_owned(), locals.get(local).cloned().flatten());
            }
            None => {}
        }
    }
    docs.into_iter().filter_map(|(key, doc)| Some((key, doc?))).collect()
}

/// execution.md §12.5: the `functions` of a mission, from each component's exported names (`exports`,
/// by component id) and its doc comments (`docs`): sorted by name in byte order, at most
/// [`MAX_FUNCTIONS`].
pub(crate) fn functions<'a>(
    components: impl Iterator<Item = (&'a str, &'a BTreeMap<String, String>)>,
    exports: &BTreeMap<String, Vec<String>>,
) -> Vec<ExportedFunction> {
    let mut all = Vec::new();
    for (id, docs) in components {
        for function in exports.get(id).map(Vec::as_slice).unwrap_or(&[]) {
            all.push(ExportedFunction { name: format!("{id}.{function}"), doc: docs.get(function).cloned() });
        }
    }
    all.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    all.truncate(MAX_FUNCTIONS);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_forms() {
        let table: &[(&str, Option<Definition>)] = &[
            ("function M.run(input)", Some(Definition::Field("run"))),
            ("  function M:run (x)", Some(Definition::Field("run"))),
            ("M.run = function(x)", Some(Definition::Field("run"))),
            ("M.run=function (x)", Some(Definition::Field("run"))),
            ("local function helper(x)", Some(Definition::Local("helper"))),
            ("M.run = helper", Some(Definition::Alias { key: "run", local: "helper" })),
            ("M.run = helper;  ", Some(Definition::Alias { key: "run", local: "helper" })),
            ("M.run = helper(1)", None),
            ("M.a.b = function()", None),
            ("functionM.run()", None),
            ("local x = 1", None),
            ("return M", None),
            ("function run()", None),
            ("M.run = function", None),
        ];
        for (line, want) in table {
            assert_eq!(definition(line), *want, "{line}");
        }
    }

    #[test]
    fn comment_lines() {
        let table: &[(&str, Option<&str>)] = &[
            ("-- text  ", Some("text")),
            ("--- text", Some("text")),
            ("--text", Some("text")),
            ("--  two", Some(" two")),
            ("  -- indented", Some("indented")),
            ("--", Some("")),
            ("--[[ block", None),
            ("--[==[ block", None),
            ("--[ not a block", Some("[ not a block")),
            ("x = 1 -- trailing", None),
            ("", None),
        ];
        for (line, want) in table {
            assert_eq!(comment_text(line), *want, "{line:?}");
        }
    }
}
