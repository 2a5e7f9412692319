//! What the gateway shares with the operating system: the signal dispositions (`signals`), the service
//! manager's readiness protocol (`notify`), the diagnostics subscriber (`logging`), the return of the
//! heap's free pages once startup is done (`memory`) and the thread CPU clock a run's slice is charged
//! by (`thread_time`).
//!
//! A leaf layer: it imports nothing of the gateway, and any module may use it. The process itself
//! (`src/process.rs`, `ptc`'s `main`) is the top of the module graph and stays outside this folder, so
//! that the folder is one layer (`tests/repo/layering.rs`).

pub mod logging;
pub mod memory;
pub mod notify;
pub mod signals;
pub mod thread_time;
