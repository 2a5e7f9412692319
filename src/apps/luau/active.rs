//! What the interrupt callback, `require` and host functions find of a call in a Luau state
//! (execution.md §12.2, §12.8): the call in progress ([`Active`], the state's mlua application data while
//! a `vm::CallScope` lives) and, for each of its sandboxes, the part they share ([`Core`]).
//!
//! Its own file so that the state (`vm`), the module loader (`require`) and the sandbox (`sandbox`) can
//! all name these without importing each other: `vm` builds and reads [`Active`], `sandbox` builds
//! [`Core`], `require` loads modules into it. Does not own any behaviour of its own beyond the halt flag.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mlua::Table;

use super::budget::Budget;
use super::Environment;

/// The call in progress, where the interrupt callback, `require` and host functions find it (mlua's
/// per-state application data).
pub(super) struct Active {
    pub(super) budget: Arc<Budget>,
    /// The sandbox whose code runs now: the workflow's, or a mission's while the workflow waits in
    /// `:call`/`:eval` (only one sandbox of a call runs at a time).
    pub(super) current: Mutex<Option<Arc<Core>>>,
    /// The state's memory limit during this call: the live size of the base plus `limits.memory_bytes`.
    pub(super) memory_limit: usize,
    /// Heap size at which the next interrupt point runs a full collection (see `vm`'s `reclaim`).
    pub(super) gc_trigger: AtomicUsize,
}

impl Active {
    /// The sandbox running now.
    pub(super) fn current(&self) -> Option<Arc<Core>> {
        self.current.lock().ok().and_then(|c| c.clone())
    }
}

/// The module slots of one sandbox. A loaded module is held as a table reference, not a registry entry:
/// the sandbox's core lives no longer than its call, and taking the reference is cheaper.
pub(super) enum Slot {
    Loading,
    Loaded(Table),
}

/// What host functions and the interrupt callback know of one sandbox.
pub(super) struct Core {
    pub(super) env: Arc<Environment>,
    /// The sandbox's globals: the environment of every chunk it loads.
    pub(super) globals: Table,
    pub(super) slots: Mutex<BTreeMap<String, Slot>>,
    /// How many module chunks are running right now (nested `require`s count each).
    pub(super) loading: AtomicUsize,
    /// Set by `fail`: every interrupt point of this sandbox raises until the host resumes it
    /// (execution.md §12.5).
    pub(super) halted: AtomicBool,
    /// The startup probe's record of each loaded component's exported function names, taken as its
    /// chunk returned the module (execution.md §12.5 `handle:api()`); `None` in every sandbox of a call.
    pub(super) exports: Option<Mutex<BTreeMap<String, Vec<String>>>>,
}

impl Core {
    pub(super) fn is_halted(&self) -> bool {
        self.halted.load(Ordering::Relaxed)
    }
}
