//! config.md §11: every test vector that needs no running upstream provider, against the real binary.
//!
//! The fixture is the provider-free variant of the baseline of config.md §10 (see `support`): `brief`
//! (which needs a live `mcp-server-fs`) is left out, and rows that change `brief` apply the same change
//! to `echo` where the rule does not depend on a live upstream. The rows that need the live upstream are
//! `tests/black_box/config_vectors_live.rs`. A failing row asserts the one-line
//! contract of lifecycle.md §5.1 (exit 78, one stderr line, empty stdout) and that the startup created
//! nothing in the deployment directory; a "starts" row waits for `/health/ready` and stops the gateway
//! with SIGTERM, which must exit 0.

use crate::support;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{json, Value};
use support::vectors::{
    add_audit, add_remote, echo_with, echo_with_mission, private_dir, repin_echo, schema_of_normalised_size,
    set_echo_manifest, seventy_large_tools, tool,
};
use support::{assert_explained_startup_error, assert_startup_error, run_with_deadline, Deployment, Gateway};

/// What a row expects.
enum Expect {
    /// Serve mode refuses with this code.
    Code(&'static str),
    /// Serve mode becomes ready.
    Starts,
    /// `--print-pins` succeeds.
    DiscoveryOk,
    /// `--print-pins` refuses with this code.
    DiscoveryCode(&'static str),
}

fn check(row: u32, mutate: impl FnOnce(&mut Deployment), expect: Expect) {
    let mut d = Deployment::baseline();
    mutate(&mut d);
    if !d.frozen {
        d.write_documents();
    }
    let context = format!("config.md §11 row {row}");
    match expect {
        Expect::Code(code) => {
            assert_check_agrees(&d, Some(code), &context);
            let before = d.tree();
            let output = run_with_deadline(d.command(), Duration::from_secs(20));
            assert_startup_error(&output, code, &context);
            assert_nothing_left_behind(&d, &before, code, &context);
        }
        Expect::DiscoveryCode(code) => {
            let before = d.tree();
            let mut cmd = d.command();
            cmd.arg("--print-pins");
            let output = run_with_deadline(cmd, Duration::from_secs(20));
            assert_explained_startup_error(&output, code, &context);
            assert_eq!(d.tree(), before, "{context}: discovery creates nothing");
        }
        Expect::DiscoveryOk => {
            let before = d.tree();
            let mut cmd = d.command();
            cmd.arg("--print-pins");
            let output = run_with_deadline(cmd, Duration::from_secs(20));
            assert_eq!(
                output.status.code(),
                Some(0),
                "{context}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(output.stderr.is_empty(), "{context}: discovery writes nothing to stderr");
            let printed: Value = serde_json::from_slice(&output.stdout).expect("pins are JSON");
            assert!(printed.get("echo").is_some(), "{context}: every tool is printed");
            assert_eq!(d.tree(), before, "{context}: discovery creates nothing");
        }
        Expect::Starts => {
            assert_check_agrees(&d, None, &context);
            let addr: SocketAddr = listen_addr(&d);
            let gateway = Gateway::start(d.command(), addr);
            let (code, _, stdout, stderr) =
                gateway.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(15));
            assert_eq!(code, Some(0), "{context}: clean exit; stderr {}", String::from_utf8_lossy(&stderr));
            assert!(stdout.is_empty() && stderr.is_empty(), "{context}: serve mode prints nothing");
        }
    }
}

/// A failed startup leaves nothing behind, except what the spec keeps on purpose: once stage 4 has run,
/// the artifact root and its events directory stay (the event log records `startup_failed` there,
/// audit-events.md §3.6, lifecycle.md §5.2); their locks are always released.
fn assert_nothing_left_behind(
    d: &Deployment,
    before: &std::collections::BTreeSet<std::path::PathBuf>,
    code: &str,
    context: &str,
) {
    let after = d.tree();
    let created: Vec<_> = after.difference(before).collect();
    let before_stage_4 = [
        "config_unavailable",
        "duplicate_json_key",
        "config_invalid",
        "origin_invalid",
        "tool_name_duplicate",
        "audit_invalid",
        "host_invalid",
    ];
    let artifacts = d.path("artifacts");
    for path in &created {
        let allowed = !before_stage_4.contains(&code)
            && path.starts_with(&artifacts)
            && !path.components().any(|c| c.as_os_str() == ".gateway-lock");
        assert!(allowed, "{context}: the failed startup left {} behind", path.display());
    }
    assert!(before.is_subset(&after), "{context}: nothing is removed");
}

/// CK28 (lifecycle.md §1.5): `ptc check` on the row's deployment names the code serve mode refuses with
/// (`None`: serve mode starts, so the check passes), creating nothing; it passes instead for a refusal of
/// a part it does not run (a lock, a store's contents, a listener, an admission actor).
fn assert_check_agrees(d: &Deployment, serve_code: Option<&str>, context: &str) {
    const NOT_CHECKED: [&str; 5] = [
        "artifact_root_unavailable",
        "audit_unavailable",
        "listener_unavailable",
        "run_admission_unavailable",
        "provider_admission_unavailable",
    ];
    let before = d.tree();
    let output = run_with_deadline(d.check_command(), Duration::from_secs(20));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    let passed = output.status.code() == Some(0) && first.starts_with("ok: serving would start with ");
    match serve_code {
        None => assert!(passed, "{context}: ptc check passes where serving starts\n{stdout}"),
        Some(code) if passed => {
            assert!(NOT_CHECKED.contains(&code), "{context}: ptc check passed where serving refuses {code}")
        }
        Some(code) => {
            assert_eq!(output.status.code(), Some(78), "{context}: ptc check\n{stdout}");
            assert!(first.starts_with(&format!("{code}: ")), "{context}: ptc check names {code}\n{stdout}");
        }
    }
    assert!(output.stderr.is_empty(), "{context}: ptc check writes nothing to stderr");
    assert_eq!(d.tree(), before, "{context}: ptc check creates nothing");
}

fn listen_addr(d: &Deployment) -> SocketAddr {
    let ip = d.gateway["listen"]["address"].as_str().unwrap_or("127.0.0.1");
    let ip: std::net::IpAddr = ip.parse().expect("ip");
    SocketAddr::new(ip, d.port)
}

/// Writes the gateway document as raw text (rows that need bytes serde_json cannot produce).
fn raw_gateway(d: &mut Deployment, text: String) {
    d.write_documents();
    d.write_file("ptc-gateway.json", &text);
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("json")
}

macro_rules! rows {
    ($($name:ident: $row:expr, $mutate:expr, $expect:expr;)*) => {
        $(#[test] fn $name() { check($row, $mutate, $expect); })*
    };
}

rows! {
    row001_missing_config: 1, |d| { d.write_documents(); std::fs::remove_file(d.config_path()).ok(); }, Expect::Code("config_unavailable");
    row002_oversized: 2, |d| { let mut text = compact(&d.gateway); text.push_str(&" ".repeat(1_000_001 - text.len())); raw_gateway(d, text); }, Expect::Code("config_unavailable");
    row003_truncated: 3, |d| raw_gateway(d, "{".into()), Expect::Code("config_unavailable");
    row004_bom: 4, |d| { let text = format!("\u{feff}{}", compact(&d.gateway)); raw_gateway(d, text); }, Expect::Code("config_unavailable");
    row005_byte_ff: 5, |d| { d.write_documents(); let mut bytes = compact(&d.gateway).into_bytes(); let at = bytes.windows(4).position(|w| w == b"Echo").unwrap_or(0); bytes[at] = 0xFF; d.write_bytes("ptc-gateway.json", &bytes); }, Expect::Code("config_unavailable");
    row006_depth_before_unknown_key: 6, |d| { d.gateway["x"] = json!(0); let nested = format!("{}0{}", "[".repeat(64), "]".repeat(64)); let text = compact(&d.gateway).replacen("\"x\":0", &format!("\"x\":{nested}"), 1); raw_gateway(d, text); }, Expect::Code("config_unavailable");
    row007_duplicate_version: 7, |d| { let text = compact(&d.gateway).replacen("{", "{\"version\":1,", 1); raw_gateway(d, text); }, Expect::Code("duplicate_json_key");
    row008_duplicate_tool_name: 8, |d| { let text = compact(&d.gateway).replacen("\"name\":\"echo\"", "\"name\":\"echo\",\"name\":\"echo\"", 1); raw_gateway(d, text); }, Expect::Code("duplicate_json_key");
    row009_escaped_duplicate: 9, |d| { let text = compact(&d.gateway).replacen("\"title\":\"Echo\"", "\"title\":\"Echo\",\"\\u0074itle\":\"Echo\"", 1); raw_gateway(d, text); }, Expect::Code("duplicate_json_key");
    row010_version_removed: 10, |d| { d.gateway.as_object_mut().map(|o| o.remove("version")); }, Expect::Code("config_invalid");
    row010b_listen_removed: 10, |d| { d.gateway.as_object_mut().map(|o| o.remove("listen")); }, Expect::Code("config_invalid");
    row010c_tools_removed: 10, |d| { d.gateway.as_object_mut().map(|o| o.remove("tools")); }, Expect::Code("config_invalid");
    row010d_admission_removed: 10, |d| { d.gateway.as_object_mut().map(|o| o.remove("admission")); }, Expect::Code("config_invalid");
    row011_version_2: 11, |d| d.gateway["version"] = json!(2), Expect::Code("config_invalid");
    row012_wildcard_address: 12, |d| d.gateway["listen"]["address"] = json!("0.0.0.0"), Expect::Code("config_invalid");
    row013_localhost: 13, |d| d.gateway["listen"]["address"] = json!("localhost"), Expect::Code("config_invalid");
    row014_port_0: 14, |d| d.gateway["listen"]["port"] = json!(0), Expect::Code("config_invalid");
    row014b_port_65536: 14, |d| d.gateway["listen"]["port"] = json!(65536), Expect::Code("config_invalid");
    row015_port_float: 15, |d| { let port = d.port; let text = compact(&d.gateway).replacen(&format!("\"port\":{port}"), &format!("\"port\":{port}.0"), 1); raw_gateway(d, text); }, Expect::Code("config_invalid");
    row016_path: 16, |d| d.gateway["listen"]["path"] = json!("/other"), Expect::Code("config_invalid");
    row017_unknown_top_level: 17, |d| d.gateway["extra"] = json!(1), Expect::Code("config_invalid");
    row018_unknown_in_listen: 18, |d| d.gateway["listen"]["extra"] = json!(true), Expect::Code("config_invalid");
    row019_runs_0: 19, |d| d.gateway["admission"]["max_concurrent_runs"] = json!(0), Expect::Code("config_invalid");
    row020_provider_calls_65536: 20, |d| d.gateway["admission"]["max_active_provider_calls"] = json!(65536), Expect::Code("config_invalid");
    row021_waiting_negative: 21, |d| d.gateway["admission"]["max_waiting_provider_calls"] = json!(-1), Expect::Code("config_invalid");
    row022_no_tools: 22, |d| d.gateway["tools"] = json!([]), Expect::Code("config_invalid");
    row022b_129_tools: 22, |d| { let t = tool(d).clone(); d.gateway["tools"] = Value::Array((0..129).map(|i| { let mut t = t.clone(); t["name"] = json!(format!("t{i:03}")); t }).collect()); }, Expect::Code("config_invalid");
    row023_bad_name: 23, |d| tool(d)["name"] = json!("bad/name"), Expect::Code("config_invalid");
    row024_title_258_bytes: 24, |d| tool(d)["title"] = json!("é".repeat(129)), Expect::Code("config_invalid");
    row025_title_256_bytes: 25, |d| tool(d)["title"] = json!("é".repeat(128)), Expect::Starts;
    row026_description_lf: 26, |d| tool(d)["description"] = json!("line one\nline two"), Expect::Starts;
    row027_uppercase_digest: 27, |d| tool(d)["expected_application_content_digest"] = json!(support::ECHO_PIN.to_uppercase().replacen("SHA256", "sha256", 1)), Expect::Code("config_invalid");
    row028_pins_removed: 28, |d| { tool(d).as_object_mut().map(|o| o.remove("installation_config_pins")); }, Expect::Code("config_invalid");
    row029_pins_removed_discovery: 29, |d| { tool(d).as_object_mut().map(|o| o.remove("installation_config_pins")); }, Expect::DiscoveryOk;
    row030_snapshot_key_without_destination: 30, |d| tool(d)["provider_snapshot_pins"] = json!({"notes": support::ECHO_PIN}), Expect::Code("config_invalid");
    row032_origin_path: 32, |d| d.gateway["listen"]["allowed_origins"] = json!(["https://example.com/"]), Expect::Code("origin_invalid");
    row033_origin_default_port: 33, |d| d.gateway["listen"]["allowed_origins"] = json!(["https://example.com:443"]), Expect::Code("origin_invalid");
    row034_origin_case: 34, |d| d.gateway["listen"]["allowed_origins"] = json!(["https://Example.com"]), Expect::Code("origin_invalid");
    row035_origins_ok: 35, |d| d.gateway["listen"]["allowed_origins"] = json!(["http://localhost:8080", "http://[::1]:8765"]), Expect::Starts;
    row036_origin_before_duplicate: 36, |d| { d.gateway["listen"]["allowed_origins"] = json!(["https://example.com/"]); let t = tool(d).clone(); if let Some(a) = d.gateway["tools"].as_array_mut() { a.push(t); } }, Expect::Code("origin_invalid");
    row037_duplicate_tool: 37, |d| { let t = tool(d).clone(); if let Some(a) = d.gateway["tools"].as_array_mut() { a.push(t); } }, Expect::Code("tool_name_duplicate");
    row038_audit_without_writer: 38, add_audit, Expect::Code("audit_invalid");
    row039_writer_without_audit: 39, |d| tool(d)["allow_write"] = json!(true), Expect::Code("audit_invalid");
    row040_read_stays_read: 40, |d| { tool(d)["allow_write"] = json!(true); add_audit(d); }, Expect::Starts;
    row041_pcc_unknown_tool: 41, |d| d.gateway["pcc"]["servers"]["briefs"]["tools"] = json!(["nope"]), Expect::Code("config_invalid");
    row042_pcc_same_port: 42, |d| { let port = d.port; d.gateway["pcc"]["port"] = json!(port); }, Expect::Code("config_invalid");
    row044_pcc_no_servers: 44, |d| d.gateway["pcc"]["servers"] = json!({}), Expect::Code("config_invalid");
    row045_pcc_bad_id: 45, |d| d.gateway["pcc"]["servers"] = json!({"bad id": {"tools": ["echo"]}}), Expect::Code("config_invalid");
    row046_host_missing: 46, |d| d.gateway["host"]["path"] = json!("missing-host.json"), Expect::Code("host_invalid");
    row047_host_duplicate_install: 47, |d| { d.write_documents(); let text = compact(&d.host).replacen("\"install\":", "\"install\":{},\"install\":", 1); d.write_file("ptc-host.json", &text); }, Expect::Code("host_invalid");
    row048_host_install_removed: 48, |d| { d.host.as_object_mut().map(|o| o.remove("install")); }, Expect::Code("host_invalid");
    row049_credential_two_members: 49, |d| d.host["credentials"]["other"] = json!({"env": "A", "file": "b"}), Expect::Code("host_invalid");
    row050_unknown_binding: 50, |d| d.host["install"]["notes"]["transport"]["env"] = json!({"TZ": {"binding": "tz"}}), Expect::Code("host_invalid");
    row051_bearer_forwarded: 51, |d| d.host["install"]["notes"]["transport"]["env"] = json!({"TOKEN": {"binding": "gateway"}}), Expect::Code("host_invalid");
    row052_http_localhost: 52, |d| add_remote(d, "http://localhost:9000/mcp"), Expect::Code("host_invalid");
    row053_http_without_allow: 53, |d| add_remote(d, "http://127.0.0.1:9000/mcp"), Expect::Code("host_invalid");
    row054_reserved_header: 54, |d| { add_remote(d, "https://mcp.example.com/mcp"); d.host["credentials"]["sid"] = json!({"env": "SID"}); d.host["install"]["remote"]["transport"]["headers"] = json!([{"name": "Mcp-Session-Id", "binding": "sid"}]); }, Expect::Code("host_invalid");
    row055_alias_collision_in_mission: 55, |d| { add_remote(d, "https://mcp.example.com/mcp"); d.host["install"]["remote"]["tools"] = json!({"echo": {"as": "notes.read", "effect": "read"}}); set_echo_manifest(d, echo_with_mission(json!([{"name": "notes"}, {"name": "remote"}]), &["notes", "remote"])); }, Expect::Code("template_invalid");
    row056_arg_with_lf: 56, |d| d.host["install"]["notes"]["transport"]["args"] = json!(["--root", "a\nb"]), Expect::Code("host_invalid");
    row057_unused_oauth: 57, |d| { add_remote(d, "https://mcp.example.com/mcp"); d.host["install"]["remote"]["transport"]["oauth"] = json!({}); }, Expect::Starts;
    row058_credentials_removed: 58, |d| { d.host.as_object_mut().map(|o| o.remove("credentials")); }, Expect::Code("credential_unavailable");
    row059_literal_bearer: 59, |d| d.host["credentials"]["gateway"] = json!({"literal": support::TOKEN}), Expect::Code("credential_unavailable");
    row060_literal_bearer_discovery: 60, |d| d.host["credentials"]["gateway"] = json!({"literal": support::TOKEN}), Expect::DiscoveryOk;
    row061_host_before_artifacts: 61, |d| { d.gateway["host"]["path"] = json!("missing-host.json"); d.write_file("artifacts/events", ""); }, Expect::Code("host_invalid");
    row062_events_mode_0755: 62, |d| { use std::os::unix::fs::PermissionsExt; std::fs::create_dir_all(d.path("artifacts/events")).ok(); std::fs::set_permissions(d.path("artifacts"), std::fs::Permissions::from_mode(0o700)).ok(); std::fs::set_permissions(d.path("artifacts/events"), std::fs::Permissions::from_mode(0o755)).ok(); }, Expect::Code("artifact_root_unavailable");
    row063_manifest_missing: 63, |d| { std::fs::remove_file(d.path("echo/ptc.json")).ok(); }, Expect::Code("template_invalid");
    row064_private_events: 64, |d| { let m = echo_with(|m| m["events"] = json!({"policy": "private"})); d.write_file("echo/ptc.json", &compact(&m)); }, Expect::Code("template_invalid");
    row065_luau_changed: 65, |d| d.write_file("echo/app.luau", &support::ECHO_LUAU.replace("return input", "return  input")), Expect::Code("application_content_digest_mismatch");
    row066_content_before_installation_pins: 66, |d| { d.write_file("echo/app.luau", &support::ECHO_LUAU.replace("return input", "return  input")); tool(d)["installation_config_pins"] = json!({"notes": support::ECHO_PIN}); }, Expect::Code("application_content_digest_mismatch");
    row068_component_escapes: 68, |d| { d.write_file("app.luau", support::ECHO_LUAU); set_echo_manifest(d, echo_with(|m| m["workflow"]["components"][0]["path"] = json!("../app.luau"))); }, Expect::Code("template_invalid");
    row069_component_symlink: 69, |d| { d.write_file("echo/copy.luau", support::ECHO_LUAU); std::fs::remove_file(d.path("echo/app.luau")).ok(); std::os::unix::fs::symlink("copy.luau", d.path("echo/app.luau")).ok(); }, Expect::Code("template_invalid");
    row070_luau_syntax_error: 70, |d| { d.write_file("echo/app.luau", "local M = {\nreturn M\n"); repin_echo(d); }, Expect::Code("template_invalid");
    row071_missing_entry: 71, |d| set_echo_manifest(d, echo_with(|m| m["workflow"]["entry"] = json!("app.missing"))), Expect::Code("template_invalid");
    row072_self_dependency: 72, |d| set_echo_manifest(d, echo_with(|m| m["workflow"]["components"][0]["dependencies"] = json!(["app"]))), Expect::Code("template_invalid");
    row073_array_contract: 73, |d| { d.write_file("echo/schema.json", "{\"type\": \"array\"}\n"); repin_echo(d); }, Expect::Code("template_invalid");
    row074_external_ref: 74, |d| { d.write_file("echo/schema.json", "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"other.json\"}}}\n"); repin_echo(d); }, Expect::Code("template_invalid");
    row075_schema_65537: 75, |d| { d.write_file("echo/input.json", &schema_of_normalised_size(65_537)); set_echo_manifest(d, echo_with(|m| m["contracts"]["input_schema"]["path"] = json!("input.json"))); }, Expect::Code("template_invalid");
    row076_schema_65536: 76, |d| { d.write_file("echo/input.json", &schema_of_normalised_size(65_536)); set_echo_manifest(d, echo_with(|m| m["contracts"]["input_schema"]["path"] = json!("input.json"))); }, Expect::Starts;
    row077_header_on_object: 77, |d| { d.write_file("echo/input.json", "{\"type\":\"object\",\"properties\":{\"o\":{\"type\":\"object\",\"x-mcp-header\":\"O\"}}}\n"); set_echo_manifest(d, echo_with(|m| m["contracts"]["input_schema"]["path"] = json!("input.json"))); }, Expect::Code("template_invalid");
    row078_constructors_before_catalog: 78, |d| { d.write_file("echo/input.json", "{\"type\":\"object\",\"properties\":{\"o\":{\"type\":\"object\",\"x-mcp-header\":\"O\"}}}\n"); set_echo_manifest(d, echo_with(|m| m["contracts"]["input_schema"]["path"] = json!("input.json"))); add_second_tool(d, true); }, Expect::Code("application_content_digest_mismatch");
    row079_catalog_too_large: 79, seventy_large_tools, Expect::Code("catalog_too_large");
    row080_unknown_installation: 80, |d| set_echo_manifest(d, echo_with_mission(json!([{"name": "notes2"}]), &["notes2"])), Expect::Code("template_invalid");
    row081_write_tool_without_allow: 81, |d| { d.host["install"]["notes"]["tools"]["write_text_file"] = json!({"as": "notes.write", "effect": "write"}); set_echo_manifest(d, echo_with_mission(json!([{"name": "notes"}]), &["notes"])); }, Expect::Code("template_invalid");
    row083_read_app_granted_write: 83, |d| { d.host["install"]["notes"]["tools"]["write_text_file"] = json!({"as": "notes.write", "effect": "write"}); set_echo_manifest(d, echo_with_mission(json!([{"name": "notes", "config": {"allow": ["notes.write"]}}]), &["notes"])); }, Expect::Code("template_invalid");
    row084_run_duration_above_host: 84, |d| set_echo_manifest(d, echo_with(|m| m["limits"] = json!({"run_duration_ms": 30001}))), Expect::Code("template_invalid");
    row085_oauth_selected: 85, |d| { add_remote(d, "https://mcp.example.com/mcp"); d.host["install"]["remote"]["transport"]["oauth"] = json!({}); set_echo_manifest(d, echo_with_mission(json!([{"name": "remote"}]), &["remote"])); }, Expect::Code("provider_source_unsupported");
    row086_oauth_selected_discovery: 86, |d| { add_remote(d, "https://mcp.example.com/mcp"); d.host["install"]["remote"]["transport"]["oauth"] = json!({}); set_echo_manifest(d, echo_with_mission(json!([{"name": "remote"}]), &["remote"])); }, Expect::DiscoveryCode("provider_source_unsupported");
    row087_workflow_llm: 87, |d| { add_llm(d, "model"); set_echo_manifest(d, echo_with(|m| m["providers"] = json!({"workflow": [{"name": "model"}]}))); }, Expect::Code("template_invalid");
    row088_write_without_allow: 88, |d| set_echo_manifest(d, echo_with(|m| m["effect"] = json!("write"))), Expect::Code("write_forbidden");
    row089_write_allowed: 89, |d| { set_echo_manifest(d, echo_with(|m| m["effect"] = json!("write"))); tool(d)["allow_write"] = json!(true); add_audit(d); }, Expect::Starts;
    row090_write_stale_pin: 90, |d| { let m = echo_with(|m| m["effect"] = json!("write")); d.write_file("echo/ptc.json", &compact(&m)); }, Expect::Code("application_content_digest_mismatch");
    row095_audit_symlink: 95, |d| { set_echo_manifest(d, echo_with(|m| m["effect"] = json!("write"))); tool(d)["allow_write"] = json!(true); add_audit(d); private_dir(d, "real-audit"); std::os::unix::fs::symlink("real-audit", d.path("audit")).ok(); }, Expect::Code("audit_unavailable");
    row096_audit_foreign_file: 96, |d| { set_echo_manifest(d, echo_with(|m| m["effect"] = json!("write"))); tool(d)["allow_write"] = json!(true); add_audit(d); private_dir(d, "audit"); d.write_file("audit/notes.txt", "x"); }, Expect::Code("audit_unavailable");
    row098_token_unset: 98, |d| { d.host["credentials"]["gateway"] = json!({"env": "PTC_TEST_UNSET_TOKEN"}); }, Expect::Code("credential_unavailable");
    row099_token_31_bytes: 99, |d| { d.host["credentials"]["gateway"] = json!({"file": "token"}); d.write_file("token", &"a".repeat(31)); }, Expect::Code("credential_unavailable");
    row099b_token_with_space: 99, |d| { d.host["credentials"]["gateway"] = json!({"file": "token"}); d.write_file("token", &format!("{} {}", "a".repeat(16), "a".repeat(16))); }, Expect::Code("credential_unavailable");
    row100_token_4096: 100, |d| { d.host["credentials"]["gateway"] = json!({"file": "token"}); d.write_file("token", &"a".repeat(4096)); }, Expect::Starts;
    row123_duplicate_alias: 123, |d| d.host["install"]["notes"]["tools"]["other"] = json!({"as": "notes.read", "effect": "read"}), Expect::Code("host_invalid");
    row124_trace: 124, |d| d.gateway["artifacts"]["trace"] = json!(true), Expect::Starts;
    row125_inspection: 125, |d| d.gateway["artifacts"]["inspection"] = json!(true), Expect::Starts;
    row126_trace_discovery: 126, |d| d.gateway["artifacts"]["trace"] = json!(true), Expect::DiscoveryOk;
    row127_structure_before_origins: 127, |d| { d.gateway["artifacts"]["trace"] = json!("yes"); d.gateway["listen"]["allowed_origins"] = json!(["https://example.com/"]); }, Expect::Code("config_invalid");
    row140_trace_file_bound: 140, |d| d.gateway["artifacts"]["trace"] = json!({"max_file_bytes": 16383}), Expect::Code("config_invalid");
    row140b_trace_retained_bound: 140, |d| d.gateway["artifacts"]["trace"] = json!({"max_retained_files": 100001}), Expect::Code("config_invalid");
    row140c_trace_unknown_member: 140, |d| d.gateway["artifacts"]["trace"] = json!({"stderr": true}), Expect::Code("config_invalid");
    row140d_trace_replay_not_boolean: 140, |d| d.gateway["artifacts"]["trace"] = json!({"replay": "yes"}), Expect::Code("config_invalid");
    row140e_inspection_has_no_replay: 140, |d| d.gateway["artifacts"]["inspection"] = json!({"replay": true}), Expect::Code("config_invalid");
    row141_trace_bounds: 141, |d| d.gateway["artifacts"]["trace"] = json!({"max_file_bytes": 16384, "max_retained_files": 2}), Expect::Starts;
    row141b_trace_replay: 141, |d| d.gateway["artifacts"]["trace"] = json!({"replay": true}), Expect::Starts;
    row142_trace_foreign_file: 142, |d| { d.gateway["artifacts"]["trace"] = json!(true); private_dir(d, "artifacts"); private_dir(d, "artifacts/traces"); d.write_file("artifacts/traces/notes.txt", "x"); }, Expect::Code("artifact_root_unavailable");
    row128_trace_false: 128, |d| { d.gateway["artifacts"]["trace"] = json!(false); d.gateway["artifacts"]["inspection"] = json!(false); }, Expect::Starts;
    row129_reserved_source_unused: 129, |d| d.host["install"]["replay"] = json!({"source": "llm_replay", "model": 7, "anything": {"x": true}}), Expect::Starts;
    row130_reserved_source_in_mission: 130, |d| { d.host["install"]["replay"] = json!({"source": "llm_replay", "model": 7}); set_echo_manifest(d, echo_with_mission(json!([{"name": "replay"}]), &["replay"])); }, Expect::Code("provider_source_unsupported");
    row131_reserved_source_in_workflow: 131, |d| { d.host["install"]["replay"] = json!({"source": "llm_replay", "model": 7}); set_echo_manifest(d, echo_with(|m| m["providers"] = json!({"workflow": [{"name": "replay"}]}))); }, Expect::Code("provider_source_unsupported");
    row132_unknown_source: 132, |d| d.host["install"]["dbg"] = json!({"source": "ptc_debug_snapshot"}), Expect::Code("host_invalid");
    row133_description_cr: 133, |d| tool(d)["description"] = json!("a\rb"), Expect::Code("config_invalid");
    row134_title_lf: 134, |d| tool(d)["title"] = json!("a\nb"), Expect::Code("config_invalid");
    row135_mapping_description_lf: 135, |d| d.host["install"]["notes"]["tools"]["read_text_file"]["description"] = json!("Read a file.\nUTF-8 only."), Expect::Starts;
    row136_mapping_description_crlf: 136, |d| d.host["install"]["notes"]["tools"]["read_text_file"]["description"] = json!("Read a file.\r\nUTF-8 only."), Expect::Code("host_invalid");
    row120_mcp_in_workflow_list: 120, |d| set_echo_manifest(d, echo_with(|m| m["providers"] = json!({"workflow": [{"name": "notes"}]}))), Expect::Code("provider_source_unsupported");
    row121_llm_in_mission_list: 121, |d| { add_llm(d, "model"); set_echo_manifest(d, echo_with_mission(json!([{"name": "model"}]), &["model"])); }, Expect::Code("provider_source_unsupported");
    row122_unknown_mission_provider: 122, |d| set_echo_manifest(d, echo_with_mission(json!([{"name": "nomodel"}]), &["nomodel"])), Expect::Code("template_invalid");
    row156_relative_schema_reference: 156, |d| d.gateway["$schema"] = json!("../schemas/ptc-gateway-config.schema.json"), Expect::Starts;
    row157_absolute_schema_path: 157, |d| d.gateway["$schema"] = json!("/etc/ptc-gateway-config.schema.json"), Expect::Code("config_invalid");
    row157b_other_schema_url: 157, |d| d.gateway["$schema"] = json!("https://example.com/ptc-gateway-config.schema.json"), Expect::Code("config_invalid");
    row157c_another_documents_schema: 157, |d| d.gateway["$schema"] = json!("../schemas/ptc-host-config.schema.json"), Expect::Code("config_invalid");
    row158_metrics_with_events: 158, |d| d.gateway["artifacts"]["metrics"] = json!({}), Expect::Starts;
    row159_metrics_without_events: 159, |d| { d.gateway["artifacts"]["metrics"] = json!({}); d.gateway["artifacts"].as_object_mut().map(|a| a.remove("events")); }, Expect::Code("config_invalid");
    row160_metrics_interval_below_one_second: 160, |d| d.gateway["artifacts"]["metrics"] = json!({"interval_ms": 999}), Expect::Code("config_invalid");
    row150_catalog_workflow_selection: 150, |d| { add_llm(d, "model"); write_model_echo(d, json!({"catalog": true})); }, Expect::Code("provider_source_unsupported");
    row154_model_in_a_forward_application: 154, |d| { add_llm(d, "model"); write_model_echo(d, json!({})); set_echo_manifest(d, echo_with(|m| { m["effect"] = json!("write"); m["workflow"] = json!({"forward": {"mission": "default", "tool": "notes.read"}}); m["missions"] = json!({"default": {"providers": ["notes"]}}); m["providers"] = json!({"mission": [{"name": "notes"}], "workflow": [{"name": "model"}]}); })); }, Expect::Code("template_invalid");
}

fn add_llm(d: &mut Deployment, alias: &str) {
    d.host["credentials"]["model_key"] = json!({"env": "MODEL_KEY"});
    d.host["install"][alias] = json!({
        "source": "llm", "installation_revision": "m1", "endpoint": "https://llm.example.com/v1",
        "model": "small", "credential": "model_key"
    });
}

/// config.md §11 rows 150, 151, 153: the echo manifest made `write` (with `allow_write` and the audit) and
/// declaring the model `model` with the workflow selection `config`.
fn write_model_echo(d: &mut Deployment, config: Value) {
    set_echo_manifest(
        d,
        echo_with(|m| {
            m["effect"] = json!("write");
            m["providers"] = json!({"workflow": [{"name": "model", "config": config}]});
        }),
    );
    tool(d)["allow_write"] = json!(true);
    add_audit(d);
}

/// A second provider-free tool `zecho` (sorted after `echo`), optionally with a stale content pin.
fn add_second_tool(d: &mut Deployment, stale: bool) {
    d.write_file("zecho/ptc.json", &compact(&support::echo_manifest()));
    let luau = if stale {
        support::ECHO_LUAU.replace("return input", "return  input")
    } else {
        support::ECHO_LUAU.into()
    };
    d.write_file("zecho/app.luau", &luau);
    d.write_file("zecho/schema.json", support::ECHO_SCHEMA);
    let mut t = tool(d).clone();
    t["name"] = json!("zecho");
    t["application"]["manifest"] = json!("zecho/ptc.json");
    t["expected_application_content_digest"] = json!(support::ECHO_PIN);
    if let Some(a) = d.gateway["tools"].as_array_mut() {
        a.push(t);
    }
}

#[test]
fn row031_env_file_twice_and_unknown_argument() {
    let mut d = Deployment::baseline();
    d.write_documents();
    for extra in [&["--env-file", "a.env", "--env-file", "b.env"][..], &["--verbose"][..]] {
        let mut cmd = d.command();
        cmd.args(extra);
        let output = run_with_deadline(cmd, Duration::from_secs(10));
        assert_startup_error(&output, "config_invalid", &format!("row 31 {extra:?}"));
    }
}

#[test]
fn row067_discovery_prints_the_new_pin() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let changed = support::ECHO_LUAU.replace("return input", "return  input");
    d.write_file("echo/app.luau", &changed);
    let mut cmd = d.command();
    cmd.arg("--print-pins");
    let output = run_with_deadline(cmd, Duration::from_secs(20));
    assert_eq!(output.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&output.stdout).expect("json");
    let expected = support::content_pin::of(&d.path("echo/ptc.json"));
    assert_ne!(expected, support::ECHO_PIN);
    assert_eq!(printed["echo"]["expected_application_content_digest"], json!(expected));
}

#[test]
fn row043_pcc_on_ipv6_same_port() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("skipped: ::1 cannot be bound on this machine");
        return;
    }
    check(
        43,
        |d| {
            let port = d.port;
            d.gateway["pcc"]["address"] = json!("::1");
            d.gateway["pcc"]["port"] = json!(port);
        },
        Expect::Starts,
    );
}

#[test]
fn row117_http_port_taken() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let _holder = std::net::TcpListener::bind(("127.0.0.1", d.port)).expect("hold the port");
    let output = run_with_deadline(d.command(), Duration::from_secs(20));
    assert_startup_error(&output, "listener_unavailable", "row 117");
}

#[test]
fn row118_pcc_port_taken() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let _holder = std::net::TcpListener::bind(("127.0.0.1", d.pcc_port)).expect("hold the port");
    let output = run_with_deadline(d.command(), Duration::from_secs(20));
    assert_startup_error(&output, "listener_unavailable", "row 118");
}

/// The rows marked *F*: failure points compiled in only with the `fault-injection` feature.
#[cfg(feature = "fault-injection")]
mod injected_faults {
    use super::*;

    fn with_fault(row: u32, point: &str, code: &str) {
        let mut d = Deployment::baseline();
        d.write_documents();
        let mut cmd = d.command();
        cmd.env("PTC_FAULT", point);
        let output = run_with_deadline(cmd, Duration::from_secs(20));
        assert_startup_error(&output, code, &format!("config.md §11 row {row}"));
        assert!(!d.path("artifacts/events/.gateway-lock").exists(), "row {row}: the events lock is released");
    }

    #[test]
    fn row094_getrlimit_fails() {
        with_fault(94, "getrlimit", "listener_capacity_unavailable");
    }

    #[test]
    fn row097_run_admission_fails_to_start() {
        with_fault(97, "run_admission", "run_admission_unavailable");
    }

    #[test]
    fn row106_provider_admission_fails_to_start() {
        with_fault(106, "provider_admission", "provider_admission_unavailable");
    }

    #[test]
    fn row119_a_panic_inside_a_stage() {
        with_fault(119, "panic_in_stage", "internal_error");
    }
}

/// config.md §11 row 151 (models.md §3.1): a workflow model is served; startup contacts no endpoint
/// (`llm.example.com` is never resolved), `--print-pins` needs no model credential and prints the
/// installation pin and no `workflow/` snapshot key.
#[test]
fn row151_a_workflow_model_starts_without_contacting_it() {
    let mut d = Deployment::baseline();
    add_llm(&mut d, "model");
    write_model_echo(&mut d, json!({"catalog": false}));
    d.write_documents();
    let mut discover = d.command();
    discover.arg("--print-pins").env_remove("MODEL_KEY");
    let out = run_with_deadline(discover, Duration::from_secs(20));
    let pins = support::providers::copy_pins(&mut d, &out);
    assert_eq!(pins["echo"]["provider_snapshot_pins"], json!({}));
    assert_eq!(pins["echo"]["installation_config_pins"].as_object().map(|m| m.len()), Some(1));
    assert!(pins["echo"]["installation_config_pins"]["model"]
        .as_str()
        .is_some_and(|p| p.starts_with("sha256:")));
    let mut cmd = d.command();
    cmd.env("MODEL_KEY", "sk-row-151");
    let gateway = Gateway::start(cmd, listen_addr(&d));
    let (code, _, stdout, stderr) =
        gateway.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(15));
    assert_eq!(code, Some(0), "clean exit; stderr {}", String::from_utf8_lossy(&stderr));
    assert!(stdout.is_empty() && stderr.is_empty());
}

/// config.md §11 row 153: serving captures the model credential (models.md §3.1), so a missing one is
/// `credential_unavailable`; the audit stage has run by then, so its directory stays like the artifact root.
#[test]
fn row153_model_credential_missing() {
    let mut d = Deployment::baseline();
    add_llm(&mut d, "model");
    write_model_echo(&mut d, json!({"catalog": false}));
    d.write_documents();
    let mut cmd = d.command();
    cmd.env_remove("MODEL_KEY");
    let output = run_with_deadline(cmd, Duration::from_secs(20));
    assert_startup_error(&output, "credential_unavailable", "config.md §11 row 153");
}

/// config.md §11 row 155: a model site has no snapshot pin (models.md §3.1), so a configured
/// `workflow/<alias>` key is an extra key: `provider_pin_mismatch`, with the other pins right.
#[test]
fn row155_a_workflow_snapshot_key_is_a_mismatch() {
    let mut d = Deployment::baseline();
    add_llm(&mut d, "model");
    write_model_echo(&mut d, json!({"catalog": false}));
    d.write_documents();
    let mut discover = d.command();
    discover.arg("--print-pins");
    let out = run_with_deadline(discover, Duration::from_secs(20));
    support::providers::copy_pins(&mut d, &out);
    tool(&mut d)["provider_snapshot_pins"] = json!({"workflow/model": format!("sha256:{}", "0".repeat(64))});
    d.frozen = false;
    d.write_documents();
    let mut cmd = d.command();
    cmd.env("MODEL_KEY", "sk-row-155");
    let output = run_with_deadline(cmd, Duration::from_secs(20));
    assert_startup_error(&output, "provider_pin_mismatch", "config.md §11 row 155");
}
