//! Support for the tests and the bench, kept apart from the gateway: the fault points of the test
//! vectors (`fault`, inert without the `fault-injection` feature), the tests' door to the internals
//! (`testing`, only with that feature), the generated-input harness of the property tests
//! (`prop_support`, only in unit tests) and the bench's one doc-hidden hook (`bench_hooks`).
//!
//! Nothing here changes what a release build serves: `fault` compiles to constant `false` checks, and
//! `bench_hooks` is called by nothing in the gateway.

pub mod bench_hooks;
pub mod fault;
#[cfg(test)]
pub mod prop_support;
#[cfg(feature = "fault-injection")]
pub mod testing;
