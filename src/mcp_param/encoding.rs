//! Header values that mirror JSON strings (http-mcp.md §9.2 rule 4, http-mcp.md §9.3, §9.5): decoding a
//! received `Mcp-Name` or `Mcp-Param-*` value, and the canonical encoding a client is expected to send.
//!
//! Owns the base64 sentinel `=?base64?…?=`, canonical padded standard Base64 in both directions, and the
//! literal-value byte rule. It does not own which headers are compared with what (the `Mcp-Name` check in
//! `mcp::tool`, the `Mcp-Param-*` check in `mcp::params`).

/// The sentinel markers (lowercase only: `=?BASE64?…?=` is a literal).
const OPEN: &[u8] = b"=?base64?";
const CLOSE: &[u8] = b"?=";
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The value of one symbol of the standard alphabet.
fn symbol(b: u8) -> Option<u32> {
    ALPHABET.iter().position(|a| *a == b).and_then(|p| u32::try_from(p).ok())
}

/// Canonical padded standard Base64 (http-mcp.md §9.5): length a multiple of 4, only the alphabet, `=` only
/// as the last one or two bytes, and the unused low bits of the last symbol zero.
fn decode_base64(payload: &[u8]) -> Option<Vec<u8>> {
    if payload.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(payload.len() / 4 * 3);
    let quads = payload.chunks_exact(4);
    let last = quads.len().saturating_sub(1);
    for (i, quad) in quads.enumerate() {
        let pad = quad.iter().rev().take_while(|b| **b == b'=').count();
        if pad > 2 || (pad > 0 && i != last) {
            return None;
        }
        let mut word = 0u32;
        for &b in quad.get(..4 - pad)? {
            word = (word << 6) | symbol(b)?;
        }
        word <<= 6 * pad as u32;
        // The unused low bits must be zero (so every byte string has exactly one encoding).
        let unused_mask = match pad {
            1 => 0xff,
            2 => 0xffff,
            _ => 0,
        };
        if word & unused_mask != 0 {
            return None;
        }
        let bytes = word.to_be_bytes();
        out.extend_from_slice(bytes.get(1..4 - pad)?);
    }
    Some(out)
}

/// Standard Base64 with `=` padding.
pub fn encode_base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk.first().copied(), chunk.get(1).copied(), chunk.get(2).copied()];
        let word = (u32::from(b[0].unwrap_or(0)) << 16)
            | (u32::from(b[1].unwrap_or(0)) << 8)
            | u32::from(b[2].unwrap_or(0));
        let symbols = 1 + chunk.len();
        for i in 0..4 {
            if i < symbols {
                let index = (word >> (18 - 6 * i)) & 0x3f;
                out.push(char::from(ALPHABET[index as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// http-mcp.md §9.5: decodes an OWS-trimmed header value; `None` is a decoding failure.
pub fn decode(value: &[u8]) -> Option<String> {
    let sentinel =
        value.len() >= OPEN.len() + CLOSE.len() && value.starts_with(OPEN) && value.ends_with(CLOSE);
    if sentinel {
        let payload = value.get(OPEN.len()..value.len() - CLOSE.len())?;
        return String::from_utf8(decode_base64(payload)?).ok();
    }
    if value.iter().all(|b| (0x20..=0x7e).contains(b) || *b == b'\t') {
        // Only ASCII bytes: the conversion cannot fail.
        return String::from_utf8(value.to_vec()).ok();
    }
    None
}

/// http-mcp.md §9.2 rule 4: header-safe strings are sent literally, others as the base64 sentinel.
fn header_safe(s: &str) -> bool {
    let b = s.as_bytes();
    let looks_like_sentinel =
        b.starts_with(OPEN) && b.ends_with(CLOSE) && b.len() >= OPEN.len() + CLOSE.len();
    b.iter().all(|c| (0x20..=0x7e).contains(c))
        && b.first() != Some(&b' ')
        && b.last() != Some(&b' ')
        && !looks_like_sentinel
}

/// http-mcp.md §9.2 rule 4: the canonical encoding of a canonical string.
pub fn canonical_encoding(s: &str) -> String {
    if header_safe(s) {
        s.to_owned()
    } else {
        format!("=?base64?{}?=", encode_base64(s.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_vectors() {
        // http-mcp.md §9.5, §8.1 and §12.10.
        let cases: &[(&[u8], Option<&str>)] = &[
            (b"echo", Some("echo")),
            (b"=?base64?ZWNobw==?=", Some("echo")),
            (b"=?base64?ZWNobw=?=", None),
            (b"=?base64?SGVsbG8=?=", Some("Hello")),
            (b"=?base64?SGVsbG8?=", None),
            (b"=?base64?SGVs!!!bG8=?=", None),
            (b"=?BASE64?SGVsbG8=?=", Some("=?BASE64?SGVsbG8=?=")),
            (b"=?base64?SGVsbG8=", Some("=?base64?SGVsbG8=")),
            (b"SGVsbG8=", Some("SGVsbG8=")),
            (b"=?base64??=", Some("")),
            (b"=?base64?=", Some("=?base64?=")),
            (b"", Some("")),
            (b"a\tb", Some("a\tb")),
            (b"Hello, \xe4\xb8\x96\xe7\x95\x8c", None),
            (b"a\x01", None),
            (b"a\x7f", None),
            (b"=?base64?SGVsbG8sIOS4lueVjA==?=", Some("Hello, 世界")),
            (b"=?base64?IHBhZGRlZCA=?=", Some(" padded ")),
            (b"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", Some("=?base64?literal?=")),
            (b"=?base64?Mw==?=", Some("3")),
            // Non-zero unused bits: `Mx==` would decode to "3" too, but is not canonical.
            (b"=?base64?Mx==?=", None),
            (b"=?base64?SGVsbG9=?=", None),
            (b"=?base64?S===?=", None),
            (b"=?base64?SG==SGVs?=", None),
            (b"=?base64?/w==?=", None),
        ];
        for (value, expected) in cases {
            assert_eq!(decode(value).as_deref(), *expected, "{:?}", String::from_utf8_lossy(value));
        }
    }

    #[test]
    fn canonical_encodings() {
        // http-mcp.md §9.3.
        let cases: &[(&str, &str)] = &[
            ("us-west1", "us-west1"),
            ("us west 1", "us west 1"),
            ("", ""),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            ("a\tb", "=?base64?YQli?="),
            ("42", "42"),
        ];
        for (s, expected) in cases {
            assert_eq!(canonical_encoding(s), *expected, "{s:?}");
            assert_eq!(decode(expected.as_bytes()).as_deref(), Some(*s), "round trip {s:?}");
        }
        for n in 0..8usize {
            let bytes: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37)).collect();
            let text = encode_base64(&bytes);
            assert_eq!(decode_base64(text.as_bytes()), Some(bytes));
        }
    }
}
