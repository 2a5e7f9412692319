//! What a person sees when a document or an application is wrong (lifecycle.md §1.5, CK33–CK46): the exact
//! text of `ptc check`, and of `ptc pin` and `--print-pins` (the error line of §5.1, then the same
//! explanation, lifecycle.md §1.3). `{dir}` stands for the deployment directory.

use crate::support;

use std::process::Output;
use std::time::Duration;

use serde_json::json;
use support::{run_with_deadline, Deployment, ECHO_PIN, TOKEN};

const DEADLINE: Duration = Duration::from_secs(30);

fn dir_of(d: &Deployment) -> String {
    std::fs::canonicalize(d.dir.path()).expect("canonical dir").display().to_string()
}

fn text(output: &[u8]) -> String {
    String::from_utf8_lossy(output).into_owned()
}

/// `ptc check`: exit 78, stdout exactly `want`, stderr empty.
fn assert_check(d: &Deployment, want: &str, context: &str) -> Output {
    let output = run_with_deadline(d.check_command(), DEADLINE);
    assert_eq!(text(&output.stdout), want.replace("{dir}", &dir_of(d)), "{context}: stdout");
    assert_eq!((output.status.code(), text(&output.stderr)), (Some(78), String::new()), "{context}");
    output
}

/// `ptc pin CONFIG`, or `ptc gateway CONFIG --print-pins`: exit 78, stdout empty, stderr the error line
/// and then exactly `explained`.
fn assert_explained(d: &Deployment, args: &[&str], code: &str, explained: &str, context: &str) {
    let mut cmd = support::ptc();
    cmd.current_dir(d.dir.path()).args(args).env("GATEWAY_TOKEN", TOKEN);
    let output = run_with_deadline(cmd, DEADLINE);
    let want = format!("{{\"error\":\"{code}\"}}\n{}", explained.replace("{dir}", &dir_of(d)));
    assert_eq!(text(&output.stderr), want, "{context}: stderr");
    assert_eq!((output.status.code(), output.stdout.len()), (Some(78), 0), "{context}");
}

/// CK33: a JSON syntax error names its byte, line and column, and shows the line with a caret under the
/// refused character.
#[test]
fn ck33_a_syntax_error_shows_its_line_and_a_caret() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let pretty = serde_json::to_string_pretty(&d.gateway).expect("json");
    let broken = pretty.replacen("\"max_concurrent_runs\": 4,", "\"max_concurrent_runs\": 4,,", 1);
    d.write_file("ptc-gateway.json", &broken);
    let byte = broken.find(",,").expect("the doubled comma") + 1;
    let line = broken[..byte].matches('\n').count() + 1;
    let want = format!(
        "config_unavailable: the gateway document cannot be read or is not strict JSON\n  stage: 1 gateway document\n  \
         document: {{dir}}/ptc-gateway.json\n  reason: not strict JSON: syntax at byte {byte} (line {line}, column 30)\n  \
         excerpt:     \"max_concurrent_runs\": 4,,\n           {}^\n",
        " ".repeat(29)
    );
    assert_check(&d, &want, "CK33");
}

/// CK34–CK37: a schema refusal names the member: a misspelled required member and the member that is
/// there instead; an unknown member and the closest known one; a listen path other than `/mcp`; a tool
/// without pins, with the way out.
#[test]
fn ck34_to_ck37_schema_refusals_name_the_member() {
    type Mutate = fn(&mut Deployment);
    let rows: [(&str, Mutate, &str, &str); 4] = [
        (
            "CK34",
            |d| {
                let admission = d.gateway["admission"].as_object_mut().expect("admission");
                let runs = admission.remove("max_concurrent_runs").expect("runs");
                admission.insert("max_concurent_runs".into(), runs);
            },
            "/admission",
            "the required member \"max_concurrent_runs\" is missing; \"max_concurent_runs\" is there instead: a \
             misspelling?",
        ),
        (
            "CK35",
            |d| d.gateway["listen"]["allowed_origin"] = json!([]),
            "/listen/allowed_origin",
            "the member \"allowed_origin\" is not allowed here; the closest allowed member is \"allowed_origins\"",
        ),
        ("CK36", |d| d.gateway["listen"]["path"] = json!("/tools"), "/listen/path", "the value must be \"/mcp\""),
        (
            "CK37",
            |d| {
                let tool = d.gateway["tools"][0].as_object_mut().expect("tool");
                for member in ["expected_application_content_digest", "installation_config_pins", "provider_snapshot_pins"] {
                    tool.remove(member);
                }
            },
            "/tools/0",
            "the required member \"expected_application_content_digest\" is missing",
        ),
    ];
    for (id, mutate, pointer, reason) in rows {
        let mut d = Deployment::baseline();
        mutate(&mut d);
        d.write_documents();
        let hint = if id == "CK37" {
            "  hint: the tool has no pins yet: run `ptc pin CONFIG` to compute and write them\n"
        } else {
            ""
        };
        let want = format!(
            "config_invalid: the gateway document is not valid\n  stage: 1 gateway document\n  document: \
             {{dir}}/ptc-gateway.json\n  pointer: {pointer}\n  reason: {reason}\n{hint}"
        );
        assert_check(&d, &want, id);
    }
}

/// The Luau message of the broken component below (Luau's own text).
const LUAU_MESSAGE: &str = "Expected identifier when parsing expression, got '='";

fn broken_component(d: &Deployment) {
    d.write_file("echo/app.luau", &support::ECHO_LUAU.replace("return input", "return = input"));
}

/// CK38: `ptc check` of an edited component that does not compile names its file, line and Luau's
/// message, and does not send the person to `ptc pin`.
#[test]
fn ck38_check_names_the_component_that_does_not_compile() {
    let mut d = Deployment::baseline();
    d.write_documents();
    broken_component(&d);
    let computed = support::content_pin::of(&d.path("echo/ptc.json"));
    let want = format!(
        "application_content_digest_mismatch: a tool's application changed since it was pinned\n  stage: 5 templates\n  \
         document: {{dir}}/echo/ptc.json\n  tool: echo\n  component: app.luau:4\n  field: \
         expected_application_content_digest\n  reason: the application changed, and a component does not compile\n  \
         message: {LUAU_MESSAGE}\n  expected: {ECHO_PIN}\n  computed: {computed}\n  hint: fix the component first: \
         pinning an application that does not compile would not help\n"
    );
    let output = assert_check(&d, &want, "CK38");
    assert!(!text(&output.stdout).contains("ptc pin"), "CK38: no suggestion to pin");
}

/// CK39: `ptc pin` and `--print-pins` of the same application explain `template_invalid` with the
/// component, line and message.
#[test]
fn ck39_pin_and_print_pins_explain_a_component_that_does_not_compile() {
    let mut d = Deployment::baseline();
    d.write_documents();
    broken_component(&d);
    let explained = format!(
        "template_invalid: a tool's application is not valid\n  document: {{dir}}/echo/ptc.json\n  tool: echo\n  \
         component: app.luau:4\n  reason: a component does not compile\n  message: {LUAU_MESSAGE}\n"
    );
    assert_explained(&d, &["pin", "ptc-gateway.json"], "template_invalid", &explained, "CK39 pin");
    let print_pins = ["gateway", "ptc-gateway.json", "--print-pins"];
    assert_explained(&d, &print_pins, "template_invalid", &explained, "CK39 --print-pins");
}

const BROKEN_CONTRACT: &str = "{\n  \"type\": \"object\"\n  \"title\": \"echo\"\n}\n";

/// CK40: a contract file that is not JSON: its file, line and column, and the line with a caret; `ptc
/// check` (where the edit is first a changed application) does not send the person to `ptc pin` either.
#[test]
fn ck40_a_contract_that_is_not_json_names_its_file_line_and_column() {
    let mut d = Deployment::baseline();
    d.write_documents();
    d.write_file("echo/schema.json", BROKEN_CONTRACT);
    let explained = "template_invalid: a tool's application is not valid\n  document: {dir}/echo/ptc.json\n  tool: echo\n  \
                     component: schema.json:3:3\n  reason: not strict JSON: syntax at byte 23 (line 3, column 3)\n  \
                     excerpt:   \"title\": \"echo\"\n             ^\n";
    assert_explained(&d, &["pin", "ptc-gateway.json"], "template_invalid", explained, "CK40 pin");
    let computed = support::content_pin::of(&d.path("echo/ptc.json"));
    let want = format!(
        "application_content_digest_mismatch: a tool's application changed since it was pinned\n  stage: 5 templates\n  \
         document: {{dir}}/echo/ptc.json\n  tool: echo\n  component: schema.json:3:3\n  field: \
         expected_application_content_digest\n  reason: the application changed, and a contract file is not strict \
         JSON\n  excerpt:   \"title\": \"echo\"\n             ^\n  expected: {ECHO_PIN}\n  computed: {computed}\n  \
         hint: fix the contract first: pinning an application with a broken contract would not help\n"
    );
    assert_check(&d, &want, "CK40 check");
}

/// CK41: the host document may hold literal credentials, so a syntax error in it names the position only.
#[test]
fn ck41_a_host_document_syntax_error_shows_no_text() {
    let mut d = Deployment::baseline();
    d.write_documents();
    d.write_file(
        "ptc-host.json",
        "{\n  \"credentials\": {\"gateway\": {\"literal\": \"SECRET-literal\"}},,\n}\n",
    );
    let want = "host_invalid: the host document is not valid\n  stage: 2 host document\n  document: {dir}/ptc-host.json\n  \
                reason: not strict JSON: syntax at byte 62 (line 2, column 61)\n";
    let output = assert_check(&d, want, "CK41");
    assert!(!text(&output.stdout).contains("SECRET"), "CK41: no text of the host document");
}

/// CK42: the same deployment started twice: the second start's `startup refused` line (at `info`) names
/// the held lock file and the pid of the gateway that holds it; stderr still ends with the one error line.
#[test]
fn ck42_a_held_lock_names_its_file_and_its_holder() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], d.port));
    let first = support::Gateway::start(d.command(), addr);
    let mut second = d.command();
    second.env("PTC_LOG", "info");
    let output = run_with_deadline(second, DEADLINE);
    let stderr = text(&output.stderr);
    let logged = format!(
        "startup refused code=\"artifact_root_unavailable\" facts=reason: the lock is held by another live gateway \
         (pid {}); path: {}/artifacts/events/.gateway-lock",
        first.child.id(),
        d.dir.path().display()
    );
    assert_eq!(stderr.lines().filter(|l| l.ends_with(&logged)).count(), 1, "{stderr}");
    assert_eq!(stderr.lines().last(), Some("{\"error\":\"artifact_root_unavailable\"}"), "{stderr}");
    assert_eq!(output.status.code(), Some(78));
}

/// CK43: a component that raises while it loads (the startup probe): `ptc pin` gives Luau's message, whose
/// chunk names the component's file and line.
#[test]
fn ck43_a_component_that_fails_to_load_gives_luaus_message() {
    let mut d = Deployment::baseline();
    d.write_documents();
    d.write_file("echo/app.luau", "local missing = nil\nlocal x = missing.field\nreturn {}\n");
    let explained = "template_invalid: a tool's application is not valid\n  document: {dir}/echo/ptc.json\n  tool: echo\n  \
                     reason: a component failed to load\n  message: workflow/app (app.luau):2: attempt to index nil \
                     with 'field'\n";
    assert_explained(&d, &["pin", "ptc-gateway.json"], "template_invalid", explained, "CK43");
}

/// CK44: `ptc check` probes the PCC address too: something listening there (and nothing on the `/mcp`
/// address) is `listener_unavailable` naming the PCC address.
#[test]
fn ck44_check_finds_the_pcc_address_in_use() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let taken = std::net::TcpListener::bind(("127.0.0.1", d.pcc_port)).expect("hold the pcc port");
    let want = format!(
        "listener_unavailable: a listener cannot be bound\n  stage: 11 listeners\n  reason: something already \
         listens on this address\n  address: 127.0.0.1:{}\n",
        d.pcc_port
    );
    assert_check(&d, &want, "CK44");
    drop(taken);
}

/// CK45: serve mode's `startup refused` line (at `info`) names the listen address that could not be bound
/// and the operating system's reason.
#[test]
fn ck45_an_unbindable_listener_names_its_address_and_the_os_reason() {
    let mut d = Deployment::baseline();
    d.write_documents();
    let taken = std::net::TcpListener::bind(("127.0.0.1", d.port)).expect("hold the port");
    let mut cmd = d.command();
    cmd.env("PTC_LOG", "info");
    let output = run_with_deadline(cmd, DEADLINE);
    let stderr = text(&output.stderr);
    let logged = format!(
        "startup refused code=\"listener_unavailable\" facts=reason: binding the address failed: Address already \
         in use (os error 98); address: 127.0.0.1:{}",
        d.port
    );
    assert_eq!(stderr.lines().filter(|l| l.ends_with(&logged)).count(), 1, "{stderr}");
    assert_eq!(stderr.lines().last(), Some("{\"error\":\"listener_unavailable\"}"), "{stderr}");
    assert_eq!(output.status.code(), Some(78));
    drop(taken);
}

/// CK46: a file of the application that cannot be read is named as the manifest names it, with the
/// operating system's reason.
#[test]
fn ck46_a_missing_component_is_named_with_the_os_reason() {
    let mut d = Deployment::baseline();
    d.write_documents();
    std::fs::remove_file(d.path("echo/app.luau")).expect("remove the component");
    let want = "template_invalid: a tool's application is not valid\n  stage: 5 templates\n  document: \
                {dir}/echo/ptc.json\n  tool: echo\n  component: app.luau\n  reason: a closure file cannot be read \
                (No such file or directory)\n";
    assert_check(&d, want, "CK46");
}
