//! Why a model's 200 body is not a Chat Completions answer (models.md §4.3, §9 "Diagnostics"): the member
//! as a JSON pointer and what the answer's rule expected there, or where the strict decoder stopped.
//!
//! Owns the operator's form of a `model_protocol_error`; the class and the script's fixed message stay in
//! `codes::model` (models.md §6). Holds no text of the body (it may hold anything a model writes): only
//! static texts, indexes and byte positions, so it is `Copy` and costs nothing until an answer fails.

use std::fmt;

use crate::json::DecodeError;

/// The pointer of the answer's first tool calls array (models.md §4.3).
const CALLS: &str = "/choices/0/message/tool_calls";

/// A member of the answer: a fixed pointer, or a member of the tool call at an index of
/// `/choices/0/message/tool_calls`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// The tool call's index, when the member is inside one.
    pub call: Option<usize>,
    /// The pointer (RFC 6901) of the member, below the call when `call` is set; `""` is the whole body.
    pub pointer: &'static str,
}

impl Member {
    pub(crate) const fn at(pointer: &'static str) -> Member {
        Member { call: None, pointer }
    }

    pub(crate) const fn in_call(call: usize, pointer: &'static str) -> Member {
        Member { call: Some(call), pointer }
    }
}

impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.call {
            Some(call) => write!(f, "{CALLS}/{call}{}", self.pointer),
            None if self.pointer.is_empty() => f.write_str("the body"),
            None => f.write_str(self.pointer),
        }
    }
}

/// The first rule of models.md §4.3 that a 200 body breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerMismatch {
    /// The strict decoder refused the body (its kind and position only).
    NotJson(DecodeError),
    /// A member is absent or not of the form models.md §4.3 allows; `expected` is that form.
    Member { at: Member, expected: &'static str },
    /// A tool call's `arguments` string is not strict JSON.
    ArgumentsNotJson { call: usize, error: DecodeError },
}

impl fmt::Display for AnswerMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerMismatch::NotJson(error) => write!(f, "the body is not {error}"),
            AnswerMismatch::Member { at, expected } => write!(f, "{at}: expected {expected}"),
            AnswerMismatch::ArgumentsNotJson { call, error } => {
                write!(f, "{CALLS}/{call}/function/arguments: the string is not {error}")
            }
        }
    }
}

impl std::error::Error for AnswerMismatch {}
