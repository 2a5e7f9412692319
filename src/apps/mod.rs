//! Applications (config.md §6, execution.md §11–§12): stage 5 of startup (lifecycle.md §3.2), from a
//! decoded manifest to a built template per served tool, and the static `tools/list` catalog.
//!
//! * `closure` (5c) reads every file the manifest names, once, under the confinement rules;
//! * `content_pin` (5d) computes and compares the application content digest of pins.md §6;
//! * `contracts`, `luau` (5e) normalise and compile the contracts, compile and probe the Luau components;
//! * `selection` (5f) runs the provider selection rules S1–S12;
//! * `header`, `catalog` (5h, 5i) check the `x-mcp-header` projections and the listing bounds;
//! * `template` runs them in the spec's order;
//! * `runtime` runs one call's Luau entry in fresh sandboxes (execution.md §12, §14).
//!
//! Nothing here contacts a provider or reads a credential; only `runtime` runs an entry function.

pub mod catalog;
pub mod closure;
pub mod content_pin;
pub mod contracts;
pub mod error;
pub mod header;
pub mod luau;
pub mod runtime;
pub mod schema_walk;
pub mod selection;
pub mod template;

pub use error::{AppDetail, AppError, AppErrorKind};
pub use template::{build, build_all, finish, load_manifest, Built, Run, ServedTool, Template};

#[cfg(test)]
mod tests;
