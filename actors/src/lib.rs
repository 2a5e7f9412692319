#![forbid(unsafe_code)]
//! `ptc-actors`: the supervised runtime of ptc-gateway.

pub mod admission;
pub mod readiness;

pub use readiness::{NotReadyCause, Phase, Readiness};
