//! Step M13 (http-mcp.md §7.4): `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` agree with the body.
//!
//! Owns the three header/body comparisons made before the version and method are judged, so that a
//! header `2026-07-28` with a body `v999.0.0` is `-32020`, not `-32022`. `Mcp-Name` of `tools/call` is
//! checked by `tool` (http-mcp.md §8.1); for methods the gateway does not implement it is not examined.

use hyper::HeaderMap;

use crate::mcp::fields::{exactly_one, lines, Lines};

/// The header names (hyper compares names case-insensitively).
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
pub const METHOD_HEADER: &str = "mcp-method";
pub const NAME_HEADER: &str = "mcp-name";

/// The consistency check passes for the body's `method` and `_meta` protocol version.
pub fn consistent(headers: &HeaderMap, method: &str, protocol_version: &str) -> bool {
    let version_ok = exactly_one(headers, PROTOCOL_VERSION_HEADER) == Some(protocol_version.as_bytes());
    let method_ok = exactly_one(headers, METHOD_HEADER) == Some(method.as_bytes());
    let name_ok = match method {
        "server/discover" | "tools/list" => lines(headers, NAME_HEADER) == Lines::Absent,
        _ => true,
    };
    version_ok && method_ok && name_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::{HeaderName, HeaderValue};

    #[test]
    fn consistency_vectors() {
        // http-mcp.md §7.4 and §12.8 rows 142–160, 166.
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str, bool);
        let v = ("MCP-Protocol-Version", "2026-07-28");
        let m = ("Mcp-Method", "tools/list");
        let cases: &[Case] = &[
            (&[v, m], "tools/list", "2026-07-28", true),
            (&[m], "tools/list", "2026-07-28", false),
            (&[v, v, m], "tools/list", "2026-07-28", false),
            (&[v, m], "tools/list", "v999.0.0", false),
            (&[("mcp-protocol-version", "2025-11-25"), m], "tools/list", "2025-11-25", true),
            (&[v], "tools/list", "2026-07-28", false),
            (&[v, ("Mcp-Method", "TOOLS/LIST")], "tools/list", "2026-07-28", false),
            (&[v, ("mcp-method", "tools/list")], "tools/list", "2026-07-28", true),
            (&[v, ("MCP-METHOD", " \ttools/list\t ")], "tools/list", "2026-07-28", true),
            (&[v, ("Mcp-Method", "tools/call")], "tools/list", "2026-07-28", false),
            (&[v, m, m], "tools/list", "2026-07-28", false),
            (&[v, m, ("Mcp-Name", "echo")], "tools/list", "2026-07-28", false),
            (
                &[v, ("Mcp-Method", "server/discover"), ("Mcp-Name", "echo")],
                "server/discover",
                "2026-07-28",
                false,
            ),
            (&[v, ("Mcp-Method", "prompts/get"), ("Mcp-Name", "x")], "prompts/get", "2026-07-28", true),
            (
                &[v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "x"), ("Mcp-Name", "x")],
                "tools/call",
                "2026-07-28",
                true,
            ),
        ];
        for (lines, method, version, expected) in cases {
            let mut headers = HeaderMap::new();
            for (n, val) in *lines {
                headers.append(
                    HeaderName::from_bytes(n.as_bytes()).unwrap(),
                    HeaderValue::from_str(val).unwrap(),
                );
            }
            assert_eq!(consistent(&headers, method, version), *expected, "{lines:?} {method} {version}");
        }
    }
}
