//! Generated inputs for the `Mcp-Param-*` check of `tools/call` (http-mcp.md §9.3–§9.5; issue 18,
//! docs/reliability.md): the client's expected headers (`mcp_param::expected_headers`) always pass the
//! server's check (`params::matches`), both sides sharing one rule.

use hyper::header::{HeaderName, HeaderValue};
use hyper::HeaderMap;
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::mcp::params;
use crate::mcp_param::{expected_headers, HeaderParam};
use crate::support::prop_support::{check, param_text as text};

#[test]
fn prop_mcp_param_expected_headers_pass_c3() {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
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
        let arguments = Value::Object(members.into_iter().collect::<Map<String, Value>>());
        let Some(lines) = expected_headers(&params, &arguments) else { return Ok(()) };
        let mut headers = HeaderMap::new();
        for (name, value) in lines {
            let name =
                HeaderName::from_bytes(name.as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let value = HeaderValue::from_str(&value).map_err(|e| TestCaseError::fail(e.to_string()))?;
            headers.append(name, value);
        }
        prop_assert!(params::matches(&headers, &params, &arguments), "{headers:?}");
        Ok(())
    });
}
