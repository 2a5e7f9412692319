//! Fault tests for every owner kind of the supervision tree (docs/architecture.md; issue 13 scope 3),
//! against the real binary with the stdio fault fixture: a panic injected (`PTC_FAULT`, the
//! `fault-injection` feature) in each owner, in each task a transport owner owns, in a run task outside
//! Luau, and in the shutdown orchestration. Each row asserts the readiness cause of audit-events.md §4.2
//! within 1 s, `/health/live` 200, calls answered 503 `-31998`, the event record the spec names, and the
//! exit status of lifecycle.md §7.4–§7.5; and that no child process or zombie remains
//! (providers.md §13.4).

use crate::support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use support::providers::{call, mission_args, wait, Fx};
use support::{http_get, Gateway};

/// What a row expects after its fault fired.
#[derive(Clone, Copy, Debug)]
enum After {
    /// Readiness is fenced with this cause; the gateway serves on until SIGTERM, then exits `exit`.
    Fenced { cause: &'static str, exit: i32 },
    /// The domain stops by itself (lifecycle.md §7.5) and exits 70.
    Stops,
}

/// One row: the `PTC_FAULT` value, what follows, and whether the loss is a transport's (its
/// `transport` record with fault `transport_error`, then `readiness` with the (tool, provider) pair).
struct Row {
    fault: &'static str,
    after: After,
    transport: bool,
}

const TRANSPORT: &str = "providers/tool:mission/transport:fx";

const ROWS: &[Row] = &[
    // Each task a stdio transport owner owns (providers.md §12.1 "its task ends or panics").
    Row {
        fault: "panic_task:stdio_reader",
        after: After::Fenced { cause: "provider_runtime_lost", exit: 0 },
        transport: true,
    },
    Row {
        fault: "panic_task:stdio_writer",
        after: After::Fenced { cause: "provider_runtime_lost", exit: 0 },
        transport: true,
    },
    Row {
        fault: "panic_task:stdio_stderr",
        after: After::Fenced { cause: "provider_runtime_lost", exit: 0 },
        transport: true,
    },
    Row {
        fault: "panic_task:stdio_exit_watch",
        after: After::Fenced { cause: "provider_runtime_lost", exit: 0 },
        transport: true,
    },
    // Each owner kind (lifecycle.md §6.3).
    Row {
        fault: "panic_owner:providers/tool:mission/transport:fx",
        after: After::Fenced { cause: "provider_runtime_lost", exit: 0 },
        transport: true,
    },
    Row {
        fault: "panic_owner:providers/tool:mission",
        after: After::Fenced { cause: "owner_lost", exit: 0 },
        transport: false,
    },
    Row {
        fault: "panic_owner:providers",
        after: After::Fenced { cause: "owner_lost", exit: 0 },
        transport: false,
    },
    Row {
        fault: "panic_owner:credentials",
        after: After::Fenced { cause: "owner_lost", exit: 0 },
        transport: false,
    },
    Row {
        fault: "panic_owner:provider_admission",
        after: After::Fenced { cause: "owner_lost", exit: 0 },
        transport: false,
    },
    Row {
        fault: "panic_owner:request_admission",
        after: After::Fenced { cause: "admission_lost", exit: 0 },
        transport: false,
    },
    // §7.4: a fenced run admission makes the exit 70.
    Row {
        fault: "panic_owner:run_admission",
        after: After::Fenced { cause: "admission_lost", exit: 70 },
        transport: false,
    },
    // §7.5: a listener's or the supervisor's loss stops the domain.
    Row { fault: "panic_owner:listeners/http_listener", after: After::Stops, transport: false },
    Row { fault: "panic_task:http_listener", after: After::Stops, transport: false },
    Row { fault: "panic_owner:listeners/pcc_listener", after: After::Stops, transport: false },
    Row { fault: "panic_task:pcc_listener", after: After::Stops, transport: false },
    Row { fault: "panic_owner:listeners", after: After::Stops, transport: false },
    Row { fault: "panic_owner:domain", after: After::Stops, transport: false },
];

/// Starts the gateway with `fault` and waits until stage 12 recorded `ready` and `/health/live` answers
/// (readiness may already be gone: the fault fires as soon as it serves).
fn start_faulted(fx: &Fx, fault: &str) -> Gateway {
    let gateway = spawn_faulted(fx, fault);
    // Stage 12 is over once `ready` is recorded: a 503 before it would be the startup's, not the fence's.
    fx.wait_event("readiness ready", |e| e["kind"] == "readiness" && e["transition"] == "ready");
    wait("live", Duration::from_secs(20), || {
        http_get(fx.addr(), "/health/live").ok().filter(|r| r.status == 200)
    });
    gateway
}

/// Starts the gateway with `fault` without waiting for anything.
fn spawn_faulted(fx: &Fx, fault: &str) -> Gateway {
    let mut cmd = fx.command("none");
    cmd.env("PTC_FAULT", fault).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn");
    Gateway { child, addr: fx.addr() }
}

/// Every `readiness` record of the log as `[transition, cause]`, in order.
fn transitions(fx: &Fx) -> Vec<Value> {
    fx.events()
        .into_iter()
        .filter(|e| e["kind"] == "readiness")
        .map(|e| json!([e["transition"], e["cause"]]))
        .collect()
}

fn not_ready_cause(fx: &Fx) -> Value {
    let record =
        fx.wait_event("readiness not_ready", |e| e["kind"] == "readiness" && e["transition"] == "not_ready");
    record["cause"].clone()
}

#[test]
fn a_panic_in_each_owner_and_transport_task_takes_the_loss_policy_the_spec_names() {
    for row in ROWS {
        let mut fx = Fx::new("modern");
        fx.pin();
        // A stopping domain may be gone before any probe reaches it: only its exit is awaited.
        let gateway = match row.after {
            After::Fenced { .. } => start_faulted(&fx, row.fault),
            After::Stops => spawn_faulted(&fx, row.fault),
        };
        match row.after {
            After::Fenced { cause, exit } => {
                // The fault fires when the gateway serves; the fence follows within 1 s.
                let ready = wait("ready 503", Duration::from_secs(1), || {
                    http_get(fx.addr(), "/health/ready").ok().filter(|r| r.status == 503)
                });
                assert_eq!(ready.status, 503, "{}", row.fault);
                assert_eq!(http_get(fx.addr(), "/health/live").unwrap().status, 200, "{}", row.fault);
                let (status, text) = call(fx.addr(), "mission", 1, &mission_args("fx.echo", json!({})));
                assert_eq!(status, 503, "{}: {text}", row.fault);
                assert!(text.contains("-31998"), "{}: {text}", row.fault);
                assert_eq!(not_ready_cause(&fx), json!(cause), "{}", row.fault);
                if row.transport {
                    // A task fault fires in every transport (`mission` and `fwd` each have one over
                    // `fx`); an owner fault only in the owner it names.
                    let lost: &[&str] =
                        if row.fault.starts_with("panic_task:") { &["fwd", "mission"] } else { &["mission"] };
                    for tool in lost {
                        let transport = fx.wait_event("transport record", |e| {
                            e["kind"] == "transport" && e["tool"] == *tool
                        });
                        assert_eq!(
                            transport["fault"],
                            json!("transport_error"),
                            "{}: {transport}",
                            row.fault
                        );
                    }
                    let readiness = fx.wait_event("readiness pair", |e| {
                        e["kind"] == "readiness" && e["transition"] == "not_ready"
                    });
                    assert!(
                        lost.contains(&readiness["tool"].as_str().unwrap_or("")),
                        "{}: {readiness}",
                        row.fault
                    );
                    assert_eq!(readiness["provider"], json!("fx"), "{}", row.fault);
                }
                let (code, _, out, err) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
                assert_eq!(code, Some(exit), "{}: {}", row.fault, String::from_utf8_lossy(&err));
                assert!(out.is_empty(), "{}", row.fault);
            }
            After::Stops => {
                let (code, out) = wait_exit(gateway, Duration::from_secs(40));
                assert_eq!(code, Some(70), "{}", row.fault);
                assert!(out.is_empty(), "{}", row.fault);
                // It served (stage 12 wrote `ready`), then lifecycle.md §7.5: readiness `shutdown`.
                assert_eq!(
                    transitions(&fx),
                    [json!(["ready", "startup"]), json!(["not_ready", "shutdown"])],
                    "{}",
                    row.fault
                );
            }
        }
        fx.assert_all_gone();
    }
}

/// The transport tree node the rows above name exists as written (a typo would make a row vacuous:
/// the injection would fail and nothing would fire).
#[test]
fn the_transport_row_names_a_real_tree_node() {
    assert!(ROWS.iter().any(|r| r.fault == format!("panic_owner:{TRANSPORT}")));
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start_faulted(&fx, "panic_owner:providers/tool:mission/transport:nope");
    // An unknown path fires nothing: the gateway stays ready.
    let ready = http_get(fx.addr(), "/health/ready").unwrap();
    assert_eq!(ready.status, 200);
    let (code, _, _, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
    assert_eq!(code, Some(0));
    fx.assert_all_gone();
}

/// execution.md §6.2: a run task that panics outside the Luau call is a run lost before it settled: the
/// call is answered `internal_error` (dispatch `unknown`), run admission's owner is lost (readiness
/// `admission_lost`), and the exit is 70 (lifecycle.md §7.4: run admission was fenced).
#[test]
fn a_run_task_that_panics_outside_luau_is_answered_and_fences() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start_faulted(&fx, "panic_in_run");
    let (status, text) = call(fx.addr(), "mission", 1, &mission_args("fx.echo", json!({})));
    assert_eq!(status, 200, "{text}");
    // execution.md §7: the fixed text of `internal_error` for a read tool, nothing else.
    let fixed = r#""content":[{"text":"Tool execution failed","type":"text"}],"isError":true,"resultType":"complete"}}"#;
    assert!(text.contains(fixed), "{text}");
    let ready = wait("ready 503", Duration::from_secs(1), || {
        http_get(fx.addr(), "/health/ready").ok().filter(|r| r.status == 503)
    });
    assert_eq!(ready.status, 503);
    assert_eq!(http_get(fx.addr(), "/health/live").unwrap().status, 200);
    assert_eq!(not_ready_cause(&fx), json!("admission_lost"));
    let (status, text) = call(fx.addr(), "mission", 2, &mission_args("fx.echo", json!({})));
    assert_eq!(status, 503, "{text}");
    let (code, _, out, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
    assert_eq!(code, Some(70));
    assert!(out.is_empty());
    fx.assert_all_gone();
}

/// lifecycle.md §7.5 and audit-events.md §2.8: the audit committer's owner is lost; the domain stops at
/// once (the gateway never serves writes it cannot audit), readiness records `audit_unavailable`, S7 is
/// skipped, and the exit is 70.
#[test]
fn losing_the_audit_owner_stops_the_domain() {
    let mut fx = Fx::new("modern");
    fx.make_mission_write();
    fx.pin();
    let gateway = spawn_faulted(&fx, "panic_owner:audit_committer");
    let (code, out) = wait_exit(gateway, Duration::from_secs(40));
    assert_eq!(code, Some(70));
    assert!(out.is_empty());
    assert_eq!(transitions(&fx), [json!(["ready", "startup"]), json!(["not_ready", "audit_unavailable"])]);
    let stages: Vec<Value> = fx
        .events()
        .into_iter()
        .filter(|e| e["kind"] == "shutdown_stage")
        .map(|e| e["stage"].clone())
        .collect();
    assert!(stages.contains(&json!("stop_listeners")), "the stages ran: {stages:?}");
    assert!(!stages.contains(&json!("audit_flush")), "S7 is skipped when the audit is the cause: {stages:?}");
    fx.assert_all_gone();
}

/// lifecycle.md §7.5: a panic in the shutdown orchestration itself runs no stage: every child process
/// group is killed and the exit is 70.
#[test]
fn a_panic_in_the_orchestration_kills_every_group_and_exits_70() {
    let mut fx = Fx::new("modern");
    fx.pin();
    let gateway = start_faulted(&fx, "panic_in_orchestration");
    assert_eq!(http_get(fx.addr(), "/health/ready").unwrap().status, 200);
    let (code, _, out, _) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
    assert_eq!(code, Some(70));
    assert!(out.is_empty());
    fx.assert_all_gone();
}

/// Waits for the gateway to exit on its own; its status and stdout.
fn wait_exit(mut gateway: Gateway, deadline: Duration) -> (Option<i32>, Vec<u8>) {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = gateway.child.try_wait() {
            let mut out = Vec::new();
            if let Some(mut stdout) = gateway.child.stdout.take() {
                let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
            }
            return (status.code(), out);
        }
        if start.elapsed() > deadline {
            let _ = gateway.child.kill();
            let _ = gateway.child.wait();
            panic!("the gateway did not exit within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
