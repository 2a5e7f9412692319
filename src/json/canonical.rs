//! Typed canonical JSON and the domain-separated hashes of pins.md §3–§4. PLACEHOLDER.

use super::value::Value;

/// `TCJ(v)`.
pub fn typed_canonical(value: &Value) -> Vec<u8> {
    let _ = value;
    Vec::new()
}

/// `"sha256:" ‖ hex(digest)`.
pub fn qualified(digest: &[u8; 32]) -> String {
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}
