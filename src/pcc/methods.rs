//! The parameters and answers of the four methods (pcc.md §7): `initialize`, `ping`, `tools/list` and
//! the `params` of `tools/call`, and the per-server listings built once at startup.
//!
//! Owns the checks and the static answers. It does not own when a method is allowed (`stream`) or the
//! execution of a call (`call`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::apps::catalog::{entry, ListingTool, SERVER_NAME};
use crate::apps::{Built, ServedTool};
use crate::json::to_deterministic_string;
use crate::mcp::rpc::{result_body, RequestId};

/// pcc.md §7.1: the versions answered as requested; any other is answered with the first.
const VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// pcc.md §7.5 step 3: a tool name has 1 to 128 bytes.
const MAX_NAME_BYTES: usize = 128;

/// One configured server: its subset as template indices (ascending name order) and its listing.
pub struct Server {
    pub tools: Vec<usize>,
    /// `DJ` of `{"tools":[…]}`, each entry byte-identical to the `/mcp` listing (pcc.md §7.4).
    pub listing: String,
}

/// Builds the servers of `pcc.servers` over the built templates. A name that is not served is skipped
/// (config.md refuses such a document before this point).
pub fn servers(config: &BTreeMap<String, Vec<String>>, built: &Built) -> BTreeMap<String, Server> {
    config
        .iter()
        .map(|(id, names)| {
            let mut served: Vec<ServedTool> = names.iter().filter_map(|n| built.find(n)).collect();
            served.sort_unstable_by_key(ServedTool::index);
            served.dedup_by_key(|t| t.index());
            let entries = served
                .iter()
                .map(|t| {
                    entry(&ListingTool {
                        name: &t.name,
                        title: &t.title,
                        description: &t.description,
                        input_schema: t.input.schema(),
                        output_schema: t.result.schema(),
                        effect: t.effect,
                    })
                })
                .collect();
            let mut result = Map::new();
            result.insert("tools".into(), Value::Array(entries));
            let tools = served.iter().map(ServedTool::index).collect();
            (id.clone(), Server { tools, listing: to_deterministic_string(&Value::Object(result)) })
        })
        .collect()
}

fn is_string(map: &Map<String, Value>, key: &str) -> bool {
    matches!(map.get(key), Some(Value::String(_)))
}

/// pcc.md §7.1: the `initialize` answer, or `None` for -32602.
pub fn initialize(id: &RequestId, params: Option<&Map<String, Value>>) -> Option<String> {
    let params = params?;
    let Some(Value::String(requested)) = params.get("protocolVersion") else { return None };
    if !matches!(params.get("capabilities"), Some(Value::Object(_))) {
        return None;
    }
    match params.get("clientInfo") {
        None => {}
        Some(Value::Object(info)) if is_string(info, "name") && is_string(info, "version") => {}
        Some(_) => return None,
    }
    let version = VERSIONS.iter().find(|v| **v == requested.as_str()).unwrap_or(&VERSIONS[0]);
    let mut tools = Map::new();
    tools.insert("listChanged".into(), Value::Bool(false));
    let mut capabilities = Map::new();
    capabilities.insert("tools".into(), Value::Object(tools));
    let mut info = Map::new();
    info.insert("name".into(), Value::from(SERVER_NAME));
    info.insert("version".into(), Value::from(env!("CARGO_PKG_VERSION")));
    let mut result = Map::new();
    result.insert("capabilities".into(), Value::Object(capabilities));
    result.insert("protocolVersion".into(), Value::from(*version));
    result.insert("serverInfo".into(), Value::Object(info));
    Some(result_body(id, &to_deterministic_string(&Value::Object(result))))
}

/// pcc.md §7.3: `ping`, whatever `params` holds.
pub fn pong(id: &RequestId) -> String {
    result_body(id, "{}")
}

/// pcc.md §7.4: `params` absent, or an object whose only member is an object `_meta`.
pub fn list_params_valid(params: Option<&Map<String, Value>>) -> bool {
    params.is_none_or(|p| p.iter().all(|(k, v)| k == "_meta" && matches!(v, Value::Object(_))))
}

/// pcc.md §7.5 step 3: the tool name and the arguments (default `{}`), or `None` for -32602.
pub fn call_params(params: Option<&Map<String, Value>>) -> Option<(&str, Value)> {
    let params = params?;
    let allowed = |k: &str| matches!(k, "name" | "arguments" | "_meta");
    if !params.keys().all(|k| allowed(k)) {
        return None;
    }
    let Some(Value::String(name)) = params.get("name") else { return None };
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return None;
    }
    if params.get("_meta").is_some_and(|m| !matches!(m, Value::Object(_))) {
        return None;
    }
    let arguments = match params.get("arguments") {
        None => Value::Object(Map::new()),
        Some(Value::Object(a)) => Value::Object(a.clone()),
        Some(_) => return None,
    };
    Some((name.as_str(), arguments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode, Limits};

    fn params(s: &str) -> Map<String, Value> {
        match decode(s.as_bytes(), Limits::REQUEST).unwrap() {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn initialize_vectors() {
        let v = env!("CARGO_PKG_VERSION");
        let answer = |pv: &str| {
            format!(
                r#"{{"id":0,"jsonrpc":"2.0","result":{{"capabilities":{{"tools":{{"listChanged":false}}}},"protocolVersion":"{pv}","serverInfo":{{"name":"ptc-gateway","version":"{v}"}}}}}}"#
            )
        };
        let id = RequestId::Integer(0);
        let cases: Vec<(Option<&str>, Option<String>)> = vec![
            (Some(r#"{"protocolVersion":"2025-06-18","capabilities":{}}"#), Some(answer("2025-06-18"))),
            (
                Some(r#"{"protocolVersion":"2025-03-26","capabilities":{},"_meta":{}}"#),
                Some(answer("2025-03-26")),
            ),
            (Some(r#"{"protocolVersion":"2026-07-28","capabilities":{}}"#), Some(answer("2025-11-25"))),
            (
                Some(
                    r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}"#,
                ),
                Some(answer("2025-11-25")),
            ),
            (Some(r#"{"protocolVersion":7,"capabilities":{}}"#), None),
            (Some(r#"{"protocolVersion":"2025-11-25"}"#), None),
            (Some(r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t"}}"#), None),
            (None, None),
        ];
        for (p, expected) in cases {
            let p = p.map(params);
            assert_eq!(initialize(&id, p.as_ref()), expected, "{p:?}");
        }
    }

    #[test]
    fn list_and_call_params() {
        let list: Vec<(Option<&str>, bool)> = vec![
            (None, true),
            (Some("{}"), true),
            (Some(r#"{"_meta":{}}"#), true),
            (Some(r#"{"cursor":"x"}"#), false),
            (Some(r#"{"_meta":1}"#), false),
        ];
        for (p, ok) in list {
            let p = p.map(params);
            assert_eq!(list_params_valid(p.as_ref()), ok, "{p:?}");
        }
        let long = format!(r#"{{"name":"{}"}}"#, "a".repeat(129));
        let call: Vec<(Option<&str>, Option<&str>)> = vec![
            (Some(r#"{"name":"alpha","arguments":{"text":"hi"}}"#), Some("alpha")),
            (Some(r#"{"name":"alpha","_meta":{}}"#), Some("alpha")),
            (Some(r#"{"name":"alpha","requestState":"x"}"#), None),
            (Some(r#"{"name":"alpha","arguments":[]}"#), None),
            (Some(r#"{"name":""}"#), None),
            (Some(long.as_str()), None),
            (Some(r#"{"arguments":{}}"#), None),
            (None, None),
        ];
        for (p, name) in call {
            let p = p.map(params);
            assert_eq!(call_params(p.as_ref()).map(|(n, _)| n), name, "{p:?}");
        }
    }
}
