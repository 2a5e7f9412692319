//! The strict decoder of config.md §2: one pass over the bytes, front to back, that enforces every rule
//! while it reads and stops at the first violation in byte order (config.md §2.7).
//!
//! This module owns the byte-level rules only: size, UTF-8, BOM, RFC 8259 grammar, the integer/float
//! split and its ranges, surrogate pairs, duplicate keys, depth and node count. It does not know any
//! schema: byte-bound rules on strings and keys (config.md §2.8), `"type": "integer"` and everything semantic
//! are the callers' concern. The same decoder serves configuration documents, request bodies
//! (http-mcp.md §7.1) and upstream messages (providers.md), each with its own [`Limits`].
//!
//! Nesting is handled with an explicit stack of open containers, never with recursion. The stack grows by
//! one frame per open container and a container is opened only after its depth has been checked, so the
//! stack never exceeds `max_depth` frames; values are allocated only after their node has been counted,
//! so nothing grows beyond `max_nodes` values before the document is refused.
//!
//! The result is a `serde_json::Value`: an integer token becomes a `Number` from `i64` or `u64`, a float
//! token a `Number` from a finite `f64`, so the split of config.md §2.3 survives (`json::as_integer`).
//! A refusal names its byte offset and, for a person, its line and column (config.md §2.7), computed only
//! once a document is refused so that the accepted path pays nothing for them.

use serde_json::{Map, Number, Value};

/// Bounds applied while decoding (config.md §2.1, §2.6). Kept general so that every strict-JSON surface
/// of the gateway uses the same decoder with its own numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Maximum document size in bytes; a larger input is refused before any other check
    /// (config.md §2.1, §2.7).
    pub max_bytes: usize,
    /// Maximum depth; the root has depth 1 and scalars count (config.md §2.6).
    pub max_depth: usize,
    /// Maximum number of values plus object keys (config.md §2.6).
    pub max_nodes: usize,
}

impl Limits {
    /// The configuration documents and contract files: 1,000,000 bytes, depth 64, 100,000 nodes
    /// (config.md §2.6, §2.8).
    pub const DOCUMENT: Limits = Limits { max_bytes: 1_000_000, max_depth: 64, max_nodes: 100_000 };

    /// `/mcp` request bodies, PCC `request_body` and Luau `json.decode`: 2,097,152 bytes, depth 64,
    /// 100,000 nodes (http-mcp.md §7.1, pcc.md §6, execution.md).
    pub const REQUEST: Limits = Limits { max_bytes: 2_097_152, max_depth: 64, max_nodes: 100_000 };

    /// One upstream stdio line: 8,388,608 bytes, depth 64, 1,000,000 nodes (providers.md §4).
    pub const UPSTREAM_MESSAGE: Limits = Limits { max_bytes: 8_388_608, max_depth: 64, max_nodes: 1_000_000 };
}

/// Why a document was refused. Every variant is a decode failure of config.md §2.8 except
/// [`DecodeErrorKind::DuplicateKey`], which some documents map to a code of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecodeErrorKind {
    /// More bytes than `max_bytes` (config.md §2.1.1).
    TooLarge,
    /// Ill-formed UTF-8: overlong form, encoded surrogate, above U+10FFFF, stray or missing
    /// continuation byte (config.md §2.1.2).
    InvalidUtf8,
    /// The document starts with `EF BB BF` (config.md §2.1.3).
    ByteOrderMark,
    /// A byte that the RFC 8259 grammar does not allow here (config.md §2.2).
    Syntax,
    /// The document ended inside a value, or held no value at all (config.md §2.2).
    UnexpectedEnd,
    /// Something other than whitespace after the root value (config.md §2.2).
    TrailingData,
    /// A raw U+0000..U+001F inside a string (RFC 8259 §7).
    ControlCharacter,
    /// A backslash sequence that RFC 8259 does not define, or a `\u` without four hex digits
    /// (config.md §2.4).
    InvalidEscape,
    /// An integer outside −2^63 … 2^64−1, or a float that is not finite after rounding (config.md §2.3).
    NumberOutOfRange,
    /// A lone or reversed `\u` surrogate (config.md §2.4).
    BadSurrogate,
    /// A value deeper than `max_depth` (config.md §2.6).
    TooDeep,
    /// More than `max_nodes` values plus keys (config.md §2.6).
    TooManyNodes,
    /// Two members of one object have equal keys after unescaping (config.md §2.5).
    DuplicateKey,
}

impl DecodeErrorKind {
    /// A stable snake_case name for logs and events.
    pub fn as_str(self) -> &'static str {
        match self {
            DecodeErrorKind::TooLarge => "too_large",
            DecodeErrorKind::InvalidUtf8 => "invalid_utf8",
            DecodeErrorKind::ByteOrderMark => "byte_order_mark",
            DecodeErrorKind::Syntax => "syntax",
            DecodeErrorKind::UnexpectedEnd => "unexpected_end",
            DecodeErrorKind::TrailingData => "trailing_data",
            DecodeErrorKind::ControlCharacter => "control_character",
            DecodeErrorKind::InvalidEscape => "invalid_escape",
            DecodeErrorKind::NumberOutOfRange => "number_out_of_range",
            DecodeErrorKind::BadSurrogate => "bad_surrogate",
            DecodeErrorKind::TooDeep => "too_deep",
            DecodeErrorKind::TooManyNodes => "too_many_nodes",
            DecodeErrorKind::DuplicateKey => "duplicate_key",
        }
    }
}

/// A refusal with the byte offset at which it was detected: the first byte of the offending token (the
/// value, key, escape or byte), or the document length for [`DecodeErrorKind::UnexpectedEnd`], or
/// `max_bytes` for [`DecodeErrorKind::TooLarge`]; and the same position as a line and a column
/// (config.md §2.7). It never contains document content, so it is safe to log even when the document holds
/// secrets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: DecodeErrorKind,
    pub offset: usize,
    /// 1-based; each LF (U+000A) before `offset` ends a line (CR is not a line break).
    pub line: usize,
    /// 1-based, in characters (Unicode scalar values) from the start of the line, so a tab or an `é`
    /// counts one.
    pub column: usize,
}

impl DecodeError {
    /// The refusal `kind` at `offset` of `bytes`, with its line and column.
    fn at(bytes: &[u8], kind: DecodeErrorKind, offset: usize) -> DecodeError {
        let (line, column) = line_and_column(bytes, offset);
        DecodeError { kind, offset, line, column }
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "strict JSON: {} at byte {} (line {}, column {})",
            self.kind.as_str(),
            self.offset,
            self.line,
            self.column
        )
    }
}

/// The line and column of `offset` (config.md §2.7). Every byte before a refusal's offset has been read
/// and found well-formed UTF-8, except for [`DecodeErrorKind::TooLarge`], which reads nothing: counting
/// the bytes that do not continue a UTF-8 sequence counts characters in the first case and stays total in
/// the second.
fn line_and_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = bytes.get(..offset).unwrap_or(bytes);
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let this_line = before.get(line_start..).unwrap_or_default();
    let column = 1 + this_line.iter().filter(|&&b| !is_continuation(b)).count();
    (line, column)
}

/// A UTF-8 continuation byte, `10xxxxxx`.
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

impl std::error::Error for DecodeError {}

/// Decodes one document under `limits`, or reports the first violation in byte order (config.md §2.7).
pub fn decode(bytes: &[u8], limits: Limits) -> Result<Value, DecodeError> {
    // config.md §2.1.1 and §2.7: the size check precedes everything else.
    if bytes.len() > limits.max_bytes {
        return Err(DecodeError::at(bytes, DecodeErrorKind::TooLarge, limits.max_bytes));
    }
    // config.md §2.1.3.
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(DecodeError::at(bytes, DecodeErrorKind::ByteOrderMark, 0));
    }
    Parser { bytes, pos: 0, limits, nodes: 0 }.document()
}

/// One open container on the explicit stack.
enum Frame {
    Array(Vec<Value>),
    /// The members so far and the key whose value is being read.
    Object(Map<String, Value>, String),
}

impl Frame {
    fn into_value(self) -> Value {
        match self {
            Frame::Array(items) => Value::Array(items),
            Frame::Object(map, _) => Value::Object(map),
        }
    }
}

/// What the start of a value produced.
enum Start {
    /// A complete value (a scalar or an empty container).
    Complete(Value),
    /// A container that now waits for its first element or member value.
    Open(Frame),
}

/// What follows a complete value inside a container.
enum Next {
    /// Another element or member value follows.
    Value,
    /// The container closed.
    Close,
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    limits: Limits,
    nodes: usize,
}

impl Parser<'_> {
    fn document(mut self) -> Result<Value, DecodeError> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_ws();
            let mut value = match self.value_start(stack.len() + 1)? {
                Start::Complete(value) => value,
                Start::Open(frame) => {
                    stack.push(frame);
                    continue 'value;
                }
            };
            loop {
                let Some(top) = stack.last_mut() else {
                    return self.finish(value);
                };
                match self.after_value(top, value)? {
                    Next::Value => continue 'value,
                    Next::Close => match stack.pop() {
                        Some(frame) => value = frame.into_value(),
                        None => return Err(self.error(DecodeErrorKind::Syntax, self.pos)),
                    },
                }
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// The refusal `kind` at `offset`. It scans the bytes before `offset` for the line and column, so it is
    /// called only to refuse, never to prepare an error that may not be returned.
    fn error(&self, kind: DecodeErrorKind, offset: usize) -> DecodeError {
        DecodeError::at(self.bytes, kind, offset)
    }

    /// The error for an unexpected byte at the cursor, or for the end of the document.
    fn unexpected(&self) -> DecodeError {
        match self.peek() {
            None => self.error(DecodeErrorKind::UnexpectedEnd, self.pos),
            Some(b) if b >= 0x80 && !utf8_sequence_valid(self.bytes, self.pos) => {
                self.error(DecodeErrorKind::InvalidUtf8, self.pos)
            }
            Some(_) => self.error(DecodeErrorKind::Syntax, self.pos),
        }
    }

    /// Insignificant whitespace of RFC 8259: SP, HTAB, LF, CR (config.md §2.2).
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Counts one node starting at the cursor, refusing it when it exceeds `max_nodes` (config.md §2.6).
    fn count_node(&mut self) -> Result<(), DecodeError> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(self.error(DecodeErrorKind::TooManyNodes, self.pos));
        }
        Ok(())
    }

    /// Reads the start of a value of depth `depth` at the cursor. Depth and node count are checked at the
    /// value's first byte, before anything is allocated for it (config.md §2.6, §2.7).
    fn value_start(&mut self, depth: usize) -> Result<Start, DecodeError> {
        let Some(byte) = self.peek() else {
            return Err(self.unexpected());
        };
        if !matches!(byte, b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n') {
            return Err(self.unexpected());
        }
        if depth > self.limits.max_depth {
            return Err(self.error(DecodeErrorKind::TooDeep, self.pos));
        }
        self.count_node()?;
        let value = match byte {
            b'[' => {
                self.pos += 1;
                self.skip_ws();
                if self.peek() != Some(b']') {
                    return Ok(Start::Open(Frame::Array(Vec::new())));
                }
                self.pos += 1;
                Value::Array(Vec::new())
            }
            b'{' => {
                self.pos += 1;
                self.skip_ws();
                if self.peek() != Some(b'}') {
                    let map = Map::new();
                    let key = self.member_key(&map)?;
                    return Ok(Start::Open(Frame::Object(map, key)));
                }
                self.pos += 1;
                Value::Object(Map::new())
            }
            b'"' => Value::String(self.string()?),
            b't' => self.literal(b"true", Value::Bool(true))?,
            b'f' => self.literal(b"false", Value::Bool(false))?,
            b'n' => self.literal(b"null", Value::Null)?,
            _ => self.number()?,
        };
        Ok(Start::Complete(value))
    }

    /// Stores a complete value into the open container `top` and reads what follows it.
    fn after_value(&mut self, top: &mut Frame, value: Value) -> Result<Next, DecodeError> {
        let close = match top {
            Frame::Array(items) => {
                items.push(value);
                b']'
            }
            Frame::Object(map, key) => {
                map.insert(std::mem::take(key), value);
                b'}'
            }
        };
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                if let Frame::Object(map, key) = top {
                    self.skip_ws();
                    *key = self.member_key(map)?;
                }
                Ok(Next::Value)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(Next::Close)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// Reads `"key"` and `:` at the cursor. The key counts as a node (config.md §2.6) and must not repeat a
    /// key of `map` after unescaping (config.md §2.5); both are reported at the key's opening quote.
    fn member_key(&mut self, map: &Map<String, Value>) -> Result<String, DecodeError> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        let start = self.pos;
        self.count_node()?;
        let key = self.string()?;
        if map.contains_key(&key) {
            return Err(self.error(DecodeErrorKind::DuplicateKey, start));
        }
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected());
        }
        self.pos += 1;
        Ok(key)
    }

    /// Reads `true`, `false` or `null`.
    fn literal(&mut self, text: &[u8], value: Value) -> Result<Value, DecodeError> {
        for &expected in text {
            if self.peek() != Some(expected) {
                return Err(self.unexpected());
            }
            self.pos += 1;
        }
        Ok(value)
    }

    fn skip_digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Reads one number token with the RFC 8259 grammar and converts it per config.md §2.3.
    fn number(&mut self) -> Result<Value, DecodeError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                // RFC 8259 §6: no leading zeros.
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err(self.error(DecodeErrorKind::Syntax, self.pos));
                }
            }
            Some(b'1'..=b'9') => {
                self.skip_digits();
            }
            _ => return Err(self.unexpected()),
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.pos += 1;
            if self.skip_digits() == 0 {
                return Err(self.unexpected());
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            float = true;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.skip_digits() == 0 {
                return Err(self.unexpected());
            }
        }
        let token = self.bytes.get(start..self.pos).unwrap_or_default();
        // The token is ASCII by construction.
        let text = std::str::from_utf8(token).unwrap_or_default();
        let number = if float {
            // `str::parse::<f64>` rounds to nearest, ties to even, for any number of digits;
            // `Number::from_f64` refuses exactly the non-finite results.
            text.parse::<f64>().ok().and_then(Number::from_f64)
        } else if token.first() == Some(&b'-') {
            // −2^63 … −0: `i64`; `-0` is the integer 0 (config.md §2.3).
            text.parse::<i64>().ok().map(Number::from)
        } else {
            // 0 … 2^64−1: `u64`.
            text.parse::<u64>().ok().map(Number::from)
        };
        match number {
            Some(number) => Ok(Value::Number(number)),
            None => Err(self.error(DecodeErrorKind::NumberOutOfRange, start)),
        }
    }

    /// Reads one string token at the cursor (on its opening quote) and returns its decoded value.
    fn string(&mut self) -> Result<String, DecodeError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let chunk_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // config.md §2.1.2: a run of raw bytes between ASCII delimiters never splits a well-formed
            // sequence, so validating each run validates the string.
            let chunk = self.bytes.get(chunk_start..self.pos).unwrap_or_default();
            let text = match std::str::from_utf8(chunk) {
                Ok(text) => text,
                Err(e) => return Err(self.error(DecodeErrorKind::InvalidUtf8, chunk_start + e.valid_up_to())),
            };
            // Most strings (every key) hold no escape: they are copied once, at their exact size.
            if out.is_empty() && self.peek() == Some(b'"') {
                self.pos += 1;
                return Ok(text.to_owned());
            }
            out.push_str(text);
            match self.peek() {
                None => return Err(self.unexpected()),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => out.push(self.escape()?),
                Some(_) => return Err(self.error(DecodeErrorKind::ControlCharacter, self.pos)),
            }
        }
    }

    /// Reads one escape sequence at the cursor (on its backslash).
    fn escape(&mut self) -> Result<char, DecodeError> {
        let start = self.pos;
        let Some(letter) = self.bytes.get(start + 1).copied() else {
            self.pos = self.bytes.len();
            return Err(self.unexpected());
        };
        let simple = match letter {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(),
            _ => return Err(self.error(DecodeErrorKind::InvalidEscape, start)),
        };
        self.pos += 2;
        Ok(simple)
    }

    /// Reads `\uXXXX`, and for a high surrogate the `\uXXXX` low surrogate that must follow it at once
    /// (config.md §2.4). Bad surrogates are reported at the first escape of the pair.
    fn unicode_escape(&mut self) -> Result<char, DecodeError> {
        let start = self.pos;
        let unit = self.hex4()?;
        let bad_surrogate = DecodeErrorKind::BadSurrogate;
        let scalar = match unit {
            0xD800..=0xDBFF => {
                if self.peek() != Some(b'\\') || self.bytes.get(self.pos + 1) != Some(&b'u') {
                    return Err(self.error(bad_surrogate, start));
                }
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.error(bad_surrogate, start));
                }
                0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.error(bad_surrogate, start)),
            _ => unit,
        };
        char::from_u32(scalar).ok_or_else(|| self.error(bad_surrogate, start))
    }

    /// Reads `\u` and four hex digits at the cursor.
    fn hex4(&mut self) -> Result<u32, DecodeError> {
        let start = self.pos;
        self.pos += 2;
        let mut unit = 0u32;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                None => return Err(self.unexpected()),
                Some(_) => return Err(self.error(DecodeErrorKind::InvalidEscape, start)),
            };
            unit = unit * 16 + u32::from(digit);
            self.pos += 1;
        }
        Ok(unit)
    }

    /// After the root value only whitespace may follow (config.md §2.2).
    fn finish(mut self, value: Value) -> Result<Value, DecodeError> {
        self.skip_ws();
        if self.pos < self.bytes.len() {
            return Err(self.error(DecodeErrorKind::TrailingData, self.pos));
        }
        Ok(value)
    }
}

/// Whether a well-formed UTF-8 sequence starts at `pos` (used only to classify a stray byte).
fn utf8_sequence_valid(bytes: &[u8], pos: usize) -> bool {
    let rest = bytes.get(pos..).unwrap_or_default();
    let head = rest.get(..rest.len().min(4)).unwrap_or_default();
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.valid_up_to() > 0,
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "decode_props.rs"]
pub(crate) mod props;
