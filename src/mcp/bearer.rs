//! Step M5 (http-mcp.md §6.5): the gateway bearer in the `Authorization` header.
//!
//! Owns the shape of the header value, the credential bounds, and the comparison: SHA-256 of the
//! presented credential against the SHA-256 of the captured bearer, in constant time. The captured bearer
//! is hashed once at startup ([`BearerDigest::of`]); the token itself is never kept by the front, never
//! compared directly and never logged. It does not own how the bearer is captured (config.md §8).

use hyper::header::AUTHORIZATION;
use hyper::HeaderMap;
use sha2::{Digest, Sha256};

use crate::mcp::fields::exactly_one;

/// config.md: the captured bearer has 32 to 4,096 bytes; a credential outside fails without comparison.
pub const MIN_CREDENTIAL_BYTES: usize = 32;
/// See [`MIN_CREDENTIAL_BYTES`].
pub const MAX_CREDENTIAL_BYTES: usize = 4_096;

/// The SHA-256 digest of the captured bearer. Its `Debug` never shows the bytes.
#[derive(Clone)]
pub struct BearerDigest([u8; 32]);

impl std::fmt::Debug for BearerDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerDigest(<redacted>)")
    }
}

impl BearerDigest {
    /// The digest of the captured bearer's bytes (computed once, at startup).
    pub fn of(bearer: &[u8]) -> BearerDigest {
        BearerDigest(Sha256::digest(bearer).into())
    }

    /// Constant-time equality of two digests (http-mcp.md §6.5 rule 5): the time depends on nothing but the
    /// length.
    fn matches(&self, other: &[u8; 32]) -> bool {
        let diff = self.0.iter().zip(other.iter()).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(diff) == 0
    }
}

/// http-mcp.md §6.5 rule 2: `^([^ \t]+) +([^ \t]+)$` over the trimmed value; returns (scheme, credential).
fn split(value: &[u8]) -> Option<(&[u8], &[u8])> {
    let is_ws = |b: &u8| *b == b' ' || *b == b'\t';
    let scheme_end = value.iter().position(is_ws)?;
    let (scheme, rest) = value.split_at(scheme_end);
    // Only SP separates scheme and credential, never HTAB.
    let spaces = rest.iter().take_while(|b| **b == b' ').count();
    let credential = rest.get(spaces..)?;
    if scheme.is_empty() || spaces == 0 || credential.is_empty() || credential.iter().any(is_ws) {
        return None;
    }
    Some((scheme, credential))
}

/// The bearer check passes: exactly one `Authorization` line carrying the gateway bearer.
pub fn authorized(headers: &HeaderMap, digest: &BearerDigest) -> bool {
    let Some(value) = exactly_one(headers, AUTHORIZATION) else { return false };
    if std::str::from_utf8(value).is_err() {
        return false;
    }
    let Some((scheme, credential)) = split(value) else { return false };
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return false;
    }
    if !(MIN_CREDENTIAL_BYTES..=MAX_CREDENTIAL_BYTES).contains(&credential.len()) {
        return false;
    }
    digest.matches(&Sha256::digest(credential).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    const T: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    #[test]
    fn bearer_shapes() {
        // http-mcp.md §6.5 and §12.5 rows 56–65.
        let long = "b".repeat(4_096);
        let too_long = "b".repeat(4_097);
        let cases: Vec<(Vec<Vec<u8>>, &str, bool)> = vec![
            (vec![format!("Bearer {T}").into_bytes()], T, true),
            (vec![format!("bearer {T}").into_bytes()], T, true),
            (vec![format!("BEARER    {T}").into_bytes()], T, true),
            (vec![format!("Bearer {T}  ").into_bytes()], T, true),
            (vec![format!("  Bearer {T}").into_bytes()], T, true),
            (vec![format!("Bearer\t{T}").into_bytes()], T, false),
            (vec![format!("Bearer \t{T}").into_bytes()], T, false),
            (vec![b"Basic YTpi".to_vec()], T, false),
            (vec![format!("Bearer {}", &T[..31]).into_bytes()], &T[..31], false),
            (vec![format!("Bearer {T}b").into_bytes()], T, false),
            (vec![format!("Bearer {T} extra").into_bytes()], T, false),
            (vec![format!("Bearer {T}").into_bytes(), format!("Bearer {T}").into_bytes()], T, false),
            (vec![], T, false),
            (vec![b"Bearer".to_vec()], T, false),
            (vec![format!("Basic {T}").into_bytes()], T, false),
            (vec![format!("Bearer {long}").into_bytes()], &long, true),
            (vec![format!("Bearer {too_long}").into_bytes()], &too_long, false),
            (vec![[b"Bearer ".as_slice(), &[0xff; 32]].concat()], T, false),
        ];
        for (values, token, expected) in cases {
            let digest = BearerDigest::of(token.as_bytes());
            let mut headers = HeaderMap::new();
            for v in &values {
                headers.append(AUTHORIZATION, HeaderValue::from_bytes(v).unwrap());
            }
            assert_eq!(
                authorized(&headers, &digest),
                expected,
                "{:?}",
                String::from_utf8_lossy(&values.concat())
            );
        }
    }

    #[test]
    fn the_digest_is_redacted() {
        assert_eq!(format!("{:?}", BearerDigest::of(T.as_bytes())), "BearerDigest(<redacted>)");
    }
}
