//! The facts a document refusal notes for `ptc check` (lifecycle.md §1.5): the read, strict-decoding and
//! schema failures every document shares (config.md §2.8). A site reads
//! `.map_err(explained::read_as(code))`, or calls `read` etc. (which pass the error through) to keep its
//! own code mapping.
//!
//! Owns: the fixed sentences of those three failure families. Does not own the collection (`crate::explain`).

use crate::codes::StartupCode;
use crate::config::paths::{ReadError, ReadErrorKind};
use crate::config::schema::validate::{SchemaError, SchemaErrorKind};
use crate::explain::{self, Fact};
use crate::json::DecodeError;

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

/// A document that is not strict JSON: the decoder's kind and the byte offset, never the bytes.
pub(crate) fn decode(e: DecodeError) -> DecodeError {
    explain::note_with(Fact::Reason, || format!("not strict JSON: {} at byte {}", e.kind.as_str(), e.offset));
    e
}

/// A document that does not satisfy its schema: the pointer and the rule.
pub(crate) fn schema(e: SchemaError) -> SchemaError {
    explain::note(Fact::Pointer, if e.path.is_empty() { "/" } else { &e.path });
    explain::note(Fact::Reason, schema_reason(e.kind));
    e
}

/// `.map_err(explained::read_as(code))`: notes the read failure and refuses with `code`.
pub(crate) fn read_as(code: StartupCode) -> impl FnOnce(ReadError) -> StartupCode {
    move |e| {
        read(e);
        code
    }
}

/// `.map_err(explained::decode_as(code))`: notes the decode failure and refuses with `code`.
pub(crate) fn decode_as(code: StartupCode) -> impl FnOnce(DecodeError) -> StartupCode {
    move |e| {
        decode(e);
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
