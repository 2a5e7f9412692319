//! The child environment rule of providers.md §4.1: built from the gateway's *start* environment, never
//! from `--env-file` values, with credential variables and service-manager variables removed.
//!
//! This file is a pure function over its inputs. Capturing the start environment and credential values is
//! startup's job; this file never reads the process environment itself.

use std::collections::{BTreeMap, BTreeSet};

/// Service-manager variables never inherited (lifecycle.md §9).
pub const SERVICE_MANAGER_VARS: [&str; 6] =
    ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"];

/// What the rule needs.
pub struct EnvInputs<'a> {
    /// The gateway's environment as it was when the process started.
    pub start: &'a BTreeMap<String, String>,
    /// Every variable named by any `{"env": VAR}` credential of the host document, selected or not.
    pub credential_vars: &'a BTreeSet<String>,
    pub inherit: bool,
    /// Child variable → captured credential value.
    pub bindings: &'a BTreeMap<String, String>,
}

/// The exact environment of the child.
pub fn child_environment(inputs: &EnvInputs<'_>) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if inputs.inherit {
        for (name, value) in inputs.start {
            if !inputs.credential_vars.contains(name) && !SERVICE_MANAGER_VARS.contains(&name.as_str()) {
                env.insert(name.clone(), value.clone());
            }
        }
    } else if let Some(path) = inputs.start.get("PATH") {
        // Without inheritance only PATH survives, so commands still resolve (providers.md §4.1).
        env.insert("PATH".to_owned(), path.clone());
    }
    for (name, value) in inputs.bindings {
        env.insert(name.clone(), value.clone());
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn environment_table() {
        let start = map(&[
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("PTC_GATEWAY_TOKEN", "secret"),
            ("NOTIFY_SOCKET", "/run/n"),
            ("LISTEN_FDS", "1"),
        ]);
        let creds: BTreeSet<String> = ["PTC_GATEWAY_TOKEN".to_string()].into();
        // (inherit, bindings, expected)
        let cases = [
            (false, map(&[("K", "v")]), map(&[("K", "v"), ("PATH", "/bin")])),
            (false, map(&[("PATH", "/mine")]), map(&[("PATH", "/mine")])),
            (true, map(&[]), map(&[("HOME", "/h"), ("PATH", "/bin")])),
            (
                true,
                map(&[("HOME", "/o"), ("PTC_GATEWAY_TOKEN", "bound")]),
                map(&[("HOME", "/o"), ("PATH", "/bin"), ("PTC_GATEWAY_TOKEN", "bound")]),
            ),
        ];
        for (inherit, bindings, expected) in cases {
            let inputs = EnvInputs { start: &start, credential_vars: &creds, inherit, bindings: &bindings };
            assert_eq!(child_environment(&inputs), expected);
        }
        let no_path = map(&[("HOME", "/h")]);
        let empty = BTreeMap::new();
        let inputs = EnvInputs { start: &no_path, credential_vars: &creds, inherit: false, bindings: &empty };
        assert_eq!(child_environment(&inputs), BTreeMap::new());
    }
}
