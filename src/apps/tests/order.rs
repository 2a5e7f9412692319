//! lifecycle.md §3.2 stage 5: the order of 5a–5i, within one tool and across tools, on the baseline.

use super::rows::*;
use super::*;
use crate::codes::StartupCode;
use crate::config::Mode;

#[test]
fn stage_order() {
    use StartupCode as C;
    let table: Vec<Row> = vec![
        (
            "5b before 5c",
            |d| {
                d.edit_manifest("echo", |m| set(m, &["events", "policy"], Value::from("private")));
                std::fs::remove_file(d.f.path("echo/app.luau")).unwrap();
            },
            true,
            Mode::Serve,
            Err(C::TemplateInvalid),
        ),
        // Row 69 with a stale pin: the closure refuses first.
        (
            "5c before 5d",
            |d| {
                d.f.write("echo/app.luau", "changed");
                d.edit_manifest("echo", |m| {
                    set(m, &["workflow", "components"], parse(r#"[{"id":"app","path":"./app.luau"}]"#))
                });
            },
            false,
            Mode::Serve,
            Err(C::TemplateInvalid),
        ),
        (
            "5d before 5e",
            |d| d.f.write("echo/app.luau", "local M = {\n"),
            false,
            Mode::Serve,
            Err(C::ApplicationContentDigestMismatch),
        ),
        (
            "5e before 5f",
            |d| {
                d.f.write("brief/app.luau", "local M = {\n");
                d.edit_manifest("brief", |m| {
                    set(m, &["providers", "workflow"], parse(r#"[{"name":"notes"}]"#))
                });
            },
            true,
            Mode::Serve,
            Err(C::TemplateInvalid),
        ),
        (
            "5f before 5g",
            |d| {
                add_remote(d, "remote.echo", true);
                brief_grants(d, &["notes", "remote"]);
                d.edit_manifest("brief", |m| set(m, &["effect"], Value::from("write")));
            },
            true,
            Mode::Serve,
            Err(C::ProviderSourceUnsupported),
        ),
        // config.md §6.10: the forward target is a 5e check, so it precedes S1 of 5f.
        (
            "forward target before S1",
            |d| {
                add_model(d);
                d.edit_manifest("brief", |m| {
                    set(m, &["workflow"], parse(r#"{"forward":{"mission":"default","tool":"notes.read"}}"#));
                    set(m, &["providers", "mission"], parse(r#"[{"name":"model"}]"#));
                    set(m, &["missions", "default", "providers"], parse(r#"["model"]"#));
                });
            },
            true,
            Mode::Serve,
            Err(C::TemplateInvalid),
        ),
        // `brief` sorts before `echo`: its 5e failure wins over `echo`'s 5d failure.
        (
            "tools in name order",
            |d| {
                d.f.write("brief/app.luau", "local M = {\n");
                let pin = Deployment::current_pin(&d.f.path("brief/ptc.json")).unwrap();
                d.tool_mut("brief").expected_application_content_digest = Some(pin);
                change_echo_source(d);
            },
            false,
            Mode::Serve,
            Err(C::TemplateInvalid),
        ),
        // 5h runs after every tool passed 5a–5g (row 78), and 5i after 5h.
        (
            "5h after all tools",
            |d| {
                row_77(d);
                let pin = Deployment::current_pin(&d.f.path("brief/ptc.json")).unwrap();
                d.tool_mut("brief").expected_application_content_digest = Some(pin);
                row_88(d);
            },
            false,
            Mode::Serve,
            Err(C::ApplicationContentDigestMismatch),
        ),
    ];
    for (row, edit, update_pins, mode, want) in table {
        let mut d = Deployment::baseline();
        d.update_pins = update_pins;
        edit(&mut d);
        assert_eq!(d.build(mode).map(|_| ()), want, "{row}");
    }
}
