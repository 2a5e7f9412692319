//! The environment file of `--env-file` (config.md §7): reading it and parsing the config.md §7.2 grammar
//! into a map of assignments.
//!
//! This module owns the file's byte rules (65,536-byte bound, UTF-8, no NUL, CRLF handling) and its line
//! grammar (`export`, quoting, escapes, comments, duplicate names). It does not own the overlay on the
//! process environment or any credential rule: that is `credentials` (config.md §7.3, §8). Values are held as
//! [`Secret`]s because the file usually exists to carry credentials; errors name a line, never a value.

use std::collections::BTreeMap;
use std::path::Path;

use zeroize::Zeroizing;

use super::secret::{read_secret_file, FileReadError, Secret};

/// The size bound of an environment file (config.md §7.1).
pub const MAX_ENV_FILE_BYTES: usize = 65_536;

/// The longest variable name, in bytes (config.md §7.2: `( ALPHA / "_" ) *127( ALPHA / DIGIT / "_" )`).
pub const MAX_NAME_BYTES: usize = 128;

/// The assignments of one environment file. `Debug` shows the names only.
#[derive(Default)]
pub struct EnvFile {
    vars: BTreeMap<String, Secret>,
}

impl EnvFile {
    /// The value the file assigns to `name` (possibly empty), or `None` when it does not assign it.
    pub fn get(&self, name: &str) -> Option<&Secret> {
        self.vars.get(name)
    }

    /// The assigned names, in byte order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    /// The number of assignments.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether the file assigns nothing.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }
}

impl std::fmt::Debug for EnvFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvFile").field("names", &self.vars.keys().collect::<Vec<_>>()).finish()
    }
}

/// Why an environment file was refused. Every kind ends in `credential_unavailable` (config.md §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvFileErrorKind {
    /// Missing, permission denied, I/O error.
    Unreadable(std::io::ErrorKind),
    /// Not a regular file after following symbolic links.
    NotRegularFile,
    /// More than 65,536 bytes.
    TooLarge,
    /// Not well-formed UTF-8.
    InvalidUtf8,
    /// A NUL byte.
    Nul,
    /// A CR that is not immediately followed by LF.
    StrayCarriageReturn,
    /// An assignment whose name is missing, does not start with a letter or `_`, holds another character,
    /// or is longer than 128 bytes (`=value`, `1KEY=x`).
    InvalidName,
    /// A line that is neither blank, a comment nor an assignment (`KEY`).
    MissingEquals,
    /// A quoted value without its closing quote on the same line.
    UnterminatedQuote,
    /// A backslash sequence other than `\"`, `\\`, `\n`, `\t` in a double-quoted value.
    InvalidEscape,
    /// Something other than whitespace and a comment after a closing quote.
    TextAfterQuote,
    /// A name assigned twice.
    DuplicateName,
}

impl EnvFileErrorKind {
    /// A stable snake_case name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvFileErrorKind::Unreadable(_) => "unreadable",
            EnvFileErrorKind::NotRegularFile => "not_regular_file",
            EnvFileErrorKind::TooLarge => "too_large",
            EnvFileErrorKind::InvalidUtf8 => "invalid_utf8",
            EnvFileErrorKind::Nul => "nul",
            EnvFileErrorKind::StrayCarriageReturn => "stray_carriage_return",
            EnvFileErrorKind::InvalidName => "invalid_name",
            EnvFileErrorKind::MissingEquals => "missing_equals",
            EnvFileErrorKind::UnterminatedQuote => "unterminated_quote",
            EnvFileErrorKind::InvalidEscape => "invalid_escape",
            EnvFileErrorKind::TextAfterQuote => "text_after_quote",
            EnvFileErrorKind::DuplicateName => "duplicate_name",
        }
    }
}

/// A refusal: its kind and the 1-based line it was found on (0 for a whole-file failure). It never
/// contains file content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvFileError {
    pub kind: EnvFileErrorKind,
    pub line: usize,
}

impl std::fmt::Display for EnvFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            EnvFileErrorKind::Unreadable(io) => write!(f, "environment file: unreadable ({io})"),
            kind if self.line == 0 => write!(f, "environment file: {}", kind.as_str()),
            kind => write!(f, "environment file: {} on line {}", kind.as_str(), self.line),
        }
    }
}

impl std::error::Error for EnvFileError {}

/// Reads and parses the environment file at `path` (already anchored): a readable regular file after
/// following symbolic links, at most 65,536 bytes (config.md §7.1). The raw bytes are zeroed afterwards.
pub fn read(path: &Path) -> Result<EnvFile, EnvFileError> {
    let whole = |kind| EnvFileError { kind, line: 0 };
    let bytes = read_secret_file(path, MAX_ENV_FILE_BYTES).map_err(|e| match e {
        FileReadError::Unreadable(io) => whole(EnvFileErrorKind::Unreadable(io)),
        FileReadError::NotRegularFile => whole(EnvFileErrorKind::NotRegularFile),
        FileReadError::TooLarge => whole(EnvFileErrorKind::TooLarge),
    })?;
    parse(&bytes)
}

/// Parses an environment file's bytes (config.md §7.1, §7.2). Any invalid line refuses the whole file.
pub fn parse(bytes: &[u8]) -> Result<EnvFile, EnvFileError> {
    if bytes.len() > MAX_ENV_FILE_BYTES {
        return Err(EnvFileError { kind: EnvFileErrorKind::TooLarge, line: 0 });
    }
    let line_of = |offset: usize| 1 + bytes.iter().take(offset).filter(|&&b| b == b'\n').count();
    let text = std::str::from_utf8(bytes)
        .map_err(|e| EnvFileError { kind: EnvFileErrorKind::InvalidUtf8, line: line_of(e.valid_up_to()) })?;
    if let Some(offset) = bytes.iter().position(|&b| b == 0) {
        return Err(EnvFileError { kind: EnvFileErrorKind::Nul, line: line_of(offset) });
    }
    let mut file = EnvFile::default();
    let mut lines = text.split('\n').enumerate().peekable();
    while let Some((index, raw)) = lines.next() {
        let number = index + 1;
        let fail = |kind| EnvFileError { kind, line: number };
        // config.md §7.2: a CR immediately before an LF is removed first; any other CR is invalid.
        let line = match lines.peek() {
            Some(_) => raw.strip_suffix('\r').unwrap_or(raw),
            None => raw,
        };
        if line.contains('\r') {
            return Err(fail(EnvFileErrorKind::StrayCarriageReturn));
        }
        if let Some((name, value)) = parse_line(line).map_err(fail)? {
            if file.vars.contains_key(name) {
                return Err(fail(EnvFileErrorKind::DuplicateName));
            }
            file.vars.insert(name.to_owned(), value);
        }
    }
    Ok(file)
}

fn is_wsp(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// One line without its terminator: `None` for a blank or comment line, else the assignment.
fn parse_line(line: &str) -> Result<Option<(&str, Secret)>, EnvFileErrorKind> {
    let rest = line.trim_start_matches(is_wsp);
    if rest.is_empty() || rest.starts_with('#') {
        return Ok(None);
    }
    let rest = strip_export(rest);
    let (name, rest) = split_name(rest)?;
    let rest = rest.trim_start_matches(is_wsp);
    let Some(rest) = rest.strip_prefix('=') else {
        return Err(EnvFileErrorKind::MissingEquals);
    };
    let rest = rest.trim_start_matches(is_wsp);
    let value = if let Some(quoted) = rest.strip_prefix('\'') {
        single_quoted(quoted)?
    } else if let Some(quoted) = rest.strip_prefix('"') {
        double_quoted(quoted)?
    } else {
        Secret::new(unquoted(rest).to_owned())
    };
    Ok(Some((name, value)))
}

/// Removes an `export` prefix: `export` followed by whitespace and then a name. `export=1` and
/// `export = 1` assign the variable `export` (config.md §7.2), so the prefix is taken only when no `=`
/// follows the whitespace.
fn strip_export(rest: &str) -> &str {
    if let Some(after) = rest.strip_prefix("export") {
        let trimmed = after.trim_start_matches(is_wsp);
        if trimmed.len() < after.len() && !trimmed.starts_with('=') {
            return trimmed;
        }
    }
    rest
}

/// Splits `( ALPHA / "_" ) *127( ALPHA / DIGIT / "_" )` off the front of `rest`.
fn split_name(rest: &str) -> Result<(&str, &str), EnvFileErrorKind> {
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    let (name, after) = rest.split_at(end);
    let starts_well = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    let ends_well = after.is_empty() || after.starts_with(is_wsp) || after.starts_with('=');
    if !starts_well || name.len() > MAX_NAME_BYTES || !ends_well {
        return Err(EnvFileErrorKind::InvalidName);
    }
    Ok((name, after))
}

/// After a closing quote only whitespace and an optional comment may follow (config.md §7.2).
fn after_quote(rest: &str) -> Result<(), EnvFileErrorKind> {
    let rest = rest.trim_start_matches(is_wsp);
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err(EnvFileErrorKind::TextAfterQuote)
    }
}

/// The body of `'…'` after the opening quote: literal, no escapes.
fn single_quoted(rest: &str) -> Result<Secret, EnvFileErrorKind> {
    let Some((inner, after)) = rest.split_once('\'') else {
        return Err(EnvFileErrorKind::UnterminatedQuote);
    };
    after_quote(after)?;
    Ok(Secret::new(inner.to_owned()))
}

/// The body of `"…"` after the opening quote, with exactly the escapes `\"`, `\\`, `\n`, `\t`.
fn double_quoted(rest: &str) -> Result<Secret, EnvFileErrorKind> {
    // The value is never longer than its source, so the buffer never reallocates; it is zeroed if the
    // value turns out to be invalid.
    let mut out = Zeroizing::new(String::with_capacity(rest.len()));
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                after_quote(rest.get(i + 1..).unwrap_or_default())?;
                return Ok(Secret::new(std::mem::take(&mut *out)));
            }
            '\\' => {
                let escaped = match chars.next() {
                    Some((_, '"')) => '"',
                    Some((_, '\\')) => '\\',
                    Some((_, 'n')) => '\n',
                    Some((_, 't')) => '\t',
                    Some(_) => return Err(EnvFileErrorKind::InvalidEscape),
                    None => return Err(EnvFileErrorKind::UnterminatedQuote),
                };
                out.push(escaped);
            }
            other => out.push(other),
        }
    }
    Err(EnvFileErrorKind::UnterminatedQuote)
}

/// An unquoted raw value (config.md §7.2): empty when it begins with `#`; otherwise it ends before the first
/// `#` preceded by SP or HTAB, and trailing SP/HTAB are removed.
fn unquoted(raw: &str) -> &str {
    if raw.starts_with('#') {
        return "";
    }
    let mut end = raw.len();
    let mut previous = None;
    for (i, c) in raw.char_indices() {
        if c == '#' && previous.is_some_and(is_wsp) {
            end = i;
            break;
        }
        previous = Some(c);
    }
    raw.get(..end).unwrap_or_default().trim_end_matches(is_wsp)
}

#[cfg(test)]
#[path = "envfile_tests.rs"]
mod tests;
