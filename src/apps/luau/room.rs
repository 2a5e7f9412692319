//! Host work without the memory limit where the call has room for it (execution.md §12.8): the one place
//! that lifts a state's limit, and the bound that makes it safe to.
//!
//! Owns the room rule and the limit's restoration; what a step allocates at most is its caller's to say
//! (`convert::lua_bound`, the clone's and the empty table's bounds). Does not run Luau code, and nothing
//! it lifts the limit for may (docs/decisions.md "The Luau echo, fourth round").

use mlua::Lua;

use super::active::Active;

/// Runs `f`, host work that runs no Luau code and itself allocates at most `bound` bytes of Luau heap,
/// with the state's memory limit lifted when the call in progress has room for it, and under the limit
/// otherwise (execution.md §12.8).
///
/// Why: while a limit is set, mlua wraps every value it makes (a table, a string, a clone, a raw set) in a
/// protected call into Luau, so that an allocation over the limit becomes an error instead of unwinding
/// through Rust; those calls were about a fifth of a trivial call's run. Where no allocation can reach the
/// limit, the protection changes nothing, so the work runs without it and gives the same answer:
/// - `f`'s own values take at most `bound` bytes;
/// - what Luau may grow for them besides (the string table's hash array, a thread's stack, mlua's
///   reference stack) is an array that is already part of the heap and grows at most to twice its size
///   once, so all of it together at most `2 × used` more;
/// - Luau keeps small objects in pages of one size class each, so making values may also start one new
///   page of each class ([`FRESH_PAGES`]);
/// - so when `3 × used + bound + ROOM_MARGIN` stays within the limit, the heap stays within it throughout,
///   and no allocation of `f` would have failed under it either. Otherwise `f` runs under the limit, as
///   before, and fails where it failed. Collection steps run the same way in both cases. With the
///   default `limits.memory_bytes` (16 MiB) a trivial call has that room; with 1 MiB it never does.
///
/// The limit is restored when `f` returns (or unwinds: a panicking call leaves its state unused anyway).
pub(crate) fn with_room<R>(lua: &Lua, bound: usize, f: impl FnOnce() -> R) -> R {
    let Some(limit) = lua.app_data_ref::<Active>().map(|active| active.memory_limit) else { return f() };
    if !has_room(lua.used_memory(), bound, limit) || lua.set_memory_limit(0).is_err() {
        return f();
    }
    let _restore = RestoreLimit { lua, limit };
    f()
}

/// What new pages work may start beyond its values' own sizes: Luau's small-object allocator keeps 40
/// size classes, for collectable objects and other blocks apart, in pages of at most 32 KiB.
pub(crate) const FRESH_PAGES: usize = 2 * 40 * 32 * 1024;

/// Headroom [`with_room`] keeps beyond its bound: fresh pages, and Luau's and mlua's fixed-size
/// bookkeeping.
const ROOM_MARGIN: usize = FRESH_PAGES + 64 * 1024;

/// Whether work allocating at most `bound` bytes may run without the limit (see [`with_room`]).
fn has_room(used: usize, bound: usize, limit: usize) -> bool {
    used.saturating_mul(3).saturating_add(bound).saturating_add(ROOM_MARGIN) <= limit
}

/// Sets the call's memory limit again when dropped.
struct RestoreLimit<'a> {
    lua: &'a Lua,
    limit: usize,
}

impl Drop for RestoreLimit<'_> {
    fn drop(&mut self) {
        let _ = self.lua.set_memory_limit(self.limit);
    }
}
