//! Generated inputs for the `Mcp-Param-*` / `Mcp-Name` value decoder and the expected headers
//! (http-mcp.md §9.2–§9.5; issue 18, docs/reliability.md).
//!
//! Properties: no panic on any header value; decoding is the inverse of the canonical encoding for every
//! string (http-mcp.md §9.2 rule 4 round-trips); a sentinel decodes only when its payload is canonical Base64
//! (re-encoding gives the same bytes). That the expected headers pass the server's `Mcp-Param-*` check is
//! `mcp::params_props` (the check is the `/mcp` front's, above this module).

use hyper::header::HeaderValue;
use proptest::collection::vec;
use proptest::prelude::*;

use super::encoding::{canonical_encoding, decode, encode_base64};
use crate::support::prop_support::{check, interesting_byte, mutated, param_text as text};

#[test]
fn prop_mcp_param_value_round_trip() {
    check("mcp_param_round_trip", 2048, text(), |s| {
        let encoded = canonical_encoding(&s);
        prop_assert!(HeaderValue::from_str(&encoded).is_ok(), "not a header value: {encoded:?}");
        prop_assert_eq!(decode(encoded.as_bytes()), Some(s));
        Ok(())
    });
}

#[test]
fn prop_mcp_param_value_decoder() {
    let sentinel =
        vec(any::<u8>(), 0..12).prop_map(|b| format!("=?base64?{}?=", encode_base64(&b)).into_bytes());
    let value = mutated(prop_oneof![sentinel, vec(interesting_byte(), 0..24)]);
    check("mcp_param_decode", 2048, value, |value| {
        if let Some(decoded) = decode(&value) {
            let sentinel = value.starts_with(b"=?base64?") && value.ends_with(b"?=") && value.len() >= 11;
            if sentinel {
                let payload = &value[9..value.len() - 2];
                let again = encode_base64(decoded.as_bytes());
                prop_assert_eq!(again.as_bytes(), payload, "canonical Base64 only");
            } else {
                prop_assert_eq!(decoded.as_bytes(), &value[..], "literal values decode to themselves");
            }
        }
        Ok(())
    });
}
