//! The strict decoder of config.md §2.
//!
//! TEMPORARY SHIM: this placeholder goes through `serde_json` and does not yet enforce the strict rules
//! (duplicates, depth, nodes, BOM, byte order of detection). It is replaced by the real single-pass
//! decoder; callers already use the final API.

use super::value::{Map, Value};

/// Bounds applied while decoding (config.md §2.1, §2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum document size in bytes; a larger input is refused before decoding.
    pub max_bytes: usize,
    /// Maximum depth; the root has depth 1.
    pub max_depth: usize,
    /// Maximum number of values plus object keys.
    pub max_nodes: usize,
}

impl Limits {
    /// The limits of the configuration documents: 1,000,000 bytes, depth 64, 100,000 nodes.
    pub const DOCUMENT: Limits = Limits { max_bytes: 1_000_000, max_depth: 64, max_nodes: 100_000 };
}

/// Why a document was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeErrorKind {
    TooLarge,
    InvalidUtf8,
    ByteOrderMark,
    Syntax,
    TrailingData,
    NumberOutOfRange,
    BadSurrogate,
    TooDeep,
    TooManyNodes,
    /// Two members of one object have equal keys after unescaping.
    DuplicateKey,
}

/// A refusal with the byte offset at which it was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: DecodeErrorKind,
    pub offset: usize,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} at byte {}", self.kind, self.offset)
    }
}

impl std::error::Error for DecodeError {}

/// Decodes one document under `limits`.
pub fn decode(bytes: &[u8], limits: Limits) -> Result<Value, DecodeError> {
    if bytes.len() > limits.max_bytes {
        return Err(DecodeError { kind: DecodeErrorKind::TooLarge, offset: limits.max_bytes });
    }
    let parsed: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|_| DecodeError { kind: DecodeErrorKind::Syntax, offset: 0 })?;
    Ok(convert(parsed))
}

fn convert(v: serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Integer(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                Value::Integer(i128::from(u))
            } else {
                Value::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        serde_json::Value::String(s) => Value::String(s),
        serde_json::Value::Array(a) => Value::Array(a.into_iter().map(convert).collect()),
        serde_json::Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, v)| (k, convert(v))).collect::<Map>())
        }
    }
}
