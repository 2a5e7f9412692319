//! execution.md §12.8 with `room::with_room`: host work that runs no Luau code (a sandbox's globals table, a
//! module's clone, the entry input's conversion) runs without the memory limit only where it cannot reach
//! it, and gives the answer it gives under the limit: the limit is lifted inside and restored after, kept
//! where the bound does not fit, and an entry input too large for `limits.memory_bytes` still fails the run
//! with the memory cause while one that fits is converted.

use mlua::Lua;

use super::runtime::{app, failed_by, limits, returned};
use crate::apps::luau::budget::Budget;
use crate::apps::luau::room::with_room;
use crate::apps::luau::vm::{HostGlobals, Vm};
use crate::apps::runtime::{run_workflow, CallLimits, CancelToken, FailCause};

const MIB: usize = 1_048_576;

fn vm() -> Vm {
    Vm::new(|_| Ok(HostGlobals { workflow: Vec::new(), mission: Vec::new() })).unwrap()
}

/// The limit in force now (reading it sets it again).
fn limit_now(lua: &Lua) -> usize {
    let limit = lua.set_memory_limit(0).unwrap();
    lua.set_memory_limit(limit).unwrap();
    limit
}

#[test]
fn the_limit_is_lifted_only_where_the_work_fits() {
    let mut vm = vm();
    let scope = vm.begin(Budget::new(1_000_000, None), 16 * MIB).unwrap();
    let lua = scope.lua();
    let limit = limit_now(lua);
    assert!(limit > 16 * MIB, "the base's live size plus limits.memory_bytes: {limit}");
    // Room: lifted inside, restored after.
    assert_eq!(with_room(lua, 1024, || limit_now(lua)), 0);
    assert_eq!(limit_now(lua), limit);
    // A bound the call has no room for: the work runs under the limit, and an allocation past it fails.
    assert_eq!(with_room(lua, 32 * MIB, || limit_now(lua)), limit);
    let refused = with_room(lua, 32 * MIB, || lua.create_string(vec![b'x'; 20 * MIB]));
    assert!(matches!(refused, Err(mlua::Error::MemoryError(_))), "{refused:?}");
    assert_eq!(limit_now(lua), limit);
}

/// The entry input's conversion near `limits.memory_bytes`: the same answers as under the limit.
#[test]
fn an_input_that_does_not_fit_still_fails_the_run() {
    let app = app("return {n = #input.s}");
    let table: &[(&str, usize, usize, _)] = &[
        ("a small input, the smallest limit", 100, MIB, returned(r#"{"n":100}"#)),
        ("half a MiB in 1 MiB", MIB / 2, MIB, returned(r#"{"n":524288}"#)),
        ("2 MiB in 1 MiB", 2 * MIB, MIB, failed_by(FailCause::Memory)),
        ("2 MiB in 16 MiB", 2 * MIB, 16 * MIB, returned(r#"{"n":2097152}"#)),
        ("17 MiB in 16 MiB", 17 * MIB, 16 * MIB, failed_by(FailCause::Memory)),
    ];
    for (what, size, memory_bytes, want) in table {
        let input = serde_json::json!({ "s": "x".repeat(*size) });
        let limits = CallLimits { memory_bytes: *memory_bytes, ..limits() };
        assert_eq!(run_workflow(&app, &input, limits, &CancelToken::new()), *want, "{what}");
    }
}
