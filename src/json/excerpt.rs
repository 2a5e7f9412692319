//! The refused line of a document a person reads (lifecycle.md §1.5): the line of a [`DecodeError`] with a
//! caret under the refused character.
//!
//! Owns only the layout of the two lines. Does not decide whose text may be shown (a host document's is
//! not: `config::explained`).

use super::DecodeError;

/// The most characters of the refused line shown on each side of the refused one.
const EXCERPT_REACH: usize = 60;

/// The line holding the refused byte of `bytes` (LF ends a line) and, below it, a caret under the refused
/// character (the error's 1-based column, in characters). A long line is cut to [`EXCERPT_REACH`]
/// characters on each side of the caret, marked with `…`; a tab stays a tab in both lines so the caret
/// lines up; other control characters and bytes that are not UTF-8 show as U+FFFD.
pub fn excerpt(bytes: &[u8], error: &DecodeError) -> String {
    let (offset, column) = (error.offset.min(bytes.len()), error.column);
    let start = bytes[..offset].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let end = bytes[offset..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| offset + i);
    let line: Vec<char> = String::from_utf8_lossy(&bytes[start..end])
        .chars()
        .map(|c| if c.is_control() && c != '\t' { '\u{FFFD}' } else { c })
        .collect();
    let at = column.saturating_sub(1).min(line.len());
    let from = at.saturating_sub(EXCERPT_REACH);
    let to = line.len().min(at + EXCERPT_REACH + 1);
    let mut shown: String = if from > 0 { "…".to_owned() } else { String::new() };
    shown.extend(&line[from..to]);
    if to < line.len() {
        shown.push('…');
    }
    let mut caret: String = if from > 0 { " ".to_owned() } else { String::new() };
    caret.extend(line[from..at].iter().map(|&c| if c == '\t' { '\t' } else { ' ' }));
    caret.push('^');
    format!("{shown}\n{caret}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::DecodeErrorKind;

    /// lifecycle.md §1.5: the refused line and a caret under the refused character; a tab stays a tab so
    /// the caret lines up; a long line is cut around the caret; control characters show as U+FFFD.
    #[test]
    fn excerpt_vectors() {
        let long = format!("{}X{}", "a".repeat(100), "b".repeat(100));
        let at = |offset, column| DecodeError { kind: DecodeErrorKind::Syntax, offset, line: 1, column };
        let table: Vec<(&[u8], usize, usize, String)> = vec![
            (b"{\n  \"a\": 1,,\n}", 11, 10, "  \"a\": 1,,\n         ^".to_owned()),
            (b"{", 1, 2, "{\n ^".to_owned()),
            (b"\t\"a\" x", 5, 6, "\t\"a\" x\n\t    ^".to_owned()),
            (b"a\x01b", 2, 3, "a\u{FFFD}b\n  ^".to_owned()),
            (
                long.as_bytes(),
                100,
                101,
                format!("…{}X{}…\n {}^", "a".repeat(60), "b".repeat(60), " ".repeat(60)),
            ),
            (b"", 0, 1, "\n^".to_owned()),
        ];
        for (bytes, offset, column, want) in table {
            assert_eq!(excerpt(bytes, &at(offset, column)), want, "{:?}", String::from_utf8_lossy(bytes));
        }
    }
}
