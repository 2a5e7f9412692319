//! Deployments whose tools reach the stdio fault fixture (`tests/fixtures/mcp_fixture.py`), or the HTTP one
//! (`tests/fixtures/mcp_http_fixture.py`, `Fx::http`), through the real gateway (providers.md §16): one
//! installation `fx`, a Luau mission tool `mission` and a forward tool `fwd`, pins filled in from
//! `--print-pins`, the fixture's marker file and the event log.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub use super::http_fixture::python;
use super::http_fixture::HttpFixture;
use super::{content_pin, run_with_deadline, Deployment, Gateway};

/// The fixture's tools, all mapped as `fx.<name>`.
pub const TOOLS: [&str; 8] = ["echo", "slow", "crash", "segv", "big", "stall", "garbage", "closein"];

/// The token the HTTP fixture's `auth` flag requires (`Authorization: Bearer s3cret`).
pub const HTTP_TOKEN: &str = "s3cret";

/// `{"<name>": {"as": "fx.<name>", "effect": "read"}}` for each of `names`.
fn aliases(names: &[&str]) -> Value {
    names.iter().map(|n| (n.to_string(), json!({"as": format!("fx.{n}"), "effect": "read"}))).collect()
}

/// The mission tool's workflow: hands `{alias, args}` to the mission, returns what `tool` returned.
const APP: &str = "local M = {}\nfunction M.run(input)\n  return mission(\"default\"):call(\"calls.run\", input)\nend\nreturn M\n";
const CALLS: &str =
    "local M = {}\nfunction M.run(input)\n  return tool(input.alias, input.args)\nend\nreturn M\n";
const OPEN: &str = r#"{"type":"object","additionalProperties":true}"#;

/// A deployment over a fixture (stdio in `mode`, or an HTTP one), with the event log (stderr tails on).
pub struct Fx {
    pub d: Deployment,
    pub marker: PathBuf,
}

impl Fx {
    pub fn new(mode: &str) -> Fx {
        let d = Deployment::baseline();
        let marker = d.path("marker.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_fixture.py");
        let install = json!({
            "source": "mcp", "installation_revision": "fixture-1",
            "transport": {"type": "stdio", "command": python(),
                          "args": [script.display().to_string(), mode, marker.display().to_string()],
                          "env": {"FIXTURE_FLAGS": {"binding": "flags"}}},
            "tools": aliases(&TOOLS)
        });
        let mut fx = Fx::over(d, marker, install);
        // Extra fixture flags through a credential (FX_FLAGS, see `Fx::command`): no pin covers them.
        fx.d.host["credentials"]["flags"] = json!({"env": "FX_FLAGS"});
        fx
    }

    /// The same deployment over the HTTP fixture `up` (already started in its mode): installation `fx` is
    /// `streamable_http` to its endpoint with `Authorization: Bearer` built from the credential `upstream`
    /// (`FX_UPSTREAM_TOKEN`, [`HTTP_TOKEN`] in `Fx::command`), and maps `tools` as `fx.<name>`. The marker
    /// is the fixture's; the gateway spawns no process for it.
    pub fn http(up: &HttpFixture, tools: &[&str]) -> Fx {
        let install = json!({
            "source": "mcp", "installation_revision": "http-fixture-1",
            "transport": {"type": "streamable_http", "endpoint": up.endpoint(""),
                          "allow_insecure_loopback": true,
                          "headers": [{"name": "Authorization", "binding": "upstream", "scheme": "bearer"}]},
            "tools": aliases(tools)
        });
        let mut fx = Fx::over(Deployment::baseline(), up.marker.clone(), install);
        fx.d.host["credentials"]["upstream"] = json!({"env": "FX_UPSTREAM_TOKEN"});
        fx
    }

    /// Installation `fx` (`install`), the tools `mission` and `fwd` over it, the event log with stderr tails.
    fn over(mut d: Deployment, marker: PathBuf, install: Value) -> Fx {
        d.host["install"] = json!({ "fx": install });
        mission_and_forward(&mut d, "fx", "fx.echo", "A provider fixture tool.");
        d.gateway["artifacts"]["events"]["stderr"] = json!(true);
        Fx { d, marker }
    }

    /// A second installation `hold` (the same fixture, its own marker, `timeout_ms` 60000) and a mission
    /// tool `holder` over it: a provider call that holds an admission slot as long as a test wants.
    pub fn add_holder(&mut self) -> PathBuf {
        let marker = self.d.path("holder.jsonl");
        let mut hold = self.d.host["install"]["fx"].clone();
        hold["transport"]["args"][2] = json!(marker.display().to_string());
        hold["ceilings"] = json!({"timeout_ms": 60000});
        self.d.host["install"]["hold"] = hold;
        let manifest = std::fs::read_to_string(self.d.path("mission/ptc.json")).expect("manifest");
        let manifest = manifest.replace("\"fx\"", "\"hold\"");
        self.d.write_file("holder/ptc.json", &manifest);
        self.d.write_file("holder/open.json", OPEN);
        self.d.write_file("holder/app.luau", APP);
        self.d.write_file("holder/calls.luau", CALLS);
        let mut tool = self.d.gateway["tools"][1].clone();
        tool["name"] = json!("holder");
        tool["application"]["manifest"] = json!("holder/ptc.json");
        tool["expected_application_content_digest"] = json!(content_pin::of(&self.d.path("holder/ptc.json")));
        self.d.gateway["tools"].as_array_mut().expect("tools").push(tool);
        marker
    }

    /// Makes `mission` a write tool (config.md §6.8: `allow_write`, `private_audit` in `audit/`, the write
    /// alias reachable only through an explicit `config.allow`): `fx.echo` becomes a write alias.
    pub fn make_mission_write(&mut self) {
        self.d.host["install"]["fx"]["tools"]["echo"]["effect"] = json!("write");
        let path = self.d.path("mission/ptc.json");
        let mut manifest: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("manifest")).expect("json");
        manifest["effect"] = json!("write");
        let allow: Vec<String> = TOOLS.iter().map(|n| format!("fx.{n}")).collect();
        manifest["providers"]["mission"] = json!([{"name": "fx", "config": {"allow": allow}}]);
        self.d.write_file("mission/ptc.json", &serde_json::to_string_pretty(&manifest).expect("json"));
        // The forward tool (read) no longer reaches `fx.echo`: it forwards to the read alias `fx.big`.
        let fwd = self.d.path("fwd/ptc.json");
        let mut forward: Value =
            serde_json::from_slice(&std::fs::read(&fwd).expect("manifest")).expect("json");
        forward["workflow"]["forward"]["tool"] = json!("fx.big");
        let read: Vec<String> = TOOLS.iter().filter(|n| **n != "echo").map(|n| format!("fx.{n}")).collect();
        forward["providers"]["mission"] = json!([{"name": "fx", "config": {"allow": read}}]);
        self.d.write_file("fwd/ptc.json", &serde_json::to_string_pretty(&forward).expect("json"));
        let dir = self.d.dir.path().to_path_buf();
        for tool in self.d.gateway["tools"].as_array_mut().expect("tools") {
            let name = tool["name"].as_str().expect("name").to_owned();
            tool["expected_application_content_digest"] =
                json!(content_pin::of(&dir.join(format!("{name}/ptc.json"))));
            if name == "mission" {
                tool["allow_write"] = json!(true);
            }
        }
        self.d.gateway["private_audit"] =
            json!({"directory": "audit", "max_file_bytes": 1048576, "max_retained_files": 4});
    }

    /// Every record of the private audit, in file order.
    pub fn audit_records(&self) -> Vec<Value> {
        super::audit::all_records(&self.d.path("audit"))
    }

    /// `ceilings` of the installation.
    pub fn ceilings(&mut self, timeout_ms: u64, max_result_bytes: u64) {
        self.d.host["install"]["fx"]["ceilings"] =
            json!({"timeout_ms": timeout_ms, "max_result_bytes": max_result_bytes});
    }

    /// Runs `--print-pins`, copies the three maps into each tool, writes the documents, and clears the
    /// marker so it shows only what serving does.
    pub fn pin(&mut self) -> Value {
        self.d.write_documents();
        let out = self.print_pins();
        let pins = copy_pins(&mut self.d, &out);
        assert!(out.stderr.is_empty(), "print-pins writes nothing to stderr");
        let _ = std::fs::remove_file(&self.marker);
        pins
    }

    pub fn print_pins(&self) -> Output {
        let mut cmd = self.command("none");
        cmd.arg("--print-pins").env_remove("GATEWAY_TOKEN");
        run_with_deadline(cmd, Duration::from_secs(30))
    }

    /// `ptc gateway` with extra fixture `flags` (comma-separated; "none" for none).
    pub fn command(&self, flags: &str) -> std::process::Command {
        let mut cmd = self.d.command();
        cmd.env("FX_FLAGS", flags).env("FX_UPSTREAM_TOKEN", HTTP_TOKEN);
        cmd
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.d.port))
    }

    pub fn marker(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.marker).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Waits (with a deadline) until the marker satisfies `cond`.
    pub fn wait_marker(&self, what: &str, cond: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        wait(what, Duration::from_secs(20), || {
            let events = self.marker();
            cond(&events).then_some(events)
        })
    }

    /// The `_meta.traceparent` of each `tools/call` the fixture received, once it received `n`.
    pub fn traceparents(&self, n: usize) -> Vec<String> {
        let events = self.wait_marker(&format!("{n} calls"), |e| {
            e.iter().filter(|e| e["method"] == "tools/call").count() == n
        });
        events
            .iter()
            .filter(|e| e["method"] == "tools/call")
            .map(|e| e["params"]["_meta"]["traceparent"].as_str().expect("traceparent").to_owned())
            .collect()
    }

    /// The `tools/call` requests the fixture received.
    pub fn calls_received(&self) -> usize {
        self.marker().iter().filter(|e| e["event"] == "recv" && e["method"] == "tools/call").count()
    }

    /// The serving fixture's pid (its last spawn).
    pub fn fixture_pid(&self) -> i32 {
        let events = self.wait_marker("a spawn", |e| e.iter().any(|e| e["event"] == "spawn"));
        let spawn = events.iter().rev().find(|e| e["event"] == "spawn").expect("spawn");
        spawn["pid"].as_i64().expect("pid") as i32
    }

    /// Every record of the event log, in file order.
    pub fn events(&self) -> Vec<Value> {
        event_records(&self.d)
    }

    /// Waits until the event log holds a record for which `cond` holds.
    pub fn wait_event(&self, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
        wait(what, Duration::from_secs(20), || self.events().into_iter().find(|e| cond(e)))
    }

    /// After the gateway exited: no process of any recorded group remains, none is a zombie.
    pub fn assert_all_gone(&self) {
        for event in self.marker() {
            if event["event"] == "spawn" || event["event"] == "grandchild" {
                let pid = event["pid"].as_i64().expect("pid") as i32;
                wait(&format!("process {pid} gone"), Duration::from_secs(5), || {
                    (!Path::new(&format!("/proc/{pid}")).exists()).then_some(())
                });
                if event["event"] == "spawn" {
                    wait(&format!("group {pid} empty"), Duration::from_secs(5), || {
                        nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), None).is_err().then_some(())
                    });
                }
            }
        }
    }
}

/// The tools `mission` (a Luau workflow handing `{alias, args}` to its mission, which returns what
/// `tool(alias, args)` returned) and `fwd` (the forward form over `forward_alias`), both over
/// `installation` and read, the PCC server `srv-1` serving `mission`.
pub fn mission_and_forward(d: &mut Deployment, installation: &str, forward_alias: &str, description: &str) {
    let contracts = json!({"input_schema": {"path": "open.json"}, "result_schema": {"path": "open.json"}});
    let providers = json!({"mission": [{"name": installation}]});
    let mission = json!({
        "version": 1, "effect": "read", "contracts": contracts,
        "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
        "missions": {"default": {"components": [{"id": "calls", "path": "calls.luau"}], "providers": [installation]}},
        "providers": providers
    });
    let forward = json!({
        "version": 1, "effect": "read", "contracts": contracts,
        "workflow": {"forward": {"mission": "default", "tool": forward_alias}},
        "missions": {"default": {"components": [], "providers": [installation]}},
        "providers": providers
    });
    for (dir, manifest) in [("mission", &mission), ("fwd", &forward)] {
        d.write_file(&format!("{dir}/ptc.json"), &serde_json::to_string_pretty(manifest).expect("json"));
        d.write_file(&format!("{dir}/open.json"), OPEN);
    }
    d.write_file("mission/app.luau", APP);
    d.write_file("mission/calls.luau", CALLS);
    let tool = |name: &str| {
        json!({"name": name, "title": name, "description": description,
               "application": {"manifest": format!("{name}/ptc.json")},
               "expected_application_content_digest": content_pin::of(&d.path(&format!("{name}/ptc.json"))),
               "installation_config_pins": {}, "provider_snapshot_pins": {}})
    };
    d.gateway["tools"] = json!([tool("fwd"), tool("mission")]);
    d.gateway["pcc"]["servers"] = json!({"srv-1": {"tools": ["mission"]}});
}

/// The output of `--print-pins` (pins.md §10): exit 0, and its three maps copied into each tool of `d`,
/// the documents written again. Returns the pins.
pub fn copy_pins(d: &mut Deployment, out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "print-pins: {}", String::from_utf8_lossy(&out.stderr));
    let pins: Value = serde_json::from_slice(&out.stdout).expect("pins json");
    for tool in d.gateway["tools"].as_array_mut().expect("tools") {
        let name = tool["name"].as_str().expect("name").to_owned();
        for key in
            ["expected_application_content_digest", "installation_config_pins", "provider_snapshot_pins"]
        {
            tool[key] = pins[&name][key].clone();
        }
    }
    d.write_documents();
    pins
}

/// Every record of `d`'s event log, in file order.
pub fn event_records(d: &Deployment) -> Vec<Value> {
    let dir = d.path("artifacts/events");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f).unwrap_or_default().lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect()
}

/// Polls `probe` until it yields, failing after `deadline`.
pub fn wait<T>(what: &str, deadline: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(start.elapsed() < deadline, "never saw {what} within {deadline:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `arguments` of a call to the mission tool: `tool(alias, args)`.
pub fn mission_args(alias: &str, args: Value) -> Value {
    json!({"alias": alias, "args": args})
}

/// One `tools/call` of `tool` with `arguments` and `Connection: close`; the status and the whole
/// response read to EOF (status 0 when the connection failed).
pub fn call(addr: SocketAddr, tool: &str, id: usize, arguments: &Value) -> (u16, String) {
    let arguments = serde_json::to_string(arguments).expect("json");
    super::send_to_eof(
        addr,
        &super::tools_call_request(addr, tool, id, &arguments, true),
        Duration::from_secs(60),
    )
}

/// The `error` table a mission saw, as `(code, dispatch, retryable)`.
pub fn mission_error(text: &str) -> (String, String, bool) {
    let v = structured(text).unwrap_or_else(|| panic!("no structured result in {text}"));
    assert_eq!(v["ok"], false, "{v}");
    let e = &v["error"];
    (
        e["code"].as_str().expect("error table").into(),
        e["dispatch"].as_str().expect("error table").into(),
        e["retryable"].as_bool().expect("error table"),
    )
}

/// The `structuredContent` of the final message event of a call's response, de-chunked.
pub fn structured(text: &str) -> Option<Value> {
    let data = text.split("data: ").nth(1)?;
    let end = data.find("\n\n")?;
    let message: Value = serde_json::from_str(&data[..end]).ok()?;
    message["result"].get("structuredContent").cloned()
}

/// One active provider-call slot with `waiting` queue places, held by a `holder` tool's `slow` call that
/// has reached the fixture; `timeout_ms` is the installation's call ceiling; `configure` changes the
/// deployment before it is pinned.
pub fn admission_held_by_a_holder(
    waiting: u64,
    timeout_ms: Option<u64>,
    configure: impl FnOnce(&mut Fx),
) -> (Fx, Gateway, std::thread::JoinHandle<(u16, String)>) {
    let mut fx = Fx::new("modern");
    let hold_marker = fx.add_holder();
    if let Some(timeout_ms) = timeout_ms {
        fx.ceilings(timeout_ms, 262144);
    }
    fx.d.gateway["admission"]["max_active_provider_calls"] = json!(1);
    fx.d.gateway["admission"]["max_waiting_provider_calls"] = json!(waiting);
    configure(&mut fx);
    fx.pin();
    let gateway = Gateway::start(fx.command("none"), fx.addr());
    let addr = fx.addr();
    let holder = std::thread::spawn(move || call(addr, "holder", 1, &mission_args("fx.slow", json!({}))));
    wait("holder dispatched", Duration::from_secs(10), || {
        std::fs::read_to_string(&hold_marker).ok().filter(|t| t.contains("tools/call")).map(|_| ())
    });
    (fx, gateway, holder)
}
