//! `ptc check` (lifecycle.md §1.5), vectors CK1–CK27, CK29 and CK30 against the real binary: one row per
//! startup code it can answer, each with its exact stdout (`{dir}` stands for the deployment directory),
//! an empty stderr, the deployment directory unchanged, and no credential value in any output. CK28 (every
//! row of config.md §11) is in `tests/black_box/config_vectors.rs`.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{json, Value};
use support::providers::Fx;
use support::vectors::{
    add_audit, add_remote, echo_with, echo_with_mission, private_dir, set_echo_manifest, seventy_large_tools,
    tool,
};
use support::{run_with_deadline, Deployment, Gateway, TOKEN};

/// A bearer of 20 bytes (config.md §8.4 wants 32 to 4,096): refused, and never shown.
const SHORT_BEARER: &str = "SECRET-bearer-012345";

/// Generous: a check of the provider rows starts and stops the stdio fixture.
const DEADLINE: Duration = Duration::from_secs(30);

/// The deployment directory as the gateway sees it (its working directory, symbolic links resolved).
fn dir_of(d: &Deployment) -> String {
    std::fs::canonicalize(d.dir.path()).expect("canonical dir").display().to_string()
}

/// Runs `cmd` and asserts the row's contract: exit `status`, stdout exactly `want` (with `{dir}`), stderr
/// empty, the deployment unchanged, and neither the bearer nor the short bearer anywhere.
fn assert_check(d: &Deployment, cmd: Command, status: i32, want: &str, context: &str) -> Output {
    let before = d.tree();
    let output = run_with_deadline(cmd, DEADLINE);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stdout, want.replace("{dir}", &dir_of(d)), "{context}: stdout");
    assert_eq!(output.status.code(), Some(status), "{context}: exit status");
    assert_eq!(stderr, "", "{context}: stderr");
    // The stdio fixture records its own start in `marker.jsonl`: the upstream's write, not ptc's.
    let after: std::collections::BTreeSet<_> =
        d.tree().into_iter().filter(|p| !p.ends_with("marker.jsonl")).collect();
    let before: std::collections::BTreeSet<_> =
        before.into_iter().filter(|p| !p.ends_with("marker.jsonl")).collect();
    assert_eq!(after, before, "{context}: ptc check creates nothing");
    for secret in [TOKEN, SHORT_BEARER, support::providers::HTTP_TOKEN] {
        assert!(!stdout.contains(secret) && !stderr.contains(secret), "{context}: a credential leaked");
    }
    output
}

/// One row over the provider-free baseline: a mutation, extra environment, and the expected text.
struct Row {
    id: &'static str,
    mutate: fn(&mut Deployment),
    env: &'static [(&'static str, &'static str)],
    status: i32,
    want: &'static str,
}

fn run_row(row: &Row) {
    let mut d = Deployment::baseline();
    (row.mutate)(&mut d);
    if !d.frozen {
        d.write_documents();
    }
    let mut cmd = d.check_command();
    for (key, value) in row.env {
        match *value {
            "" => cmd.env_remove(key),
            value => cmd.env(key, value),
        };
    }
    assert_check(&d, cmd, row.status, row.want, row.id);
}

fn write_tool(d: &mut Deployment) {
    set_echo_manifest(d, echo_with(|m| m["effect"] = json!("write")));
}

const ROWS: &[Row] = &[
    Row {
        id: "CK1",
        mutate: |_| {},
        env: &[],
        status: 0,
        want: "ok: serving would start with 1 tool(s): echo\n",
    },
    Row {
        id: "CK2",
        mutate: |d| {
            d.write_documents();
            std::fs::remove_file(d.config_path()).expect("remove");
        },
        env: &[],
        status: 78,
        want: "config_unavailable: the gateway document cannot be read or is not strict JSON\n  stage: 1 gateway document\n  document: {dir}/ptc-gateway.json\n  reason: the file does not exist or cannot be opened (No such file or directory)\n",
    },
    Row {
        id: "CK3",
        mutate: |d| {
            d.write_documents();
            d.write_file("ptc-gateway.json", "{\"version\": 1, \"version\": 1}");
        },
        env: &[],
        status: 78,
        want: "duplicate_json_key: the gateway document repeats a key in one object\n  stage: 1 gateway document\n  document: {dir}/ptc-gateway.json\n  reason: not strict JSON: duplicate_key at byte 15 (line 1, column 16)\n  excerpt: {\"version\": 1, \"version\": 1}\n                          ^\n",
    },
    Row {
        id: "CK4",
        mutate: |d| d.gateway["listen"]["port"] = json!(70000),
        env: &[],
        status: 78,
        want: "config_invalid: the gateway document is not valid\n  stage: 1 gateway document\n  document: {dir}/ptc-gateway.json\n  pointer: /listen/port\n  reason: the number is outside the allowed range\n",
    },
    Row {
        id: "CK5",
        mutate: |d| d.gateway["listen"]["allowed_origins"] = json!(["http://localhost:3000/app"]),
        env: &[],
        status: 78,
        want: "origin_invalid: an allowed origin is not a valid origin\n  stage: 1 gateway document\n  document: {dir}/ptc-gateway.json\n  pointer: /listen/allowed_origins/0\n  reason: not an origin: scheme://host[:port], lowercase, no path, no default port\n",
    },
    Row {
        id: "CK6",
        mutate: |d| {
            let copy = tool(d).clone();
            d.gateway["tools"].as_array_mut().expect("tools").push(copy);
        },
        env: &[],
        status: 78,
        want: "tool_name_duplicate: two tools have the same name\n  stage: 1 gateway document\n  document: {dir}/ptc-gateway.json\n  tool: echo\n  pointer: /tools/1/name\n  reason: an earlier tool has this name\n",
    },
    Row {
        id: "CK7",
        mutate: |d| {
            write_tool(d);
            tool(d)["allow_write"] = json!(true);
        },
        env: &[],
        status: 78,
        want: "audit_invalid: private_audit and the write tools disagree\n  stage: 1 gateway document\n  document: {dir}/ptc-gateway.json\n  pointer: /tools/0/allow_write\n  reason: a tool with allow_write needs private_audit\n",
    },
    Row {
        id: "CK8",
        mutate: |d| d.host["install"]["notes"]["colour"] = json!("blue"),
        env: &[],
        status: 78,
        want: "host_invalid: the host document is not valid\n  stage: 2 host document\n  document: {dir}/ptc-host.json\n  pointer: /install/notes/colour\n  reason: the member \"colour\" is not allowed here\n",
    },
    Row {
        id: "CK9",
        mutate: |d| d.host["credentials"]["gateway"] = json!({"literal": TOKEN}),
        env: &[],
        status: 78,
        want: "credential_unavailable: a credential cannot be read\n  stage: 3 bearer binding\n  document: {dir}/ptc-host.json\n  binding: gateway\n  reason: the bearer binding is a literal; the bearer must come from env or file\n",
    },
    Row {
        id: "CK10",
        mutate: |_| {},
        env: &[("GATEWAY_TOKEN", "")],
        status: 78,
        want: "credential_unavailable: a credential cannot be read\n  stage: 9 warm providers\n  binding: gateway\n  source: env GATEWAY_TOKEN\n  reason: its environment variable is not set (nor in the --env-file)\n",
    },
    Row {
        id: "CK11",
        mutate: |_| {},
        env: &[("GATEWAY_TOKEN", SHORT_BEARER)],
        status: 78,
        want: "credential_unavailable: a credential cannot be read\n  stage: 9 warm providers\n  binding: gateway\n  source: env GATEWAY_TOKEN\n  reason: the bearer is shorter than 32 or longer than 4,096 bytes\n",
    },
    Row {
        id: "CK13",
        mutate: |d| {
            private_dir(d, "artifacts");
            std::fs::set_permissions(d.path("artifacts"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        },
        env: &[],
        status: 78,
        want: "artifact_root_unavailable: the artifact root cannot be used\n  stage: 4 artifact root\n  reason: the directory mode is not exactly 0700\n  path: {dir}/artifacts\n",
    },
    Row {
        id: "CK14",
        mutate: |d| std::fs::remove_file(d.path("echo/ptc.json")).expect("remove"),
        env: &[],
        status: 78,
        want: "template_invalid: a tool's application is not valid\n  stage: 5 templates\n  document: {dir}/echo/ptc.json\n  tool: echo\n  reason: the file does not exist or cannot be opened (No such file or directory)\n",
    },
    Row {
        id: "CK15",
        mutate: |d| set_echo_manifest(d, echo_with(|m| m["effect"] = json!(7))),
        env: &[],
        status: 78,
        want: "template_invalid: a tool's application is not valid\n  stage: 5 templates\n  document: {dir}/echo/ptc.json\n  tool: echo\n  pointer: /effect\n  reason: the value has the wrong JSON type\n",
    },
    Row {
        id: "CK17",
        mutate: |d| {
            add_remote(d, "https://mcp.example.com/mcp");
            d.host["install"]["remote"]["transport"]["oauth"] = json!({});
            set_echo_manifest(d, echo_with_mission(json!([{"name": "remote"}]), &["remote"]));
        },
        env: &[],
        status: 78,
        want: "provider_source_unsupported: a tool selects a provider source that is not served\n  stage: 5 templates\n  document: {dir}/echo/ptc.json\n  tool: echo\n  reason: an OAuth installation is selected\n",
    },
    Row {
        id: "CK18",
        mutate: write_tool,
        env: &[],
        status: 78,
        want: "write_forbidden: a write application is configured without allow_write\n  stage: 5 templates\n  document: {dir}/echo/ptc.json\n  tool: echo\n  reason: a write application needs allow_write\n",
    },
    Row {
        id: "CK21",
        mutate: |_| {},
        env: &[("PTC_FAULT", "getrlimit")],
        status: 78,
        want: "listener_capacity_unavailable: the descriptor limit cannot be read\n  stage: 6 listener capacity\n  reason: the soft RLIMIT_NOFILE could not be read\n",
    },
    Row {
        id: "CK22",
        mutate: |d| {
            write_tool(d);
            tool(d)["allow_write"] = json!(true);
            add_audit(d);
            private_dir(d, "real-audit");
            std::os::unix::fs::symlink("real-audit", d.path("audit")).expect("symlink");
        },
        env: &[],
        status: 78,
        want: "audit_unavailable: the audit directory cannot be used\n  stage: 7 audit\n  reason: the directory is a symbolic link\n  path: {dir}/audit\n",
    },
    Row {
        id: "CK23",
        mutate: |d| tool(d)["installation_config_pins"] = json!({"notes": support::ECHO_PIN}),
        env: &[],
        status: 78,
        want: "provider_pin_mismatch: a tool's provider snapshot pins differ from what its upstreams list\n  stage: 9 warm providers\n  tool: echo\n  field: installation_config_pins\n  reason: a tool without provider declarations has both pin maps {}\n  expected: {\"notes\":\"sha256:128bcc1b3ac8b2e869fe4acc08762a9b77b2e0324e95cf3d4f867ae31976f853\"}\n  computed: {}\n  hint: if the change was intended, `ptc pin CONFIG` writes the computed pins\n",
    },
    Row {
        id: "CK27 (admission faults)",
        mutate: |_| {},
        env: &[("PTC_FAULT", "run_admission")],
        status: 0,
        want: "ok: serving would start with 1 tool(s): echo\n",
    },
    Row {
        id: "CK29",
        mutate: |_| {},
        env: &[("PTC_FAULT", "panic_in_stage")],
        status: 78,
        want: "internal_error: the check failed inside the gateway\n",
    },
];

#[test]
fn every_row_of_the_provider_free_table() {
    for row in ROWS {
        run_row(row);
    }
}

/// CK16: an edited component; `computed` is the pin of the edited application by the tests' independent
/// implementation (pins.md §6).
#[test]
fn ck16_an_edited_application_names_both_digests() {
    let mut d = Deployment::baseline();
    d.write_documents();
    d.write_file("echo/app.luau", &support::ECHO_LUAU.replace("return input", "return  input"));
    let computed = support::content_pin::of(&d.path("echo/ptc.json"));
    assert_ne!(computed, support::ECHO_PIN);
    let want = format!(
        "application_content_digest_mismatch: a tool's application changed since it was pinned\n  stage: 5 templates\n  document: {{dir}}/echo/ptc.json\n  tool: echo\n  field: expected_application_content_digest\n  reason: the application content digest does not match\n  expected: {}\n  computed: {computed}\n  hint: if the change was intended, `ptc pin CONFIG` writes the computed pins\n",
        support::ECHO_PIN
    );
    assert_check(&d, d.check_command(), 78, &want, "CK16");
}

/// CK19: a listing above 4,194,304 bytes names the size of the encoded tools array, which is above it.
#[test]
fn ck19_a_listing_too_large_names_its_size() {
    let mut d = Deployment::baseline();
    seventy_large_tools(&mut d);
    d.write_documents();
    let output = run_with_deadline(d.check_command(), DEADLINE);
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    let needed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("  needed: the encoded tools array: "))
        .and_then(|rest| rest.strip_suffix(" bytes"))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("CK19: no size\n{stdout}"));
    assert!(needed > 4_194_304, "CK19: {needed}");
    let want = format!(
        "catalog_too_large: the tools listing is too large\n  stage: 5 templates\n  reason: the tools/list response exceeds 4,194,304 bytes\n  needed: the encoded tools array: {needed} bytes\n  available: 4194304 bytes\n"
    );
    assert_eq!(stdout, want, "CK19");
    assert_eq!(output.status.code(), Some(78));
}

/// CK12: an `--env-file` that does not exist.
#[test]
fn ck12_a_missing_env_file() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let mut cmd = d.check_command();
    cmd.args(["--env-file", "missing.env"]);
    let want = "credential_unavailable: a credential cannot be read\n  stage: 9 warm providers\n  reason: the --env-file environment file: unreadable (entity not found)\n";
    assert_check(&d, cmd, 78, want, "CK12");
}

/// CK20: the baseline's budget is 230 (lifecycle.md §10.1: handler ceiling 16 + 8, 64 PCC connections, 2
/// listening sockets, reserve 128 + 1 × 4 + 0 + 2 × 4); a soft limit of 200 refuses it.
#[test]
fn ck20_the_descriptor_budget_above_the_soft_limit() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let inner = d.check_command();
    let mut cmd = Command::new("prlimit");
    cmd.current_dir(d.dir.path()).arg("--nofile=200:4096").arg("--").arg(inner.get_program());
    cmd.args(inner.get_args()).env("GATEWAY_TOKEN", TOKEN);
    let want = "listener_capacity_exceeded: the descriptor budget exceeds the descriptor limit\n  stage: 6 listener capacity\n  reason: the descriptor budget exceeds the soft RLIMIT_NOFILE\n  needed: descriptor_budget 230 (handler_ceiling 24, descriptor_reserve 140, pcc true)\n  available: soft RLIMIT_NOFILE 200\n";
    assert_check(&d, cmd, 78, want, "CK20");
}

/// A usage error is explained as `config_invalid` at stage 0.
#[test]
fn a_usage_error_is_explained_at_stage_zero() {
    let d = Deployment::baseline();
    let mut cmd = support::ptc();
    cmd.current_dir(d.dir.path()).args(["check", "a.json", "b.json"]);
    let want = "config_invalid: the gateway document is not valid\n  stage: 0 arguments\n  reason: usage: ptc check CONFIG [--env-file FILE]\n";
    assert_check(&d, cmd, 78, want, "usage");
}

/// The stdio fixture deployment (`fwd` and `mission` over installation `fx`), its pins copied from
/// `--print-pins` unless `pinned` is false, and `ptc check` with fixture `flags`.
fn fixture(pinned: bool) -> Fx {
    let mut fx = Fx::new("modern");
    if pinned {
        fx.pin();
    } else {
        fx.d.write_documents();
    }
    fx
}

fn fixture_check(fx: &Fx, flags: &str) -> Command {
    let mut cmd = fx.d.check_command();
    cmd.env("FX_FLAGS", flags);
    cmd
}

/// CK24: a provider tool with `{}` installation pins names the computed map, which is exactly what
/// `--print-pins` prints; with it written, the check passes (CK1's answer for two tools).
#[test]
fn ck24_installation_pins_name_the_computed_map() {
    let fx = fixture(false);
    let printed: Value = serde_json::from_slice(&fx.print_pins().stdout).expect("pins");
    let computed = serde_json::to_string(&printed["fwd"]["installation_config_pins"]).expect("json");
    let want = format!(
        "installation_pin_mismatch: a tool's installation pins differ from the host document\n  stage: 9 warm providers\n  tool: fwd\n  field: installation_config_pins\n  reason: the configured installation pins differ from the installations' digests\n  expected: {{}}\n  computed: {computed}\n  hint: if the change was intended, `ptc pin CONFIG` writes the computed pins\n"
    );
    assert_check(&fx.d, fixture_check(&fx, "none"), 78, &want, "CK24");
    let fx = fixture(true);
    let want = "ok: serving would start with 2 tool(s): fwd, mission\n";
    assert_check(&fx.d, fixture_check(&fx, "none"), 0, want, "CK24 pinned");
    fx.assert_all_gone();
}

/// CK25: the stdio command's executable cannot be read (test fault): no digest, nothing spawned.
#[test]
fn ck25_an_unreadable_executable() {
    let fx = fixture(true);
    let mut cmd = fixture_check(&fx, "none");
    cmd.env("PTC_FAULT", "executable_unreadable");
    let want = "provider_pin_unavailable: a provider pin cannot be computed\n  stage: 9 warm providers\n  tool: fwd\n  installation: fx\n  reason: the installation's command cannot be resolved and read to compute its digest\n";
    assert_check(&fx.d, cmd, 78, want, "CK25");
    fx.assert_all_gone();
}

/// CK26: the upstream's listing changed (a description), so the site's snapshot pin differs.
#[test]
fn ck26_a_changed_listing_names_the_site_pins() {
    let mut fx = fixture(true);
    let configured = fx.d.gateway["tools"][0]["provider_snapshot_pins"].clone();
    let site = configured.as_object().and_then(|m| m.keys().next().cloned()).expect("one site");
    let output = run_with_deadline(fixture_check(&fx, "desc_changed"), DEADLINE);
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
    let computed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("  computed: "))
        .unwrap_or_else(|| panic!("CK26\n{stdout}"))
        .to_owned();
    let want = format!(
        "provider_pin_mismatch: a tool's provider snapshot pins differ from what its upstreams list\n  stage: 9 warm providers\n  tool: fwd\n  installation: fx\n  field: provider_snapshot_pins\n  reason: the configured snapshot pin differs from the site's listing\n  expected: {}\n  computed: {computed}\n  hint: if the change was intended, `ptc pin CONFIG` writes the computed pins\n",
        serde_json::to_string(&configured).expect("json")
    );
    assert_eq!(stdout, want, "CK26");
    // The computed pin is the one discovery prints for the changed listing.
    let mut cmd = fx.command("desc_changed");
    cmd.arg("--print-pins").env_remove("GATEWAY_TOKEN");
    let printed: Value = serde_json::from_slice(&run_with_deadline(cmd, DEADLINE).stdout).expect("pins");
    let discovered = json!({ &site: printed["fwd"]["provider_snapshot_pins"][&site].clone() });
    assert_eq!(computed, serde_json::to_string(&discovered).expect("json"), "CK26");
    fx.d.frozen = true;
    fx.assert_all_gone();
}

/// CK30: the granted upstream tool is missing from the listing: the site cannot be acquired.
#[test]
fn ck30_an_upstream_without_the_granted_tool() {
    let fx = fixture(true);
    let want = "provider_runtime_unavailable: an upstream could not be started\n  stage: 9 warm providers\n  tool: fwd\n  installation: fx\n  reason: the upstream could not be acquired (started, initialised and listed)\n  class: provider_tool_missing\n";
    assert_check(&fx.d, fixture_check(&fx, "hide_echo"), 78, want, "CK30");
    fx.assert_all_gone();
}

/// CK27: a running gateway holds the port and the artifact store's lock; checking its configuration
/// passes, since neither is checked (lifecycle.md §1.5).
#[test]
fn ck27_a_running_gateway_does_not_fail_the_check_of_its_configuration() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], d.port));
    let _gateway = Gateway::start(d.command(), addr);
    let before = d.tree();
    // The port in use is found by a connect probe (issue 25), which binds nothing.
    let output = run_with_deadline(d.check_command(), DEADLINE);
    let want = format!(
        "listener_unavailable: a listener cannot be bound\n  stage: 11 listeners\n  reason: something already \
         listens on this address\n  address: 127.0.0.1:{}\n",
        d.port
    );
    assert_eq!(
        (String::from_utf8_lossy(&output.stdout).into_owned(), output.status.code()),
        (want, Some(78))
    );
    assert_eq!(d.tree(), before, "CK27: creates nothing");
    // The same stores, locked by the running gateway, on free ports: the locks are not the check's concern.
    let mut next = d.gateway.clone();
    let (http, pcc) = (support::hold_free_port("127.0.0.1"), support::hold_free_port("127.0.0.1"));
    next["listen"]["port"] = json!(http.local_addr().expect("addr").port());
    next["pcc"]["port"] = json!(pcc.local_addr().expect("addr").port());
    drop((http, pcc));
    d.write_file("next.json", &serde_json::to_string_pretty(&next).expect("json"));
    let before = d.tree();
    let mut cmd = support::ptc();
    cmd.current_dir(d.dir.path()).args(["check", "next.json"]).env("GATEWAY_TOKEN", TOKEN);
    let output = run_with_deadline(cmd, DEADLINE);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "ok: serving would start with 1 tool(s): echo\n");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(d.tree(), before, "CK27: creates nothing");
    let mut faulted = support::ptc();
    faulted.current_dir(d.dir.path()).args(["check", "next.json"]).env("GATEWAY_TOKEN", TOKEN);
    faulted.env("PTC_FAULT", "provider_admission");
    assert_eq!(run_with_deadline(faulted, DEADLINE).status.code(), Some(0), "CK27: provider admission");
}

/// CK31: SIGTERM while a site is being acquired (the upstream sleeps before answering): the check prints
/// nothing, exits 70, and the upstream is gone (lifecycle.md §1.5, §8.4).
#[test]
fn ck31_a_signal_ends_the_check_with_nothing_printed() {
    let fx = fixture(true);
    let mut cmd = fixture_check(&fx, "sleep_start");
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("spawn ptc check");
    let running = Gateway { child, addr: std::net::SocketAddr::from(([127, 0, 0, 1], fx.d.port)) };
    fx.wait_marker("the upstream was spawned", |events| events.iter().any(|e| e["event"] == "spawn"));
    let (code, _, stdout, stderr) = running.signal_and_wait(nix::sys::signal::Signal::SIGTERM, DEADLINE);
    assert_eq!((code, stdout.as_slice(), stderr.as_slice()), (Some(70), &b""[..], &b""[..]), "CK31");
    fx.assert_all_gone();
}

/// CK32 (lifecycle.md §1.5): with `PTC_LOG` set, serve mode logs the facts of its refusal in one line before the
/// error line (CK4's deployment).
#[test]
fn ck32_serve_mode_logs_the_facts_of_its_refusal() {
    let mut d = Deployment::baseline();
    d.gateway["listen"]["port"] = json!(70000);
    d.write_documents();
    let mut cmd = d.command();
    cmd.env("PTC_LOG", "info");
    let output = run_with_deadline(cmd, DEADLINE);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let logged = format!(
        "startup refused code=\"config_invalid\" facts=document: {}; pointer: /listen/port; reason: the number is \
         outside the allowed range",
        d.config_path().display()
    );
    assert_eq!(output.status.code(), Some(78));
    assert_eq!(lines.iter().filter(|l| l.ends_with(&logged)).count(), 1, "{stderr}");
    assert_eq!(lines.last(), Some(&"{\"error\":\"config_invalid\"}"), "{stderr}");
}
