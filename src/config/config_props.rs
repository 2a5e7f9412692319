//! Generated inputs for the three configuration documents and the environment file (issue 18,
//! docs/reliability.md; config.md §2, §4, §5, §7): the shipped examples (`config-examples/`) mutated
//! byte by byte, and environment files drawn from the config.md §7.2 grammar, then mutated.
//!
//! Properties: no panic; every refusal is the closed code of its document (config.md §2.8: a decode
//! failure is `config_unavailable`, or `duplicate_json_key` for a repeated key, in the gateway document
//! and `host_invalid` / `template_invalid` in the others), differentially against the strict decoder; the
//! unmutated examples load; and an environment file's values read back exactly as they were written.

use std::path::Path;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use super::document_error::Problem;
use super::{envfile, gateway, host, manifest, Mode};
use crate::codes::StartupCode;
use crate::json::{decode, DecodeErrorKind, Limits};
use crate::support::prop_support::{check, mutated};

const GATEWAYS: [&[u8]; 5] = [
    include_bytes!("../../config-examples/quickstart/ptc-gateway.json"),
    include_bytes!("../../config-examples/agent/ptc-gateway.json"),
    include_bytes!("../../config-examples/audited-write/ptc-gateway.json"),
    include_bytes!("../../config-examples/published-briefs/ptc-gateway.json"),
    include_bytes!("../../config-examples/two-upstreams/ptc-gateway.json"),
];
const HOSTS: [&[u8]; 5] = [
    include_bytes!("../../config-examples/quickstart/ptc-host.json"),
    include_bytes!("../../config-examples/agent/ptc-host.json"),
    include_bytes!("../../config-examples/audited-write/ptc-host.json"),
    include_bytes!("../../config-examples/published-briefs/ptc-host.json"),
    include_bytes!("../../config-examples/two-upstreams/ptc-host.json"),
];
const MANIFESTS: [&[u8]; 5] = [
    include_bytes!("../../config-examples/quickstart/greet/ptc.json"),
    include_bytes!("../../config-examples/agent/ask_time/ptc.json"),
    include_bytes!("../../config-examples/audited-write/remember/ptc.json"),
    include_bytes!("../../config-examples/published-briefs/briefs/ptc.json"),
    include_bytes!("../../config-examples/two-upstreams/timestamped_echo/ptc.json"),
];

fn example(set: &'static [&'static [u8]; 5]) -> impl Strategy<Value = (bool, Vec<u8>)> {
    select(set.to_vec()).prop_flat_map(|doc| mutated(Just(doc.to_vec())).prop_map(move |m| (m == doc, m)))
}

/// The code a document refused by the strict decoder must carry, if it was refused there.
fn decode_refusal(bytes: &[u8]) -> Option<DecodeErrorKind> {
    decode(bytes, Limits::DOCUMENT).err().map(|e| e.kind)
}

#[test]
fn prop_config_gateway_document() {
    check(
        "config_gateway",
        2048,
        (example(&GATEWAYS), select(vec![Mode::Serve, Mode::Discovery])),
        |((clean, bytes), mode)| {
            let result = gateway::from_bytes(&bytes, Path::new("/nonexistent/ptc-gateway.json"), mode);
            match (decode_refusal(&bytes), result.as_ref().err().map(|e| e.code)) {
                (Some(DecodeErrorKind::DuplicateKey), code) => {
                    prop_assert_eq!(code, Some(StartupCode::DuplicateJsonKey))
                }
                (Some(_), code) => prop_assert_eq!(code, Some(StartupCode::ConfigUnavailable)),
                (None, None) => {}
                (None, Some(code)) => {
                    prop_assert!(!clean, "an example is refused: {code:?}");
                    let closed = [
                        StartupCode::ConfigInvalid,
                        StartupCode::AuditInvalid,
                        StartupCode::OriginInvalid,
                        StartupCode::ToolNameDuplicate,
                    ];
                    prop_assert!(closed.contains(&code), "{code:?}");
                }
            }
            Ok(())
        },
    );
}

#[test]
fn prop_config_host_document() {
    check("config_host", 2048, example(&HOSTS), |(_, bytes)| {
        let result = host::from_bytes(&bytes, Path::new("/nonexistent/ptc-host.json"), "PTC_BEARER");
        if let Err(code) = result.map_err(|e| e.code) {
            let decode_failed = decode_refusal(&bytes).is_some();
            let closed = if decode_failed {
                &[StartupCode::HostInvalid][..]
            } else {
                &[StartupCode::HostInvalid, StartupCode::CredentialUnavailable][..]
            };
            prop_assert!(closed.contains(&code), "{code:?}");
        }
        Ok(())
    });
}

#[test]
fn prop_config_manifest_document() {
    check("config_manifest", 2048, example(&MANIFESTS), |(clean, bytes)| {
        match manifest::parse(&bytes) {
            Ok(_) => {}
            Err(problem) => {
                prop_assert!(!clean, "an example is refused");
                // The schema refuses whatever the typed reading could not read.
                prop_assert!(!matches!(problem, Problem::Shape), "{problem}");
            }
        }
        Ok(())
    });
}

/// One line of an environment file and the variable it assigns (config.md §7.2).
fn env_line() -> impl Strategy<Value = (String, Option<String>)> {
    let name = "[A-Za-z_][A-Za-z0-9_]{0,7}";
    prop_oneof![
        1 => select(vec!["", "   ", "# a comment", "\t# x=1"]).prop_map(|l| (l.to_owned(), None)),
        2 => (name, "[A-Za-z0-9_./:@+-]{0,10}", select(vec!["", "export "]))
            .prop_map(|(n, v, e)| (format!("{e}{n}={v}"), Some(format!("{n}\0{v}")))),
        2 => (name, "[ -~\t\né😀]{0,10}").prop_map(|(n, v)| {
            let escaped: String = v
                .chars()
                .map(|c| match c {
                    '"' => "\\\"".to_owned(),
                    '\\' => "\\\\".to_owned(),
                    '\n' => "\\n".to_owned(),
                    '\t' => "\\t".to_owned(),
                    c => c.to_string(),
                })
                .collect();
            (format!("{n} = \"{escaped}\" # c"), Some(format!("{n}\0{v}")))
        }),
        1 => (name, "[ -&(-~]{0,10}").prop_map(|(n, v)| (format!("{n}='{v}'"), Some(format!("{n}\0{v}")))),
    ]
}

#[test]
fn prop_config_envfile() {
    let file = (vec(env_line(), 0..8), select(vec!["\n", "\r\n"]), any::<bool>()).prop_flat_map(
        |(lines, eol, mutate)| {
            let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
            let bytes = text.join(eol).into_bytes();
            let bytes = if mutate { mutated(Just(bytes)).boxed() } else { Just(bytes).boxed() };
            (Just(lines), Just(mutate), bytes)
        },
    );
    check("config_envfile", 2048, file, |(lines, mutate, bytes)| {
        let parsed = envfile::parse(&bytes);
        match &parsed {
            Err(e) => prop_assert!(e.line <= bytes.iter().filter(|&&b| b == b'\n').count() + 1, "{e}"),
            Ok(file) if !mutate => {
                // Names repeat across draws: the last assignment of a name is not reached (duplicate).
                let mut seen = std::collections::BTreeSet::new();
                for (name, value) in
                    lines.iter().filter_map(|(_, a)| a.as_ref()).filter_map(|a| a.split_once('\0'))
                {
                    prop_assert!(seen.insert(name), "duplicate {name} accepted");
                    prop_assert_eq!(file.get(name).map(|s| s.expose()), Some(value));
                }
            }
            Ok(_) => {}
        }
        if !mutate {
            let names: Vec<&str> = lines
                .iter()
                .filter_map(|(_, a)| a.as_ref())
                .filter_map(|a| a.split_once('\0'))
                .map(|(n, _)| n)
                .collect();
            let unique = names.iter().collect::<std::collections::BTreeSet<_>>().len() == names.len();
            let expected = if unique { Ok(()) } else { Err(envfile::EnvFileErrorKind::DuplicateName) };
            prop_assert_eq!(parsed.map(|_| ()).map_err(|e| e.kind), expected);
        }
        Ok(())
    });
}
