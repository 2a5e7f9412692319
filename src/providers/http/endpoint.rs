//! The upstream endpoint of one Streamable HTTP acquisition (providers.md §5.1, config.md §5.4.2): scheme,
//! host, port, the `Host` authority and the request target, parsed from the validated endpoint string.
//!
//! This file owns only the split of an already validated URL and the loopback-only rule for plain `http`,
//! re-checked here so that no caller can open a cleartext connection to anything but `127.0.0.1` or
//! `[::1]`. It does not connect (`pool.rs`) or speak TLS (`tls.rs`).

use crate::config::origin::{check_endpoint, EndpointScheme};

/// A parsed endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub tls: bool,
    /// The host as written: a registered name, a dotted IPv4 literal, or a bracketed IPv6 literal.
    pub host: String,
    pub port: u16,
    /// The `Host` header: the authority exactly as configured (port included only when written).
    pub authority: String,
    /// The origin-form request target: path and query exactly as configured, `/` when empty.
    pub target: String,
}

impl Endpoint {
    /// Parse a configured endpoint; `None` when it fails the endpoint rule of config.md §5.4.2 (which the
    /// host document's validation has already applied, so this is defence in depth).
    pub fn parse(endpoint: &str, allow_insecure_loopback: bool) -> Option<Endpoint> {
        let scheme = check_endpoint(endpoint, allow_insecure_loopback).ok()?;
        let (tls, rest, default_port) = match scheme {
            EndpointScheme::Https => (true, endpoint.strip_prefix("https://")?, 443),
            EndpointScheme::Http => (false, endpoint.strip_prefix("http://")?, 80),
        };
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(authority_end);
        let (host, port) = match authority.rfind(':') {
            // A colon after the closing bracket of an IPv6 literal, or in a name/IPv4 authority.
            Some(at) if !authority[at..].contains(']') => {
                (&authority[..at], authority[at + 1..].parse::<u16>().ok()?)
            }
            _ => (authority, default_port),
        };
        // providers.md §5.1: cleartext only to the two loopback literals.
        if !tls && host != "127.0.0.1" && host != "[::1]" {
            return None;
        }
        let target = match tail.strip_prefix('?') {
            Some(_) => format!("/{tail}"),
            None if tail.is_empty() => "/".to_owned(),
            None => tail.to_owned(),
        };
        Some(Endpoint { tls, host: host.to_owned(), port, authority: authority.to_owned(), target })
    }

    /// The host without IPv6 brackets, for name resolution and TLS server names.
    pub fn bare_host(&self) -> &str {
        self.host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(&self.host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_table() {
        // (endpoint, insecure flag, (tls, host, port, authority, target) or refused)
        type Row<'a> = (&'a str, bool, Option<(bool, &'a str, u16, &'a str, &'a str)>);
        let rows: &[Row] = &[
            ("http://127.0.0.1:8080/mcp", true, Some((false, "127.0.0.1", 8080, "127.0.0.1:8080", "/mcp"))),
            ("http://[::1]:9/a?b=c", true, Some((false, "[::1]", 9, "[::1]:9", "/a?b=c"))),
            ("http://127.0.0.1", true, Some((false, "127.0.0.1", 80, "127.0.0.1", "/"))),
            ("http://127.0.0.1?x", true, Some((false, "127.0.0.1", 80, "127.0.0.1", "/?x"))),
            (
                "https://mcp.example.com/v1",
                false,
                Some((true, "mcp.example.com", 443, "mcp.example.com", "/v1")),
            ),
            (
                "https://[2001:db8::1]:8443/",
                false,
                Some((true, "[2001:db8::1]", 8443, "[2001:db8::1]:8443", "/")),
            ),
            ("http://localhost:8080/mcp", true, None),
            ("http://127.0.0.2/mcp", true, None),
            ("http://127.0.0.1/mcp", false, None),
            ("https://mcp.example.com/", true, None),
        ];
        for (endpoint, insecure, expected) in rows {
            let got = Endpoint::parse(endpoint, *insecure);
            let want = expected.map(|(tls, host, port, authority, target)| Endpoint {
                tls,
                host: host.into(),
                port,
                authority: authority.into(),
                target: target.into(),
            });
            assert_eq!(got, want, "{endpoint}");
        }
        let v6 = Endpoint::parse("https://[2001:db8::1]/", false).unwrap();
        assert_eq!((v6.bare_host(), v6.port), ("2001:db8::1", 443));
    }
}
