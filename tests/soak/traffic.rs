//! The soak's traffic: one thread per kind of client, each looping until the deadline or its count bound,
//! each counting what it sent and whether every answer was the one the spec gives.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::{self, In, Out};
use crate::support::mcp::Req;
use crate::support::providers::{call, mission_args, structured, Fx};
use crate::support::{send_to_eof, tools_call_request, TOKEN};

/// No loop runs more often than this, whatever the deadline.
const MAX_ITERATIONS: u64 = 5_000_000;

/// What one worker did.
#[derive(Default, Debug)]
pub struct Counts {
    pub valid_calls: u64,
    pub acknowledged_writes: usize,
    pub invalid_requests: u64,
    pub vanished_clients: u64,
    pub stalled_bodies: u64,
    pub pcc_streams: u64,
    pub tools_lists: u64,
    /// Valid calls refused by request admission with 429 (http-mcp.md's answer when every lease is taken).
    pub busy: u64,
    /// Answers that were not the expected ones (must stay 0).
    pub unexpected: u64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.valid_calls += o.valid_calls;
        self.acknowledged_writes += o.acknowledged_writes;
        self.invalid_requests += o.invalid_requests;
        self.vanished_clients += o.vanished_clients;
        self.stalled_bodies += o.stalled_bodies;
        self.pcc_streams += o.pcc_streams;
        self.tools_lists += o.tools_lists;
        self.busy += o.busy;
        self.unexpected += o.unexpected;
    }

    pub fn to_value(&self) -> Value {
        json!({
            "valid_calls": self.valid_calls,
            "acknowledged_writes": self.acknowledged_writes,
            "invalid_requests": self.invalid_requests,
            "vanished_clients": self.vanished_clients,
            "stalled_bodies": self.stalled_bodies,
            "pcc_streams": self.pcc_streams,
            "tools_lists": self.tools_lists,
            "busy": self.busy,
            "unexpected": self.unexpected,
        })
    }
}

type Worker = JoinHandle<Counts>;

/// Whether a `tools/call` stream ended with a successful result.
fn succeeded(status: u16, text: &str) -> bool {
    status == 200 && structured(text).is_some() && !text.contains("\"isError\":true")
}

fn running(deadline: Instant, stop: &AtomicBool, i: u64) -> bool {
    i < MAX_ITERATIONS && Instant::now() < deadline && !stop.load(Ordering::Acquire)
}

fn spawn(
    deadline: Instant,
    stop: &Arc<AtomicBool>,
    work: impl Fn(u64, &mut Counts) + Send + 'static,
) -> Worker {
    let stop = stop.clone();
    std::thread::spawn(move || {
        let mut counts = Counts::default();
        let mut i = 0;
        while running(deadline, &stop, i) {
            work(i, &mut counts);
            i += 1;
        }
        counts
    })
}

/// One round of valid calls: the Luau tool, the forward tool, the stdio mission and the write tool.
fn valid_round(addr: SocketAddr, id: usize, counts: &mut Counts) {
    // `echo`'s contract admits only `{}`; `fwd` forwards its arguments to the fixture's `echo`.
    let calls = [
        ("echo", json!({})),
        ("fwd", json!({"k": id})),
        ("mission", mission_args("fx.echo", json!({"k": id}))),
        ("web", mission_args("web.echo", json!({"k": id}))),
    ];
    for (tool, arguments) in calls {
        let (status, text) = call(addr, tool, id, &arguments);
        counts.valid_calls += 1;
        // A write is acknowledged once its answer arrived whole (audit-events.md §2: after the record).
        if tool == "web" && status == 200 && structured(&text).is_some() {
            counts.acknowledged_writes += 1;
        }
        if status == 429 {
            counts.busy += 1;
        } else if !succeeded(status, &text) {
            eprintln!(
                "UNEXPECTED valid {tool} {status} {}",
                text.split("data: ")
                    .nth(1)
                    .unwrap_or("")
                    .chars()
                    .take(400)
                    .collect::<String>()
                    .replace('\n', " ")
            );
            counts.unexpected += 1;
        }
    }
}

/// Invalid requests, each with the status http-mcp.md gives it.
fn invalid_round(addr: SocketAddr, id: usize, counts: &mut Counts) {
    let good = tools_call_request(addr, "echo", id, "{}", true);
    let text = String::from_utf8(good).expect("ascii");
    let cases: [(String, u16); 4] = [
        (text.replace(TOKEN, &"b".repeat(TOKEN.len())), 401),
        (text.replace("\"arguments\":{}", "\"arguments\":{]"), 400),
        (text.replace("Accept: application/json, text/event-stream\r\n", ""), 406),
        (text.replace("MCP-Protocol-Version: 2026-07-28", "MCP-Protocol-Version: 2025-11-25"), 400),
    ];
    for (request, want) in cases {
        let (status, _) = send_to_eof(addr, request.as_bytes(), Duration::from_secs(30));
        counts.invalid_requests += 1;
        if status != want {
            eprintln!("UNEXPECTED invalid want {want} got {status}");
            counts.unexpected += 1;
        }
    }
    std::thread::sleep(Duration::from_millis(5));
}

/// A client that sends a whole call and goes away before reading its answer.
fn vanish(addr: SocketAddr, id: usize, counts: &mut Counts) {
    if let Ok(mut s) = TcpStream::connect(addr) {
        // Never the write tool: a vanished write is neither acknowledged nor certainly not audited.
        let (tool, args) = if id % 2 == 0 {
            ("mission", mission_args("fx.echo", json!({"k": id})).to_string())
        } else {
            ("echo", "{}".to_owned())
        };
        let _ = s.write_all(&tools_call_request(addr, tool, id, &args, true));
        let mut first = [0u8; 16];
        if id % 3 == 0 {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.read(&mut first);
        }
        counts.vanished_clients += 1;
    }
    // A vanished client's run is cancelled, not instantly gone: a pause keeps this one client from
    // holding every lease by itself.
    std::thread::sleep(Duration::from_millis(20));
}

/// A body that stops after 8 of its 100 bytes, held until the gateway ends it or 3 s pass.
fn stall(addr: SocketAddr, counts: &mut Counts) {
    if let Ok(mut s) = TcpStream::connect(addr) {
        // The head of a `tools/list` of 100 body bytes, without `Mcp-Method`, and only 8 of them.
        let mut bytes = Req::tools_list(addr).remove("Mcp-Method").body_bytes(vec![b' '; 100]).head();
        bytes.extend_from_slice(b"{\"jsonrp");
        let _ = s.write_all(&bytes);
        let _ = s.set_read_timeout(Some(Duration::from_secs(3)));
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
        counts.stalled_bodies += 1;
    }
}

/// One PCC stream: connect, the legacy handshake, a call of `echo`, half-close (pcc.md §7).
async fn pcc_stream(port: u16, id: u64, counts: &mut Counts) {
    let bearer = client::bearer();
    let metadata: Vec<(&str, &str)> = bearer.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let Ok(mut conv) = client::try_open(port, &metadata).await else {
        counts.unexpected += 1;
        return;
    };
    conv.send(&client::c()).await;
    let mut ok = conv.next().await == Out::Connected;
    for step in client::h() {
        conv.send(&step).await;
    }
    ok &= matches!(conv.next().await, Out::Json(_));
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{}}}}}}"#,
        id + 1
    );
    conv.send(&client::body(&body)).await;
    let answer = conv.next().await;
    ok &= matches!(&answer, Out::Json(j) if j.contains("\"structuredContent\":{}") && !j.contains("\"isError\":true"));
    if !ok {
        eprintln!("UNEXPECTED pcc answer {answer:?}");
    }
    conv.send(&In::HalfClose).await;
    ok &= matches!(conv.next().await, Out::End(tonic::Code::Ok, _));
    counts.pcc_streams += 1;
    if !ok {
        eprintln!("UNEXPECTED pcc");
        counts.unexpected += 1;
    }
}

/// `tools/list` every 5 s.
fn tools_list(addr: SocketAddr, counts: &mut Counts) {
    let request = Req::tools_list(addr).add("Connection", "close").bytes();
    let (status, text) = send_to_eof(addr, &request, Duration::from_secs(30));
    counts.tools_lists += 1;
    if status != 200 || !text.contains("\"name\":\"web\"") {
        eprintln!("UNEXPECTED list {status}");
        counts.unexpected += 1;
    }
    std::thread::sleep(Duration::from_secs(5));
}

/// Which clients run: the soak's whole mix, or the part of it that a kill round can cut at any instant
/// (no periodic `tools/list` and no stalled body, whose waits of seconds would outlast a round).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    Soak,
    Kill,
}

/// Starts the clients of `mix` against `fx`'s gateway until `deadline` (or `stop`).
pub fn start(fx: &Fx, deadline: Instant, stop: Arc<AtomicBool>, mix: Mix) -> Vec<Worker> {
    let addr = fx.addr();
    let pcc_port = fx.d.pcc_port;
    let mut workers: Vec<Worker> = (0..2)
        .map(|w| spawn(deadline, &stop, move |i, c| valid_round(addr, (w * 1_000_000 + i) as usize, c)))
        .collect();
    workers.push(spawn(deadline, &stop, move |i, c| invalid_round(addr, i as usize, c)));
    workers.push(spawn(deadline, &stop, move |i, c| vanish(addr, i as usize, c)));
    if mix == Mix::Soak {
        workers.push(spawn(deadline, &stop, move |_, c| stall(addr, c)));
        workers.push(spawn(deadline, &stop, move |_, c| tools_list(addr, c)));
    }
    let runtime =
        Arc::new(tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"));
    workers.push(spawn(deadline, &stop, move |i, c| runtime.block_on(pcc_stream(pcc_port, i, c))));
    workers
}

/// Waits for every worker and sums their counts.
pub fn join(workers: Vec<Worker>) -> Counts {
    let mut total = Counts::default();
    for worker in workers {
        total.add(worker.join().expect("a traffic worker panicked"));
    }
    total
}

/// After a kill: the acknowledged writes of the workers. A PCC client whose stream the kill cut may have
/// panicked on its half-sent request; its thread counts nothing that matters here (PCC calls no write tool).
pub fn join_after_kill(workers: Vec<Worker>) -> usize {
    workers.into_iter().filter_map(|w| w.join().ok()).map(|c| c.acknowledged_writes).sum()
}
