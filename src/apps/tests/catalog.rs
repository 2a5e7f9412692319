//! http-mcp.md §10.3: the listing's exact bytes and its 4,194,304-byte bounds.

use serde_json::Map;

use super::*;
use crate::apps::catalog::{self, ListingTool, MAX_LISTING_BYTES, WORST_CASE_ENVELOPE_BYTES};
use crate::apps::error::{AppError, AppErrorKind};
use crate::config::manifest::Effect;

#[test]
fn listing_bytes() {
    let input = parse(r#"{"additionalProperties":false,"type":"object"}"#);
    let tools = [
        ListingTool {
            name: "brief",
            title: "Brief",
            description: "Read the published brief.",
            input_schema: &input,
            output_schema: &input,
            effect: Effect::Read,
        },
        ListingTool {
            name: "echo",
            title: "Echo",
            description: "Line one.\nLine two.",
            input_schema: &input,
            output_schema: &input,
            effect: Effect::Write,
        },
    ];
    let c = catalog::build(&tools).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let schema = r#"{"additionalProperties":false,"type":"object"}"#;
    let tools_json = format!(
        r#"[{{"annotations":{{"readOnlyHint":true}},"description":"Read the published brief.","inputSchema":{schema},"name":"brief","outputSchema":{schema},"title":"Brief"}},{{"annotations":{{"readOnlyHint":false}},"description":"Line one.\nLine two.","inputSchema":{schema},"name":"echo","outputSchema":{schema},"title":"Echo"}}]"#
    );
    assert_eq!(c.tools_json(), tools_json);
    assert_eq!(
        c.result_json(),
        format!(
            r#"{{"_meta":{{"io.modelcontextprotocol/serverInfo":{{"name":"ptc-gateway","version":"{version}"}}}},"cacheScope":"private","resultType":"complete","tools":{tools_json},"ttlMs":0}}"#
        )
    );
}

#[test]
fn worst_case_envelope_matches_an_encoded_response() {
    let result = parse(r#"{"tools":[]}"#);
    let mut response = Map::new();
    response.insert("id".into(), Value::String("\u{0}".repeat(256)));
    response.insert("jsonrpc".into(), Value::from("2.0"));
    response.insert("result".into(), result.clone());
    let encoded = crate::json::to_deterministic(&Value::Object(response));
    assert_eq!(encoded.len(), WORST_CASE_ENVELOPE_BYTES + crate::json::to_deterministic(&result).len());
    assert_eq!(WORST_CASE_ENVELOPE_BYTES, 1571);
}

/// config.md §11 row 79: a worst-case response of 4,194,305 bytes is refused; 4,194,304 is accepted.
#[test]
fn response_bound_is_exact() {
    let sized = |total: usize| {
        // Grow one description until the worst-case response has `total` bytes.
        let schema = parse(r#"{"type":"object"}"#);
        let probe = |len: usize| {
            let description = "d".repeat(len);
            let tools = [ListingTool {
                name: "t",
                title: "T",
                description: &description,
                input_schema: &schema,
                output_schema: &schema,
                effect: Effect::Read,
            }];
            catalog::build(&tools).map(|c| c.result_json().len() + WORST_CASE_ENVELOPE_BYTES)
        };
        let base = probe(0).unwrap();
        let description = "d".repeat(total - base);
        let tools = [ListingTool {
            name: "t",
            title: "T",
            description: &description,
            input_schema: &schema,
            output_schema: &schema,
            effect: Effect::Read,
        }];
        catalog::build(&tools).map(|c| c.result_json().len() + WORST_CASE_ENVELOPE_BYTES)
    };
    assert_eq!(sized(MAX_LISTING_BYTES), Ok(MAX_LISTING_BYTES));
    // The refusal carries what it measured, for a person (lifecycle.md §1.5).
    let size = crate::apps::AppDetail::Size {
        what: "the worst-case tools/list response",
        bytes: MAX_LISTING_BYTES + 1,
        limit: MAX_LISTING_BYTES,
    };
    assert_eq!(sized(MAX_LISTING_BYTES + 1), Err(AppError::with_detail(AppErrorKind::CatalogTooLarge, size)));
    assert_eq!(
        AppError::new(AppErrorKind::CatalogTooLarge).code(),
        crate::codes::StartupCode::CatalogTooLarge
    );
}
