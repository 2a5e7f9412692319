//! `ptc pin` (lifecycle.md §1.3), vectors PC1–PC3: after an edit, the command writes the new pins into
//! the gateway document, keeping every other byte and the file's mode, prints one line per changed
//! member, and the gateway serves; a refused discovery writes nothing.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use std::time::Duration;

use serde_json::json;
use support::providers::{call, structured, Fx};
use support::{ptc, run_with_deadline, Deployment, Gateway};

fn pin(d: &Deployment) -> Output {
    let mut cmd = ptc();
    cmd.current_dir(d.dir.path()).args(["pin", "ptc-gateway.json"]).env("FX_FLAGS", "none");
    run_with_deadline(cmd, Duration::from_secs(30))
}

fn mode(d: &Deployment) -> u32 {
    std::fs::metadata(d.config_path()).expect("config").permissions().mode() & 0o777
}

/// PC1: an edited Luau component, pinned by the command, then served; a second run changes nothing.
#[test]
fn pc1_an_edited_component_is_pinned_and_served() {
    let mut d = Deployment::baseline();
    d.write_documents();
    std::fs::set_permissions(d.config_path(), std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let before = std::fs::read_to_string(d.config_path()).expect("config");
    let old = d.gateway["tools"][0]["expected_application_content_digest"].as_str().expect("pin").to_owned();
    let source = std::fs::read_to_string(d.path("echo/app.luau")).expect("app");
    d.write_file("echo/app.luau", &format!("-- edited\n{source}"));
    let new = support::content_pin::of(&d.path("echo/ptc.json"));
    assert_ne!(old, new);
    let out = pin(&d);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty());
    assert_eq!(
        String::from_utf8(out.stdout).expect("utf-8"),
        format!("echo: expected_application_content_digest \"{old}\" → \"{new}\"\n")
    );
    let after = std::fs::read_to_string(d.config_path()).expect("config");
    assert_eq!(after, before.replace(&old, &new), "only the digest changed");
    assert_eq!(mode(&d), 0o640, "the mode is kept");
    let leftovers: Vec<_> = std::fs::read_dir(d.dir.path())
        .expect("dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("ptc-pin"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file is left");
    // It serves, and a second run has nothing to change.
    {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], d.port));
        let _gateway = Gateway::start(d.command(), addr);
        // The baseline's echo admits exactly `{}` (its schema is `{"type":"object"}`, config.md §6.7).
        let (status, body) = call(addr, "echo", 1, &json!({}));
        assert_eq!(status, 200, "{body}");
        assert_eq!(structured(&body), Some(json!({})));
    }
    let again = pin(&d);
    assert_eq!((again.status.code(), again.stdout.len()), (Some(0), 0));
    assert_eq!(std::fs::read_to_string(d.config_path()).expect("config"), after);
}

/// PC2: a refused discovery is reported as `ptc gateway --print-pins` reports it, and writes nothing.
#[test]
fn pc2_a_refusal_writes_nothing() {
    let mut d = Deployment::baseline();
    d.host["install"]["notes"]["source"] = json!("nope");
    d.write_documents();
    let source = std::fs::read_to_string(d.path("echo/app.luau")).expect("app");
    d.write_file("echo/app.luau", &format!("-- edited\n{source}"));
    let before = d.tree();
    let text = std::fs::read(d.config_path()).expect("config");
    let out = pin(&d);
    support::assert_explained_startup_error(&out, "host_invalid", "ptc pin");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "{{\"error\":\"host_invalid\"}}\nhost_invalid: the host document is not valid\n  document: {}\n  \
             pointer: /install/notes/source\n  reason: the tag names no known shape\n",
            d.path("ptc-host.json").display()
        )
    );
    assert_eq!(std::fs::read(d.config_path()).expect("config"), text);
    assert_eq!(d.tree(), before);
}

/// PC3: a provider tool with empty pin maps gets its installation and snapshot pins, then serves.
#[test]
fn pc3_a_provider_tool_gets_its_maps() {
    let fx = Fx::new("modern");
    let mut d = fx.d;
    d.write_documents();
    let out = pin(&d);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = String::from_utf8(out.stdout).expect("utf-8");
    let fields: Vec<&str> = lines
        .lines()
        .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .map(|s| Box::leak(s.into_boxed_str()) as &str)
        .collect();
    assert_eq!(
        fields,
        [
            "fwd: installation_config_pins",
            "fwd: provider_snapshot_pins",
            "mission: installation_config_pins",
            "mission: provider_snapshot_pins"
        ],
        "{lines}"
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.config_path()).expect("config")).expect("json");
    assert!(written["tools"][1]["provider_snapshot_pins"]["mission/fx"]
        .as_str()
        .is_some_and(|p| p.starts_with("sha256:")));
    // Each line is exactly `<tool>: <member> {} → <the value written>`, the value as deterministic JSON.
    let mut want = String::new();
    for (index, tool) in [(0, "fwd"), (1, "mission")] {
        for field in ["installation_config_pins", "provider_snapshot_pins"] {
            let value = serde_json::to_string(&written["tools"][index][field]).expect("json");
            want.push_str(&format!("{tool}: {field} {{}} → {value}\n"));
        }
    }
    assert_eq!(lines, want);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], d.port));
    let mut cmd = d.command();
    cmd.env("FX_FLAGS", "none");
    let _gateway = Gateway::start(cmd, addr);
    let (status, body) = call(addr, "mission", 1, &json!({"alias": "fx.echo", "args": {"k": 1}}));
    assert_eq!(status, 200, "{body}");
    assert_eq!(structured(&body).map(|v| v["value"].clone()), Some(json!({"k": 1})));
}
