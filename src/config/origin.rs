//! The URL-shaped strings of the configuration: the origin rule for `listen.allowed_origins`
//! (config.md §4.5) and the endpoint rule for `streamable_http` and `llm` endpoints (config.md §5.4.2).
//!
//! Both are pure byte-level checks with closed error kinds; the loaders map a failure to the document's
//! code (`origin_invalid`, `host_invalid`). This module does not know which document a string came from and
//! never resolves names or touches the network.

use std::net::Ipv6Addr;

/// Why an `allowed_origins` entry fails the origin rule (config.md §4.5, rules 1–5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginError {
    /// Rule 1: a byte outside 0x21..0x7E, or one of `%`, `\`, `@`, `?`, `#`.
    ForbiddenByte,
    /// Rule 2: no `scheme "://"` prefix.
    NoScheme,
    /// Rule 2: something after the host or port (a path, even `/`).
    TrailingData,
    /// Rule 3: the scheme is not `http` or `https` in lowercase.
    Scheme,
    /// Rule 4: the host is not a lowercase registered name, a canonical IPv4 literal or an RFC 5952
    /// bracketed IPv6 literal.
    Host,
    /// Rule 5: the port is empty, has a leading zero, or lies outside 1..65535.
    Port,
    /// Rule 5: the port is the scheme's default (80 for `http`, 443 for `https`).
    DefaultPort,
}

/// Checks one `listen.allowed_origins` entry against config.md §4.5: it passes iff it equals the
/// canonical serialisation a browser sends in `Origin`, so that the byte-for-byte comparison of
/// http-mcp.md can never be defeated by an equivalent spelling.
pub fn check_origin(entry: &str) -> Result<(), OriginError> {
    // Rule 1.
    if entry.bytes().any(|b| !(0x21..=0x7e).contains(&b) || b"%\\@?#".contains(&b)) {
        return Err(OriginError::ForbiddenByte);
    }
    // Rule 2 and 3.
    let (scheme, rest) = entry.split_once("://").ok_or(OriginError::NoScheme)?;
    let default_port = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return Err(OriginError::Scheme),
    };
    if rest.contains('/') {
        return Err(OriginError::TrailingData);
    }
    let (host, port) = split_host_port(rest).ok_or(OriginError::Host)?;
    // Rule 4.
    if !is_canonical_host(host) {
        return Err(OriginError::Host);
    }
    // Rule 5.
    if let Some(port) = port {
        let value = canonical_port(port).ok_or(OriginError::Port)?;
        if value == default_port {
            return Err(OriginError::DefaultPort);
        }
    }
    Ok(())
}

/// Splits `host[":" port]`, where a bracketed IPv6 host keeps its brackets. `None` when something
/// follows a closing bracket other than `:port`.
fn split_host_port(rest: &str) -> Option<(&str, Option<&str>)> {
    if rest.starts_with('[') {
        let close = rest.find(']')?;
        let (host, after) = rest.split_at(close + 1);
        return match after.strip_prefix(':') {
            Some(port) => Some((host, Some(port))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match rest.split_once(':') {
        Some((host, port)) => Some((host, Some(port))),
        None => Some((rest, None)),
    }
}

/// A decimal port without a leading zero in 1..65535 (config.md §4.5 rule 5).
fn canonical_port(port: &str) -> Option<u16> {
    if port.is_empty() || port.len() > 5 || port.starts_with('0') || !port.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    port.parse::<u16>().ok().filter(|p| *p != 0)
}

/// config.md §4.5 rule 4: a lowercase registered name, a canonical dotted IPv4 literal, or a bracketed IPv6
/// literal in RFC 5952 form.
fn is_canonical_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[') {
        return match inner.strip_suffix(']') {
            Some(text) => is_canonical_ipv6(text),
            None => false,
        };
    }
    if host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return is_canonical_ipv4(host);
    }
    !host.is_empty()
        && host.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        })
}

/// Four decimal octets 0..255 without leading zeros.
fn is_canonical_ipv4(host: &str) -> bool {
    let mut count = 0;
    for octet in host.split('.') {
        count += 1;
        let ok = !octet.is_empty()
            && octet.len() <= 3
            && (octet == "0" || !octet.starts_with('0'))
            && octet.parse::<u8>().is_ok();
        if !ok {
            return false;
        }
    }
    count == 4
}

/// Whether `text` (without brackets) is an IPv6 address written exactly in its canonical form.
fn is_canonical_ipv6(text: &str) -> bool {
    match text.parse::<Ipv6Addr>() {
        Ok(addr) => canonical_ipv6(&addr) == text,
        Err(_) => false,
    }
}

/// The RFC 5952 text of `addr` as browsers serialise it: lowercase hexadecimal groups without leading
/// zeros, the first longest run of two or more zero groups compressed to `::`, and never the dotted IPv4
/// tail that `Ipv6Addr`'s `Display` uses for mapped addresses.
pub fn canonical_ipv6(addr: &Ipv6Addr) -> String {
    let groups = addr.segments();
    // The first longest run of at least two zero groups.
    let (mut best_start, mut best_len) = (usize::MAX, 1usize);
    let mut i = 0;
    while i < groups.len() {
        if groups.get(i) == Some(&0) {
            let start = i;
            while groups.get(i) == Some(&0) {
                i += 1;
            }
            if i - start > best_len {
                (best_start, best_len) = (start, i - start);
            }
        } else {
            i += 1;
        }
    }
    let mut out = String::with_capacity(39);
    let mut i = 0;
    while i < groups.len() {
        if i == best_start {
            out.push_str("::");
            i += best_len;
            continue;
        }
        if !out.is_empty() && !out.ends_with(':') {
            out.push(':');
        }
        if let Some(group) = groups.get(i) {
            out.push_str(&format!("{group:x}"));
        }
        i += 1;
    }
    out
}

/// Why an upstream endpoint fails the rules of config.md §5.4.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointError {
    /// A byte outside 0x21..0x7E.
    ForbiddenByte,
    /// No lowercase `https://` or `http://` prefix.
    Scheme,
    /// Userinfo (`@` in the authority).
    Userinfo,
    /// A fragment (`#`).
    Fragment,
    /// An empty host or one that is neither a registered name nor a bracketed IPv6 literal.
    Host,
    /// An empty port, or one outside 1..65535.
    Port,
    /// A path or query byte that RFC 3986 does not allow there, or a malformed percent escape.
    PathOrQuery,
    /// An `http` endpoint whose host is not exactly `127.0.0.1` or `[::1]`.
    InsecureHost,
    /// `http` without `allow_insecure_loopback: true`.
    InsecureNotAllowed,
    /// `https` with `allow_insecure_loopback: true`.
    InsecureFlagOnHttps,
}

/// The scheme of an accepted endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointScheme {
    Http,
    Https,
}

/// Checks a `streamable_http` or `llm` endpoint together with its `allow_insecure_loopback` value
/// (config.md §5.4.2, §5.7 rule 5): an absolute `http`/`https` URL with a non-empty host, an optional port
/// 1..65535, optional path and query, no userinfo, no fragment; plain `http` only to the two literal
/// loopback addresses and only when explicitly allowed.
pub fn check_endpoint(
    endpoint: &str,
    allow_insecure_loopback: bool,
) -> Result<EndpointScheme, EndpointError> {
    if endpoint.bytes().any(|b| !(0x21..=0x7e).contains(&b)) {
        return Err(EndpointError::ForbiddenByte);
    }
    if endpoint.contains('#') {
        return Err(EndpointError::Fragment);
    }
    let (scheme, rest) = if let Some(rest) = endpoint.strip_prefix("https://") {
        (EndpointScheme::Https, rest)
    } else if let Some(rest) = endpoint.strip_prefix("http://") {
        (EndpointScheme::Http, rest)
    } else {
        return Err(EndpointError::Scheme);
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    if authority.contains('@') {
        return Err(EndpointError::Userinfo);
    }
    let (host, port) = split_host_port(authority).ok_or(EndpointError::Host)?;
    if !is_endpoint_host(host) {
        return Err(EndpointError::Host);
    }
    if let Some(port) = port {
        let valid = !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
        if !valid || !matches!(port.parse::<u32>(), Ok(1..=65535)) {
            return Err(EndpointError::Port);
        }
    }
    if !is_path_and_query(tail) {
        return Err(EndpointError::PathOrQuery);
    }
    match scheme {
        EndpointScheme::Http if host != "127.0.0.1" && host != "[::1]" => Err(EndpointError::InsecureHost),
        EndpointScheme::Http if !allow_insecure_loopback => Err(EndpointError::InsecureNotAllowed),
        EndpointScheme::Https if allow_insecure_loopback => Err(EndpointError::InsecureFlagOnHttps),
        _ => Ok(scheme),
    }
}

/// An RFC 3986 `reg-name` (unreserved, sub-delims, percent escapes) that is not empty, or a bracketed
/// IPv6 literal in any valid spelling.
fn is_endpoint_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[') {
        return inner.strip_suffix(']').is_some_and(|text| text.parse::<Ipv6Addr>().is_ok());
    }
    !host.is_empty() && is_rfc3986_run(host, b"")
}

/// `path-abempty [ "?" query ]` of RFC 3986: `tail` is empty or starts with `/` or `?`.
fn is_path_and_query(tail: &str) -> bool {
    let (path, query) = match tail.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (tail, None),
    };
    let path_ok = path.is_empty() || (path.starts_with('/') && is_rfc3986_run(path, b":@/"));
    path_ok && query.is_none_or(|q| is_rfc3986_run(q, b":@/?"))
}

/// Every byte is unreserved, a sub-delim, one of `extra`, or part of a `%HH` escape.
fn is_rfc3986_run(text: &str, extra: &[u8]) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return false;
            }
            i += 3;
            continue;
        }
        let allowed = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b) || extra.contains(&b);
        if !allowed {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_table_of_section_4_5() {
        use OriginError::*;
        let table: &[(&str, Result<(), OriginError>)] = &[
            ("http://localhost:8080", Ok(())),
            ("https://app.example.com", Ok(())),
            ("http://127.0.0.1:8765", Ok(())),
            ("http://[::1]:8765", Ok(())),
            ("https://example.com/", Err(TrailingData)),
            ("https://example.com:443", Err(DefaultPort)),
            ("http://example.com:80", Err(DefaultPort)),
            ("HTTPS://example.com", Err(Scheme)),
            ("https://Example.com", Err(Host)),
            ("https://user@example.com", Err(ForbiddenByte)),
            ("https://exa%6dple.com", Err(ForbiddenByte)),
            ("http://[0:0:0:0:0:0:0:1]:8765", Err(Host)),
            ("http://127.000.0.1:8765", Err(Host)),
            ("http://localhost:08080", Err(Port)),
            ("null", Err(NoScheme)),
            ("ftp://example.com", Err(Scheme)),
        ];
        for (entry, want) in table {
            assert_eq!(check_origin(entry), *want, "{entry}");
        }
    }

    #[test]
    fn origin_edge_cases() {
        use OriginError::*;
        let table: &[(&str, Result<(), OriginError>)] = &[
            ("https://example.com:8443", Ok(())),
            ("http://example.com:443", Ok(())),
            ("https://example.com:80", Ok(())),
            ("http://a_b-c.d", Ok(())),
            ("http://0.0.0.0", Ok(())),
            ("http://255.255.255.255:1", Ok(())),
            ("http://1.2.3.4a", Ok(())),
            ("http://[2001:db8::1]", Ok(())),
            ("http://[::]", Ok(())),
            ("http://[1:0:0:2:0:0:0:3]", Err(Host)),
            ("http://[1::2:0:0:0:3]", Err(Host)),
            ("http://[1:0:0:2::3]", Ok(())),
            ("http://[2001:DB8::1]", Err(Host)),
            ("http://[::ffff:1.2.3.4]", Err(Host)),
            ("http://[::ffff:102:304]", Ok(())),
            ("http://[::1", Err(Host)),
            ("http://[::1]x", Err(Host)),
            ("http://256.0.0.1", Err(Host)),
            ("http://1.2.3", Err(Host)),
            ("http://1234", Err(Host)),
            ("http://a..b", Err(Host)),
            ("http://.a", Err(Host)),
            ("http://a.", Err(Host)),
            ("http://", Err(Host)),
            ("http://:8080", Err(Host)),
            ("http://a:", Err(Port)),
            ("http://a:0", Err(Port)),
            ("http://a:65536", Err(Port)),
            ("http://a:65535", Ok(())),
            ("http://a:1:2", Err(Port)),
            ("http://a b", Err(ForbiddenByte)),
            ("http://a\\b", Err(ForbiddenByte)),
            ("http://a?b", Err(ForbiddenByte)),
            ("http://a#b", Err(ForbiddenByte)),
            ("http://é.com", Err(ForbiddenByte)),
            ("Http://a", Err(Scheme)),
            ("http:/a", Err(NoScheme)),
            ("http://a/b", Err(TrailingData)),
        ];
        for (entry, want) in table {
            assert_eq!(check_origin(entry), *want, "{entry}");
        }
        let long_label = format!("http://{}.com", "a".repeat(64));
        assert_eq!(check_origin(&long_label), Err(Host));
        let max_label = format!("http://{}.com", "a".repeat(63));
        assert_eq!(check_origin(&max_label), Ok(()));
    }

    #[test]
    fn canonical_ipv6_forms() {
        let table: &[(&str, &str)] = &[
            ("::1", "::1"),
            ("0:0:0:0:0:0:0:0", "::"),
            ("2001:0db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
            ("1:0:2:0:3:0:4:0", "1:0:2:0:3:0:4:0"),
            ("1::", "1::"),
            ("::ffff:1.2.3.4", "::ffff:102:304"),
            ("fe80::abcd", "fe80::abcd"),
        ];
        for (text, want) in table {
            let addr: Ipv6Addr = text.parse().unwrap();
            assert_eq!(canonical_ipv6(&addr), *want, "{text}");
        }
    }

    #[test]
    fn endpoint_rules_of_section_5_4_2() {
        use EndpointError::*;
        use EndpointScheme::*;
        let table: &[(&str, bool, Result<EndpointScheme, EndpointError>)] = &[
            ("https://mcp.example.com/mcp", false, Ok(Https)),
            ("https://mcp.example.com", false, Ok(Https)),
            ("https://mcp.example.com:8443/a/b?x=1&y=%20", false, Ok(Https)),
            ("https://[2001:db8::1]/mcp", false, Ok(Https)),
            ("https://mcp.example.com?q", false, Ok(Https)),
            ("http://127.0.0.1:9000/mcp", true, Ok(Http)),
            ("http://[::1]:9000/mcp", true, Ok(Http)),
            ("http://127.0.0.1/mcp", true, Ok(Http)),
            ("http://localhost:9000/mcp", true, Err(InsecureHost)),
            ("http://127.0.0.2:9000/mcp", true, Err(InsecureHost)),
            ("http://[0:0:0:0:0:0:0:1]:9000/mcp", true, Err(InsecureHost)),
            ("http://127.0.0.1:9000/mcp", false, Err(InsecureNotAllowed)),
            ("https://mcp.example.com/mcp", true, Err(InsecureFlagOnHttps)),
            ("HTTPS://mcp.example.com/mcp", false, Err(Scheme)),
            ("ftp://mcp.example.com/mcp", false, Err(Scheme)),
            ("mcp.example.com/mcp", false, Err(Scheme)),
            ("https://user:pw@mcp.example.com/mcp", false, Err(Userinfo)),
            ("https://mcp.example.com/mcp#frag", false, Err(Fragment)),
            ("https:///mcp", false, Err(Host)),
            ("https://", false, Err(Host)),
            ("https://[zz::1]/mcp", false, Err(Host)),
            ("https://a:/mcp", false, Err(Port)),
            ("https://a:0/mcp", false, Err(Port)),
            ("https://a:65536/mcp", false, Err(Port)),
            ("https://a:65535/mcp", false, Ok(Https)),
            ("https://a:x/mcp", false, Err(Port)),
            ("https://a/m cp", false, Err(ForbiddenByte)),
            ("https://a/m\u{e9}", false, Err(ForbiddenByte)),
            ("https://a/%zz", false, Err(PathOrQuery)),
            ("https://a/{x}", false, Err(PathOrQuery)),
            ("https://a^b/", false, Err(Host)),
        ];
        for (endpoint, allow, want) in table {
            assert_eq!(check_endpoint(endpoint, *allow), *want, "{endpoint} allow={allow}");
        }
    }
}
