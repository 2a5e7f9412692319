//! The ordered startup of `ptc gateway` (lifecycle.md §3) and its closed error catalog (§4).

pub mod code;

pub use code::StartupCode;
