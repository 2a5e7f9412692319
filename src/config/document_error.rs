//! Why a document was refused: the gateway or host document, or a tool's manifest (config.md §2.8, §4–§6),
//! kept as values until the one place that prints them (lifecycle.md §1.5).
//!
//! Owns: [`Problem`], what is wrong inside one document (it could not be read, it is not strict JSON, it
//! breaks a schema rule, it breaks a semantic rule), with the fixed sentences of those families, and
//! [`DocumentError`], a problem with the document's path and the startup code it ends as. Does not own the
//! rules (`schema::validate`, each document's checks) nor the printing (`startup::check`).

use std::path::{Path, PathBuf};

use crate::codes::StartupCode;
use crate::config::paths::{ReadError, ReadErrorKind};
use crate::config::schema::validate::{Detail, SchemaError, SchemaErrorKind};
use crate::explain::{Explain, Fact, Facts};
use crate::json::{self, DecodeError};

/// What is wrong inside one document.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Problem {
    /// The file could not be read (missing, not a regular file, too large, a failed read).
    #[error("{}", read_reason(.0))]
    Unreadable(ReadError),
    /// The bytes are not strict JSON (config.md §2.7). `excerpt` is the refused line with a caret under
    /// the refused character, `None` for a document whose text must not be shown.
    #[error("not {error}")]
    NotJson { error: DecodeError, excerpt: Option<String> },
    /// The value breaks a rule of the document's schema.
    #[error("{}", schema_sentence(.0))]
    Schema(SchemaError),
    /// The document passed its schema but not its typed reading: the two disagree, a defect of the
    /// gateway's definitions rather than of the document. serde's message is not kept: it may quote a
    /// value, and the host document's values may be credentials.
    #[error("the document does not have the shape its schema declares")]
    Shape,
    /// A semantic rule of the document (config.md §4.4, §5.7, §5.8), at `pointer`.
    #[error("{reason}")]
    Rule {
        pointer: Option<String>,
        reason: &'static str,
        /// The tool the rule concerns (two tools of one name).
        tool: Option<String>,
        /// The credential binding the rule concerns (never its value).
        binding: Option<String>,
    },
}

/// Whether a document's text may be shown to a person: the host document's may hold literal credentials
/// (config.md §5.5), so only its position is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Text {
    Shown,
    Withheld,
}

impl Problem {
    /// A document that is not strict JSON, with the refused line when `text` allows it.
    pub(crate) fn not_json(bytes: &[u8], error: DecodeError, text: Text) -> Problem {
        let excerpt = (text == Text::Shown).then(|| json::excerpt(bytes, &error));
        Problem::NotJson { error, excerpt }
    }

    /// A semantic rule at `pointer`.
    pub(crate) fn rule(pointer: impl Into<String>, reason: &'static str) -> Problem {
        Problem::Rule { pointer: Some(pointer.into()), reason, tool: None, binding: None }
    }

    /// The facts of lifecycle.md §1.5 this problem knows: the pointer, the rule, the refused line, and the
    /// way out for a tool that has no pins yet.
    pub(crate) fn explain(&self, facts: &mut Facts) {
        let mut set = |fact: Fact, value: String| {
            facts.insert(fact, value);
        };
        match self {
            Problem::Unreadable(_) | Problem::Shape => set(Fact::Reason, self.to_string()),
            Problem::NotJson { excerpt, .. } => {
                set(Fact::Reason, self.to_string());
                if let Some(excerpt) = excerpt {
                    set(Fact::Excerpt, excerpt.clone());
                }
            }
            Problem::Schema(e) => {
                set(Fact::Pointer, if e.path.is_empty() { "/".to_owned() } else { e.path.clone() });
                set(Fact::Reason, self.to_string());
                if let Detail::Missing { pin: true, .. } = e.detail {
                    let hint = "the tool has no pins yet: run `ptc pin CONFIG` to compute and write them";
                    set(Fact::Hint, hint.to_owned());
                }
            }
            Problem::Rule { pointer, reason, tool, binding } => {
                if let Some(pointer) = pointer {
                    set(Fact::Pointer, pointer.clone());
                }
                set(Fact::Reason, (*reason).to_owned());
                if let Some(tool) = tool {
                    set(Fact::Tool, tool.clone());
                }
                if let Some(binding) = binding {
                    set(Fact::Binding, binding.clone());
                }
            }
        }
    }
}

/// A refused document: which one, what is wrong in it, and the startup code that refusal ends as
/// (config.md §2.8: the same problem is `config_unavailable` in the gateway document and `host_invalid` in
/// the host document).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}: {problem}", document.display())]
pub struct DocumentError {
    pub code: StartupCode,
    pub document: PathBuf,
    pub problem: Problem,
}

impl DocumentError {
    pub(crate) fn new(code: StartupCode, document: &Path, problem: Problem) -> DocumentError {
        DocumentError { code, document: document.to_path_buf(), problem }
    }

    /// The startup code (lifecycle.md §4).
    pub fn code(&self) -> StartupCode {
        self.code
    }
}

impl Explain for DocumentError {
    fn code(&self) -> StartupCode {
        self.code
    }

    fn explain(&self, facts: &mut Facts) {
        facts.insert(Fact::Document, self.document.display().to_string());
        self.problem.explain(facts);
    }
}

/// The sentence of a refused read, with the operating system's own reason when there is one.
fn read_reason(e: &ReadError) -> String {
    let rule = match e.kind {
        ReadErrorKind::Open => "the file does not exist or cannot be opened",
        ReadErrorKind::NotRegularFile => "the path is not a regular file",
        ReadErrorKind::Io => "reading the file failed",
        ReadErrorKind::TooLarge => "the file is larger than 1,000,000 bytes",
    };
    match e.errno {
        Some(errno) => format!("{rule} ({})", errno.desc()),
        None => rule.to_owned(),
    }
}

/// The sentence of a schema failure, with the names the schema knows (the missing member, the closest
/// declared one, the constant) where it knows them (lifecycle.md §1.5).
fn schema_sentence(e: &SchemaError) -> String {
    match &e.detail {
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
    }
}

/// A member name from the last segment of a JSON pointer (RFC 6901: `~1` is `/`, `~0` is `~`).
fn unescape_pointer(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
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
