//! Steps M14–M16 (http-mcp.md §7.5–§7.7): the protocol version, the method, and the method's parameters.
//!
//! Owns the served version, the closed set of served methods, and the parameter rules of each. It does
//! not own readiness (http-mcp.md §7.8, §8.4) or the tool lookup (http-mcp.md §8.2).

use serde_json::{Map, Value};

use crate::mcp::rpc::{RpcError, PROTOCOL_VERSION};

/// http-mcp.md §7.7: a tool name has 1 to 128 bytes.
pub const MAX_NAME_BYTES: usize = 128;

/// A served method with its validated parameters.
#[derive(Debug, PartialEq)]
pub enum Method {
    /// `server/discover` (http-mcp.md §10.2).
    Discover,
    /// `tools/list` (http-mcp.md §10.3).
    List,
    /// `tools/call`: the tool name and the raw `arguments` (`{}` when absent).
    Call { name: String, arguments: Value },
}

/// The protocol version check: the version, equal in header and body after the consistency check
/// (http-mcp.md §7.4), is the one served.
pub fn version(requested: &str) -> Result<(), RpcError> {
    if requested == PROTOCOL_VERSION {
        Ok(())
    } else {
        Err(RpcError::UnsupportedProtocolVersion { requested: requested.to_owned() })
    }
}

/// The method check, then its parameters (http-mcp.md §7.6, §7.7). `params` passed the `_meta` check
/// (http-mcp.md §7.3), so it is present and has `_meta`.
pub fn resolve(method: &str, mut params: Map<String, Value>) -> Result<Method, RpcError> {
    let only_meta = |p: &Map<String, Value>| p.keys().all(|k| k == "_meta");
    match method {
        "server/discover" if only_meta(&params) => Ok(Method::Discover),
        // A `cursor` (any value) fails: the listing is never paginated.
        "tools/list" if only_meta(&params) => Ok(Method::List),
        "server/discover" | "tools/list" => Err(RpcError::InvalidParams),
        "tools/call" => {
            if !params.keys().all(|k| matches!(k.as_str(), "_meta" | "name" | "arguments")) {
                return Err(RpcError::InvalidParams);
            }
            let name = match params.remove("name") {
                Some(Value::String(n)) if (1..=MAX_NAME_BYTES).contains(&n.len()) => n,
                _ => return Err(RpcError::InvalidParams),
            };
            let arguments = match params.remove("arguments") {
                None => Value::Object(Map::new()),
                Some(a @ Value::Object(_)) => a,
                Some(_) => return Err(RpcError::InvalidParams),
            };
            Ok(Method::Call { name, arguments })
        }
        _ => Err(RpcError::MethodNotFound),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode, Limits};

    #[test]
    fn versions() {
        assert_eq!(version("2026-07-28"), Ok(()));
        for v in ["2025-11-25", "v999.0.0", "", "2026-07-28 "] {
            assert_eq!(version(v), Err(RpcError::UnsupportedProtocolVersion { requested: v.into() }));
        }
    }

    #[test]
    fn method_vectors() {
        // http-mcp.md §7.6–§7.7 and §12.8 rows 157–168, http-mcp.md §12.9 rows 171–176, http-mcp.md §12.11
        // row 244.
        let m = r#""_meta":{}"#;
        let cases: Vec<(&str, String, Result<&str, RpcError>)> = vec![
            ("server/discover", format!("{{{m}}}"), Ok("discover")),
            ("tools/list", format!("{{{m}}}"), Ok("list")),
            ("server/discover", format!(r#"{{{m},"cursor":"x"}}"#), Err(RpcError::InvalidParams)),
            ("tools/list", format!(r#"{{{m},"cursor":""}}"#), Err(RpcError::InvalidParams)),
            ("tools/list", format!(r#"{{{m},"extra":1}}"#), Err(RpcError::InvalidParams)),
            ("resources/list", format!(r#"{{{m},"cursor":5}}"#), Err(RpcError::MethodNotFound)),
            ("tools/call", format!(r#"{{{m},"name":"echo","arguments":{{"text":"hi"}}}}"#), Ok("call")),
            ("tools/call", format!(r#"{{{m},"name":"echo"}}"#), Ok("call")),
            ("tools/call", format!(r#"{{{m},"arguments":{{}}}}"#), Err(RpcError::InvalidParams)),
            ("tools/call", format!(r#"{{{m},"name":"{}"}}"#, "n".repeat(128)), Ok("call")),
            ("tools/call", format!(r#"{{{m},"name":"{}"}}"#, "n".repeat(129)), Err(RpcError::InvalidParams)),
            ("tools/call", format!(r#"{{{m},"name":""}}"#), Err(RpcError::InvalidParams)),
            ("tools/call", format!(r#"{{{m},"name":5}}"#), Err(RpcError::InvalidParams)),
            ("tools/call", format!(r#"{{{m},"name":"echo","arguments":[]}}"#), Err(RpcError::InvalidParams)),
            (
                "tools/call",
                format!(r#"{{{m},"name":"echo","arguments":null}}"#),
                Err(RpcError::InvalidParams),
            ),
            (
                "tools/call",
                format!(r#"{{{m},"name":"echo","requestState":"x"}}"#),
                Err(RpcError::InvalidParams),
            ),
            ("tools/call", format!(r#"{{{m},"name":"echo","task":{{}}}}"#), Err(RpcError::InvalidParams)),
            ("initialize", format!("{{{m}}}"), Err(RpcError::MethodNotFound)),
            ("ping", format!("{{{m}}}"), Err(RpcError::MethodNotFound)),
            ("tools/List", format!("{{{m}}}"), Err(RpcError::MethodNotFound)),
            ("", format!("{{{m}}}"), Err(RpcError::MethodNotFound)),
        ];
        for (method, params, expected) in cases {
            let params = decode(params.as_bytes(), Limits::REQUEST).unwrap().as_object().unwrap().clone();
            let got = resolve(method, params).map(|m| match m {
                Method::Discover => "discover",
                Method::List => "list",
                Method::Call { .. } => "call",
            });
            assert_eq!(got, expected, "{method}");
        }
        let params =
            decode(br#"{"_meta":{},"name":"echo"}"#, Limits::REQUEST).unwrap().as_object().unwrap().clone();
        assert_eq!(
            resolve("tools/call", params),
            Ok(Method::Call { name: "echo".into(), arguments: Value::Object(Map::new()) })
        );
    }
}
