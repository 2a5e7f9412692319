//! The facts a document refusal notes for `ptc check` (lifecycle.md §1.5): the read, strict-decoding and
//! schema failures every document shares (config.md §2.8). A site reads
//! `.map_err(explained::read_as(code))`, or calls `read` etc. (which pass the error through) to keep its
//! own code mapping.
//!
//! Owns: the fixed sentences of those three failure families. Does not own the collection (`crate::explain`).

use crate::codes::StartupCode;
use crate::config::paths::{ReadError, ReadErrorKind};
use crate::config::schema::validate::{Detail, SchemaError, SchemaErrorKind};
use crate::explain::{self, Fact};
use crate::json::{self, DecodeError};

/// A document that could not be read.
pub(crate) fn read(e: ReadError) -> ReadError {
    explain::note(
        Fact::Reason,
        match e.kind {
            ReadErrorKind::Open => "the file does not exist or cannot be opened",
            ReadErrorKind::NotRegularFile => "the path is not a regular file",
            ReadErrorKind::Io => "reading the file failed",
            ReadErrorKind::TooLarge => "the file is larger than 1,000,000 bytes",
        },
    );
    e
}

/// Whether a document's text may be shown to a person: the host document's may hold literal credentials
/// (config.md §5.5), so only its position is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Text {
    Shown,
    Withheld,
}

/// A document that is not strict JSON: the decoder's kind and its position (byte, line and column), and,
/// when `text` allows, the refused line with a caret under the refused character (lifecycle.md §1.5).
pub(crate) fn decode(bytes: &[u8], e: DecodeError, text: Text) -> DecodeError {
    explain::note_with(Fact::Reason, || format!("not {e}"));
    if text == Text::Shown {
        explain::note_with(Fact::Excerpt, || json::excerpt(bytes, &e));
    }
    e
}

/// A document that does not satisfy its schema: the pointer and the rule, with the names the schema
/// knows (the missing member, the closest declared one, the constant), and the way out for a tool that
/// has no pins yet.
pub(crate) fn schema(e: SchemaError) -> SchemaError {
    explain::note(Fact::Pointer, if e.path.is_empty() { "/" } else { &e.path });
    explain::note_with(Fact::Reason, || match &e.detail {
        Detail::Missing { member, near: Some(near), .. } => {
            format!(
                "the required member \"{member}\" is missing; \"{near}\" is there instead: a misspelling?"
            )
        }
        Detail::Missing { member, near: None, .. } => format!("the required member \"{member}\" is missing"),
        Detail::Unknown { closest } => {
            let name = e.path.rsplit('/').next().map(unescape_pointer).unwrap_or_default();
            match closest {
                Some(closest) => {
                    format!("the member \"{name}\" is not allowed here; the closest allowed member is \"{closest}\"")
                }
                None => format!("the member \"{name}\" is not allowed here"),
            }
        }
        Detail::Constant(constant) => format!("the value must be \"{constant}\""),
        Detail::None => schema_reason(e.kind).to_owned(),
    });
    if let Detail::Missing { pin: true, .. } = e.detail {
        explain::note(Fact::Hint, "the tool has no pins yet: run `ptc pin CONFIG` to compute and write them");
    }
    e
}

/// A member name from the last segment of a JSON pointer (RFC 6901: `~1` is `/`, `~0` is `~`).
fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// `.map_err(explained::read_as(code))`: notes the read failure and refuses with `code`.
pub(crate) fn read_as(code: StartupCode) -> impl FnOnce(ReadError) -> StartupCode {
    move |e| {
        read(e);
        code
    }
}

/// `.map_err(explained::decode_as(bytes, text, code))`: notes the decode failure and refuses with `code`.
pub(crate) fn decode_as(
    bytes: &[u8],
    text: Text,
    code: StartupCode,
) -> impl FnOnce(DecodeError) -> StartupCode + '_ {
    move |e| {
        decode(bytes, e, text);
        code
    }
}

/// `.map_err(explained::schema_as(code))`: notes the pointer and rule and refuses with `code`.
pub(crate) fn schema_as(code: StartupCode) -> impl FnOnce(SchemaError) -> StartupCode {
    move |e| {
        schema(e);
        code
    }
}

/// The schema rule a [`SchemaErrorKind`] names, as a sentence.
fn schema_reason(kind: SchemaErrorKind) -> &'static str {
    use SchemaErrorKind as K;
    match kind {
        K::Type => "the value has the wrong JSON type",
        K::MissingMember => "a required member is missing",
        K::UnknownMember => "the member is not allowed here",
        K::MemberName => "the member name does not match the allowed names",
        K::KeyBytes => "the member name is longer than 256 bytes or contains NUL, LF or CR",
        K::TooFewMembers => "the object has fewer members than allowed",
        K::TooManyMembers => "the object has more members than allowed",
        K::ForbiddenCharacter => "the string contains NUL, CR or a forbidden LF",
        K::TooLong => "the string is longer than allowed",
        K::TooShort => "the string is shorter than allowed",
        K::Pattern => "the string does not match the required pattern",
        K::NotInEnum => "the value is not one of the allowed values",
        K::NotConstant => "the value differs from the required constant",
        K::OutOfRange => "the number is outside the allowed range",
        K::TooFewItems => "the array has fewer items than allowed",
        K::TooManyItems => "the array has more items than allowed",
        K::DuplicateItem => "the array repeats an item",
        K::UnknownVariant => "the tag names no known shape",
        K::NoVariant => "the value matches none of the allowed shapes",
        K::AmbiguousVariant => "the value matches more than one allowed shape",
    }
}
