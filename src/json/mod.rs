//! JSON for the gateway: one value model, one strict decoder, one deterministic encoder, and the typed
//! canonical form used as hash input.
//!
//! This module owns the byte-level rules of config.md §2 (strict decoding) and pins.md §2–§4
//! (deterministic JSON, typed canonical JSON, domain-separated hashes). It does not know what any document
//! means: schemas and semantics live in `config`, digests of applications and installations in `pins`.

pub mod canonical;
pub mod decode;
pub mod encode;
mod value;

pub use canonical::{
    field_hash, labelled_hash, labelled_pin, qualified, sha256, sha256_qualified, typed_canonical,
};
pub use decode::{decode, DecodeError, DecodeErrorKind, Limits};
pub use encode::{
    format_float, to_deterministic, to_deterministic_pretty, to_deterministic_string, write_deterministic,
};
pub use value::{Map, Value};
