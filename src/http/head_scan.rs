//! The byte-level check of every request head against the parser limits of http-mcp.md §2.4.
//!
//! Owns one streaming state machine per connection: it is fed the bytes hyper is about to read, in
//! whatever pieces the socket delivers them, and says at which byte (if any) a head breaks a http-mcp.md §2.4
//! rule and with which empty-body status. Between heads it follows each request's body framing
//! (`Content-Length` bytes, or the chunked coding up to its last chunk and trailers) so that it finds
//! where the next pipelined or keep-alive head starts. When a body's framing cannot be followed (a
//! malformed chunk line), it stops inspecting for the rest of the connection: hyper answers body framing
//! errors itself, and guessing where a next head starts would refuse on bytes that are not a head.
//!
//! It allocates nothing. A body is skipped in bulk; a request line or an ordinary field line that is whole
//! in the piece is checked a line at a time (two or three runs and a few comparisons: the usual head never
//! reaches the byte machine), and any other line goes through the machine from its first byte, which takes
//! the plain bytes of a method, target, field name or ordinary field value in runs and finds the offending
//! byte's exact offset. So a head byte is looked at once, or twice on a line the machine must read.
//! The line-at-a-time checks must equal the machine byte for byte; `head_scan_props.rs` holds them to it
//! (`bytewise`). It does not own the IO (the [`guard`](crate::http::guard) wrapper feeds it) nor what a
//! parsed request means (hyper and the router).

use crate::http::response::EmptyBodyStatus;

/// The request line and each field line, CRLF included, are at most this long (http-mcp.md §2.4).
pub const MAX_LINE: usize = 8_192;
/// At most this many field lines (http-mcp.md §2.4).
pub const MAX_FIELDS: usize = 64;
/// The longest lowercased field name this scanner needs to recognise (`transfer-encoding`).
const NAME_KEEP: usize = 17;

/// What one call of [`HeadScanner::scan`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan {
    /// Every byte may reach hyper.
    Pass,
    /// `bytes[..at]` may reach hyper; the byte at `at` breaks a http-mcp.md §2.4 rule, answered with
    /// `status`.
    Refuse { at: usize, status: EmptyBodyStatus },
}

/// Which framing field a field line is, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    ContentLength,
    TransferEncoding,
    Other,
}

impl Kind {
    /// The kind of the field named `name`, in any case.
    fn of(name: &[u8]) -> Kind {
        if name.eq_ignore_ascii_case(b"content-length") {
            Kind::ContentLength
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            Kind::TransferEncoding
        } else {
            Kind::Other
        }
    }
}

/// Where in an OWS-trimmed framing value the scanner is: leading OWS, the value, trailing OWS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Lead,
    Inner,
    Trail,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before a request line: empty lines (CRLF) are skipped, RFC 9112 §2.2.
    Blank,
    BlankLf,
    Method,
    TargetStart,
    Target,
    /// `n` bytes of `HTTP/1.` matched.
    Version(u8),
    Minor,
    VersionCr,
    LineLf,
    FieldStart,
    HeadLf,
    Name,
    Value(Part),
    ValueLf,
    Body(u64),
    ChunkSize(u64, u8),
    ChunkExt(u64),
    ChunkSizeLf(u64),
    ChunkData(u64),
    ChunkDataCr,
    ChunkDataLf,
    TrailerStart,
    Trailer,
    TrailerLf,
    TrailerEndLf,
    /// Framing could not be followed: everything passes (hyper decides).
    Off,
    Refused(EmptyBodyStatus),
}

/// The per-connection scanner; see the module documentation.
#[derive(Debug)]
pub struct HeadScanner {
    state: State,
    /// Bytes of the current line so far (the request line, a field line, or leading empty lines).
    line: usize,
    fields: usize,
    /// The minor version of the current request (`HTTP/1.0` or `HTTP/1.1`).
    minor: u8,
    name: [u8; NAME_KEEP],
    name_len: usize,
    kind: Kind,
    /// The value of the current `Content-Length` line, or bytes of `chunked` matched.
    value: u64,
    content_length: Option<u64>,
    chunked: bool,
}

impl Default for HeadScanner {
    fn default() -> Self {
        HeadScanner {
            state: State::Blank,
            line: 0,
            fields: 0,
            minor: 1,
            name: [0; NAME_KEEP],
            name_len: 0,
            kind: Kind::Other,
            value: 0,
            content_length: None,
            chunked: false,
        }
    }
}

/// RFC 9110 §5.6.2 `tchar`, one table lookup per byte (the scanner sees every head byte of every request).
const TCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    table
};

/// RFC 9110 §5.6.2 `tchar`.
fn is_tchar(b: u8) -> bool {
    TCHAR[usize::from(b)]
}

/// Field-value bytes (RFC 9110 §5.5): VCHAR, SP, HTAB and obs-text; no other control byte. Written without
/// branches so that [`run_len`] checks a block of bytes at once.
fn is_value_byte(b: u8) -> bool {
    (b == b'\t') | ((b >= b' ') & (b != 0x7f))
}

/// Request-target bytes: visible ASCII (http-mcp.md §2.4: a second SP or a control byte is refused).
fn is_target_byte(b: u8) -> bool {
    (b'!'..=b'~').contains(&b)
}

/// How many leading bytes of `bytes` satisfy `keeps`: whole blocks of 16 are checked without an early exit
/// (which the compiler turns into a few vector instructions), the block that holds the first other byte
/// byte by byte.
fn run_len(bytes: &[u8], keeps: impl Fn(u8) -> bool) -> usize {
    const BLOCK: usize = 16;
    let mut taken = 0;
    for block in bytes.chunks(BLOCK) {
        if block.len() == BLOCK && block.iter().fold(true, |all, &b| all & keeps(b)) {
            taken += BLOCK;
            continue;
        }
        return taken + block.iter().position(|&b| !keeps(b)).unwrap_or(block.len());
    }
    taken
}

fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The length, CRLF included, and the minor version of the request line that starts `rest` when the
/// machine would take it whole without refusing it: within [`MAX_LINE`], a method of `tchar`s, SP, a
/// target of visible ASCII, SP, `HTTP/1.0` or `HTTP/1.1` and CRLF. `None` otherwise (the machine reads it).
fn whole_request_line(rest: &[u8]) -> Option<(usize, u8)> {
    let rest = rest.get(..rest.len().min(MAX_LINE)).unwrap_or_default();
    let method = run_len(rest, is_tchar);
    if method == 0 || rest.get(method) != Some(&b' ') {
        return None;
    }
    let target = method + 1 + run_len(rest.get(method + 1..).unwrap_or_default(), is_target_byte);
    if target == method + 1
        || rest.get(target) != Some(&b' ')
        || rest.get(target + 1..target + 1 + HTTP_1.len()) != Some(HTTP_1)
    {
        return None;
    }
    let minor = target + 1 + HTTP_1.len();
    match rest.get(minor..minor + 3) {
        Some([digit @ (b'0' | b'1'), b'\r', b'\n']) => Some((minor + 3, digit - b'0')),
        _ => None,
    }
}

const BAD: EmptyBodyStatus = EmptyBodyStatus::BadRequest;
/// What every request line's version starts with; only the minor digit `0` or `1` may follow.
const HTTP_1: &[u8] = b"HTTP/1.";
const CHUNKED: &[u8] = b"chunked";

impl HeadScanner {
    /// Inspects the next bytes of the connection, in order.
    pub fn scan(&mut self, bytes: &[u8]) -> Scan {
        let mut at = 0;
        while at < bytes.len() {
            // The usual line, whole in this piece, is checked in one go; any other line (a framing field,
            // one that breaks a rule, one cut by the piece's end) goes through the machine below from its
            // first byte, which finds the offending byte's exact offset.
            if let Some(len) = self.take_whole_line(bytes.get(at..).unwrap_or_default()) {
                at += len;
                continue;
            }
            match self.state {
                State::Off => return Scan::Pass,
                State::Refused(status) => return Scan::Refuse { at, status },
                // Bodies are skipped in bulk, not byte by byte.
                State::Body(left) | State::ChunkData(left) => {
                    let take = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len() - at);
                    at += take;
                    let left = left - take as u64;
                    self.state = match (self.state, left) {
                        (State::Body(_), 0) => State::Blank,
                        (State::Body(_), _) => State::Body(left),
                        (_, 0) => State::ChunkDataCr,
                        _ => State::ChunkData(left),
                    };
                }
                _ => {
                    // A run of bytes that leave the state as it is (a target, a field name or an ordinary
                    // field value) is taken at once; the byte that ends it goes through `step`.
                    at += self.plain_run(bytes.get(at..).unwrap_or_default());
                    let Some(&b) = bytes.get(at) else { break };
                    if let Err(status) = self.step(b) {
                        self.state = State::Refused(status);
                        return Scan::Refuse { at, status };
                    }
                    at += 1;
                }
            }
        }
        match self.state {
            State::Refused(status) => Scan::Refuse { at: bytes.len(), status },
            _ => Scan::Pass,
        }
    }

    /// At the start of a request line or a field line: the line's length when it is one the machine would
    /// take whole without refusing it, leaving the scanner as the machine would have left it after the
    /// line; `None`, with nothing changed, otherwise.
    fn take_whole_line(&mut self, rest: &[u8]) -> Option<usize> {
        match self.state {
            // A field line's first byte: `line` is always 0 here.
            State::FieldStart => {
                let len = self.whole_field(rest)?;
                self.fields += 1;
                Some(len)
            }
            State::Blank if self.line == 0 => {
                let (len, minor) = whole_request_line(rest)?;
                // What `blank` and the request line's bytes leave: a fresh scanner for the request, at its
                // first field line.
                *self = HeadScanner { state: State::FieldStart, minor, ..HeadScanner::default() };
                Some(len)
            }
            _ => None,
        }
    }

    /// The length, CRLF included, of the field line that starts `rest` when the machine would take it
    /// whole without refusing it or changing anything but the field count: it is whole in `rest`, within
    /// [`MAX_LINE`] and [`MAX_FIELDS`], a field name of `tchar`s, a colon, field-value bytes and CRLF, and
    /// neither framing field. `None` otherwise, whatever the reason: the machine then reads the line.
    fn whole_field(&self, rest: &[u8]) -> Option<usize> {
        if self.fields >= MAX_FIELDS {
            return None;
        }
        let rest = rest.get(..rest.len().min(MAX_LINE)).unwrap_or_default();
        let name = run_len(rest, is_tchar);
        if name == 0 || rest.get(name) != Some(&b':') {
            return None;
        }
        if Kind::of(rest.get(..name).unwrap_or_default()) != Kind::Other {
            return None;
        }
        let cr = name + 1 + run_len(rest.get(name + 1..).unwrap_or_default(), is_value_byte);
        (rest.get(cr..cr + 2) == Some(b"\r\n")).then_some(cr + 2)
    }

    /// How many leading bytes of `rest` [`step`](Self::step) would take one by one without changing the
    /// state or refusing: the bytes of a method, a target, a field name, or a value of a field that is no
    /// framing field. They count towards the line's bound like any head byte, and the run stops where the
    /// bound would be passed, so the byte that passes it is refused by `step` at its exact offset.
    fn plain_run(&mut self, rest: &[u8]) -> usize {
        let room = MAX_LINE.saturating_sub(self.line);
        let rest = rest.get(..rest.len().min(room)).unwrap_or_default();
        let taken = match self.state {
            State::Method => run_len(rest, is_tchar),
            State::Target => run_len(rest, is_target_byte),
            State::Name => {
                let taken = run_len(rest, is_tchar);
                let kept = taken.min(NAME_KEEP.saturating_sub(self.name_len));
                for &b in rest.get(..kept).unwrap_or_default() {
                    self.keep_name_byte(b);
                }
                self.name_len = self.name_len.saturating_add(taken - kept);
                taken
            }
            // CR is no value byte: it ends the run.
            State::Value(_) if self.kind == Kind::Other => run_len(rest, is_value_byte),
            _ => 0,
        };
        self.line += taken;
        taken
    }

    /// One head, chunk-line or trailer byte.
    fn step(&mut self, b: u8) -> Result<(), EmptyBodyStatus> {
        if self.counts_line() {
            self.line += 1;
            if self.line > MAX_LINE {
                return Err(self.too_long());
            }
        }
        self.state = match self.state {
            State::Blank | State::BlankLf => self.blank(b)?,
            State::Method => match b {
                b' ' => State::TargetStart,
                _ if is_tchar(b) => State::Method,
                _ => return Err(BAD),
            },
            // The target is at least one byte, each a visible ASCII character (a second SP is refused).
            State::TargetStart | State::Target => match b {
                b' ' if self.state == State::Target => State::Version(0),
                _ if is_target_byte(b) => State::Target,
                _ => return Err(BAD),
            },
            State::Version(n) => Self::version(n, b)?,
            State::Minor => match b {
                b'0' | b'1' => {
                    self.minor = b - b'0';
                    State::VersionCr
                }
                _ => return Err(BAD),
            },
            State::VersionCr => Self::expect(b, b'\r', State::LineLf)?,
            State::LineLf => {
                Self::expect(b, b'\n', State::FieldStart)?;
                self.line = 0;
                State::FieldStart
            }
            State::FieldStart => self.field_start(b)?,
            State::HeadLf => {
                Self::expect(b, b'\n', State::Blank)?;
                self.line = 0;
                self.end_of_head()?
            }
            State::Name => self.name_byte(b)?,
            State::Value(part) => self.value_byte(part, b)?,
            State::ValueLf => {
                Self::expect(b, b'\n', State::FieldStart)?;
                self.end_of_field()?;
                self.line = 0;
                State::FieldStart
            }
            chunk => self.chunk_byte(chunk, b),
        };
        Ok(())
    }

    /// Head lines count towards [`MAX_LINE`]; chunk lines and trailers do not (hyper bounds those).
    fn counts_line(&self) -> bool {
        matches!(
            self.state,
            State::Blank
                | State::BlankLf
                | State::Method
                | State::TargetStart
                | State::Target
                | State::Version(_)
                | State::Minor
                | State::VersionCr
                | State::LineLf
                | State::FieldStart
                | State::HeadLf
                | State::Name
                | State::Value(_)
                | State::ValueLf
        )
    }

    fn too_long(&self) -> EmptyBodyStatus {
        match self.state {
            State::Method
            | State::TargetStart
            | State::Target
            | State::Version(_)
            | State::Minor
            | State::VersionCr
            | State::LineLf => EmptyBodyStatus::UriTooLong,
            State::Blank | State::BlankLf => BAD,
            _ => EmptyBodyStatus::HeaderFieldsTooLarge,
        }
    }

    fn expect(b: u8, want: u8, next: State) -> Result<State, EmptyBodyStatus> {
        if b == want {
            Ok(next)
        } else {
            Err(BAD)
        }
    }

    fn blank(&mut self, b: u8) -> Result<State, EmptyBodyStatus> {
        match (self.state, b) {
            (State::Blank, b'\r') => Ok(State::BlankLf),
            (State::BlankLf, b'\n') => Ok(State::Blank),
            (State::Blank, _) if is_tchar(b) => {
                // A new request: the empty lines before it do not count towards its request line.
                *self = HeadScanner { line: 1, state: State::Method, ..HeadScanner::default() };
                Ok(State::Method)
            }
            _ => Err(BAD),
        }
    }

    /// Only `HTTP/1.0` and `HTTP/1.1` (http-mcp.md §2.4); `HTTP/2.0` and the h2 preface `PRI * HTTP/2.0` fail
    /// here.
    fn version(n: u8, b: u8) -> Result<State, EmptyBodyStatus> {
        match HTTP_1.get(usize::from(n)) {
            Some(&want) if want == b => {
                Ok(if usize::from(n) + 1 == HTTP_1.len() { State::Minor } else { State::Version(n + 1) })
            }
            _ => Err(BAD),
        }
    }

    fn field_start(&mut self, b: u8) -> Result<State, EmptyBodyStatus> {
        match b {
            b'\r' => Ok(State::HeadLf),
            // A field line that starts with SP or HTAB continues the previous one: obsolete folding.
            _ if is_tchar(b) => {
                self.fields += 1;
                if self.fields > MAX_FIELDS {
                    return Err(EmptyBodyStatus::HeaderFieldsTooLarge);
                }
                self.name_len = 0;
                self.keep_name_byte(b);
                Ok(State::Name)
            }
            _ => Err(BAD),
        }
    }

    fn keep_name_byte(&mut self, b: u8) {
        if let Some(slot) = self.name.get_mut(self.name_len) {
            *slot = b.to_ascii_lowercase();
        }
        self.name_len = self.name_len.saturating_add(1);
    }

    fn name_byte(&mut self, b: u8) -> Result<State, EmptyBodyStatus> {
        match b {
            b':' => {
                // A name longer than `NAME_KEEP` was not kept whole, and is no framing field.
                self.kind = Kind::of(self.name.get(..self.name_len).unwrap_or_default());
                // Two lines of either framing field are refused at once, even identical ones.
                match self.kind {
                    Kind::ContentLength if self.content_length.is_some() => return Err(BAD),
                    Kind::TransferEncoding if self.chunked => return Err(BAD),
                    _ => {}
                }
                self.value = 0;
                Ok(State::Value(Part::Lead))
            }
            _ if is_tchar(b) => {
                self.keep_name_byte(b);
                Ok(State::Name)
            }
            // Includes SP or HTAB between the name and its colon.
            _ => Err(BAD),
        }
    }

    fn value_byte(&mut self, part: Part, b: u8) -> Result<State, EmptyBodyStatus> {
        if b == b'\r' {
            // An empty (all-OWS) Content-Length is not a decimal number.
            if self.kind == Kind::ContentLength && part == Part::Lead {
                return Err(BAD);
            }
            return Ok(State::ValueLf);
        }
        if !is_value_byte(b) {
            return Err(BAD);
        }
        let part = match (self.kind, part) {
            (Kind::Other, part) => part,
            (_, Part::Lead | Part::Trail) if is_ows(b) => part,
            (_, Part::Inner) if is_ows(b) => Part::Trail,
            (_, Part::Trail) => return Err(BAD),
            (Kind::ContentLength, _) if b.is_ascii_digit() => {
                self.value =
                    self.value.checked_mul(10).and_then(|v| v.checked_add(u64::from(b - b'0'))).ok_or(BAD)?;
                Part::Inner
            }
            (Kind::TransferEncoding, _) => {
                let matched = usize::try_from(self.value).unwrap_or(usize::MAX);
                if CHUNKED.get(matched) != Some(&b.to_ascii_lowercase()) {
                    return Err(BAD);
                }
                self.value += 1;
                Part::Inner
            }
            (Kind::ContentLength, _) => return Err(BAD),
        };
        Ok(State::Value(part))
    }

    /// At the LF of a field line: a framing field must be complete.
    fn end_of_field(&mut self) -> Result<(), EmptyBodyStatus> {
        match self.kind {
            Kind::Other => {}
            Kind::ContentLength => self.content_length = Some(self.value),
            Kind::TransferEncoding => {
                if usize::try_from(self.value).ok() != Some(CHUNKED.len()) {
                    return Err(BAD);
                }
                self.chunked = true;
            }
        }
        self.kind = Kind::Other;
        Ok(())
    }

    /// At the LF of the empty line: how the body is framed (RFC 9112 §6.3, refused per http-mcp.md §2.4).
    fn end_of_head(&mut self) -> Result<State, EmptyBodyStatus> {
        match (self.content_length, self.chunked) {
            (Some(_), true) => Err(BAD),
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 request is faulty framing.
            (None, true) if self.minor == 0 => Err(BAD),
            (None, true) => Ok(State::ChunkSize(0, 0)),
            (Some(0), false) | (None, false) => Ok(State::Blank),
            (Some(n), false) => Ok(State::Body(n)),
        }
    }

    /// One byte of a chunk-size line, a chunk's CRLF or a trailer (RFC 9112 §7.1). Anything unexpected
    /// turns inspection off.
    fn chunk_byte(&mut self, state: State, b: u8) -> State {
        match (state, b) {
            (State::ChunkSize(size, digits), _) if b.is_ascii_hexdigit() && digits < 16 => {
                let digit = u64::from(hex(b));
                State::ChunkSize(size << 4 | digit, digits + 1)
            }
            (State::ChunkSize(size, 1..), b';') => State::ChunkExt(size),
            (State::ChunkSize(size, 1..), b'\r') => State::ChunkSizeLf(size),
            (State::ChunkExt(size), b'\r') => State::ChunkSizeLf(size),
            (State::ChunkExt(size), _) if b != b'\n' => State::ChunkExt(size),
            (State::ChunkSizeLf(0), b'\n') => State::TrailerStart,
            (State::ChunkSizeLf(size), b'\n') => State::ChunkData(size),
            (State::ChunkDataCr, b'\r') => State::ChunkDataLf,
            (State::ChunkDataLf, b'\n') => State::ChunkSize(0, 0),
            (State::TrailerStart, b'\r') => State::TrailerEndLf,
            (State::TrailerEndLf, b'\n') => State::Blank,
            (State::Trailer, b'\r') => State::TrailerLf,
            (State::TrailerStart | State::Trailer, _) if b != b'\n' => State::Trailer,
            (State::TrailerLf, b'\n') => State::TrailerStart,
            _ => State::Off,
        }
    }
}

fn hex(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b.wrapping_sub(b'A').wrapping_add(10),
    }
}

#[cfg(test)]
#[path = "head_scan_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "head_scan_props.rs"]
mod props;
