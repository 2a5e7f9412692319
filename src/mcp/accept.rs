//! Step M7 (http-mcp.md §6.7): the `Accept` header must admit both `application/json` and
//! `text/event-stream`.
//!
//! Owns the grammar (elements split at commas outside quoted strings, media ranges, parameters, the
//! `q` weight) and the matching (compatibility, specificity, first-wins ties, weight above 0). Any syntax
//! error makes the whole header fail.

use hyper::header::ACCEPT;
use hyper::HeaderMap;

use crate::mcp::fields::exactly_one;

/// One parsed media range.
#[derive(Debug, PartialEq, Eq)]
struct Range {
    /// Lowercased.
    kind: String,
    /// Lowercased.
    subtype: String,
    /// Parameters before `q`: lowercased name, unquoted value.
    params: Vec<(String, String)>,
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

    fn token(&mut self) -> Result<String, SyntaxError> {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += 1;
        }
        let token = self.bytes.get(start..self.at).ok_or(SyntaxError)?;
        if token.is_empty() {
            return Err(SyntaxError);
        }
        Ok(String::from_utf8_lossy(token).to_ascii_lowercase())
    }

    /// A quoted string (the opening `"` is next); returns the unescaped content.
    fn quoted(&mut self) -> Result<String, SyntaxError> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let b = self.peek().ok_or(SyntaxError)?;
            self.at += 1;
            match b {
                b'"' => return Ok(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    let escaped = self.peek().ok_or(SyntaxError)?;
                    if !(escaped == b'\t' || escaped == b' ' || (0x21..=0x7e).contains(&escaped)) {
                        return Err(SyntaxError);
                    }
                    self.at += 1;
                    out.push(escaped);
                }
                b'\t' | b' ' | 0x21 | 0x23..=0x5b | 0x5d..=0x7e => out.push(b),
                _ => return Err(SyntaxError),
            }
        }
    }
}

/// http-mcp.md §6.7 rule 4: `^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`, in thousandths.
fn weight(value: &str) -> Result<u16, SyntaxError> {
    let (int, frac) = match value.split_once('.') {
        Some((i, f)) => (i, f),
        None => (value, ""),
    };
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SyntaxError);
    }
    let thousandths: u16 = format!("{frac:0<3}").parse().map_err(|_| SyntaxError)?;
    match int {
        "0" => Ok(thousandths),
        "1" if thousandths == 0 => Ok(1000),
        _ => Err(SyntaxError),
    }
}

/// One element: `type "/" subtype *( OWS ";" OWS parameter )`.
fn parse_range(element: &[u8]) -> Result<Range, SyntaxError> {
    let mut c = Cursor { bytes: element, at: 0 };
    let kind = c.token()?;
    if !c.eat(b'/') {
        return Err(SyntaxError);
    }
    let subtype = c.token()?;
    if kind == "*" && subtype != "*" {
        return Err(SyntaxError);
    }
    let mut params = Vec::new();
    let mut seen: Vec<String> = Vec::new();
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
        let value = if quoted { c.quoted()? } else { c.token_raw()? };
        if seen.contains(&name) {
            return Err(SyntaxError);
        }
        seen.push(name.clone());
        if name == "q" {
            if quoted {
                return Err(SyntaxError);
            }
            weight_value = Some(weight(&value)?);
        } else if weight_value.is_none() {
            params.push((name, value));
        }
    }
    Ok(Range { kind, subtype, params, weight: weight_value.unwrap_or(1000) })
}

impl Cursor<'_> {
    /// A token, case preserved (a parameter value).
    fn token_raw(&mut self) -> Result<String, SyntaxError> {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += 1;
        }
        match self.bytes.get(start..self.at) {
            Some(t) if !t.is_empty() => Ok(String::from_utf8_lossy(t).into_owned()),
            _ => Err(SyntaxError),
        }
    }
}

/// Splits at commas outside quoted strings, trims, drops empty elements, parses each.
fn parse(value: &[u8]) -> Result<Vec<Range>, SyntaxError> {
    if value.iter().any(|b| *b >= 0x80) {
        return Err(SyntaxError);
    }
    let mut elements = Vec::new();
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
            elements.push(value.get(start..i).unwrap_or_default());
            start = i + 1;
        }
    }
    elements.push(value.get(start..).unwrap_or_default());
    elements
        .into_iter()
        .map(crate::http::fields::trim_ows)
        .filter(|e| !e.is_empty())
        .map(parse_range)
        .collect()
}

/// http-mcp.md §6.7 "Matching" for one wanted type.
fn admits(ranges: &[Range], kind: &str, subtype: &str) -> bool {
    let json = kind == "application";
    let compatible = |r: &Range| -> Option<u8> {
        let specificity = match (r.kind.as_str(), r.subtype.as_str()) {
            (k, s) if k == kind && s == subtype => 2,
            (k, "*") if k == kind => 1,
            ("*", "*") => 0,
            _ => return None,
        };
        let params_ok = match r.params.as_slice() {
            [] => true,
            [(name, value)] => json && name == "charset" && value.eq_ignore_ascii_case("utf-8"),
            _ => false,
        };
        params_ok.then_some(specificity)
    };
    let mut best: Option<(u8, usize, &Range)> = None;
    for r in ranges {
        if let Some(spec) = compatible(r) {
            let better = best.is_none_or(|(s, n, _)| (spec, r.params.len()) > (s, n));
            if better {
                best = Some((spec, r.params.len(), r));
            }
        }
    }
    best.is_some_and(|(_, _, r)| r.weight > 0)
}

/// The rule over one trimmed value.
pub fn admits_both(value: &[u8]) -> bool {
    match parse(value) {
        Ok(ranges) => admits(&ranges, "application", "json") && admits(&ranges, "text", "event-stream"),
        Err(SyntaxError) => false,
    }
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
