//! The arguments of `ptc call` (lifecycle.md §1.2): the loopback endpoint, the tool name, the JSON
//! arguments, and the bearer token from `PTC_GATEWAY_TOKEN`.
//!
//! Owns their validation; nothing here touches the network.

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use serde_json::{Map, Value};

use super::failure::Failure;
use crate::json::{decode, Limits};

/// A loopback `/mcp` endpoint with its `Host` authority (http-mcp.md §1, §6.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: SocketAddr,
    /// `127.0.0.1:PORT` or `[::1]:PORT`, without `:80` when the port is 80.
    pub authority: String,
}

/// A parsed `ptc call` command line.
#[derive(Clone, Debug, PartialEq)]
pub struct CallArgs {
    pub endpoint: Endpoint,
    pub tool: String,
    pub arguments: Value,
}

/// Parses `args` (after `call`). Options and positionals may come in any order; `--` ends options.
pub fn parse(args: &[OsString]) -> Result<CallArgs, Failure> {
    let mut positionals = Vec::new();
    let mut arguments: Option<String> = None;
    let mut options_done = false;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.to_str().ok_or(Failure::Usage("an argument is not UTF-8"))?;
        if !options_done && text == "--" {
            options_done = true;
        } else if !options_done && (text == "--arguments" || text.starts_with("--arguments=")) {
            if arguments.is_some() {
                return Err(Failure::Usage("--arguments given twice"));
            }
            let value = match text.strip_prefix("--arguments=") {
                Some(value) => value.to_owned(),
                None => iter
                    .next()
                    .and_then(|v| v.to_str())
                    .ok_or(Failure::Usage("--arguments needs a JSON value"))?
                    .to_owned(),
            };
            arguments = Some(value);
        } else if !options_done && text.starts_with('-') && text.len() > 1 {
            return Err(Failure::Usage("unknown option"));
        } else {
            positionals.push(text.to_owned());
        }
    }
    let [endpoint, tool] = <[String; 2]>::try_from(positionals)
        .map_err(|_| Failure::Usage("expected exactly ENDPOINT and TOOL"))?;
    let endpoint = parse_endpoint(&endpoint)
        .ok_or(Failure::Usage("ENDPOINT must be http://127.0.0.1:PORT/mcp or http://[::1]:PORT/mcp"))?;
    if !valid_tool_name(&tool) {
        return Err(Failure::Usage("TOOL must match ^[a-zA-Z0-9_.-]{1,128}$"));
    }
    let arguments = match arguments {
        None => Value::Object(Map::new()),
        Some(text) => match decode(text.as_bytes(), Limits::REQUEST) {
            Ok(value @ Value::Object(_)) => value,
            Ok(_) => return Err(Failure::Usage("--arguments must be a JSON object")),
            Err(_) => return Err(Failure::Usage("--arguments is not strict JSON")),
        },
    };
    Ok(CallArgs { endpoint, tool, arguments })
}

/// `http://127.0.0.1:PORT/mcp` or `http://[::1]:PORT/mcp`, PORT decimal 1..65535 without leading zeros.
pub fn parse_endpoint(text: &str) -> Option<Endpoint> {
    let rest = text.strip_prefix("http://")?.strip_suffix("/mcp")?;
    let (ip, port): (IpAddr, &str) = if let Some(port) = rest.strip_prefix("127.0.0.1:") {
        (IpAddr::V4(Ipv4Addr::LOCALHOST), port)
    } else if let Some(port) = rest.strip_prefix("[::1]:") {
        (IpAddr::V6(Ipv6Addr::LOCALHOST), port)
    } else {
        return None;
    };
    let canonical = !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && !port.starts_with('0');
    let port: u16 = port.parse().ok().filter(|_| canonical)?;
    let host = match ip {
        IpAddr::V4(_) => "127.0.0.1",
        IpAddr::V6(_) => "[::1]",
    };
    let authority = if port == 80 { host.to_owned() } else { format!("{host}:{port}") };
    Some(Endpoint { addr: SocketAddr::new(ip, port), authority })
}

fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The bearer token: `PTC_GATEWAY_TOKEN`, used unchanged, present, non-empty, without CR, LF or NUL.
pub fn token(value: Option<OsString>) -> Result<String, Failure> {
    let value = value.ok_or(Failure::TokenMissing)?;
    let value = value.into_string().map_err(|_| Failure::TokenInvalid)?;
    if value.is_empty() || value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0)) {
        return Err(Failure::TokenInvalid);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let v4 = |port: u16, authority: &str| {
            Some(Endpoint { addr: SocketAddr::from(([127, 0, 0, 1], port)), authority: authority.into() })
        };
        let v6 = |port: u16, authority: &str| {
            Some(Endpoint {
                addr: SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port),
                authority: authority.into(),
            })
        };
        let cases: &[(&str, Option<Endpoint>)] = &[
            ("http://127.0.0.1:8765/mcp", v4(8765, "127.0.0.1:8765")),
            ("http://127.0.0.1:80/mcp", v4(80, "127.0.0.1")),
            ("http://[::1]:8765/mcp", v6(8765, "[::1]:8765")),
            ("http://127.0.0.1/mcp", None),
            ("http://127.0.0.1:08765/mcp", None),
            ("http://127.0.0.1:0/mcp", None),
            ("http://127.0.0.1:65536/mcp", None),
            ("http://127.0.0.1:8765/", None),
            ("http://127.0.0.1:8765/mcp/", None),
            ("http://localhost:8765/mcp", None),
            ("https://127.0.0.1:8765/mcp", None),
            ("http://10.0.0.1:8765/mcp", None),
            ("http://[::1]8765/mcp", None),
            ("http://127.0.0.1:+80/mcp", None),
        ];
        for (text, expected) in cases {
            assert_eq!(&parse_endpoint(text), expected, "{text}");
        }
    }

    #[test]
    fn command_lines() {
        let os = |l: &[&str]| l.iter().map(OsString::from).collect::<Vec<_>>();
        let ok: &[(&[&str], &str)] = &[
            (&["http://127.0.0.1:1/mcp", "greet"], "{}"),
            (&["http://127.0.0.1:1/mcp", "greet", "--arguments", r#"{"name":"Ada"}"#], r#"{"name":"Ada"}"#),
            (&["--arguments={\"a\":1}", "http://127.0.0.1:1/mcp", "a.b-c_d"], r#"{"a":1}"#),
        ];
        for (argv, arguments) in ok {
            let parsed = parse(&os(argv)).unwrap();
            assert_eq!(crate::json::to_deterministic_string(&parsed.arguments), *arguments, "{argv:?}");
        }
        let bad: &[&[&str]] = &[
            &[],
            &["http://127.0.0.1:1/mcp"],
            &["http://127.0.0.1:1/mcp", "greet", "extra"],
            &["http://127.0.0.1:1/mcp", "gr eet"],
            &["http://127.0.0.1:1/mcp", "greet", "--arguments"],
            &["http://127.0.0.1:1/mcp", "greet", "--arguments", "[]"],
            &["http://127.0.0.1:1/mcp", "greet", "--arguments", "{\"a\":1,\"a\":2}"],
            &["http://127.0.0.1:1/mcp", "greet", "--arguments={}", "--arguments={}"],
            &["http://127.0.0.1:1/mcp", "greet", "--verbose"],
            &["http://example.com:1/mcp", "greet"],
        ];
        for argv in bad {
            assert!(matches!(parse(&os(argv)), Err(Failure::Usage(_))), "{argv:?}");
        }
    }

    #[test]
    fn tokens() {
        let cases: &[(Option<&str>, Result<&str, Failure>)] = &[
            (None, Err(Failure::TokenMissing)),
            (Some(""), Err(Failure::TokenInvalid)),
            (Some("a\nb"), Err(Failure::TokenInvalid)),
            (Some("a\rb"), Err(Failure::TokenInvalid)),
            (Some("a\0b"), Err(Failure::TokenInvalid)),
            (Some(" spaced token "), Ok(" spaced token ")),
        ];
        for (value, expected) in cases {
            let got = token(value.map(OsString::from));
            assert_eq!(got.as_deref().map_err(Clone::clone), expected.clone(), "{value:?}");
        }
    }
}
