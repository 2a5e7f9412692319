//! `tools/call` from the commit to the end of the stream, against the real binary (execution.md §4–§9,
//! http-mcp.md §12.9): the exact event-stream bytes of every outcome reachable without providers, the
//! heartbeat, cancellation by deadline and by disconnect, and run admission.

use crate::support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::sse::{
    assert_committed_head, chunked, fill, find, first_read, parse_stream, read_stream, success, tool_error,
    Stream,
};
use support::{content_pin, Deployment, Gateway};

/// One application of the fixture: name, Luau source of component `app` (entry `app.run`), input and
/// result contracts, and `limits` of the manifest.
struct App {
    name: &'static str,
    luau: &'static str,
    input: &'static str,
    result: &'static str,
    limits: Value,
}

const TEXT: &str = r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;
const ANY: &str = r#"{"type":"object","properties":{"text":{"type":"string"}}}"#;

fn apps() -> Vec<App> {
    let none = || json!({});
    vec![
        App { name: "echo", luau: "local M = {}\nfunction M.run(input) return input end\nreturn M\n", input: TEXT, result: TEXT, limits: none() },
        App {
            name: "shout",
            luau: "local M = {}\n\n-- Upper-cases ASCII letters and reports the byte length of the input text.\nfunction M.run(input)\n  local text = input.text\n  return { text = string.upper(text), length = #text }\nend\n\nreturn M\n",
            input: r#"{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":1000}},"required":["text"]}"#,
            result: r#"{"type":"object","properties":{"text":{"type":"string"},"length":{"type":"integer"}},"required":["text","length"]}"#,
            limits: none(),
        },
        App { name: "boom", luau: "local M = {}\nfunction M.run(input) error('secret internals') end\nreturn M\n", input: ANY, result: ANY, limits: none() },
        App {
            name: "refuse",
            luau: "local M = {}\nfunction M.run(input) fail(input.text) end\nreturn M\n",
            input: ANY,
            result: ANY,
            limits: none(),
        },
        App {
            // `fail` cannot be caught: the first one ends the run.
            name: "stubborn",
            luau: "local M = {}\nfunction M.run(input) local ok = pcall(fail, 'first') return { text = 'after' } end\nreturn M\n",
            input: ANY,
            result: ANY,
            limits: none(),
        },
        App { name: "badshape", luau: "local M = {}\nfunction M.run(input) return { text = 5 } end\nreturn M\n", input: ANY, result: ANY, limits: none() },
        App { name: "nan", luau: "local M = {}\nfunction M.run(input) return { text = 0/0 } end\nreturn M\n", input: ANY, result: ANY, limits: none() },
        App {
            name: "spin",
            luau: "local M = {}\nfunction M.run(input) while true do end end\nreturn M\n",
            input: ANY,
            result: ANY,
            limits: json!({"run_duration_ms": 300}),
        },
        App {
            // Silent for longer than one heartbeat interval, then cancelled by its deadline. Each
            // iteration costs time but few interrupt points, so the interrupt budget is not what ends it.
            name: "slow",
            luau: "local M = {}\nfunction M.run(input) while true do local s = string.rep('x', 200000) end end\nreturn M\n",
            input: ANY,
            result: ANY,
            limits: json!({"run_duration_ms": 6500}),
        },
        App {
            // issue 14: a string loop whose every `gsub` tries 131,072 positions. It must end `cancelled` at
            // its deadline after one heartbeat (execution.md §5.1, §12.8), not exhaust the interrupt budget.
            name: "churn",
            luau: "local M = {}\nfunction M.run(input)\n  local s = string.rep('ab', 65536)\n  while true do s = string.gsub(s, 'a', 'a') end\nend\nreturn M\n",
            input: ANY,
            result: ANY,
            limits: json!({"run_duration_ms": 6500}),
        },
        App {
            name: "hog",
            luau: "local M = {}\nfunction M.run(input) local t = {} for i = 1, 1e7 do t[i] = string.rep('x', 64) .. i end end\nreturn M\n",
            input: ANY,
            result: ANY,
            limits: json!({"memory_bytes": 2097152}),
        },
        App {
            name: "spin6",
            luau: "local M = {}\nfunction M.run(input) while true do end end\nreturn M\n",
            input: ANY,
            result: ANY,
            limits: json!({"run_duration_ms": 6500}),
        },
        App {
            name: "hang",
            luau: "local M = {}\nfunction M.run(input) while true do local s = string.rep('x', 1000) end end\nreturn M\n",
            input: ANY,
            result: ANY,
            limits: json!({"run_duration_ms": 30000}),
        },
    ]
}

/// The fixture: the baseline deployment with the applications above, one run slot.
fn deployment(max_runs: u32) -> Deployment {
    let mut d = Deployment::baseline();
    let mut tools = Vec::new();
    for app in apps() {
        let dir = app.name;
        let manifest = json!({
            "version": 1,
            "effect": "read",
            "contracts": {"input_schema": {"path": "input.json"}, "result_schema": {"path": "result.json"}},
            "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
            "limits": app.limits,
        });
        d.write_file(&format!("{dir}/ptc.json"), &serde_json::to_string_pretty(&manifest).unwrap());
        d.write_file(&format!("{dir}/app.luau"), app.luau);
        d.write_file(&format!("{dir}/input.json"), app.input);
        d.write_file(&format!("{dir}/result.json"), app.result);
        tools.push(json!({
            "name": app.name, "title": app.name, "description": "fixture",
            "application": {"manifest": format!("{dir}/ptc.json")},
            "expected_application_content_digest": content_pin::of(&d.path(&format!("{dir}/ptc.json"))),
            "installation_config_pins": {}, "provider_snapshot_pins": {}
        }));
    }
    d.gateway["tools"] = Value::Array(tools);
    d.gateway["admission"]["max_concurrent_runs"] = json!(max_runs);
    d.gateway["admission"]["max_inflight_requests"] = json!(8);
    d.write_documents();
    d
}

fn start(d: &Deployment) -> Gateway {
    let addr: SocketAddr = format!("127.0.0.1:{}", d.port).parse().unwrap();
    Gateway::start(d.command(), addr)
}

/// The bytes of a B-call request (http-mcp.md §12.2) for `tool` with `arguments` and id `id`.
fn call_request(addr: SocketAddr, tool: &str, arguments: &Value, id: u64) -> Vec<u8> {
    support::mcp::Req::tools_call(addr, tool, &id.to_string(), &serde_json::to_string(arguments).unwrap())
        .bytes()
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

fn call(addr: SocketAddr, tool: &str, arguments: Value, id: u64) -> Stream {
    let mut s = connect(addr);
    s.write_all(&call_request(addr, tool, &arguments, id)).unwrap();
    read_stream(&mut s)
}

#[test]
fn every_outcome_has_its_exact_event_stream() {
    let d = deployment(4);
    let gw = start(&d);
    let cases: Vec<(&str, Value, String)> = vec![
        // success (http-mcp.md §12.9 row 170, execution.md §15.1)
        ("echo", json!({"text": "hi"}), success(1, r#"{"text":"hi"}"#)),
        ("shout", json!({"text": "hello, world"}), success(1, r#"{"length":12,"text":"HELLO, WORLD"}"#)),
        // invalid_input (rows 185–187, §15.1)
        ("echo", json!({}), tool_error(1, &["Tool input did not satisfy its contract"])),
        ("echo", json!({"text": "hi", "x": 1}), tool_error(1, &["Tool input did not satisfy its contract"])),
        ("echo", json!({"text": 5}), tool_error(1, &["Tool input did not satisfy its contract"])),
        ("shout", json!({"text": ""}), tool_error(1, &["Tool input did not satisfy its contract"])),
        // execution_failed: an uncaught error says nothing of itself; `fail` with a string adds it
        ("boom", json!({}), tool_error(1, &["Tool execution failed"])),
        ("refuse", json!({"text": "not today"}), tool_error(1, &["Tool execution failed", "not today"])),
        ("refuse", json!({"text": ""}), tool_error(1, &["Tool execution failed"])),
        ("stubborn", json!({}), tool_error(1, &["Tool execution failed", "first"])),
        // invalid_result: the contract, and a value that is not convertible
        ("badshape", json!({}), tool_error(1, &["Tool execution failed"])),
        ("nan", json!({}), tool_error(1, &["Tool execution failed"])),
        // cancelled by the deadline
        ("spin", json!({}), tool_error(1, &["Tool execution was cancelled"])),
    ];
    for (tool, arguments, expected) in cases {
        let s = call(gw.addr, tool, arguments.clone(), 1);
        assert_committed_head(&s);
        assert!(s.ended, "{tool} {arguments}: the stream ends with the chunked terminator");
        assert_eq!(String::from_utf8(s.body()).unwrap(), expected, "{tool} {arguments}");
        // Each comment and the event are one chunk; no heartbeat within 5 s.
        assert_eq!(s.chunks.len(), 2, "{tool} {arguments}");
        assert_eq!(s.chunks[0].1, b": accepted\n\n");
    }
}

/// execution.md §4.5 vectors SG1, SG2 and SG4: what a client already waiting in `read` gets from the
/// gateway's first write. A provider-free run that settles in its first slice, and invalid input, leave
/// whole in that write; a run that goes on has its head and `: accepted` written at once, and its first
/// heartbeat 5,000 ms after them.
#[test]
fn a_quick_call_leaves_in_one_write_and_a_long_one_is_committed_at_once() {
    let d = deployment(2);
    let gw = start(&d);
    let accepted: &[u8] = b": accepted\n\n";
    let whole = |expected: &str| {
        let event = &expected.as_bytes()[accepted.len()..];
        chunked(&[accepted, event], true)
    };
    let vectors: Vec<(&str, &str, Value, Vec<u8>)> = vec![
        ("SG1", "shout", json!({"text": "hi"}), whole(&success(1, r#"{"length":2,"text":"HI"}"#))),
        (
            "SG2",
            "shout",
            json!({"text": ""}),
            whole(&tool_error(1, &["Tool input did not satisfy its contract"])),
        ),
        ("SG4", "hang", json!({}), chunked(&[accepted], false)),
        ("SG4", "slow", json!({}), chunked(&[accepted], false)),
        ("SG4", "churn", json!({}), chunked(&[accepted], false)),
    ];
    for (vector, tool, arguments, expected) in vectors {
        let (mut connection, bytes, took) = first_read(gw.addr, &call_request(gw.addr, tool, &arguments, 1));
        let (stream, body) = parse_stream(&bytes);
        assert_committed_head(&stream);
        assert_eq!(
            String::from_utf8_lossy(&body),
            String::from_utf8_lossy(&expected),
            "{vector}: the first write"
        );
        if vector != "SG4" {
            continue;
        }
        assert!(took < Duration::from_millis(1_000), "SG4: committed at once, not after the run ({took:?})");
        // The first heartbeat 5,000 ms after the commit was written (execution.md §5.1).
        let committed = Instant::now();
        let mut rest = Vec::new();
        fill(&mut connection, &mut rest, b"D\r\n: heartbeat\n\n\r\n".len()).unwrap();
        let silent = committed.elapsed();
        assert_eq!(rest, b"D\r\n: heartbeat\n\n\r\n", "SG4: the heartbeat is the next chunk");
        assert!(
            silent >= Duration::from_millis(4_900) && silent <= Duration::from_millis(5_500),
            "SG4: the heartbeat after 5 s of silence, not {silent:?}"
        );
    }
}

/// Runs silent for longer than one heartbeat interval and then cancelled by their 6,500 ms deadline:
/// `slow` allocates, `churn` substitutes in a 128 KiB string (issue 14).
#[test]
fn a_silent_run_gets_a_heartbeat_within_five_and_a_half_seconds() {
    let d = deployment(2);
    let gw = start(&d);
    let runs: Vec<_> = ["slow", "churn"]
        .into_iter()
        .map(|tool| {
            let addr = gw.addr;
            (tool, std::thread::spawn(move || call(addr, tool, json!({}), 7)))
        })
        .collect();
    for (tool, run) in runs {
        let s = run.join().unwrap();
        assert_committed_head(&s);
        assert!(s.ended, "{tool}");
        let accepted = s.chunks[0].0;
        assert_eq!(s.chunks[0].1, b": accepted\n\n", "{tool}");
        assert_eq!(s.chunks[1].1, b": heartbeat\n\n", "{tool}");
        let after = s.chunks[1].0.duration_since(accepted);
        assert!(
            after >= Duration::from_millis(4_900) && after <= Duration::from_millis(5_500),
            "{tool}: heartbeat after {after:?}"
        );
        assert_eq!(s.chunks.len(), 3, "{tool}: one heartbeat, then the event");
        assert_eq!(
            String::from_utf8(s.chunks[2].1.clone()).unwrap(),
            tool_error(7, &["Tool execution was cancelled"])[12..],
            "{tool}"
        );
        let ended = s.chunks[2].0.duration_since(accepted);
        assert!(ended >= Duration::from_millis(6_400), "{tool}: ended after {ended:?}, before its deadline");
    }
}

/// issue 14: with `PTC_LOG=debug` the log line of a failed run names its cause class; issue 25: and an
/// uncaught error's message, never a `fail` detail.
#[test]
fn the_debug_log_names_the_cause_class_of_a_failed_run() {
    let d = deployment(4);
    let mut cmd = d.command();
    cmd.env("PTC_LOG", "ptc_gateway=debug");
    let gw = Gateway::start(cmd, format!("127.0.0.1:{}", d.port).parse().unwrap());
    let calls = [("boom", json!({})), ("refuse", json!({"text": "a secret detail"})), ("hog", json!({}))];
    for (tool, arguments) in calls {
        let s = call(gw.addr, tool, arguments, 1);
        let body = String::from_utf8(s.body()).unwrap();
        assert!(body.contains("Tool execution failed"), "{tool}: {body}");
    }
    let (_, _, _, stderr) = gw.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(20));
    let stderr = String::from_utf8(stderr).unwrap();
    let causes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("run failed"))
        .filter_map(|l| l.split("cause=").nth(1))
        .map(|rest| rest.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(causes, ["uncaught_error", "fail", "memory"], "{stderr}");
    // A `fail` detail is the script's answer to the client and never reaches the log; an uncaught
    // error's message does, at debug (execution.md §12.9).
    assert!(!stderr.contains("a secret detail"), "no fail detail reaches the log: {stderr}");
    assert!(stderr.contains(r#"error="workflow/app (app.luau):2: secret internals""#), "{stderr}");
}

/// execution.md §12.8 "Fairness": with every run slot executing `while true do end`, `GET /health/live`,
/// a 429 refusal and the heartbeats of the spinning calls are written within 100 ms of when they are due.
#[test]
fn every_run_slot_spinning_stalls_nothing_else() {
    const SLOTS: u64 = 4;
    const DUE: Duration = Duration::from_millis(100);
    let d = deployment(SLOTS as u32);
    let gw = start(&d);
    let (committed, commits) = std::sync::mpsc::channel();
    let spins: Vec<_> = (0..SLOTS)
        .map(|id| {
            let (addr, committed) = (gw.addr, committed.clone());
            std::thread::spawn(move || {
                let mut s = connect(addr);
                s.write_all(&call_request(addr, "spin6", &json!({}), id)).unwrap();
                // The head arrives once the call is committed, holding its run slot.
                s.peek(&mut [0u8; 1]).unwrap();
                committed.send(()).unwrap();
                read_stream(&mut s)
            })
        })
        .collect();
    for _ in 0..SLOTS {
        commits.recv_timeout(Duration::from_secs(10)).unwrap();
    }
    let refusal = |id: u64| {
        let started = Instant::now();
        let r =
            support::raw_exchange(gw.addr, &call_request(gw.addr, "echo", &json!({"text": "hi"}), id), false)
                .unwrap();
        (r.status, started.elapsed())
    };
    // While they spin (bounded in count and time, well inside their 6,500 ms deadline).
    let sampling = Instant::now();
    let mut samples = 0;
    while sampling.elapsed() < Duration::from_secs(4) && samples < 2_000 {
        let started = Instant::now();
        let live = support::http_get(gw.addr, "/health/live").unwrap();
        let live_took = started.elapsed();
        assert_eq!(live.status, 200);
        assert!(live_took <= DUE, "GET /health/live took {live_took:?}");
        let (status, refused_took) = refusal(101);
        assert_eq!(status, 429);
        assert!(refused_took <= DUE, "the 429 took {refused_took:?}");
        samples += 1;
    }
    for spin in spins {
        let s = spin.join().unwrap();
        assert!(s.ended);
        assert_eq!(s.chunks[1].1, b": heartbeat\n\n");
        let after = s.chunks[1].0.duration_since(s.chunks[0].0);
        assert!(after <= Duration::from_secs(5) + DUE, "heartbeat after {after:?}");
    }
}

#[test]
fn a_busy_run_slot_refuses_then_a_disconnect_cancels_and_frees_it() {
    let d = deployment(1);
    let gw = start(&d);
    // Hold the one run slot with a run that never ends on its own.
    let mut holder = connect(gw.addr);
    holder.write_all(&call_request(gw.addr, "hang", &json!({}), 1)).unwrap();
    let mut head = Vec::new();
    while find(&head, b": accepted\n\n").is_none() {
        let len = head.len() + 1;
        fill(&mut holder, &mut head, len).unwrap();
    }
    // Row 188: 429 with the id, nothing dispatched; the body was read, so no close.
    let r = support::raw_exchange(gw.addr, &call_request(gw.addr, "echo", &json!({"text": "hi"}), 1), false)
        .unwrap();
    assert_eq!(r.status, 429);
    assert_eq!(
        String::from_utf8(r.body.clone()).unwrap(),
        r#"{"error":{"code":-31999,"data":{"reason":"run_capacity_exhausted"},"message":"Server busy"},"id":1,"jsonrpc":"2.0"}"#
    );
    assert_eq!(r.header("connection"), None);
    // Row 189: invalid input needs no run slot.
    let s = call(gw.addr, "echo", json!({"text": 5}), 1);
    assert_eq!(
        String::from_utf8(s.body()).unwrap(),
        tool_error(1, &["Tool input did not satisfy its contract"])
    );
    // Health stays ready while the slot is used (row 25).
    assert_eq!(support::http_get(gw.addr, "/health/ready").unwrap().status, 200);
    // The client goes away: the run is cancelled and the slot returns within 1 s.
    let gone = Instant::now();
    drop(holder);
    let freed = loop {
        let request = call_request(gw.addr, "echo", &json!({"text": "again"}), 2);
        if support::raw_exchange(gw.addr, &request, true).map(|r| r.status).unwrap_or(0) == 200 {
            break Instant::now();
        }
        assert!(gone.elapsed() < Duration::from_secs(5), "the run slot never came back");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        freed.duration_since(gone) <= Duration::from_millis(1_000),
        "slot back after {:?}",
        freed.duration_since(gone)
    );
}

#[test]
fn a_client_that_half_closes_during_a_run_gets_nothing_more_and_frees_the_slot() {
    let d = deployment(1);
    let gw = start(&d);
    let mut client = connect(gw.addr);
    client.write_all(&call_request(gw.addr, "hang", &json!({}), 3)).unwrap();
    let mut got = Vec::new();
    while find(&got, b"\r\n: accepted\n\n\r\n").is_none() {
        let len = got.len() + 1;
        fill(&mut client, &mut got, len)
            .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&got)));
    }
    // execution.md §5.2: a half-close is the client going away; the run is cancelled and nothing more
    // is written: the connection ends after exactly the head and the `: accepted` chunk.
    let gone = Instant::now();
    client.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    let _ = client.read_to_end(&mut rest);
    got.extend_from_slice(&rest);
    let head_end = find(&got, b"\r\n\r\n").unwrap() + 4;
    // Chunk sizes are hexadecimal in either case (RFC 9112 §7.1); hyper writes upper case.
    assert_eq!(got[head_end..].to_ascii_lowercase(), b"c\r\n: accepted\n\n\r\n", "nothing after the commit");
    // The slot is back within 1 s: the next call runs.
    loop {
        let request = call_request(gw.addr, "echo", &json!({"text": "next"}), 4);
        if support::raw_exchange(gw.addr, &request, true).map(|r| r.status).unwrap_or(0) == 200 {
            break;
        }
        assert!(gone.elapsed() < Duration::from_secs(5), "the run slot never came back");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gone.elapsed() <= Duration::from_millis(1_000), "slot back after {:?}", gone.elapsed());
}

#[test]
fn an_http_1_0_call_is_delimited_by_the_close() {
    // execution.md §4.1: for HTTP/1.0 the head has `connection: close` instead of chunked coding, and the
    // end of the body is the close; the status line is HTTP/1.1 (http-mcp.md §2.1).
    let d = deployment(1);
    let gw = start(&d);
    let request = String::from_utf8(call_request(gw.addr, "echo", &json!({"text": "hi"}), 9)).unwrap();
    let request = request.replacen("POST /mcp HTTP/1.1", "POST /mcp HTTP/1.0", 1);
    let mut s = connect(gw.addr);
    s.write_all(request.as_bytes()).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let head_end = find(&all, b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&all[..head_end]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200 ok\r\n"), "{head}");
    let mut names: Vec<&str> = head.lines().skip(1).filter(|l| !l.starts_with("date:")).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "cache-control: no-store",
            "connection: close",
            "content-type: text/event-stream; charset=utf-8",
            "mcp-protocol-version: 2026-07-28",
            "x-accel-buffering: no",
        ]
    );
    let body = String::from_utf8(all[head_end + 4..].to_vec()).unwrap();
    assert_eq!(body, success(9, r#"{"text":"hi"}"#));
}
