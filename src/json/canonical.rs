//! Typed canonical JSON `TCJ` (pins.md §3) and the SHA-256 constructions built on it (pins.md §4): the
//! domain-separated single-payload hash, qualified digests and field hashes.
//!
//! This module owns hash *inputs and outputs* only. What a pin covers (the installation projection, the
//! snapshot identity, the content record stream) belongs to the pins code, which calls these functions.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::encode::write_string;
use super::number::{number_f64, number_integer};

/// The domain label of the application content digest (pins.md §4.1), without its trailing 0x00.
pub const LABEL_APPLICATION_CONTENT: &str = "ptc-gateway.application-content.v1";
/// The domain label of the installation configuration digest (pins.md §4.1), without its trailing 0x00.
pub const LABEL_INSTALLATION_CONFIG: &str = "ptc-gateway.installation-config.v1";
/// The domain label of the provider snapshot digest (pins.md §4.1), without its trailing 0x00.
pub const LABEL_PROVIDER_SNAPSHOT: &str = "ptc-gateway.provider-snapshot.v1";

/// `TCJ(v) = DJ(T(v))` (pins.md §3): every node becomes a tagged array, so that `"1"`, `1` and `1.0` hash
/// differently and member order and whitespace of the source do not matter.
pub fn typed_canonical(value: &Value) -> Vec<u8> {
    let mut out = String::new();
    write_typed(&mut out, value);
    out.into_bytes()
}

/// Appends `TCJ(v)` to `out`. The tagged tree is written directly, never built: its depth follows the
/// input's, which the decoder bounds.
fn write_typed(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("[\"null\"]"),
        Value::Bool(true) => out.push_str("[\"boolean\",true]"),
        Value::Bool(false) => out.push_str("[\"boolean\",false]"),
        Value::Number(n) => match number_integer(n) {
            // `["integer", "<DJ(i)>"]`: the decimal form as a string.
            Some(i) => {
                out.push_str("[\"integer\",\"");
                out.push_str(&i.to_string());
                out.push_str("\"]");
            }
            // `["float64", hex(u64_be(bits(f)))]`.
            None => {
                out.push_str("[\"float64\",\"");
                out.push_str(&format!("{:016x}", number_f64(n).to_bits()));
                out.push_str("\"]");
            }
        },
        Value::String(s) => {
            out.push_str("[\"string\",");
            write_string(out, s);
            out.push(']');
        }
        Value::Array(items) => {
            out.push_str("[\"array\",[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_typed(out, item);
            }
            out.push_str("]]");
        }
        // Pairs sorted by key bytes: `Map` iterates in that order already (pins.md §2.2).
        Value::Object(map) => {
            out.push_str("[\"object\",[");
            for (i, (key, member)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('[');
                write_string(out, key);
                out.push(',');
                write_typed(out, member);
                out.push(']');
            }
            out.push_str("]]");
        }
    }
}

/// `H(label, payload) = SHA-256(label ‖ 0x00 ‖ u64_be(len(payload)) ‖ payload)` (pins.md §4.2). `label`
/// is given without its terminating 0x00, which this function appends.
pub fn labelled_hash(label: &str, payload: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(label.as_bytes());
    hasher.update([0u8]);
    hasher.update(u64::try_from(payload.len()).unwrap_or(u64::MAX).to_be_bytes());
    hasher.update(payload);
    hasher.finalize().into()
}

/// `"sha256:" ‖ hex(digest)` (pins.md §4.3): exactly 71 bytes, lowercase hexadecimal.
pub fn qualified(digest: &[u8; 32]) -> String {
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    push_hex(&mut s, digest);
    s
}

/// Appends `hex(bytes)` (pins.md §4.3): two lowercase hexadecimal digits per byte, the gateway's one
/// spelling of bytes as text (digests, call ids, trace ids).
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
}

/// The plain SHA-256 of `bytes` (no label).
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The qualified plain SHA-256 of raw bytes, e.g. an upstream executable (pins.md §8.5).
pub fn sha256_qualified(bytes: &[u8]) -> String {
    qualified(&sha256(bytes))
}

/// `"sha256:" ‖ hex(SHA-256(DJ(value)))`: the digest of a value as the gateway writes it (pins.md §2),
/// qualified as in pins.md §4.3, without a label: a trace's argument, request and result digests
/// (traces.md §6.3).
pub fn value_digest(value: &Value) -> String {
    sha256_qualified(&super::to_deterministic(value))
}

/// A field hash `"sha256:" ‖ hex(SHA-256(TCJ(value)))`, without a label (pins.md §4.4): only ever input to
/// a labelled outer hash.
pub fn field_hash(value: &Value) -> String {
    sha256_qualified(&typed_canonical(value))
}

/// The qualified `H(label, TCJ(value))`: the installation and snapshot pins (pins.md §7.2, §8.6).
pub fn labelled_pin(label: &str, value: &Value) -> String {
    qualified(&labelled_hash(label, &typed_canonical(value)))
}

#[cfg(test)]
#[path = "canonical_tests.rs"]
mod tests;
