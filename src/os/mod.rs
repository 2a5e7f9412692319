//! The process and what it shares with the operating system: `ptc`'s `main` and its exit codes
//! (`process`), the signal dispositions (`signals`), the service manager's readiness protocol (`notify`)
//! and the diagnostics subscriber (`logging`).
//!
//! Each file is its own layer: `logging`, `notify` and `signals` are leaves that any module may use;
//! `process` is the top of the module graph and nothing imports it (`tests/repo/layering.rs`). The folder
//! groups them because they are plumbing between the gateway and its host, not gateway logic.

pub mod logging;
pub mod notify;
pub mod process;
pub mod signals;
