//! Support for the tests, kept apart from the gateway: the fault points of the test vectors (`fault`,
//! inert without the `fault-injection` feature) and the generated-input harness of the property tests
//! (`prop_support`, only in unit tests), and the debug log captured for unit and in-process tests (`log_capture`).
//!
//! A leaf layer: it imports nothing of the gateway. The tests' door to the internals (`src/testing.rs`)
//! and the bench's hook (`src/bench_hooks.rs`) import every layer, so they stay at the top, outside this
//! folder (`tests/repo/layering.rs`). Nothing here changes what a release build serves: `fault` compiles
//! to constant `false` checks.

pub mod fault;
#[cfg(any(test, feature = "fault-injection"))]
pub mod log_capture;
#[cfg(test)]
pub mod prop_support;
