//! Served tools over real, pinned upstream MCP servers through `POST /mcp` of the real binary (issue 5;
//! providers.md §5, §7, §16; pins.md §8, §10): `mcp-server-time` over stdio and over Streamable HTTP
//! (`tests/upstreams/http_time_server.py` behind a static bearer, over HTTP and over HTTPS with a private
//! CA), server-everything (legacy only) under `protocol: auto`. Every deployment is pinned by running `--print-pins` and copying its maps into the
//! gateway document, so each scenario also proves that discovery's output makes serving start.
//!
//! Owns the deployments over those upstreams and the exact result shapes. Installs nothing: without
//! `tests/third_party/install.sh` the launchers are missing and acquisition fails (tests/third_party/real_upstreams
//! names the install step).

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::sys::signal::Signal;
use serde_json::{json, Value};
use support::http_time_server::HttpTimeServer;
use support::pki::Pki;
use support::providers::{
    call, copy_pins, event_records, mission_and_forward, mission_args, structured, wait,
};
use support::{run_with_deadline, Deployment, Gateway};

/// The upstream credential the HTTP tests bind (`upstream`, from `UPSTREAM_TOKEN`).
const UPSTREAM_TOKEN: &str = "upstream-secret-51c2";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn launcher(name: &str) -> String {
    support::example_upstreams().join("bin").join(name).display().to_string()
}

/// The interpreter of the examples' upstream venv, whose pinned closure holds the `mcp` SDK the HTTP
/// upstream script runs on.
fn venv_python() -> std::path::PathBuf {
    support::example_upstreams().join(".venv/bin/python")
}

/// A deployment with one installation `up` (`install`), a forward tool `fwd` over `forward_alias` and a
/// Luau mission tool `mission` that returns what `tool(alias, args)` returned.
fn deployment(install: Value, forward_alias: &str) -> Deployment {
    let mut d = Deployment::baseline();
    d.host["install"] = json!({ "up": install });
    d.host["credentials"]["upstream"] = json!({"env": "UPSTREAM_TOKEN"});
    mission_and_forward(&mut d, "up", forward_alias, "A tool over a real upstream.");
    d
}

/// A deployment that holds this file has the gateway trust it instead of the system store
/// (`SSL_CERT_FILE`, tests/support/pki.rs).
const TRUST_FILE: &str = "trust.pem";

fn command(d: &Deployment, upstream_token: &str) -> Command {
    let mut cmd = d.command();
    cmd.env("UPSTREAM_TOKEN", upstream_token);
    let trust = d.path(TRUST_FILE);
    if trust.exists() {
        cmd.env("SSL_CERT_FILE", trust).env_remove("SSL_CERT_DIR");
    }
    cmd
}

/// `--print-pins` (pins.md §10), its three maps copied into each tool, the documents written.
fn pin(d: &mut Deployment, upstream_token: &str) -> Value {
    d.write_documents();
    let mut cmd = command(d, upstream_token);
    cmd.arg("--print-pins").env_remove("GATEWAY_TOKEN");
    let out = run_with_deadline(cmd, Duration::from_secs(60));
    copy_pins(d, &out)
}

fn start(d: &Deployment, upstream_token: &str) -> Gateway {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], d.port));
    Gateway::start(command(d, upstream_token), addr)
}

/// SIGTERM, exit 0, nothing on stdout, and no answer counted as `publication_failed` (every answer here
/// is read whole).
fn stop(d: &Deployment, gateway: Gateway) {
    let (status, _, out, err) = gateway.signal_and_wait(Signal::SIGTERM, Duration::from_secs(40));
    assert_eq!(status, Some(0), "exit status; stderr: {}", String::from_utf8_lossy(&err));
    assert!(out.is_empty(), "stdout must stay empty");
    let failed: Vec<Value> =
        event_records(d).into_iter().filter(|e| e["kind"] == "publication_failed").collect();
    assert_eq!(failed, Vec::<Value>::new(), "answers read whole are published");
}

fn addr(d: &Deployment) -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], d.port))
}

/// Days since 1970-01-01 → (year, month, day) (the proleptic Gregorian calendar).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

const WEEKDAYS: [&str; 7] = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"];

fn today() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64 / 86_400
}

/// `get_current_time`'s structuredContent for UTC: exactly the four fields, the date one of the days the
/// call spanned, the weekday that date's.
fn assert_utc_time(value: &Value, days: (i64, i64)) {
    let fields: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(fields, ["datetime", "day_of_week", "is_dst", "timezone"], "{value}");
    assert_eq!(value["timezone"], "UTC");
    assert_eq!(value["is_dst"], false);
    let datetime = value["datetime"].as_str().unwrap();
    assert!(datetime.ends_with("+00:00") && datetime.len() == 25, "{datetime}");
    let day = (days.0..=days.1)
        .find(|d| {
            let (y, m, dd) = civil(*d);
            datetime.starts_with(&format!("{y:04}-{m:02}-{dd:02}T"))
        })
        .unwrap_or_else(|| panic!("{datetime} is not today"));
    assert_eq!(value["day_of_week"], WEEKDAYS[day.rem_euclid(7) as usize], "{value}");
}

/// The forward tool and the mission tool over `up.now` answer the current UTC time.
fn assert_time_tools(d: &Deployment) {
    let before = today();
    let (status, text) = call(addr(d), "fwd", 1, &json!({"timezone": "UTC"}));
    assert_eq!(status, 200, "{text}");
    let value = structured(&text).unwrap_or_else(|| panic!("no structured result: {text}"));
    assert_utc_time(&value, (before, today()));
    let before = today();
    let (status, text) = call(addr(d), "mission", 2, &mission_args("up.now", json!({"timezone": "UTC"})));
    assert_eq!(status, 200, "{text}");
    let value = structured(&text).unwrap_or_else(|| panic!("no structured result: {text}"));
    assert_eq!(value["ok"], true, "{value}");
    assert_utc_time(&value["value"], (before, today()));
    // The text block is the same value as JSON (mcp-server-time's own content).
    let content = value["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{value}");
    assert_eq!(content[0]["type"], "text");
    let text: Value = serde_json::from_str(content[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, value["value"]);
}

fn time_tools() -> Value {
    json!({"get_current_time": {"as": "up.now", "effect": "read"}})
}

#[test]
fn mcp_server_time_over_stdio_through_forward_and_mission_tools() {
    let install = json!({
        "source": "mcp", "installation_revision": "mcp-server-time-2026.10.19",
        "transport": {"type": "stdio", "command": launcher("mcp-server-time"),
                      "args": ["--local-timezone", "Etc/UTC"], "start_timeout_ms": 20000},
        "tools": time_tools(),
        "ceilings": {"timeout_ms": 20000, "max_result_bytes": 262144}
    });
    let mut d = deployment(install, "up.now");
    let pins = pin(&mut d, "unused");
    assert!(pins["fwd"]["provider_snapshot_pins"]["mission/up"].as_str().unwrap().starts_with("sha256:"));
    let gateway = start(&d, "unused");
    assert_time_tools(&d);
    stop(&d, gateway);
    let transports: Vec<Value> = event_records(&d).into_iter().filter(|e| e["kind"] == "transport").collect();
    assert_eq!(transports.len(), 2, "{transports:?}");
    assert!(transports.iter().all(|t| t["fault"] == "close"), "{transports:?}");
}

fn http_upstream() -> HttpTimeServer {
    let python = venv_python();
    HttpTimeServer::start(&python, &root().join("tests/upstreams/http_time_server.py"), UPSTREAM_TOKEN)
}

fn http_install(endpoint: &str) -> Value {
    json!({
        "source": "mcp", "installation_revision": "http-time-1",
        "transport": {"type": "streamable_http", "endpoint": endpoint, "allow_insecure_loopback": true,
                      "headers": [{"name": "Authorization", "binding": "upstream", "scheme": "bearer"}]},
        "tools": time_tools(),
        "ceilings": {"timeout_ms": 20000, "max_result_bytes": 262144}
    })
}

#[test]
fn mcp_server_time_over_streamable_http_with_a_static_bearer() {
    let upstream = http_upstream();
    let mut d = deployment(http_install(&upstream.endpoint()), "up.now");
    pin(&mut d, UPSTREAM_TOKEN);
    let gateway = start(&d, UPSTREAM_TOKEN);
    assert_time_tools(&d);
    stop(&d, gateway);
    // HTTP transports end with `close` and no exit status; they have no stderr (audit-events.md §3.8).
    let records = event_records(&d);
    let transports: Vec<&Value> = records.iter().filter(|e| e["kind"] == "transport").collect();
    assert_eq!(transports.len(), 2, "{transports:?}");
    assert!(transports.iter().all(|t| t["fault"] == "close" && t["exit_status"].is_null()), "{transports:?}");
    let text = serde_json::to_string(&records).unwrap();
    assert!(!text.contains(UPSTREAM_TOKEN), "the credential never reaches the event log");

    // A wrong credential: stage 9 refuses with 78 `provider_runtime_unavailable`, the log names the class.
    let _ = std::fs::remove_dir_all(d.path("artifacts"));
    let out = run_with_deadline(command(&d, "wrong-token"), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(78), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("provider_runtime_unavailable"), "{stderr}");
    assert!(!stderr.contains("wrong-token"), "{stderr}");
    let failed = wait("startup_failed", Duration::from_secs(5), || {
        event_records(&d).into_iter().find(|e| e["kind"] == "startup_failed")
    });
    assert_eq!(failed["code"], "provider_runtime_unavailable", "{failed}");
    assert_eq!(failed["reason_class"], "mcp_authentication_failed", "{failed}");
}

/// providers.md §5.1: an `https` endpoint is verified, chain and host name, before anything is sent.
/// mcp-server-time behind a certificate for `localhost` from a private CA answers through both tools when
/// the gateway trusts that CA; with another CA trusted, serving is refused at stage 9 (78,
/// `mcp_transport_error`), and with the endpoint naming `127.0.0.1`, which the certificate does not,
/// discovery is refused (78, nothing printed).
#[test]
fn mcp_server_time_over_https_is_verified_against_the_trusted_roots() {
    let pki = Pki::new(&["localhost"]);
    let (cert, key) = pki.server();
    let python = venv_python();
    let script = root().join("tests/upstreams/http_time_server.py");
    let upstream = HttpTimeServer::start_tls(&python, &script, UPSTREAM_TOKEN, &cert, &key);
    let https = |endpoint: &str| {
        let mut install = http_install(endpoint);
        install["transport"]["allow_insecure_loopback"] = json!(false);
        install
    };
    let mut d = deployment(https(&upstream.endpoint()), "up.now");
    std::fs::copy(pki.ca(), d.path(TRUST_FILE)).unwrap();
    pin(&mut d, UPSTREAM_TOKEN);
    let gateway = start(&d, UPSTREAM_TOKEN);
    assert_time_tools(&d);
    stop(&d, gateway);

    // Another CA: the pinned deployment no longer starts (stage 9, 78), and the log names the class.
    let other = Pki::new(&["localhost"]);
    std::fs::copy(other.ca(), d.path(TRUST_FILE)).unwrap();
    let _ = std::fs::remove_dir_all(d.path("artifacts"));
    let out = run_with_deadline(command(&d, UPSTREAM_TOKEN), Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(78), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let failed = wait("startup_failed", Duration::from_secs(5), || {
        event_records(&d).into_iter().find(|e| e["kind"] == "startup_failed")
    });
    assert_eq!(failed["code"], "provider_runtime_unavailable", "{failed}");
    assert_eq!(failed["reason_class"], "mcp_transport_error", "{failed}");

    // The trusted CA, but the endpoint names 127.0.0.1: discovery is refused and prints nothing.
    let mut by_ip = deployment(https(&format!("https://127.0.0.1:{}/mcp", upstream.addr.port())), "up.now");
    by_ip.write_documents();
    std::fs::copy(pki.ca(), by_ip.path(TRUST_FILE)).unwrap();
    let mut cmd = command(&by_ip, UPSTREAM_TOKEN);
    cmd.arg("--print-pins").env_remove("GATEWAY_TOKEN");
    let out = run_with_deadline(cmd, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(78), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "nothing is printed");
    // The machine line first, then the refusal explained for a person (pins.md §10.4).
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "{\"error\":\"provider_runtime_unavailable\"}\nprovider_runtime_unavailable: an upstream could not be \
         started\n  tool: fwd\n  installation: up\n  reason: the upstream could not be acquired (started, \
         initialised and listed)\n  class: mcp_transport_error\n"
    );
}

#[test]
fn server_everything_under_auto_is_legacy_and_echoes() {
    let install = json!({
        "source": "mcp", "installation_revision": "server-everything-2026.8.31",
        "transport": {"type": "stdio", "command": launcher("mcp-server-everything"), "args": ["stdio"],
                      "start_timeout_ms": 20000, "protocol": "auto"},
        "tools": {"echo": {"as": "up.echo", "effect": "read"}},
        "ceilings": {"timeout_ms": 20000, "max_result_bytes": 262144}
    });
    let mut d = deployment(install, "up.echo");
    pin(&mut d, "unused");
    let gateway = start(&d, "unused");
    // The mission tool: `tool` returns echo's one text block exactly, and no structured value.
    let (status, text) = call(addr(&d), "mission", 1, &mission_args("up.echo", json!({"message": "hello"})));
    assert_eq!(status, 200, "{text}");
    let value = structured(&text).unwrap_or_else(|| panic!("no structured result: {text}"));
    assert_eq!(value, json!({"content": [{"text": "Echo: hello", "type": "text"}], "ok": true}), "{value}");
    // The forward tool: echo's text `Echo: {"a":1}` is not strict JSON and there is no structuredContent,
    // so execution.md §13 derives no value: `invalid_result`, which the MCP front answers as its fixed
    // tool error.
    let (status, text) = call(addr(&d), "fwd", 2, &json!({"message": "{\"a\":1}"}));
    assert_eq!(status, 200, "{text}");
    let tool_error = r#"data: {"id":2,"jsonrpc":"2.0","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ptc-gateway","version":"0.1.0"}},"content":[{"text":"Tool execution failed","type":"text"}],"isError":true,"resultType":"complete"}}"#;
    assert!(text.contains(tool_error), "{text}");
    stop(&d, gateway);
}
