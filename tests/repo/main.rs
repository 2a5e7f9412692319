//! The tests that read the repository itself: the module layering and the spec references of the source,
//! the published schemas, the example documents and deployments, and the documents that must agree with
//! the code (docs/operations.md, docs/tutorial.md run as written). One binary (issue 24); the modules
//! marked `fault-injection` reach `ptc_gateway::testing` or run the binary with it.

#[path = "../support/mod.rs"]
mod support;

mod example_deployments;
#[cfg(feature = "fault-injection")]
mod examples;
mod layering;
#[cfg(feature = "fault-injection")]
mod operations_doc;
#[cfg(feature = "fault-injection")]
mod schemas;
mod spec_references;
mod symbol_order;
#[cfg(feature = "fault-injection")]
mod tutorial;
