//! Deterministic JSON (pins.md §2). PLACEHOLDER until the real encoder lands.

use super::value::Value;

/// `DJ(v)`: the deterministic JSON bytes of `v`.
pub fn to_deterministic(value: &Value) -> Vec<u8> {
    to_deterministic_string(value).into_bytes()
}

/// `DJ(v)` as a `String` (deterministic JSON is always valid UTF-8).
pub fn to_deterministic_string(value: &Value) -> String {
    let _ = value;
    String::new()
}
