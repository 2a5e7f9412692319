//! Steps M10 and M11 (http-mcp.md §7.1, §7.2): strict JSON, then the JSON-RPC request envelope and id.
//!
//! Owns the order inside the envelope check: the id is validated first, so every later envelope failure can
//! echo it (`-32600` with `id` when the object had a valid one). The strict decoder itself is
//! `crate::json`'s, applied with the request limits.

use serde_json::{Map, Value};

use crate::json::{decode, Limits};
use crate::mcp::rpc::{RequestId, RpcError};

/// A request whose envelope and id passed (http-mcp.md §7.2).
#[derive(Debug, PartialEq)]
pub struct Envelope {
    pub id: RequestId,
    pub method: String,
    /// `params`, when present (its absence fails the `_meta` check, http-mcp.md §7.3).
    pub params: Option<Map<String, Value>>,
}

/// A failure of strict JSON or of the envelope (http-mcp.md §7.1, §7.2), with the id to echo when one was
/// validated.
#[derive(Debug, PartialEq)]
pub struct Failure {
    pub error: RpcError,
    pub id: Option<RequestId>,
}

/// Strict JSON, then the envelope and id, over the body bytes.
pub fn parse(body: &[u8]) -> Result<Envelope, Failure> {
    let value =
        decode(body, Limits::REQUEST).map_err(|_| Failure { error: RpcError::ParseError, id: None })?;
    let Value::Object(object) = value else {
        // An array (a batch) or a scalar: no id can be taken from it.
        return Err(Failure { error: RpcError::InvalidRequest, id: None });
    };
    // One consuming pass over the members (no lookup or removal per member: this runs on every
    // request); the checks below keep the order of http-mcp.md §7.2, the id first.
    let (mut id, mut version_ok, mut method, mut params, mut members_ok) = (None, false, None, None, true);
    for (key, member) in object {
        match key.as_str() {
            "id" => id = RequestId::from_value(&member),
            "jsonrpc" => version_ok = member.as_str() == Some("2.0"),
            "method" => method = Some(member),
            "params" => params = Some(member),
            // http-mcp.md §7.2: no member but these four.
            _ => members_ok = false,
        }
    }
    let invalid = |id: Option<RequestId>| Failure { error: RpcError::InvalidRequest, id };
    let Some(id) = id else { return Err(invalid(None)) };
    let method = match method {
        Some(Value::String(m)) => m,
        _ => return Err(invalid(Some(id))),
    };
    let params = match params {
        None => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => return Err(invalid(Some(id))),
    };
    if !members_ok || !version_ok {
        return Err(invalid(Some(id)));
    }
    Ok(Envelope { id, method, params })
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#;

    #[test]
    fn envelope_vectors() {
        // http-mcp.md §7.1–§7.2 and §12.7 rows 90–119.
        let one = Some(RequestId::Integer(1));
        let b_list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{META}}}"#);
        let deep = |n: usize| format!("{{\"a\":{}0{}}}", "[".repeat(n), "]".repeat(n));
        let zeros = |n: usize| format!("{{\"a\":[{}]}}", vec!["0"; n].join(","));
        type Expected = Result<(), (RpcError, Option<RequestId>)>;
        let cases: Vec<(String, Expected)> = vec![
            (b_list.clone(), Ok(())),
            ("{".into(), Err((RpcError::ParseError, None))),
            (format!("\u{feff}{b_list}"), Err((RpcError::ParseError, None))),
            (format!("{b_list} x"), Err((RpcError::ParseError, None))),
            (format!("{b_list} \r\n\t"), Ok(())),
            (r#"{"id":1,"id":2}"#.into(), Err((RpcError::ParseError, None))),
            (r#"{"a":"\ud800"}"#.into(), Err((RpcError::ParseError, None))),
            (r#"{"a":1e400}"#.into(), Err((RpcError::ParseError, None))),
            (r#"{"a":18446744073709551616}"#.into(), Err((RpcError::ParseError, None))),
            ("".into(), Err((RpcError::ParseError, None))),
            (deep(62), Err((RpcError::InvalidRequest, None))),
            (deep(63), Err((RpcError::ParseError, None))),
            (zeros(99_997), Err((RpcError::InvalidRequest, None))),
            (zeros(99_998), Err((RpcError::ParseError, None))),
            (format!("[{b_list}]"), Err((RpcError::InvalidRequest, None))),
            (b_list.replace(r#""jsonrpc":"2.0","#, ""), Err((RpcError::InvalidRequest, one.clone()))),
            (b_list.replace(r#""2.0""#, r#""1.0""#), Err((RpcError::InvalidRequest, one.clone()))),
            (
                b_list.replace(r#""id":1,"#, r#""id":1,"extra":1,"#),
                Err((RpcError::InvalidRequest, one.clone())),
            ),
            (b_list.replace(r#""tools/list""#, "5"), Err((RpcError::InvalidRequest, one.clone()))),
            (b_list.replace(META, "[]"), Err((RpcError::InvalidRequest, one.clone()))),
            (b_list.replace(r#""id":1,"#, ""), Err((RpcError::InvalidRequest, None))),
            (b_list.replace(r#""id":1"#, r#""id":null"#), Err((RpcError::InvalidRequest, None))),
            (b_list.replace(r#""id":1"#, r#""id":1.0"#), Err((RpcError::InvalidRequest, None))),
            (b_list.replace(r#""id":1"#, r#""id":true"#), Err((RpcError::InvalidRequest, None))),
            (b_list.replace(r#""id":1"#, r#""id":"""#), Err((RpcError::InvalidRequest, None))),
            (b_list.replace(r#""id":1"#, r#""id":9007199254740992"#), Err((RpcError::InvalidRequest, None))),
            (
                b_list.replace(r#""id":1"#, r#""id":"abc""#).replace(r#""2.0""#, r#""1.0""#),
                Err((RpcError::InvalidRequest, Some(RequestId::String("abc".into())))),
            ),
            (b_list.replace(r#","params":"#, r#","x":"#).replace(r#""x":"#, r#""params":"#), Ok(())),
            (r#"{"jsonrpc":"2.0","id":1,"method":""}"#.into(), Ok(())),
        ];
        for (body, expected) in cases {
            let got = parse(body.as_bytes()).map(|_| ()).map_err(|f| (f.error, f.id));
            assert_eq!(got, expected, "{}", &body[..body.len().min(120)]);
        }
        let ok = parse(b_list.as_bytes()).unwrap();
        assert_eq!((ok.id, ok.method.as_str()), (RequestId::Integer(1), "tools/list"));
        assert!(ok.params.is_some());
        assert!(
            parse(b"{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"x\"}").unwrap().id == RequestId::Integer(0)
        );
        assert_eq!(parse(b"{\"a\":\"\xff\"}").unwrap_err().error, RpcError::ParseError);
    }
}
