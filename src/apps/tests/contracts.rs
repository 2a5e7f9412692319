//! config.md §6.7 / execution.md §11.2: decoding, the root, references, normalisation at every schema
//! position, the 65,536-byte bound and compilation.

use super::*;
use crate::apps::contracts::{self, MAX_NORMALISED_BYTES};
use crate::apps::error::{AppDetail, AppError, AppErrorKind};

fn load(text: &str) -> Result<contracts::Contract, AppError> {
    contracts::load(text.as_bytes())
}

fn normalised(text: &str) -> String {
    load(text).unwrap().encoded().to_owned()
}

/// (source, normalised deterministic JSON).
#[test]
fn normalisation_vectors() {
    let table: &[(&str, &str)] = &[
        (r#"{"type":"object"}"#, r#"{"additionalProperties":false,"type":"object"}"#),
        (
            r#"{"type":"object","properties":{"o":{"type":["object","null"]}}}"#,
            r#"{"additionalProperties":false,"properties":{"o":{"additionalProperties":false,"type":["object","null"]}},"type":"object"}"#,
        ),
        (
            r#"{"type":"object","additionalProperties":true}"#,
            r#"{"additionalProperties":true,"type":"object"}"#,
        ),
        (
            r#"{"type":"object","unevaluatedProperties":false}"#,
            r#"{"type":"object","unevaluatedProperties":false}"#,
        ),
        // `properties` alone closes a schema; a schema without either is left open.
        (
            r#"{"type":"object","properties":{"a":{"properties":{"b":{}}},"c":{"type":"string"}}}"#,
            r#"{"additionalProperties":false,"properties":{"a":{"additionalProperties":false,"properties":{"b":{}}},"c":{"type":"string"}},"type":"object"}"#,
        ),
        // Every schema-valued keyword of 2020-12 is walked.
        (
            r#"{"type":"object","properties":{"l":{"type":"array","items":{"type":"object"},"prefixItems":[{"type":"object"}],"contains":{"type":"object"},"unevaluatedItems":{"type":"object"}}}}"#,
            r#"{"additionalProperties":false,"properties":{"l":{"contains":{"additionalProperties":false,"type":"object"},"items":{"additionalProperties":false,"type":"object"},"prefixItems":[{"additionalProperties":false,"type":"object"}],"type":"array","unevaluatedItems":{"additionalProperties":false,"type":"object"}}},"type":"object"}"#,
        ),
        (
            r#"{"type":"object","allOf":[{"type":"object"}],"anyOf":[{"type":"object"}],"oneOf":[{"type":"object"}],"not":{"type":"object"}}"#,
            r#"{"additionalProperties":false,"allOf":[{"additionalProperties":false,"type":"object"}],"anyOf":[{"additionalProperties":false,"type":"object"}],"not":{"additionalProperties":false,"type":"object"},"oneOf":[{"additionalProperties":false,"type":"object"}],"type":"object"}"#,
        ),
        (
            r#"{"type":"object","if":{"type":"object"},"then":{"type":"object"},"else":{"type":"object"}}"#,
            r#"{"additionalProperties":false,"else":{"additionalProperties":false,"type":"object"},"if":{"additionalProperties":false,"type":"object"},"then":{"additionalProperties":false,"type":"object"},"type":"object"}"#,
        ),
        (
            r#"{"type":"object","$defs":{"d":{"type":"object"}},"definitions":{"e":{"type":"object"}},"dependentSchemas":{"x":{"type":"object"}}}"#,
            r#"{"$defs":{"d":{"additionalProperties":false,"type":"object"}},"additionalProperties":false,"definitions":{"e":{"additionalProperties":false,"type":"object"}},"dependentSchemas":{"x":{"additionalProperties":false,"type":"object"}},"type":"object"}"#,
        ),
        (
            r#"{"type":"object","patternProperties":{"^a":{"type":"object"}},"additionalProperties":{"type":"object"},"propertyNames":{"type":"string"}}"#,
            r#"{"additionalProperties":{"additionalProperties":false,"type":"object"},"patternProperties":{"^a":{"additionalProperties":false,"type":"object"}},"propertyNames":{"type":"string"},"type":"object"}"#,
        ),
        (
            r#"{"type":"object","unevaluatedProperties":{"type":"object"}}"#,
            r#"{"type":"object","unevaluatedProperties":{"additionalProperties":false,"type":"object"}}"#,
        ),
        // Data keywords are not schemas; a property named like a keyword is an ordinary property.
        (
            r#"{"type":"object","default":{"type":"object"},"const":{"type":"object"},"enum":[{"type":"object"}],"examples":[{"type":"object"}],"x-other":{"type":"object"}}"#,
            r#"{"additionalProperties":false,"const":{"type":"object"},"default":{"type":"object"},"enum":[{"type":"object"}],"examples":[{"type":"object"}],"type":"object","x-other":{"type":"object"}}"#,
        ),
        (
            r#"{"type":"object","properties":{"not":{"type":"object"},"x-mcp-header":{"type":"string"}}}"#,
            r#"{"additionalProperties":false,"properties":{"not":{"additionalProperties":false,"type":"object"},"x-mcp-header":{"type":"string"}},"type":"object"}"#,
        ),
        // Annotations stay.
        (
            r#"{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}"#,
            r#"{"additionalProperties":false,"properties":{"r":{"type":"string","x-mcp-header":"Region"}},"type":"object"}"#,
        ),
        // Boolean schemas stay as they are.
        (
            r#"{"type":"object","properties":{"a":true,"b":false}}"#,
            r#"{"additionalProperties":false,"properties":{"a":true,"b":false},"type":"object"}"#,
        ),
    ];
    for (source, want) in table {
        assert_eq!(normalised(source), *want, "{source}");
    }
}

#[test]
fn refusal_vectors() {
    use AppErrorKind as K;
    let table: &[(&str, AppErrorKind)] = &[
        ("{", K::ContractUndecodable),
        (r#"{"type":"object","type":"object"}"#, K::ContractUndecodable),
        ("\u{feff}{\"type\":\"object\"}", K::ContractUndecodable),
        ("[]", K::ContractRootNotObject),
        // config.md §11 row 73.
        (r#"{"type":"array"}"#, K::ContractRootNotObject),
        (r#"{"type":["object"]}"#, K::ContractRootNotObject),
        (r#"{"properties":{}}"#, K::ContractRootNotObject),
        (r#"{"type":"object","$schema":"http://json-schema.org/draft-07/schema#"}"#, K::ContractDialect),
        (r#"{"type":"object","$schema":7}"#, K::ContractDialect),
        // config.md §11 row 74, at the root and deeper.
        (r#"{"type":"object","$ref":"other.json"}"#, K::ContractExternalReference),
        (
            r#"{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}"#,
            K::ContractExternalReference,
        ),
        (
            r#"{"type":"object","$defs":{"a":{"items":{"$dynamicRef":"x.json#meta"}}}}"#,
            K::ContractExternalReference,
        ),
        (r#"{"type":"object","properties":{"a":{"type":"bogus"}}}"#, K::ContractUncompilable),
        (r#"{"type":"object","properties":{"a":{"pattern":"("}}}"#, K::ContractUncompilable),
        (r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}"##, K::ContractUncompilable),
        (r#"{"type":"object","properties":7}"#, K::ContractUncompilable),
    ];
    for (source, want) in table {
        assert_eq!(load(source).map(|_| ()).map_err(|e| e.kind), Err(*want), "{source}");
    }
}

/// A contract that is not strict JSON says where (lifecycle.md §1.5): line, column, the decoder's reason
/// and the refused line with a caret; the file is named by the caller (`in_file`).
#[test]
fn a_contract_that_is_not_json_says_where() {
    let source = "{\n  \"type\": \"object\"\n  \"properties\": {}\n}\n";
    let error = load(source).map(|_| ()).map_err(|e| e.in_file("input.schema.json"));
    let detail = AppDetail::NotJson {
        file: "input.schema.json".to_owned(),
        line: 3,
        column: 3,
        reason: "not strict JSON: syntax at byte 23 (line 3, column 3)".to_owned(),
        excerpt: "  \"properties\": {}\n  ^".to_owned(),
    };
    assert_eq!(error, Err(AppError::with_detail(AppErrorKind::ContractUndecodable, detail.clone())));
    assert_eq!(detail.place().as_deref(), Some("input.schema.json:3:3"));
}

#[test]
fn accepted_vectors() {
    let table: &[&str] = &[
        r#"{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema"}"#,
        r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}"##,
        r##"{"type":"object","properties":{"a":{"$ref":"#"}}}"##,
        // `$ref` inside data is data.
        r#"{"type":"object","default":{"$ref":"other.json"},"properties":{"$ref":{"type":"string"}}}"#,
    ];
    for source in table {
        assert!(load(source).is_ok(), "{source}");
    }
}

#[test]
fn validation_uses_the_normalised_schema() {
    let c = load(r#"{"type":"object","properties":{"n":{"type":"integer"},"when":{"type":"string","format":"date-time"},"blob":{"type":"string","contentEncoding":"base64"}}}"#).unwrap();
    // `{"type":"object"}` semantics: undeclared members are refused.
    assert!(c.is_valid(&parse(r#"{"n":3}"#)));
    assert!(!c.is_valid(&parse(r#"{"n":3,"extra":1}"#)));
    // JSON Schema `integer` accepts 3.0 (execution.md §11.2).
    assert!(c.is_valid(&parse(r#"{"n":3.0}"#)));
    assert!(!c.is_valid(&parse(r#"{"n":3.5}"#)));
    // `format` and the content keywords are annotations.
    assert!(c.is_valid(&parse(r#"{"when":"not a date","blob":"!!!"}"#)));
    let echo = load("{\"type\":\"object\"}\n").unwrap();
    assert!(echo.is_valid(&parse("{}")));
    assert!(!echo.is_valid(&parse(r#"{"a":1}"#)));
}

/// config.md §11 rows 75 and 76: exactly 65,536 bytes of normalised schema is accepted.
#[test]
fn size_bound_is_on_the_normalised_encoding() {
    let with_description =
        |n: usize| format!(r#"{{ "type": "object", "description": "{}" }}"#, "a".repeat(n));
    let overhead = normalised(&with_description(0)).len();
    assert_eq!(overhead, r#"{"additionalProperties":false,"description":"","type":"object"}"#.len());
    let exact = with_description(MAX_NORMALISED_BYTES - overhead);
    assert_eq!(load(&exact).unwrap().encoded().len(), MAX_NORMALISED_BYTES);
    let over = with_description(MAX_NORMALISED_BYTES - overhead + 1);
    assert_eq!(load(&over).map(|_| ()), Err(AppError::new(AppErrorKind::ContractTooLarge)));
    // The source may be larger than the bound when its encoding is not (whitespace is dropped).
    let padded = format!("{}{}", exact, " ".repeat(1000));
    assert!(load(&padded).is_ok());
}
