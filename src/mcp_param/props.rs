//! Generated inputs for the `Mcp-Param-*` / `Mcp-Name` value decoder and the expected headers
//! (http-mcp.md §9.2–§9.5; issue 18, docs/reliability.md).
//!
//! Properties: no panic on any header value; decoding is the inverse of the canonical encoding for every
//! string (http-mcp.md §9.2 rule 4 round-trips); a sentinel decodes only when its payload is canonical
//! Base64 (re-encoding gives the same bytes); and the client's expected headers (`expected_headers`) always
//! pass the server's C3 check (`mcp::params::matches`), both sides sharing one rule.

use hyper::header::{HeaderName, HeaderValue};
use hyper::HeaderMap;
use proptest::collection::vec;
use proptest::prelude::*;

use super::encoding::{canonical_encoding, decode, encode_base64};
use super::{expected_headers, HeaderParam};
use crate::json::{Map, Value};
use crate::prop_support::{check, interesting_byte, mutated};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,16}",
        "[ -~\t\r\né😀\u{0}\u{7f}\u{feff}]{0,16}",
        "=\\?base64\\?[A-Za-z0-9+/=]{0,8}\\?=",
    ]
}

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

#[test]
fn prop_mcp_param_expected_headers_pass_c3() {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::Float),
        text().prop_map(Value::from),
    ];
    let params = vec(("[a-c]", "[A-Za-z0-9-]{1,8}"), 0..4);
    check("mcp_param_c3", 1024, (params, vec(("[a-c]", scalar), 0..4)), |(params, members)| {
        let params: Vec<HeaderParam> =
            params.into_iter().map(|(p, suffix)| HeaderParam { path: vec![p], suffix }).collect();
        // http-mcp.md §9.1: suffixes are unique case-insensitively.
        let mut suffixes: Vec<String> = params.iter().map(|p| p.suffix.to_ascii_lowercase()).collect();
        suffixes.sort();
        suffixes.dedup();
        prop_assume!(suffixes.len() == params.len());
        let arguments = Value::Object(members.into_iter().collect::<Map>());
        let Some(lines) = expected_headers(&params, &arguments) else { return Ok(()) };
        let mut headers = HeaderMap::new();
        for (name, value) in lines {
            let name =
                HeaderName::from_bytes(name.as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let value = HeaderValue::from_str(&value).map_err(|e| TestCaseError::fail(e.to_string()))?;
            headers.append(name, value);
        }
        prop_assert!(crate::mcp::params::matches(&headers, &params, &arguments), "{headers:?}");
        Ok(())
    });
}
