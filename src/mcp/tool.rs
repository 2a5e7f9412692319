//! Steps C1 and C2 (http-mcp.md §8.1, §8.2): the `Mcp-Name` header names the called tool, and a served
//! tool has that name.
//!
//! Owns the header comparison (decoded by http-mcp.md §9.5, then byte equality) and the tool lookup, which
//! resolves the name once into the [`ServedTool`] the call carries from here on (the search itself is
//! [`Built::find`]: the templates are in ascending byte order of their names).

use hyper::HeaderMap;

use crate::apps::{Built, ServedTool};
use crate::mcp::consistency::NAME_HEADER;
use crate::mcp::fields::exactly_one;
use crate::mcp_param::encoding::decode;

/// The `Mcp-Name` check (http-mcp.md §8.1) passes: exactly one `Mcp-Name` line decoding to `name`.
pub fn name_matches(headers: &HeaderMap, name: &str) -> bool {
    exactly_one(headers, NAME_HEADER).and_then(decode).is_some_and(|decoded| decoded == name)
}

/// The tool lookup (http-mcp.md §8.2): the served tool called `name`.
pub fn find(built: &Built, name: &str) -> Option<ServedTool> {
    built.find(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn mcp_name_vectors() {
        // http-mcp.md §8.1 and §12.9 rows 177–184.
        let cases: &[(&[&[u8]], bool)] = &[
            (&[b"echo"], true),
            (&[b"  echo  "], true),
            (&[b"=?base64?ZWNobw==?="], true),
            (&[b"=?base64?ZWNobw=?="], false),
            (&[b"Echo"], false),
            (&[b"echo", b"echo"], false),
            (&[], false),
            (&[b"ech\xc3\xb6"], false),
        ];
        for (values, expected) in cases {
            let mut headers = HeaderMap::new();
            for v in *values {
                headers.append(NAME_HEADER, HeaderValue::from_bytes(v).unwrap());
            }
            assert_eq!(name_matches(&headers, "echo"), *expected, "{values:?}");
        }
    }
}
