//! JSON for the gateway over `serde_json::Value`: one strict decoder that produces it, one deterministic
//! encoder, and the typed canonical form used as hash input.
//!
//! This module owns the byte-level rules of config.md §2 (strict decoding) and pins.md §2–§4
//! (deterministic JSON, typed canonical JSON, domain-separated hashes). It does not know what any document
//! means: schemas and semantics live in `config`, digests of applications and installations in `pins`.
//!
//! The value is `serde_json::Value`, the one JSON value of the gateway (docs/decisions.md, "One JSON
//! value"). Its objects are `serde_json::Map`, a `BTreeMap` as long as the `preserve_order` feature stays
//! off (nothing in the build enables it), so iterating an object yields its members in the UTF-8 byte
//! order of their names: the order deterministic JSON writes (pins.md §2.2). Its numbers keep the
//! integer/float split of config.md §2.3 (`number`).

pub mod canonical;
pub mod decode;
pub mod encode;
mod excerpt;
mod number;

pub use canonical::{
    field_hash, labelled_hash, labelled_pin, push_hex, qualified, sha256, sha256_qualified, typed_canonical,
    value_digest,
};
pub use decode::{decode, DecodeError, DecodeErrorKind, Limits};
pub use encode::{
    deterministic_len, format_float, to_deterministic, to_deterministic_pretty, to_deterministic_record,
    to_deterministic_string, write_deterministic,
};
pub use excerpt::excerpt;
pub use number::{as_float, as_integer, integer_value, number_f64, number_integer};
