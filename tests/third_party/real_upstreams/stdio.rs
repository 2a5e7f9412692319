//! F35 on the real stdio servers: `mcp-server-time` under `auto` is acquired `modern` with exactly one
//! spawn, server-everything under `auto` is acquired `legacy` with two (the probe process answers
//! `server/discover` with `-32601`, is discarded, and a fresh process gets `initialize`, providers.md
//! §6.2). Each then answers one real `tools/call` through `provider_call::call`, and closes cleanly.
//!
//! The facts asserted here (era, protocol version, server identity, the mapped tools' listing facts,
//! §7.4) are what the snapshot pins of the example deployments will hash; they are stable for the pinned
//! versions. Both are launched through the committed launchers of `config-examples/upstreams/bin/`, as the
//! example deployments launch them, so the executable fact is the same in every clone. The time server is started
//! with `--local-timezone Etc/UTC` because it names the machine's local timezone in its tool descriptions.
//! Spawns are counted by a wrapper (spawns.rs).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use ptc_gateway::testing::config::host::{ProtocolEra, ToolEffect, ToolMapping};
use ptc_gateway::testing::json::to_deterministic_string;
use ptc_gateway::testing::providers::acquire::{acquire, AcquireSpec, Acquired};
use ptc_gateway::testing::providers::child::LaunchSpec;
use ptc_gateway::testing::providers::listing::Era;
use ptc_gateway::testing::providers::provider_call::{call, CallRequest};
use ptc_gateway::testing::providers::result::CallSuccess;
use ptc_gateway::testing::providers::transport::TransportFault;
use serde_json::Value;
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};

use super::installed;
use super::spawns::SpawnCounter;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Generous: a cold Python or Node start on a loaded 2-core machine; the probe window is half (§6.2).
const START_TIMEOUT_MS: u64 = 20_000;

/// One real upstream and the facts its pinned version must show.
struct Upstream {
    label: &'static str,
    command: fn() -> PathBuf,
    args: &'static [&'static str],
    /// The one mapped tool and its alias.
    tool: &'static str,
    alias: &'static str,
    era: Era,
    spawns: usize,
    protocol_version: &'static str,
    /// Deterministic JSON of the reduced server identity (§7.4).
    server_info: &'static str,
    /// The mapped tools' facts (§7.4), as the upstream lists them.
    tool_facts: fn() -> Json,
}

const TIME: Upstream = Upstream {
    label: "mcp-server-time",
    command: installed::time_server,
    args: &["--local-timezone", "Etc/UTC"],
    tool: "get_current_time",
    alias: "time.now",
    era: Era::Modern,
    spawns: 1,
    protocol_version: "2026-07-28",
    server_info: r#"{"name":"mcp-time","version":"2026.10.19"}"#,
    tool_facts: time_facts,
};

const EVERYTHING: Upstream = Upstream {
    label: "server-everything",
    command: installed::everything_server,
    args: &["stdio"],
    tool: "echo",
    alias: "everything.echo",
    era: Era::Legacy,
    spawns: 2,
    protocol_version: "2025-11-25",
    server_info: r#"{"name":"mcp-servers/everything","title":"Everything Reference Server","version":"2.0.0"}"#,
    tool_facts: everything_facts,
};

fn time_facts() -> Json {
    let zone = "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'Etc/UTC' as local \
                timezone if no timezone provided by the user.";
    json!([{
        "annotations": read_only_annotations(),
        "as": "time.now",
        "description": "Get current time in a specific timezone",
        "effect": "read",
        "input_schema": {
            "properties": {"timezone": {"description": zone, "title": "Timezone", "type": "string"}},
            "required": ["timezone"],
            "title": "get_current_timeArguments",
            "type": "object"
        },
        "name": "get_current_time",
        "output_schema": {
            "properties": {
                "datetime": {"title": "Datetime", "type": "string"},
                "day_of_week": {"title": "Day Of Week", "type": "string"},
                "is_dst": {"title": "Is Dst", "type": "boolean"},
                "timezone": {"title": "Timezone", "type": "string"}
            },
            "required": ["timezone", "datetime", "day_of_week", "is_dst"],
            "title": "TimeResult",
            "type": "object"
        },
        "title": null
    }])
}

fn everything_facts() -> Json {
    json!([{
        "annotations": read_only_annotations(),
        "as": "everything.echo",
        "description": "Echoes back the input string",
        "effect": "read",
        "input_schema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {"message": {"description": "Message to echo", "type": "string"}},
            "required": ["message"],
            "type": "object"
        },
        "name": "echo",
        "output_schema": null,
        "title": "Echo Tool"
    }])
}

/// Both servers annotate their tools alike (annotations are pinned, never an effect, providers.md §2).
fn read_only_annotations() -> Json {
    json!({"destructiveHint": false, "idempotentHint": true, "openWorldHint": false, "readOnlyHint": true})
}

impl Upstream {
    fn spec(&self, launch: LaunchSpec) -> AcquireSpec {
        let mapping =
            ToolMapping { alias: self.alias.to_owned(), effect: ToolEffect::Read, description: None };
        AcquireSpec {
            launch,
            protocol: ProtocolEra::Auto,
            start_timeout_ms: START_TIMEOUT_MS,
            tools: BTreeMap::from([(self.tool.to_owned(), mapping)]),
            version: VERSION.to_owned(),
        }
    }

    /// Acquires behind the spawn counter and checks the era, both spawn counts and every stable fact.
    async fn acquire_counted(&self, counter: &SpawnCounter) -> Acquired {
        let spec = self.spec(counter.counted(&(self.command)(), self.args));
        let acquired = match acquire(&spec).await {
            Ok(acquired) => acquired,
            Err(e) => panic!("{}: acquisition failed: {e:?}", self.label),
        };
        let facts = &acquired.facts;
        let pids = counter.pids();
        assert_eq!((facts.era, acquired.spawns as usize, pids.len()), (self.era, self.spawns, self.spawns));
        assert_eq!(facts.protocol_version, self.protocol_version, "{}", self.label);
        assert_eq!(to_deterministic_string(&facts.server_info), self.server_info, "{}", self.label);
        assert_eq!(to_json(&Value::Array(facts.tools.clone())), (self.tool_facts)(), "{}", self.label);
        // A discarded probe process is closed and reaped before the fresh one is spawned (§6.2).
        if let [probe, _] = pids[..] {
            assert!(
                !std::path::Path::new(&format!("/proc/{probe}")).exists(),
                "{}: probe remains",
                self.label
            );
        }
        acquired
    }

    async fn call(&self, acquired: &Acquired, arguments: Json) -> CallSuccess {
        let request = CallRequest {
            era: acquired.facts.era,
            version: VERSION,
            name: self.tool,
            arguments: to_value(&arguments),
            traceparent: TRACEPARENT,
            deadline: tokio::time::Instant::now() + Duration::from_secs(10),
            max_result_bytes: 262_144,
            inspect: None,
        };
        let outcome = call(&acquired.transport, request, std::future::pending()).await;
        match outcome.result {
            Ok(success) => success,
            Err(e) => panic!("{}: {} failed: {e:?}", self.label, self.tool),
        }
    }
}

fn to_value(json: &Json) -> Value {
    ptc_gateway::testing::json::decode(
        json.to_string().as_bytes(),
        ptc_gateway::testing::json::Limits::DOCUMENT,
    )
    .unwrap()
}

fn to_json(value: &Value) -> Json {
    serde_json::from_str(&to_deterministic_string(value)).unwrap()
}

/// Closes orderly (stdin end of file first, §13.1) and checks that nothing the wrapper counted remains.
async fn close(acquired: Acquired, counter: &SpawnCounter, label: &str) {
    let end = acquired.transport.close(false).await;
    // Both servers exit 0 on stdin end of file, before any signal (§13.1 step 1).
    assert_eq!((end.fault, end.exit_status), (TransportFault::Close, Some(0)), "{label}");
    counter.assert_all_gone();
}

/// Day of the week of a proleptic Gregorian date (Sakamoto's method), to check the server's own field.
fn weekday(year: i64, month: usize, day: i64) -> &'static str {
    const OFFSETS: [i64; 12] = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4];
    const NAMES: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
    let y = if month < 3 { year - 1 } else { year };
    NAMES[((y + y / 4 - y / 100 + y / 400 + OFFSETS[month - 1] + day) % 7) as usize]
}

/// `YYYY-MM-DDTHH:MM:SS+00:00`, the server's `isoformat(timespec="seconds")` in UTC; returns the date.
fn utc_datetime(text: &str) -> (i64, usize, i64) {
    let b = text.as_bytes();
    let shape_ok = b.len() == 25
        && text.ends_with("+00:00")
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19.. => true,
            _ => c.is_ascii_digit(),
        });
    assert!(shape_ok, "datetime {text:?} is not YYYY-MM-DDTHH:MM:SS+00:00");
    (text[0..4].parse().unwrap(), text[5..7].parse().unwrap(), text[8..10].parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_time_is_modern_with_one_spawn_and_tells_the_time() {
    let counter = SpawnCounter::new();
    let acquired = TIME.acquire_counted(&counter).await;
    let success = TIME.call(&acquired, json!({"timezone": "UTC"})).await;
    // The documented TimeResult (its outputSchema): exactly these four fields, as structuredContent.
    let value = to_json(success.value.as_ref().expect("structuredContent"));
    let fields: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(fields, ["datetime", "day_of_week", "is_dst", "timezone"]);
    assert_eq!((&value["timezone"], &value["is_dst"]), (&json!("UTC"), &json!(false)));
    let (year, month, day) = utc_datetime(value["datetime"].as_str().unwrap());
    assert_eq!(value["day_of_week"], weekday(year, month, day));
    // The same value is also the one text block, as JSON (the SDK's structured-output convention).
    let content: Vec<Json> = success.content.iter().map(to_json).collect();
    assert_eq!(content.len(), 1);
    assert_eq!(content[0]["type"], "text");
    assert_eq!(serde_json::from_str::<Json>(content[0]["text"].as_str().unwrap()).unwrap(), value);
    close(acquired, &counter, TIME.label).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_is_legacy_with_two_spawns_and_echoes() {
    let counter = SpawnCounter::new();
    let acquired = EVERYTHING.acquire_counted(&counter).await;
    let success = EVERYTHING.call(&acquired, json!({"message": "hello, 世界"})).await;
    let content: Vec<Json> = success.content.iter().map(to_json).collect();
    assert_eq!(content, [json!({"type": "text", "text": "Echo: hello, 世界"})]);
    // No structuredContent, and the one text block is not JSON: the mission sees no value (§8.2).
    assert_eq!(success.value, None);
    close(acquired, &counter, EVERYTHING.label).await;
}

/// Launched directly (as a host document would), the facts are the same and the executable fact is the
/// digest of the installed file itself, links followed (§4.1, §7.4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_launch_pins_the_installed_entry_point() {
    for upstream in [&TIME, &EVERYTHING] {
        let counter = SpawnCounter::new();
        let command = (upstream.command)();
        let acquired = match acquire(&upstream.spec(counter.direct(&command, upstream.args))).await {
            Ok(acquired) => acquired,
            Err(e) => panic!("{}: direct acquisition failed: {e:?}", upstream.label),
        };
        let bytes = std::fs::read(std::fs::canonicalize(&command).unwrap()).unwrap();
        let digest = format!("sha256:{:x}", Sha256::digest(&bytes));
        let facts = &acquired.facts;
        assert_eq!(facts.executable_digest, Some(digest), "{}", upstream.label);
        assert_eq!((facts.era, acquired.spawns as usize), (upstream.era, upstream.spawns));
        assert_eq!(to_deterministic_string(&facts.server_info), upstream.server_info);
        assert_eq!(to_json(&Value::Array(facts.tools.clone())), (upstream.tool_facts)());
        let end = acquired.transport.close(false).await;
        assert_eq!((end.fault, end.exit_status), (TransportFault::Close, Some(0)), "{}", upstream.label);
    }
}
