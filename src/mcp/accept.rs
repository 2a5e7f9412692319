//! Step M7 (http-mcp.md §6.7): the `Accept` header must admit both `application/json` and
//! `text/event-stream`.
//!
//! Owns the grammar (elements split at commas outside quoted strings, media ranges, parameters, the
//! `q` weight) and the matching (compatibility, specificity, first-wins ties, weight above 0). Any syntax
//! error makes the whole header fail.

use std::borrow::Cow;

use hyper::header::ACCEPT;
use hyper::HeaderMap;

use crate::mcp::fields::exactly_one;

/// One parsed media range, borrowed from the header value: the check runs on every `/mcp` request, so
/// nothing is copied or lowercased (names are compared ASCII case-insensitively instead).
#[derive(Debug, PartialEq, Eq)]
struct Range<'a> {
    /// As sent (a token).
    kind: &'a [u8],
    /// As sent (a token).
    subtype: &'a [u8],
    /// How many parameters precede `q`.
    params: usize,
    /// The first of them: its name as sent and its value unquoted (copied only when it was quoted with
    /// an escape to undo).
    first: Option<(&'a [u8], Cow<'a, [u8]>)>,
    /// The weight in thousandths (1000 when there is no `q`).
    weight: u16,
}

/// Why the header failed to parse (only for tests' sake: every error is the same 406).
#[derive(Debug, PartialEq, Eq)]
struct SyntaxError;

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// A cursor over one element.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ows(&mut self) {
        while self.peek().is_some_and(is_ows) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// A token, as sent (a type, subtype, parameter name or unquoted parameter value).
    fn token(&mut self) -> Result<&'a [u8], SyntaxError> {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += 1;
        }
        match self.bytes.get(start..self.at) {
            Some(token) if !token.is_empty() => Ok(token),
            _ => Err(SyntaxError),
        }
    }

    /// A quoted string (the opening `"` is next); returns the unescaped content.
    fn quoted(&mut self) -> Result<Cow<'a, [u8]>, SyntaxError> {
        self.at += 1;
        let start = self.at;
        let mut unescaped: Option<Vec<u8>> = None;
        loop {
            let b = self.peek().ok_or(SyntaxError)?;
            self.at += 1;
            match b {
                b'"' => {
                    return Ok(match unescaped {
                        Some(out) => Cow::Owned(out),
                        None => Cow::Borrowed(self.bytes.get(start..self.at - 1).unwrap_or_default()),
                    })
                }
                b'\\' => {
                    let escaped = self.peek().ok_or(SyntaxError)?;
                    if !(escaped == b'\t' || escaped == b' ' || (0x21..=0x7e).contains(&escaped)) {
                        return Err(SyntaxError);
                    }
                    let out = unescaped.get_or_insert_with(|| {
                        self.bytes.get(start..self.at - 1).unwrap_or_default().to_vec()
                    });
                    self.at += 1;
                    out.push(escaped);
                }
                b'\t' | b' ' | 0x21 | 0x23..=0x5b | 0x5d..=0x7e => {
                    if let Some(out) = unescaped.as_mut() {
                        out.push(b);
                    }
                }
                _ => return Err(SyntaxError),
            }
        }
    }
}

/// http-mcp.md §6.7 rule 4: `^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`, in thousandths.
fn weight(value: &[u8]) -> Result<u16, SyntaxError> {
    let (int, frac) = match value.iter().position(|b| *b == b'.') {
        Some(dot) => (value.get(..dot).unwrap_or_default(), value.get(dot + 1..).unwrap_or_default()),
        None => (value, &[][..]),
    };
    if frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return Err(SyntaxError);
    }
    // The fraction's digits, padded with zeros to three.
    let thousandths = (0..3).fold(0u16, |t, i| t * 10 + frac.get(i).map_or(0, |d| u16::from(d - b'0')));
    match int {
        b"0" => Ok(thousandths),
        b"1" if thousandths == 0 => Ok(1000),
        _ => Err(SyntaxError),
    }
}

/// One element: `type "/" subtype *( OWS ";" OWS parameter )`.
fn parse_range(element: &[u8]) -> Result<Range<'_>, SyntaxError> {
    let mut c = Cursor { bytes: element, at: 0 };
    let kind = c.token()?;
    if !c.eat(b'/') {
        return Err(SyntaxError);
    }
    let subtype = c.token()?;
    if kind == b"*" && subtype != b"*" {
        return Err(SyntaxError);
    }
    let (mut params, mut first) = (0, None);
    // Every parameter name so far (`Vec::new` allocates only when a parameter is pushed).
    let mut seen: Vec<&[u8]> = Vec::new();
    let mut weight_value = None;
    loop {
        c.skip_ows();
        if c.peek().is_none() {
            break;
        }
        if !c.eat(b';') {
            return Err(SyntaxError);
        }
        c.skip_ows();
        let name = c.token()?;
        if !c.eat(b'=') {
            return Err(SyntaxError);
        }
        let quoted = c.peek() == Some(b'"');
        let value = if quoted { c.quoted()? } else { Cow::Borrowed(c.token()?) };
        if seen.iter().any(|s| s.eq_ignore_ascii_case(name)) {
            return Err(SyntaxError);
        }
        seen.push(name);
        if name.eq_ignore_ascii_case(b"q") {
            if quoted {
                return Err(SyntaxError);
            }
            weight_value = Some(weight(&value)?);
        } else if weight_value.is_none() {
            params += 1;
            if first.is_none() {
                first = Some((name, value));
            }
        }
    }
    Ok(Range { kind, subtype, params, first, weight: weight_value.unwrap_or(1000) })
}

/// Splits at commas outside quoted strings, trims, drops empty elements, parses each; `each` sees the
/// ranges in order (nothing is collected: the check runs on every `/mcp` request).
fn parse<'a>(value: &'a [u8], mut each: impl FnMut(Range<'a>)) -> Result<(), SyntaxError> {
    if value.iter().any(|b| *b >= 0x80) {
        return Err(SyntaxError);
    }
    let mut element = |e: &'a [u8]| -> Result<(), SyntaxError> {
        let e = crate::http::fields::trim_ows(e);
        if !e.is_empty() {
            each(parse_range(e)?);
        }
        Ok(())
    };
    let (mut start, mut in_quote, mut escaped) = (0, false, false);
    for (i, &b) in value.iter().enumerate() {
        if in_quote {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_quote = false,
                _ => {}
            }
        } else if b == b'"' {
            in_quote = true;
        } else if b == b',' {
            element(value.get(start..i).unwrap_or_default())?;
            start = i + 1;
        }
    }
    element(value.get(start..).unwrap_or_default())
}

/// The best range so far for one wanted type (http-mcp.md §6.7 "Matching"): its specificity, its
/// parameter count and its weight; a later range replaces it only when strictly more specific (first wins
/// ties).
#[derive(Clone, Copy, Default)]
struct Best(Option<(u8, usize, u16)>);

impl Best {
    /// Offers `r` for the type `kind/subtype` (lowercase).
    fn offer(&mut self, r: &Range<'_>, kind: &[u8], subtype: &[u8]) {
        let json = kind == b"application";
        let specificity = if r.kind.eq_ignore_ascii_case(kind) && r.subtype.eq_ignore_ascii_case(subtype) {
            2
        } else if r.kind.eq_ignore_ascii_case(kind) && r.subtype == b"*" {
            1
        } else if r.kind == b"*" && r.subtype == b"*" {
            0
        } else {
            return;
        };
        let params_ok = match (r.params, &r.first) {
            (0, _) => true,
            (1, Some((name, value))) => {
                json && name.eq_ignore_ascii_case(b"charset") && value.eq_ignore_ascii_case(b"utf-8")
            }
            _ => false,
        };
        if params_ok && self.0.is_none_or(|(s, n, _)| (specificity, r.params) > (s, n)) {
            self.0 = Some((specificity, r.params, r.weight));
        }
    }

    /// The type is admitted: a compatible range was found and its weight is above 0.
    fn admits(self) -> bool {
        self.0.is_some_and(|(_, _, weight)| weight > 0)
    }
}

/// The rule over one trimmed value.
pub fn admits_both(value: &[u8]) -> bool {
    let (mut json, mut stream) = (Best::default(), Best::default());
    let parsed = parse(value, |r| {
        json.offer(&r, b"application", b"json");
        stream.offer(&r, b"text", b"event-stream");
    });
    parsed.is_ok() && json.admits() && stream.admits()
}

/// The `Accept` check passes: exactly one `Accept` line admitting both types.
pub fn acceptable(headers: &HeaderMap) -> bool {
    exactly_one(headers, ACCEPT).is_some_and(admits_both)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    /// The complete vector table of http-mcp.md §6.7 (two field lines and absent are checked below).
    const VECTORS: &[(&str, bool)] = &[
        ("application/json, text/event-stream", true),
        ("text/event-stream, application/json", true),
        ("*/*", true),
        ("application/*, text/*", true),
        ("APPLICATION/JSON, TEXT/EVENT-STREAM", true),
        ("application/json;charset=\"utf-8\", text/event-stream", true),
        ("application/json;charset=UTF-8, text/event-stream", true),
        ("application/json;foo=\"a,b\", application/json, text/event-stream", true),
        ("application/json;q=0.001, text/event-stream;q=0.5", true),
        ("application/json;q=0.5;level=1, text/event-stream", true),
        ("text/*;q=0, text/event-stream, application/json", true),
        ("application/json, text/event-stream,", true),
        ("application/json", false),
        ("text/event-stream", false),
        ("*/*;q=1, application/json;q=0, text/event-stream;q=1", false),
        ("*/json, text/event-stream", false),
        ("application/json;q, text/event-stream", false),
        ("application/json;charset=latin1, text/event-stream", false),
        ("application/json;level=1;q=0.5, text/event-stream", false),
        ("text/event-stream;charset=utf-8, application/json", false),
        ("application/json;q=0.0000, text/event-stream", false),
        ("application/json;q=1.5, text/event-stream", false),
        ("application/json;q=\"1\", text/event-stream", false),
        ("application/json;q=0.5;q=0.6, text/event-stream", false),
        ("application/json;charset=utf-8;charset=utf-8, text/event-stream", false),
        ("application/json;q=0, application/json, text/event-stream", false),
        ("text/event-stream;q=0, */*", false),
        ("application/json, text/event-stream;q=0", false),
    ];

    /// Neighbouring cases the grammar implies.
    const MORE: &[(&str, bool)] = &[
        ("application/json ; q=1.000 , text/event-stream ;\tq=0.1", true),
        ("application/json;q=1., text/event-stream", true),
        ("application/json;q=0., text/event-stream", false),
        ("application/json;q=.5, text/event-stream", false),
        ("application/json;, text/event-stream", false),
        ("application/json;a=\"x\\\"y,z\", text/event-stream", false),
        ("application/json;a=\"unterminated, text/event-stream", false),
        ("application/json;a=\"x\"y, text/event-stream", false),
        ("application, text/event-stream", false),
        ("application/json text/event-stream", false),
        (",,application/json,,text/event-stream,,", true),
        ("", false),
        ("*/*;q=0.001", true),
        ("*/*;q=0", false),
        ("*/*;charset=utf-8, text/event-stream", true),
        ("*/*;charset=utf-8", false),
        ("application/*;charset=utf-8, text/event-stream", true),
        ("application/json;q=0, application/json;charset=utf-8, text/event-stream", true),
        ("application/json;charset=utf-8;q=0, application/json, text/event-stream", false),
    ];

    #[test]
    fn accept_vectors() {
        for (value, expected) in VECTORS.iter().chain(MORE) {
            assert_eq!(admits_both(value.as_bytes()), *expected, "{value}");
        }
        assert!(!admits_both(b"application/json, text/event-stream, text/\xc3\xa9"));
    }

    #[test]
    fn accept_lines() {
        let cases: &[(&[&str], bool)] = &[
            (&["application/json, text/event-stream"], true),
            (&["application/json", "text/event-stream"], false),
            (&[], false),
        ];
        for (values, expected) in cases {
            let mut headers = HeaderMap::new();
            for v in *values {
                headers.append(ACCEPT, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(acceptable(&headers), *expected, "{values:?}");
        }
    }
}
