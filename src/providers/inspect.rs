//! Where a provider call's bodies are captured (traces.md §8): named by the call (`provider_call.rs`) and
//! by the stdio transport that writes the request line (`transport.rs`), so its own file.

use crate::traces::RunInspection;

/// Where a provider call's bodies are captured (traces.md §8): the run's inspection file and the names its
/// records carry.
#[derive(Clone, Copy)]
pub struct Inspect<'a> {
    pub file: &'a RunInspection,
    /// The declaration name.
    pub provider: &'a str,
    /// The alias the script called.
    pub alias: &'a str,
    pub traceparent: &'a str,
}
