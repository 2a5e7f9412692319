//! Tests for credential capture (config.md §7.3, §8; §11 rows 58, 59, 98–104).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::*;
use crate::config::envfile::EnvFileErrorKind;
use crate::config::host::{
    Ceilings, HttpTransport, Installation, McpInstallation, ProtocolEra, Source, StaticHeader, StdioTransport,
};
use crate::config::secret::TempDir;
use CredentialErrorKind::*;

const A32: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn host(credentials: Vec<(&str, CredentialSource)>) -> HostConfig {
    HostConfig {
        document_dir: PathBuf::from("/"),
        document_path: PathBuf::from("/ptc-host.json"),
        schema_reference: None,
        credentials: credentials.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        install: BTreeMap::new(),
        run_duration_ms: 30_000,
    }
}

fn env(var: &str) -> CredentialSource {
    CredentialSource::Env(var.to_owned())
}

fn literal(value: &str) -> CredentialSource {
    CredentialSource::Literal(value.to_owned())
}

fn request(binding: &str, in_header: bool) -> BindingRequest {
    BindingRequest { binding: binding.to_owned(), in_header }
}

/// One capture scenario: credential files to write, an environment file, the host credentials, the
/// bearer binding, the provider requests, and the expected outcome.
struct Case {
    name: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    env_file: Option<&'static [u8]>,
    credentials: Vec<(&'static str, Source2)>,
    bearer: Option<&'static str>,
    providers: Vec<BindingRequest>,
    expect: Expect,
}

/// A credential source whose `file` path is relative to the case's temporary directory.
enum Source2 {
    Env(&'static str),
    File(&'static str),
    Literal(&'static str),
}

/// The expected outcome: what a capture holds, or the failing kind and binding.
type Expect = Result<Expected, (CredentialErrorKind, Option<&'static str>)>;

/// What a successful capture holds.
struct Expected {
    bearer: Option<String>,
    bindings: Vec<(&'static str, String)>,
}

fn ok(bearer: Option<&str>, bindings: Vec<(&'static str, &str)>) -> Expect {
    Ok(Expected {
        bearer: bearer.map(str::to_owned),
        bindings: bindings.into_iter().map(|(k, v)| (k, v.to_owned())).collect(),
    })
}

fn run(case: &Case) {
    let dir = TempDir::new("credentials");
    for (name, bytes) in &case.files {
        dir.write(name, bytes);
    }
    let env_path = case.env_file.map(|bytes| dir.write("e.env", bytes));
    let credentials = case
        .credentials
        .iter()
        .map(|(k, s)| {
            let source = match s {
                Source2::Env(var) => env(var),
                Source2::File(name) => CredentialSource::File(dir.path(name)),
                Source2::Literal(value) => literal(value),
            };
            (*k, source)
        })
        .collect();
    let host = host(credentials);
    let got = capture(&host, env_path.as_deref(), case.bearer, &case.providers);
    match (&got, &case.expect) {
        (Ok(captured), Ok(expected)) => {
            assert_eq!(captured.bearer().map(|s| s.expose().to_owned()), expected.bearer, "{}", case.name);
            let bindings: Vec<(&str, String)> = captured
                .bindings()
                .map(|b| (b, captured.get(b).map(|s| s.expose().to_owned()).unwrap_or_default()))
                .collect();
            let wanted: Vec<(&str, String)> =
                expected.bindings.iter().map(|(k, v)| (*k, v.clone())).collect();
            assert_eq!(bindings, wanted, "{}", case.name);
        }
        (Err(e), Err((kind, binding))) => {
            assert_eq!((e.kind, e.binding.as_deref()), (*kind, *binding), "{}", case.name);
            assert_eq!(e.code(), StartupCode::CredentialUnavailable);
        }
        (got, _) => panic!("{}: unexpected {got:?}", case.name),
    }
}

fn bearer_env_case(name: &'static str, line: &'static [u8], expect: Expect) -> Case {
    Case {
        name,
        files: vec![],
        env_file: Some(line),
        credentials: vec![("gateway", Source2::Env("PTC_TEST_GATEWAY_TOKEN"))],
        bearer: Some("gateway"),
        providers: vec![],
        expect,
    }
}

fn bearer_file_case(name: &'static str, bytes: Vec<u8>, expect: Expect) -> Case {
    Case {
        name,
        files: vec![("token", bytes)],
        env_file: None,
        credentials: vec![("gateway", Source2::File("token"))],
        bearer: Some("gateway"),
        providers: vec![],
        expect,
    }
}

fn provider_file_case(name: &'static str, bytes: &[u8], in_header: bool, expect: Expect) -> Case {
    Case {
        name,
        files: vec![("secret", bytes.to_vec())],
        env_file: None,
        credentials: vec![("api", Source2::File("secret"))],
        bearer: None,
        providers: vec![request("api", in_header)],
        expect,
    }
}

/// The bearer token (config.md §8.4; §11 rows 59, 99–101, 104).
#[test]
fn bearer_table() {
    let gw = Some("gateway");
    let long = "b".repeat(4096);
    let too_long: &'static [u8] =
        Box::leak(format!("PTC_TEST_GATEWAY_TOKEN={}b\n", long).into_bytes().into_boxed_slice());
    let max: &'static [u8] =
        Box::leak(format!("PTC_TEST_GATEWAY_TOKEN={long}\n").into_bytes().into_boxed_slice());
    let cases = vec![
        bearer_env_case(
            "32 a",
            b"PTC_TEST_GATEWAY_TOKEN=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            ok(Some(A32), vec![]),
        ),
        bearer_env_case(
            "31 bytes",
            b"PTC_TEST_GATEWAY_TOKEN=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            Err((BearerLength, gw)),
        ),
        bearer_env_case("4096 bytes", max, ok(Some(&long), vec![])),
        bearer_env_case("4097 bytes", too_long, Err((BearerLength, gw))),
        bearer_env_case(
            "a space",
            b"PTC_TEST_GATEWAY_TOKEN='aaaaaaaaaaaaaaaa aaaaaaaaaaaaaaaa'",
            Err((BearerSyntax, gw)),
        ),
        bearer_env_case(
            "trailing ==x",
            b"PTC_TEST_GATEWAY_TOKEN=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa==x",
            Err((BearerSyntax, gw)),
        ),
        bearer_env_case(
            "trailing ==",
            b"PTC_TEST_GATEWAY_TOKEN=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa==",
            ok(Some("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=="), vec![]),
        ),
        bearer_env_case(
            "every token68 character",
            b"PTC_TEST_GATEWAY_TOKEN=AZaz09-._~+/AZaz09-._~+/AZaz09-.=",
            ok(Some("AZaz09-._~+/AZaz09-._~+/AZaz09-.="), vec![]),
        ),
        bearer_env_case(
            "only padding",
            b"PTC_TEST_GATEWAY_TOKEN================================================",
            Err((BearerSyntax, gw)),
        ),
        bearer_env_case(
            "non-ASCII",
            b"PTC_TEST_GATEWAY_TOKEN=\xc3\xa9aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            Err((BearerSyntax, gw)),
        ),
        bearer_env_case(
            "trimmed by normalisation",
            b"PTC_TEST_GATEWAY_TOKEN=\"\\t aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \\n\"",
            ok(Some(A32), vec![]),
        ),
        // Row 101: the empty file value wins over any process value, then fails as empty.
        bearer_env_case("empty file value", b"PTC_TEST_GATEWAY_TOKEN=", Err((Empty, gw))),
        bearer_env_case("absent", b"OTHER=1", Err((EnvAbsent, gw))),
        bearer_file_case("file", format!("{A32}\n").into_bytes(), ok(Some(A32), vec![])),
        bearer_file_case("file with CRLF", format!("\r\n{A32}\r\n").into_bytes(), ok(Some(A32), vec![])),
        bearer_file_case(
            "file of 65,536 bytes",
            {
                let mut bytes = A32.as_bytes().to_vec();
                bytes.resize(65_536, b'\n');
                bytes
            },
            ok(Some(A32), vec![]),
        ),
        bearer_file_case("file of 65,537 bytes", vec![b'a'; 65_537], Err((FileTooLarge, gw))),
        bearer_file_case(
            "file not UTF-8",
            b"\xffaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".to_vec(),
            Err((FileNotUtf8, gw)),
        ),
        bearer_file_case(
            "file two lines",
            format!("{A32}\n{A32}\n").into_bytes(),
            Err((ForbiddenCharacter, gw)),
        ),
        Case {
            name: "literal bearer (row 59)",
            files: vec![],
            env_file: None,
            credentials: vec![("gateway", Source2::Literal(A32))],
            bearer: gw,
            providers: vec![],
            expect: Err((LiteralBearer, gw)),
        },
        Case {
            name: "no credentials (row 58)",
            files: vec![],
            env_file: None,
            credentials: vec![],
            bearer: gw,
            providers: vec![],
            expect: Err((UnknownBinding, gw)),
        },
        Case {
            name: "missing credential file",
            files: vec![],
            env_file: None,
            credentials: vec![("gateway", Source2::File("nope"))],
            bearer: gw,
            providers: vec![],
            expect: Err((FileUnreadable(std::io::ErrorKind::NotFound), gw)),
        },
        Case {
            name: "credential file is a directory",
            files: vec![],
            env_file: None,
            credentials: vec![("gateway", Source2::File(""))],
            bearer: gw,
            providers: vec![],
            expect: Err((FileNotRegular, gw)),
        },
    ];
    for case in &cases {
        run(case);
    }
}

/// Provider bindings: normalisation (config.md §8.3.1–2), the header rule (config.md §8.3.3), literals,
/// read-once.
#[test]
fn provider_table() {
    let api = Some("api");
    let cases = vec![
        provider_file_case("plain", b"  s3cret \n", false, ok(None, vec![("api", "s3cret")])),
        provider_file_case("empty", b"", false, Err((Empty, api))),
        provider_file_case("whitespace only", b" \t\r\n ", false, Err((Empty, api))),
        provider_file_case("inner LF", b"a\nb", false, Err((ForbiddenCharacter, api))),
        provider_file_case("inner CR", b"a\rb", false, Err((ForbiddenCharacter, api))),
        provider_file_case("inner NUL", b"a\0b", false, Err((ForbiddenCharacter, api))),
        provider_file_case("trailing NUL is not trimmed", b"ab\0", false, Err((ForbiddenCharacter, api))),
        provider_file_case("non-ASCII outside a header", "é".as_bytes(), false, ok(None, vec![("api", "é")])),
        provider_file_case("non-ASCII in a header", "é".as_bytes(), true, Err((HeaderCharacter, api))),
        provider_file_case("DEL in a header", b"a\x7fb", true, Err((HeaderCharacter, api))),
        provider_file_case("control in a header", b"a\x01b", true, Err((HeaderCharacter, api))),
        provider_file_case("HTAB and space in a header", b"a\t b~", true, ok(None, vec![("api", "a\t b~")])),
        Case {
            name: "literal and env, merged requests",
            files: vec![],
            env_file: Some(b"PTC_TEST_TZ=Europe/Paris\n"),
            credentials: vec![("tz", Source2::Env("PTC_TEST_TZ")), ("lit", Source2::Literal(" v "))],
            bearer: None,
            providers: vec![request("tz", false), request("lit", false), request("tz", true)],
            expect: ok(None, vec![("lit", "v"), ("tz", "Europe/Paris")]),
        },
        Case {
            name: "header use of one request applies",
            files: vec![],
            env_file: None,
            credentials: vec![("lit", Source2::Literal("é"))],
            bearer: None,
            providers: vec![request("lit", false), request("lit", true)],
            expect: Err((HeaderCharacter, Some("lit"))),
        },
        Case {
            name: "unknown provider binding",
            files: vec![],
            env_file: None,
            credentials: vec![],
            bearer: None,
            providers: vec![request("ghost", false)],
            expect: Err((UnknownBinding, Some("ghost"))),
        },
        Case {
            name: "unrequested bindings are never read",
            files: vec![],
            env_file: None,
            credentials: vec![
                ("unused", Source2::File("missing")),
                ("absent", Source2::Env("PTC_TEST_UNSET_1")),
            ],
            bearer: None,
            providers: vec![],
            expect: ok(None, vec![]),
        },
        Case {
            name: "bearer first, then providers in name order",
            files: vec![],
            env_file: Some(b"B=x\n"),
            credentials: vec![
                ("gateway", Source2::Env("PTC_TEST_UNSET_2")),
                ("b", Source2::Env("B")),
                ("a", Source2::Env("PTC_TEST_UNSET_3")),
            ],
            bearer: Some("gateway"),
            providers: vec![request("b", false), request("a", false)],
            expect: Err((EnvAbsent, Some("gateway"))),
        },
        Case {
            name: "first failing provider in name order",
            files: vec![],
            env_file: Some(b"B=\n"),
            credentials: vec![("b", Source2::Env("B")), ("a", Source2::Env("PTC_TEST_UNSET_4"))],
            bearer: None,
            providers: vec![request("b", false), request("a", false)],
            expect: Err((EnvAbsent, Some("a"))),
        },
    ];
    for case in &cases {
        run(case);
    }
}

/// The environment file is read once, whether or not a binding uses it, and its failures are capture
/// failures (config.md §7.1; §11 rows 102, 103).
#[test]
fn env_file_failures() {
    let dir = TempDir::new("credentials-envfile");
    let host = host(vec![]);
    let missing = dir.path("e.env");
    let err = capture(&host, Some(&missing), None, &[]).err();
    assert_eq!(
        err.map(|e| e.kind),
        Some(EnvFile(crate::config::envfile::EnvFileError {
            kind: EnvFileErrorKind::Unreadable(std::io::ErrorKind::NotFound),
            line: 0
        }))
    );
    let invalid = dir.write("bad.env", b"KEY\n");
    let err = capture(&host, Some(&invalid), None, &[]).err();
    assert_eq!(
        err.as_ref().map(|e| e.kind),
        Some(EnvFile(crate::config::envfile::EnvFileError {
            kind: EnvFileErrorKind::MissingEquals,
            line: 1
        }))
    );
    assert_eq!(err.map(|e| e.code()), Some(StartupCode::CredentialUnavailable));
    let fine = dir.write("ok.env", b"UNUSED=1\n");
    assert!(capture(&host, Some(&fine), None, &[]).is_ok());
}

/// config.md §7.3: capture never writes to the process environment, on success and on failure.
#[test]
fn process_environment_is_never_modified() {
    let dir = TempDir::new("credentials-env-untouched");
    let before: Vec<_> = std::env::vars_os().collect();
    let file =
        dir.write("e.env", format!("PTC_TEST_OVERLAY={A32}\nPATH=\nHOME=/elsewhere\nNEW_ONE=x\n").as_bytes());
    let host = host(vec![("gateway", env("PTC_TEST_OVERLAY")), ("path", env("PATH"))]);
    let ok = capture(&host, Some(&file), Some("gateway"), &[]);
    assert_eq!(ok.as_ref().ok().and_then(|c| c.bearer()).map(Secret::expose), Some(A32));
    let failed = capture(&host, Some(&file), Some("gateway"), &[request("path", false)]);
    assert_eq!(failed.err().map(|e| e.kind), Some(Empty));
    let after: Vec<_> = std::env::vars_os().collect();
    assert_eq!(before, after);
    assert_eq!(std::env::var_os("PTC_TEST_OVERLAY"), None);
    assert_eq!(std::env::var_os("NEW_ONE"), None);
}

/// Nothing captured is printed by `Debug` or carried by an error.
#[test]
fn nothing_secret_is_printed() {
    let host = host(vec![("gateway", literal("x")), ("api", literal("hunter2-secret"))]);
    let captured = capture(&host, None, None, &[request("api", true)]).expect("captures");
    let debug = format!("{captured:?}");
    assert_eq!(debug, "CapturedCredentials { bearer: None, bindings: [\"api\"] }");
    let host = host_with_bad_header();
    let err = capture(&host, None, None, &[request("api", true)]).expect_err("refused");
    assert_eq!(err.to_string(), "credentials: binding \"api\": header_character");
}

fn host_with_bad_header() -> HostConfig {
    host(vec![("api", literal("hunter2\u{7f}secret"))])
}

fn stdio(env: &[(&str, &str)]) -> InstallationKind {
    InstallationKind::Mcp(McpInstallation {
        installation_revision: "1".to_owned(),
        transport: McpTransport::Stdio(StdioTransport {
            command: "server".to_owned(),
            args: vec![],
            cwd: PathBuf::from("/"),
            inherit_environment: false,
            env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            start_timeout_ms: 5000,
            protocol: ProtocolEra::Auto,
        }),
        tools: BTreeMap::new(),
        ceilings: Ceilings { timeout_ms: 5000, max_result_bytes: 262_144 },
    })
}

fn http(headers: &[(&str, HeaderScheme)]) -> InstallationKind {
    InstallationKind::Mcp(McpInstallation {
        installation_revision: "1".to_owned(),
        transport: McpTransport::StreamableHttp(HttpTransport {
            endpoint: "https://mcp.example.com/mcp".to_owned(),
            allow_insecure_loopback: false,
            headers: headers
                .iter()
                .map(|(b, scheme)| StaticHeader {
                    name: "X-Key".to_owned(),
                    binding: (*b).to_owned(),
                    scheme: *scheme,
                })
                .collect(),
            protocol: ProtocolEra::Auto,
            oauth: false,
        }),
        tools: BTreeMap::new(),
        ceilings: Ceilings { timeout_ms: 5000, max_result_bytes: 262_144 },
    })
}

/// config.md §8.1: the union of the selected installations' bindings, each once, with header use marked.
#[test]
fn selection_of_bindings() {
    let mut host = host(vec![]);
    let mut add = |alias: &str, source: Source, kind: InstallationKind| {
        host.install
            .insert(alias.to_owned(), Installation { source, kind, declaration: serde_json::Value::Null });
    };
    add("fs", Source::Mcp, stdio(&[("TOKEN", "tok"), ("TZ", "tz"), ("ALSO", "shared")]));
    add(
        "remote",
        Source::Mcp,
        http(&[("shared", HeaderScheme::Raw), ("user", HeaderScheme::Basic), ("auth", HeaderScheme::Bearer)]),
    );
    add(
        "model",
        Source::Llm,
        InstallationKind::Llm(crate::config::host::LlmInstallation {
            installation_revision: "1".to_owned(),
            credential: "llm_key".to_owned(),
            endpoint: "https://llm.example.com/v1".to_owned(),
            allow_insecure_loopback: false,
            model: "small".to_owned(),
            params: crate::config::host::LlmParams::default(),
            ceilings: crate::config::host::LlmCeilings { timeout_ms: 60_000 },
        }),
    );
    add("unused", Source::Mcp, stdio(&[("X", "never")]));
    let got = selected_bindings(&host, &["fs", "remote", "model", "nonexistent"]);
    assert_eq!(
        got,
        vec![
            request("auth", true),
            request("llm_key", true),
            request("shared", true),
            request("tok", false),
            request("tz", false),
            request("user", false),
        ]
    );
    assert_eq!(selected_bindings(&host, &[]), vec![]);
}

const PROBE_VAR: &str = "PTC_CREDENTIALS_CHILD_PROBE";

/// Runs [`child_probe`] in a child process whose environment is set up exactly (the test never writes
/// to its own environment): process values, a non-UTF-8 value, and overlays by an environment file.
#[test]
fn process_environment_lookups() {
    use std::os::unix::ffi::OsStrExt;
    let exe = std::env::current_exe().expect("test binary");
    let output = std::process::Command::new(exe)
        .args(["--exact", "config::credentials::tests::child_probe", "--ignored", "--test-threads=1"])
        .env_clear()
        .env(PROBE_VAR, "1")
        .env("GATEWAY_TOKEN", A32)
        .env("SHORT_TOKEN", &A32[1..])
        .env("SPACED", "  padded value \n")
        .env("EMPTY", "")
        .env("NOT_UTF8", std::ffi::OsStr::from_bytes(b"\xffabc"))
        .output()
        .expect("child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "child failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("1 passed"), "child ran no probe:\n{stdout}");
}

/// The child side of [`process_environment_lookups`]; does nothing unless started by it.
#[test]
#[ignore = "run by process_environment_lookups in a prepared child process"]
fn child_probe() {
    if std::env::var_os(PROBE_VAR).is_none() {
        return;
    }
    let creds = vec![
        ("gateway", env("GATEWAY_TOKEN")),
        ("short", env("SHORT_TOKEN")),
        ("spaced", env("SPACED")),
        ("empty", env("EMPTY")),
        ("bad", env("NOT_UTF8")),
        ("absent", env("NOT_SET_ANYWHERE")),
    ];
    let probe_host = host(creds);
    let host = &probe_host;
    let one = |binding: &str, file: Option<&std::path::Path>| {
        capture(host, file, None, &[request(binding, false)])
            .map(|c| c.get(binding).map(|s| s.expose().to_owned()).unwrap_or_default())
            .map_err(|e| e.kind)
    };
    // Row 100 analogue and the process environment as is.
    let bearer = capture(host, None, Some("gateway"), &[]).map(|c| c.bearer().map(|s| s.expose().to_owned()));
    assert_eq!(bearer.map_err(|e| e.kind), Ok(Some(A32.to_owned())));
    assert_eq!(capture(host, None, Some("short"), &[]).err().map(|e| e.kind), Some(BearerLength));
    assert_eq!(one("spaced", None), Ok("padded value".to_owned()));
    assert_eq!(one("empty", None), Err(Empty));
    assert_eq!(one("bad", None), Err(EnvNotUtf8));
    assert_eq!(one("absent", None), Err(EnvAbsent));
    // Overlays: a file value replaces the process value, an empty one too (row 101), and a non-UTF-8
    // process value is hidden by the file.
    let dir = TempDir::new("credentials-child");
    let file =
        dir.write("e.env", b"GATEWAY_TOKEN=\nSPACED=from-file\nNOT_UTF8=fixed\nNOT_SET_ANYWHERE=here\n");
    assert_eq!(capture(host, Some(&file), Some("gateway"), &[]).err().map(|e| e.kind), Some(Empty));
    assert_eq!(one("spaced", Some(&file)), Ok("from-file".to_owned()));
    assert_eq!(one("bad", Some(&file)), Ok("fixed".to_owned()));
    assert_eq!(one("absent", Some(&file)), Ok("here".to_owned()));
    // Row 104: the process lacks the value, the file provides it.
    let b32 = "b".repeat(32);
    let file = dir.write("f.env", format!("NOT_SET_ANYWHERE={b32}\n").as_bytes());
    let host_b = self::host(vec![("gateway", env("NOT_SET_ANYWHERE"))]);
    let bearer = capture(&host_b, Some(&file), Some("gateway"), &[])
        .map(|c| c.bearer().map(|s| s.expose().to_owned()));
    assert_eq!(bearer.map_err(|e| e.kind), Ok(Some(b32)));
    assert_eq!(std::env::var_os("NOT_SET_ANYWHERE"), None);
}
