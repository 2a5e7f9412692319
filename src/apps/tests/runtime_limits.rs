//! execution.md §12.8 through `run_workflow`: the interrupt budget across sandboxes, the deadline,
//! cancellation from another thread (prompt return, no handler runs on) and the memory shared by all
//! sandboxes of a call.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::runtime::{app, failed_by, limits, returned};
use crate::apps::runtime::{
    run_workflow, run_workflow_observed, try_workflow_here, CallLimits, CancelToken, FailCause, RunEnd,
};

fn run_with(body: &str, limits: CallLimits) -> RunEnd {
    run_workflow(&app(body), &serde_json::Value::Object(Default::default()), limits, &CancelToken::new())
}

/// Spin loops in the workflow and in missions, with `pcall` trying to swallow the end.
const SPINS: &[(&str, &str)] = &[
    ("workflow loop", "while true do end"),
    ("swallowed by pcall", "pcall(function() while true do end end)\nreturn {}"),
    ("pcall in a loop", "while true do pcall(function() while true do end end) end"),
    ("xpcall handler", "xpcall(function() while true do end end, function() return mission('m'):call('a.inc') end)\nreturn {}"),
    ("in a mission, caught by the workflow", "pcall(function() mission('m'):call('a.spin') end)\nreturn {}"),
    ("in an eval", "pcall(function() mission('m'):eval('while true do end') end)\nreturn {}"),
    ("a handler cannot act", "xpcall(function() while true do end end, function() fail('handler ran') end)\nreturn {}"),
    ("recursion", "local function f() return f() + 1 end\nwhile true do pcall(f) end"),
];

/// execution.md §12.8: exhausting the interrupt budget is `Failed` and cannot be caught, in any sandbox.
#[test]
fn the_interrupt_budget_ends_the_run() {
    for (what, body) in SPINS {
        let small = CallLimits { interrupts: 10_000, ..limits() };
        assert_eq!(run_with(body, small), failed_by(FailCause::InterruptBudget), "{what}");
    }
    // One budget across the call: 6,000 iterations in the workflow and 6,000 in the mission fit a
    // budget of 20,000 but not one of 10,000.
    let split = "for _ = 1, 6000 do end\nmission('m'):eval('for _ = 1, 6000 do end')\nreturn {done = true}";
    assert_eq!(run_with(split, CallLimits { interrupts: 20_000, ..limits() }), returned(r#"{"done":true}"#));
    assert_eq!(
        run_with(split, CallLimits { interrupts: 10_000, ..limits() }),
        failed_by(FailCause::InterruptBudget)
    );
}

/// execution.md §5.4, §12.8: a passed deadline is `Cancelled`, promptly, whatever the code catches.
#[test]
fn the_deadline_cancels_the_run() {
    for (what, body) in SPINS {
        let started = Instant::now();
        let near = CallLimits { deadline: started + Duration::from_millis(100), ..limits() };
        assert_eq!(run_with(body, near), RunEnd::Cancelled, "{what}");
        assert!(started.elapsed() < Duration::from_secs(3), "{what}: {:?}", started.elapsed());
    }
    let passed = CallLimits { deadline: Instant::now(), ..limits() };
    assert_eq!(run_with("return {}", passed), RunEnd::Cancelled);
}

/// execution.md §5.3: a cancel from another thread ends a running run within a bound, and a token cancelled
/// before the run starts runs nothing.
#[test]
fn a_cancel_from_another_thread_ends_the_run() {
    for (what, body) in SPINS {
        let compiled = app(body);
        let token = CancelToken::new();
        let (entered_tx, entered) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let run_token = token.clone();
        let thread = std::thread::spawn(move || {
            let input = serde_json::Value::Object(Default::default());
            let on_entry = move || {
                let _ = entered_tx.send(());
            };
            let end = run_workflow_observed(&compiled, &input, limits(), &run_token, &on_entry);
            let _ = done_tx.send(end);
        });
        entered.recv_timeout(Duration::from_secs(10)).unwrap();
        let cancelled_at = Instant::now();
        token.cancel();
        assert_eq!(done.recv_timeout(Duration::from_secs(2)).unwrap(), RunEnd::Cancelled, "{what}");
        assert!(cancelled_at.elapsed() < Duration::from_secs(2), "{what}");
        thread.join().unwrap();
    }
    let token = CancelToken::new();
    token.cancel();
    assert!(token.is_cancelled());
    let input = serde_json::Value::Object(Default::default());
    assert_eq!(run_workflow(&app("return {}"), &input, limits(), &token), RunEnd::Cancelled);
}

/// execution.md §12.8: the memory limit; a mission's memory error is a catchable `{ kind = "error" }`; all
/// sandboxes of the call share one limit.
#[test]
fn memory_vectors() {
    let mib = 1_048_576;
    let table: &[(&str, &str, usize, RunEnd)] = &[
        (
            "a workflow hog fails the run",
            "local t = {}\nfor i = 1, 1e7 do t[i] = string.rep('x', 64) .. i end\nreturn {}",
            2 * mib,
            failed_by(FailCause::Memory),
        ),
        (
            "a mission hog is a catchable error",
            "local ok, e = pcall(function() return mission('m'):call('a.hog_table') end)\nreturn {ok = ok, kind = e.kind}",
            2 * mib,
            returned(r#"{"ok":false,"kind":"error"}"#),
        ),
        (
            "a caught workflow memory error lets the run go on",
            "local ok = pcall(string.rep, 'x', 4 * 1048576)\nreturn {ok = ok}",
            2 * mib,
            returned(r#"{"ok":false}"#),
        ),
        (
            "4 MiB in a mission alone fits 8 MiB",
            "return {n = mission('m'):call('a.hog', 4 * 1048576)}",
            8 * mib,
            returned(r#"{"n":4194304}"#),
        ),
        (
            "not beside 5 MB held by the workflow",
            "local big = string.rep('x', 5000000)\nlocal ok, e = pcall(function() return mission('m'):call('a.hog', 4 * 1048576) end)\nreturn {ok = ok, kind = e.kind, big = #big}",
            8 * mib,
            returned(r#"{"ok":false,"kind":"error","big":5000000}"#),
        ),
        (
            "garbage is collected before an allocation fails",
            "for _ = 1, 100 do local s = string.rep('x', 500000) end\nreturn {}",
            2 * mib,
            returned("{}"),
        ),
        (
            "garbage the workflow dropped does not count against a mission",
            "for _ = 1, 3 do local s = string.rep('x', 2000000) end\nreturn {n = mission('m'):call('a.hog', 4 * 1048576)}",
            8 * mib,
            returned(r#"{"n":4194304}"#),
        ),
        (
            "nor can the workflow take what a mission keeps",
            "mission('m'):call('a.keep', 5000000)\nlocal ok = pcall(string.rep, 'x', 4 * 1048576)\nreturn {ok = ok}",
            8 * mib,
            returned(r#"{"ok":false}"#),
        ),
    ];
    for (what, body, memory_bytes, want) in table {
        assert_eq!(run_with(body, CallLimits { memory_bytes: *memory_bytes, ..limits() }), *want, "{what}");
    }
}

/// execution.md §12.8, docs/security.md section 8: one huge request at once (a buffer, a preallocated table,
/// a repeated string, a concatenation doubling in a loop) is refused by the memory limit, not attempted: the
/// caught form gives `ok = false` and the run goes on, the uncaught form ends the run with the memory cause.
#[test]
fn single_huge_allocations_are_refused() {
    let limits = CallLimits { memory_bytes: 2 * 1_048_576, ..limits() };
    let attempts = [
        "buffer.create(1073741824)",
        "table.create(1000000, true)",
        "string.rep('x', 1073741824)",
        "string.rep('abcdefgh', 134217728)",
        "(function() local s = 'x' while true do s = s .. s end end)()",
    ];
    for attempt in attempts {
        let caught = format!("local ok = pcall(function() return {attempt} end)\nreturn {{ok = ok, after = #string.rep('y', 1000)}}");
        assert_eq!(run_with(&caught, limits), returned(r#"{"ok":false,"after":1000}"#), "caught: {attempt}");
        let uncaught = format!("local v = {attempt}\nreturn {{}}");
        assert_eq!(run_with(&uncaught, limits), failed_by(FailCause::Memory), "uncaught: {attempt}");
    }
}

/// execution.md §12.8: only function calls and loop back-edges spend the budget. Luau also raises its
/// interrupt once per position its pattern matcher tries; those check the deadline but cost nothing, so a
/// string loop is bounded by its own iterations (issue 14: 128 KiB per `gsub` spent 100,000,000 points in
/// under 800 iterations). With a budget of 10,000, 20 substitutions over 131,072 positions each (2,621,440
/// matcher interrupts) fit; 20,000 loop iterations do not.
#[test]
fn pattern_matching_spends_no_interrupt_points() {
    let small = CallLimits { interrupts: 10_000, ..limits() };
    let table: &[(&str, &str, RunEnd)] = &[
        (
            "gsub over 128 KiB, 20 times",
            "local s = string.rep('ab', 65536)\nfor _ = 1, 20 do s = string.gsub(s, 'a', 'a') end\nreturn {n = #s}",
            returned(r#"{"n":131072}"#),
        ),
        (
            "find and match too",
            "local s = string.rep('ab', 65536)\nfor _ = 1, 20 do assert(not string.find(s, 'c') and not string.match(s, 'a+c')) end\nreturn {}",
            returned("{}"),
        ),
        ("the loop still counts", "for _ = 1, 20000 do end\nreturn {}", failed_by(FailCause::InterruptBudget)),
    ];
    for (what, body, want) in table {
        assert_eq!(run_with(body, small), *want, "{what}");
    }
}

/// execution.md §5.4, §12.8: a string loop without end is cancelled at its deadline, not failed (issue 14):
/// the matcher's interrupts read the clock.
#[test]
fn an_endless_string_loop_is_cancelled_at_its_deadline() {
    let body = "local s = string.rep('ab', 65536)\nwhile true do s = string.gsub(s, 'a', 'a') end";
    let started = Instant::now();
    let near = CallLimits { deadline: started + Duration::from_millis(300), ..limits() };
    assert_eq!(run_with(body, near), RunEnd::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

/// A run tried on the calling thread (`try_workflow_here`) finishes there when it is short, and is
/// abandoned as `Unfinished` when its slice ends, whatever it catches or however it loops.
#[test]
fn a_run_tried_here_is_abandoned_at_the_end_of_its_slice() {
    let input = serde_json::Value::Object(Default::default());
    let here = |body: &str, slice: Duration| {
        try_workflow_here(&app(body), &input, limits(), &CancelToken::new(), slice, None)
    };
    // Slices generous for an unoptimised build; the gateway's is `HERE_SLICE`.
    let short = Duration::from_millis(200);
    assert_eq!(here("return {n = 1}", short), returned(r#"{"n":1}"#));
    assert_eq!(
        here("fail('no')", short),
        RunEnd::Failed { detail: Some("no".into()), cause: FailCause::Fail, error: None }
    );
    let long = [
        "while true do end",
        "pcall(function() while true do end end)\nreturn {}",
        "local s = string.rep('ab', 65536)\nwhile true do s = string.gsub(s, 'a', 'a') end",
        "pcall(function() mission('m'):call('a.spin') end)\nreturn {}",
    ];
    for body in long {
        let started = Instant::now();
        assert_eq!(here(body, short), RunEnd::Unfinished, "{body}");
        assert!(started.elapsed() < Duration::from_secs(2), "{body}: {:?}", started.elapsed());
    }
}

/// execution.md §12.8: a run abandoned at the end of its slice runs again from the start with a budget of
/// its own and the same limits (what the runner does with `Unfinished`): 6,000 iterations fit a budget of
/// 10,000 on the second run whatever the first spent.
#[test]
fn an_abandoned_run_runs_again_with_a_budget_of_its_own() {
    let input = serde_json::Value::Object(Default::default());
    let compiled = app("for _ = 1, 6000 do end\nreturn {done = true}");
    let small = CallLimits { interrupts: 10_000, ..limits() };
    let token = CancelToken::new();
    assert_eq!(try_workflow_here(&compiled, &input, small, &token, Duration::ZERO, None), RunEnd::Unfinished);
    assert_eq!(run_workflow(&compiled, &input, small, &token), returned(r#"{"done":true}"#));
}
