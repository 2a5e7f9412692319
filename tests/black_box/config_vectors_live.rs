//! config.md §11: the test vectors that need a live `mcp-server-fs` (rows 81–82, 107–116, 137) and the `brief`
//! halves of rows 28, 80, 83, 84, 120 and 135 (which `tests/black_box/config_vectors.rs` runs on `echo`), against the
//! real binary, with the full baseline of config.md §10 (`echo` and `brief`).
//!
//! The upstream is the stand-in `tests/fixtures/mcp-server-fs` (the pins.md §11.4 listing), copied per
//! test into its own bin directory that the test puts first on `PATH` (the copy's shebang names the real
//! interpreter, so the child needs nothing else on its `PATH`). Pins come from `--print-pins` ("pins
//! updated"); rows that change what the upstream advertises do so through the fixture's `flags` file,
//! which no pin covers. Same row-table style and contracts as `tests/black_box/config_vectors.rs`.

use crate::support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use support::{assert_startup_error, run_with_deadline, Deployment, Gateway};

const BRIEF_APP: &str = "local M = {}\n\nfunction M.run(input)\n  local text = mission(\"default\"):call(\"files.brief\", {})\n  return {value = text}\nend\n\nreturn M\n";
const BRIEF_FILES: &str = "local M = {}\n\nfunction M.brief(args)\n  local r = tool(\"notes.read\", {path = \"brief.txt\"})\n  if not r.ok then\n    fail(r.error)\n  end\n  return r.value.text\nend\n\nreturn M\n";
const BRIEF_RESULT: &str =
    "{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"string\"}},\"required\":[\"value\"]}\n";

/// The full baseline with the stand-in upstream on `PATH`.
struct Live {
    d: Deployment,
    bin: tempfile::TempDir,
    /// `PATH` for the gateway process.
    path: String,
}

impl Live {
    fn new() -> Live {
        let mut d = Deployment::baseline();
        let bin = tempfile::tempdir().expect("bin dir");
        let script = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-server-fs"),
        )
        .expect("fixture");
        let body = script.split_once('\n').map(|(_, rest)| rest).unwrap_or("");
        let fs = bin.path().join("mcp-server-fs");
        std::fs::write(&fs, format!("#!{}\n{body}", support::providers::python())).expect("write fixture");
        set_mode(&fs, 0o755);
        d.write_file("notes/brief.txt", "Today: ship it.\n");
        d.write_file(
            "brief/ptc.json",
            &serde_json::to_string_pretty(&json!({
                "version": 1, "effect": "read",
                "contracts": {"input_schema": {"path": "input.schema.json"},
                              "result_schema": {"path": "result.schema.json"}},
                "workflow": {"components": [{"id": "app", "path": "app.luau"}], "entry": "app.run"},
                "missions": {"default": {"components": [{"id": "files", "path": "files.luau"}],
                                         "providers": ["notes"]}},
                "providers": {"mission": [{"name": "notes"}]}
            }))
            .expect("json"),
        );
        d.write_file("brief/app.luau", BRIEF_APP);
        d.write_file("brief/files.luau", BRIEF_FILES);
        d.write_file("brief/input.schema.json", support::ECHO_SCHEMA);
        d.write_file("brief/result.schema.json", BRIEF_RESULT);
        d.gateway["tools"].as_array_mut().expect("tools").push(json!({
            "name": "brief", "title": "Brief", "description": "Summarise the notes.",
            "application": {"manifest": "brief/ptc.json"},
            "expected_application_content_digest": format!("sha256:{}", "0".repeat(64)), "installation_config_pins": {},
            "provider_snapshot_pins": {}
        }));
        let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
        Live { d, bin, path }
    }

    fn command(&self) -> std::process::Command {
        let mut cmd = self.d.command();
        cmd.env("PATH", &self.path);
        cmd
    }

    fn brief(&mut self) -> &mut Value {
        &mut self.d.gateway["tools"][1]
    }

    fn flag(&self, flag: &str) {
        std::fs::write(self.bin.path().join("flags"), flag).expect("flags");
    }

    /// `--print-pins`, copied into every tool; forgets that discovery started the upstream.
    fn pin(&mut self) {
        self.write();
        let mut cmd = self.command();
        cmd.arg("--print-pins");
        let out = run_with_deadline(cmd, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(0), "print-pins: {}", String::from_utf8_lossy(&out.stderr));
        let pins: Value = serde_json::from_slice(&out.stdout).expect("pins json");
        for tool in self.d.gateway["tools"].as_array_mut().expect("tools") {
            let name = tool["name"].as_str().expect("name").to_owned();
            for key in
                ["expected_application_content_digest", "installation_config_pins", "provider_snapshot_pins"]
            {
                tool[key] = pins[&name][key].clone();
            }
        }
        self.write();
        let _ = std::fs::remove_file(self.started());
    }

    fn write(&mut self) {
        self.d.frozen = false;
        self.d.write_documents();
    }

    fn started(&self) -> PathBuf {
        self.bin.path().join("started")
    }

    fn set_brief_manifest(&mut self, f: impl FnOnce(&mut Value)) {
        let path = self.d.path("brief/ptc.json");
        let mut m: Value = serde_json::from_slice(&std::fs::read(&path).expect("manifest")).expect("json");
        f(&mut m);
        self.d.write_file("brief/ptc.json", &serde_json::to_string_pretty(&m).expect("json"));
    }
}

fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// What a row expects.
enum Expect {
    Code(&'static str),
    Starts,
}

/// `prepare` runs on the pinned baseline; the documents are written after it.
fn check(row: u32, prepare: impl FnOnce(&mut Live), expect: Expect) {
    let mut live = Live::new();
    live.pin();
    prepare(&mut live);
    live.write();
    let context = format!("config.md §11 row {row}");
    match expect {
        Expect::Code(code) => {
            let output = run_with_deadline(live.command(), Duration::from_secs(30));
            assert_startup_error(&output, code, &context);
        }
        Expect::Starts => {
            let addr = SocketAddr::from(([127, 0, 0, 1], live.d.port));
            let gateway = Gateway::start(live.command(), addr);
            let (code, _, stdout, stderr) =
                gateway.signal_and_wait(nix::sys::signal::Signal::SIGTERM, Duration::from_secs(15));
            assert_eq!(code, Some(0), "{context}: clean exit; stderr {}", String::from_utf8_lossy(&stderr));
            assert!(stdout.is_empty() && stderr.is_empty(), "{context}: serve mode prints nothing");
        }
    }
}

/// A change to `brief`'s manifest with its content pin updated independently (discovery would refuse it).
fn brief_manifest(live: &mut Live, f: impl FnOnce(&mut Value)) {
    live.set_brief_manifest(f);
    let pin = support::content_pin::of(&live.d.path("brief/ptc.json"));
    live.brief()["expected_application_content_digest"] = json!(pin);
}

fn map_write(live: &mut Live) {
    live.d.host["install"]["notes"]["tools"]["write_text_file"] =
        json!({"as": "notes.write", "effect": "write"});
}

macro_rules! rows {
    ($($name:ident: $row:expr, $prepare:expr, $expect:expr;)*) => {
        $(#[test] fn $name() { check($row, $prepare, $expect); })*
    };
}

rows! {
    row000_baseline_starts: 0, |_| {}, Expect::Starts;
    row081_write_alias_without_allow: 81, map_write, Expect::Code("template_invalid");
    row082_write_alias_with_allow: 82, |l| { map_write(l); l.set_brief_manifest(|m| m["providers"]["mission"] = json!([{"name": "notes", "config": {"allow": ["notes.read"]}}])); l.pin(); }, Expect::Starts;
    row107_echo_pins_an_unused_installation: 107, |l| { let pin = l.brief()["installation_config_pins"]["notes"].clone(); l.d.gateway["tools"][0]["installation_config_pins"] = json!({"notes": pin}); }, Expect::Code("provider_pin_mismatch");
    row108_brief_installation_pins_empty: 108, |l| l.brief()["installation_config_pins"] = json!({}), Expect::Code("installation_pin_mismatch");
    row110_only_the_revision_changed: 110, |l| l.d.host["install"]["notes"]["installation_revision"] = json!("fs-1.0.1"), Expect::Starts;
    row111_snapshot_pin_of_another_value: 111, |l| l.brief()["provider_snapshot_pins"]["mission/notes"] = json!(format!("sha256:{}", "0".repeat(64))), Expect::Code("provider_pin_mismatch");
    row112_description_changed: 112, |l| l.flag("desc_changed"), Expect::Code("provider_pin_mismatch");
    row113_unmapped_tool_added: 113, |l| l.flag("extra_tool"), Expect::Starts;
    row114_read_text_file_gone: 114, |l| l.flag("no_read"), Expect::Code("provider_runtime_unavailable");
    // The `brief` halves of rows `tests/black_box/config_vectors.rs` runs on `echo`.
    row028_brief_installation_pins_removed: 28, |l| { l.brief().as_object_mut().map(|o| o.remove("installation_config_pins")); }, Expect::Code("config_invalid");
    row080_brief_selects_unknown_installation: 80, |l| brief_manifest(l, |m| { m["missions"]["default"]["providers"] = json!(["notes2"]); m["providers"]["mission"] = json!([{"name": "notes2"}]); }), Expect::Code("template_invalid");
    row083_brief_read_granted_write: 83, |l| { map_write(l); brief_manifest(l, |m| m["providers"]["mission"] = json!([{"name": "notes", "config": {"allow": ["notes.write"]}}])); }, Expect::Code("template_invalid");
    row084_brief_run_duration_above_host: 84, |l| brief_manifest(l, |m| m["limits"] = json!({"run_duration_ms": 30001})), Expect::Code("template_invalid");
    row120_brief_notes_in_workflow_list: 120, |l| brief_manifest(l, |m| m["providers"]["workflow"] = json!([{"name": "notes"}])), Expect::Code("provider_source_unsupported");
    row135_brief_mapping_description_lf: 135, |l| { l.d.host["install"]["notes"]["tools"]["read_text_file"]["description"] = json!("Read a file.\nUTF-8 only."); l.pin(); }, Expect::Starts;
}

#[test]
fn row109_args_changed_pins_unchanged_never_starts_the_upstream() {
    let mut live = Live::new();
    live.pin();
    live.d.host["install"]["notes"]["transport"]["args"] = json!(["--root", "docs"]);
    live.write();
    let output = run_with_deadline(live.command(), Duration::from_secs(30));
    assert_startup_error(&output, "installation_pin_mismatch", "config.md §11 row 109");
    assert!(!live.started().exists(), "row 109: mcp-server-fs is never started");
}

/// The pins of pins.md §11.2 and §11.3 byte for byte (the snapshot pin differs: it covers this stand-in's
/// executable, not the 30 bytes of §11.4).
#[test]
fn baseline_pins_match_pins_md() {
    let mut live = Live::new();
    live.pin();
    let brief = live.brief().clone();
    assert_eq!(
        brief["expected_application_content_digest"],
        "sha256:f478b324e6ac3f0d3784c1f71588f4f1132436a4013f16ee251589bb3211333d"
    );
    assert_eq!(
        brief["installation_config_pins"],
        json!({"notes": "sha256:26b11335d94e95f1936867f2b24ce06cee6e929cfb6e1327619dab108311c4a3"})
    );
    assert!(brief["provider_snapshot_pins"]["mission/notes"]
        .as_str()
        .is_some_and(|p| p.starts_with("sha256:")));
}

#[test]
fn row115_command_not_found() {
    // "installation pin updated": the pin covers the command name, not the executable, so discovery runs
    // once with a `no-such-server` present, which is then removed.
    check(
        115,
        |l| {
            let copy = l.bin.path().join("no-such-server");
            std::fs::copy(l.bin.path().join("mcp-server-fs"), &copy).expect("copy");
            l.d.host["install"]["notes"]["transport"]["command"] = json!("no-such-server");
            l.pin();
            std::fs::remove_file(&copy).expect("remove");
        },
        Expect::Code("provider_runtime_unavailable"),
    );
}

/// Row 116 (*F*): mode 0111 when the tests run unprivileged; as root (CI), whom mode bits do not stop,
/// the `fault-injection` point `executable_unreadable` makes the same read fail.
#[cfg(feature = "fault-injection")]
#[test]
fn row116_executable_unreadable_for_hashing() {
    let mut live = Live::new();
    live.pin();
    set_mode(&live.bin.path().join("mcp-server-fs"), 0o111);
    live.write();
    let mut command = live.command();
    if nix::unistd::geteuid().is_root() {
        command.env("PTC_FAULT", "executable_unreadable");
    }
    let output = run_with_deadline(command, Duration::from_secs(30));
    assert_startup_error(&output, "provider_pin_unavailable", "config.md §11 row 116");
    assert!(!live.started().exists(), "row 116: nothing is spawned");
}

#[test]
fn row137_command_found_on_the_childs_path() {
    check(
        137,
        |l| {
            l.d.host["credentials"]["fs_path"] = json!({"literal": l.bin.path().display().to_string()});
            l.d.host["install"]["notes"]["transport"]["env"] = json!({"PATH": {"binding": "fs_path"}});
            l.pin();
            l.path = std::env::var("PATH").unwrap_or_default();
        },
        Expect::Starts,
    );
}
