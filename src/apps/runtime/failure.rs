//! What an error nothing caught tells the operator (traces.md §5.3, §5.5; execution.md §12.9): the Luau
//! message and the traceback of the component frames, each bounded, for the run's debug log line and its
//! trace, never for a client or the event log.
//!
//! Owns reading them out of the error the entry call (or a mission invocation) returned, the fixed
//! description of an error object that is not a string, and the bounds. Built only when a run or a mission
//! invocation failed: a successful run pays nothing (the traceback text is Luau's error handler's, which
//! runs only on an error).

/// traces.md §5.5: the JSON encoding of `message` (without its quotes) is at most this many bytes.
pub const MESSAGE_BYTES: usize = 1_024;

/// traces.md §5.5: the JSON encoding of `traceback` (without its quotes) is at most this many bytes.
pub const TRACEBACK_BYTES: usize = 2_048;

/// The line Luau's error handler puts between the message and the frames.
const TRACEBACK_HEADER: &str = "\nstack traceback:";

/// An error's message and traceback, as the trace and the debug log show them (traces.md §5.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LuauError {
    /// The error's text: Luau's message with its `<chunk>:<line>:` position when the error object was a
    /// string, a number, a boolean or `nil`; a fixed description for any other object.
    pub message: String,
    /// The component frames, innermost first, one per line (`<chunk>:<line>: in function '<name>'`);
    /// `None` when the error carried none (a gateway refusal made before any Luau ran).
    pub traceback: Option<String>,
}

impl LuauError {
    /// The message and traceback of `error`.
    pub fn of(error: &mlua::Error) -> LuauError {
        let (message, traceback) = parts(error);
        LuauError {
            message: bounded(&described(&message), MESSAGE_BYTES),
            traceback: traceback.as_deref().and_then(frames).map(|t| bounded(&t, TRACEBACK_BYTES)),
        }
    }

    /// A failure the gateway raised itself with `text` and no Luau frames (an unknown `:call` target, an
    /// argument that does not convert).
    pub fn text(text: &str) -> LuauError {
        LuauError { message: bounded(text, MESSAGE_BYTES), traceback: None }
    }
}

/// The message without the traceback, and the traceback text, as mlua hands them over: a Luau error
/// carries Luau's traceback appended to its text; an error raised by a host function carries it beside.
fn parts(error: &mlua::Error) -> (String, Option<String>) {
    match error {
        mlua::Error::RuntimeError(text) | mlua::Error::SyntaxError { message: text, .. } => {
            match text.rfind(TRACEBACK_HEADER) {
                Some(at) => (text[..at].to_owned(), Some(text[at + TRACEBACK_HEADER.len()..].to_owned())),
                None => (text.clone(), None),
            }
        }
        mlua::Error::MemoryError(_) => ("not enough memory".to_owned(), None),
        mlua::Error::CallbackError { traceback, cause } => {
            let (message, inner) = parts(cause);
            let outer =
                traceback.strip_prefix(TRACEBACK_HEADER.trim_start_matches('\n')).unwrap_or(traceback);
            (message, inner.or_else(|| Some(outer.to_owned())))
        }
        other => (other.to_string(), None),
    }
}

/// Luau writes an error object that is not a string, a number, a boolean or `nil` as `<type>: 0x<address>`:
/// recorded as a fixed description, never the address or a dump of the object.
fn described(message: &str) -> String {
    let Some((kind, address)) = message.split_once(": 0x") else { return message.to_owned() };
    let known = ["table", "function", "userdata", "thread", "buffer", "vector"].contains(&kind);
    if known && !address.is_empty() && address.bytes().all(|b| b.is_ascii_hexdigit()) {
        return format!("(error object is a {kind}, not a string)");
    }
    message.to_owned()
}

/// The frames of Luau's traceback that are the application's code: the native frames (`[C]`) and the
/// gateway's own Luau shims (`host/…`) are left out. `None` when no frame is left.
fn frames(traceback: &str) -> Option<String> {
    let kept: Vec<&str> = traceback
        .lines()
        .map(|line| line.trim_start_matches('\t'))
        .filter(|line| {
            !line.is_empty()
                && !line.starts_with("[C]")
                && !line.starts_with(crate::apps::luau::require::HOST_CHUNK_PREFIX)
        })
        .collect();
    (!kept.is_empty()).then(|| kept.join("\n"))
}

/// The bytes `c` takes in the deterministic JSON encoding of a string (pins.md §2).
fn encoded_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
        '\u{0}'..='\u{1f}' => 6,
        _ => c.len_utf8(),
    }
}

/// The longest prefix of `text` whose encoding is at most `ceiling` bytes: never inside a character or
/// an escape (traces.md §5.5).
pub fn bounded(text: &str, ceiling: usize) -> String {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += encoded_len(c);
        if used > ceiling {
            return text[..at].to_owned();
        }
    }
    text.to_owned()
}
