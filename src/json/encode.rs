//! Deterministic JSON `DJ` (pins.md §2): the one encoding of every JSON the gateway writes.
//!
//! This module owns the byte layout: no whitespace, members in UTF-8 byte order, integers in plain
//! decimal, floats in the exact layout of pins.md §2.3, strings escaped per pins.md §2.4. It does not own the
//! tagged form used as hash input (`canonical`) nor any framing (the LF that line-oriented files append).

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Number, Value};

use super::number::{number_f64, number_integer};

/// `DJ(v)`: the deterministic JSON bytes of `v`.
pub fn to_deterministic(value: &Value) -> Vec<u8> {
    to_deterministic_string(value).into_bytes()
}

/// `DJ(v)` as a `String` (deterministic JSON is always valid UTF-8).
pub fn to_deterministic_string(value: &Value) -> String {
    let mut out = String::new();
    write_deterministic(&mut out, value);
    out
}

/// `DJ` of a record type: its derived serialization, written by the one deterministic encoder (pins.md §2),
/// so a record's bytes do not depend on the order its fields are declared in.
///
/// Fails only for a value `serde_json` cannot represent (a map with non-string keys, a failing custom
/// `Serialize`); the record types of the gateway hold none, and their callers treat the error as a record
/// that does not validate.
pub fn to_deterministic_record<T: Serialize + ?Sized>(record: &T) -> Result<String, serde_json::Error> {
    Ok(to_deterministic_string(&serde_json::to_value(record)?))
}

/// `DJ(v)` laid out for a person (the published schemas, config.md §9.1): the same tokens and member order,
/// with each member and array item on its own line, indented two spaces per level, and `": "` after each
/// key; empty objects and arrays stay `{}` and `[]`.
pub fn to_deterministic_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(&mut out, value, 0);
    out
}

fn write_pretty(out: &mut String, value: &Value, depth: usize) {
    let indent = |out: &mut String, depth: usize| out.extend(std::iter::repeat_n("  ", depth));
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                indent(out, depth + 1);
                write_pretty(out, item, depth + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push_str("{\n");
            for (i, (key, member)) in map.iter().enumerate() {
                indent(out, depth + 1);
                write_string(out, key);
                out.push_str(": ");
                write_pretty(out, member, depth + 1);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push('}');
        }
        other => write_deterministic(out, other),
    }
}

/// Appends `DJ(v)` to `out`, for callers that frame several values into one buffer.
///
/// Recursion follows the value's nesting, which the decoder bounds (depth 64) and which values the gateway
/// builds itself keep small.
pub fn write_deterministic(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_deterministic(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // pins.md §2.2: `String`'s `Ord` is the unsigned byte order of the UTF-8 encoding.
            out.push('{');
            for (i, (key, member)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_deterministic(out, member);
            }
            out.push('}');
        }
    }
}

/// `DJ(v).len()` without writing it: the byte length the encoder above would produce, member by member
/// (the `_meta` size bound of http-mcp.md §7.3 is checked on every `/mcp` request, and nothing else of the
/// encoding is needed there). Floats, rare in requests, are laid out to be measured.
pub fn deterministic_len(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => match number_integer(n) {
            Some(i) => usize::from(i < 0) + decimal_digits(i.unsigned_abs()),
            None => format_float(number_f64(n)).len(),
        },
        Value::String(s) => string_len(s),
        // `[`, `]` and a comma between items.
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(deterministic_len).sum::<usize>()
        }
        // `{`, `}`, a comma between members and a colon in each.
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(key, member)| string_len(key) + 1 + deterministic_len(member))
                    .sum::<usize>()
        }
    }
}

/// How many decimal digits `n` has (1 for 0).
fn decimal_digits(mut n: u128) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

/// The length [`write_string`] writes for `s`: the quotes, each escape of pins.md §2.4 (two bytes, or six
/// for `\u00XX`), every other byte as it is.
fn string_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
            0x00..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// Appends an integer token in plain decimal, a float token per pins.md §2.3.
fn write_number(out: &mut String, n: &Number) {
    match number_integer(n) {
        // pins.md §2.2: integer `Display` has no `+`, no leading zeros and never `-0`.
        Some(i) => write_integer(out, i),
        None => write_float(out, number_f64(n)),
    }
}

/// Appends `i` in plain decimal, as its `Display` writes it (pins.md §2.2: no `+`, no leading zeros, never
/// `-0`), without the formatting machinery: every integer of every answer, and every request id, is
/// written here.
pub fn write_integer(out: &mut String, i: i128) {
    if i < 0 {
        out.push('-');
    }
    // A JSON integer token is an `i64` or a `u64` (json::number), so its magnitude fits a `u64`, whose
    // division is one instruction where a `u128`'s is a library call.
    match u64::try_from(i.unsigned_abs()) {
        Ok(n) => push_digits(out, n),
        Err(_) => {
            let _ = write!(out, "{}", i.unsigned_abs());
        }
    }
}

/// Appends the decimal digits of `n`.
fn push_digits(out: &mut String, mut n: u64) {
    // `u64::MAX` has 20 digits; they are written from the last.
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    for slot in digits.iter_mut().rev() {
        // `n % 10` is below 10.
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
        start -= 1;
        if n == 0 {
            break;
        }
    }
    // Every byte from `start` on is an ASCII digit.
    out.push_str(std::str::from_utf8(digits.get(start..).unwrap_or_default()).unwrap_or_default());
}

/// Appends a JSON string literal with the escapes of pins.md §2.4.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut run_start = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{0}'..='\u{1f}' => "",
            _ => continue,
        };
        out.push_str(s.get(run_start..i).unwrap_or_default());
        if escape.is_empty() {
            // Other U+0000..U+001F: `\u00` and two lowercase hexadecimal digits.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push_str(escape);
        }
        run_start = i + c.len_utf8();
    }
    out.push_str(s.get(run_start..).unwrap_or_default());
    out.push('"');
}

/// The `DJ` bytes of a float (pins.md §2.3), e.g. `100.0`, `1e16`, `1.5e-7`.
pub fn format_float(f: f64) -> String {
    let mut out = String::new();
    write_float(&mut out, f);
    out
}

/// Appends the `DJ` form of `f` (pins.md §2.3).
///
/// Non-finite values have no JSON form and no `serde_json::Number` holds one; should one reach this
/// encoder anyway it is written as `null`, so the output stays valid JSON and the function total.
pub fn write_float(out: &mut String, f: f64) {
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    // pins.md §2.3.1.
    if f == 0.0 {
        out.push_str(if f.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    // pins.md §2.3.4.
    if f.is_sign_negative() {
        out.push('-');
    }
    let (digits, kk) = shortest_digits(f.abs());
    lay_out(out, &digits, kk);
}

/// The shortest digit string of a positive finite `f` and its decimal exponent `kk`, so that
/// `f ≈ 0.d1…dn × 10^kk` (pins.md §2.3.2), with Ryū's choice among equally short strings.
///
/// The digits come from the `ryu` crate, whose own layout is then discarded. Rust's `{:e}` is not used:
/// on an exact tie between two shortest candidates (e.g. 2^-25 = 2.98023223876953125e-8) it rounds the
/// last digit up where Ryū and ECMAScript pick the even one.
fn shortest_digits(f: f64) -> (String, i32) {
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(f);
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let point = mantissa.find('.').unwrap_or(mantissa.len());
    let all: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let significant = all.trim_start_matches('0');
    let leading_zeros = all.len() - significant.len();
    let digits = significant.trim_end_matches('0').to_owned();
    let point = i32::try_from(point).unwrap_or(0);
    let leading_zeros = i32::try_from(leading_zeros).unwrap_or(0);
    (digits, point + exponent - leading_zeros)
}

/// Writes `digits` (non-empty, no leading or trailing zero) with exponent `kk` in the forms of the table
/// of pins.md §2.3.3.
fn lay_out(out: &mut String, digits: &str, kk: i32) {
    let n = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let head = |k: i32| digits.get(..usize::try_from(k).unwrap_or(0)).unwrap_or_default();
    let tail = |k: i32| digits.get(usize::try_from(k).unwrap_or(0)..).unwrap_or_default();
    if n <= kk && kk <= 16 {
        // `100.0`, `1000000000000000.0`.
        out.push_str(digits);
        push_zeros(out, kk - n);
        out.push_str(".0");
    } else if 0 < kk && kk <= 16 {
        // `125.5`.
        out.push_str(head(kk));
        out.push('.');
        out.push_str(tail(kk));
    } else if -5 < kk && kk <= 0 {
        // `0.000123`.
        out.push_str("0.");
        push_zeros(out, -kk);
        out.push_str(digits);
    } else {
        // `1e16`, `1.5e-7`.
        out.push_str(head(1));
        if n > 1 {
            out.push('.');
            out.push_str(tail(1));
        }
        let _ = write!(out, "e{}", kk - 1);
    }
}

fn push_zeros(out: &mut String, count: i32) {
    for _ in 0..count {
        out.push('0');
    }
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
