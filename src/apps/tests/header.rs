//! http-mcp.md §9.1: the `x-mcp-header` projection rules, one row per rule and position.

use super::*;
use crate::apps::error::{AppError, AppErrorKind};
use crate::apps::header::project;
use crate::mcp_param::HeaderParam;

fn param(path: &[&str], suffix: &str) -> HeaderParam {
    HeaderParam { path: path.iter().map(|s| s.to_string()).collect(), suffix: suffix.into() }
}

fn prop(kind: &str, suffix: &str) -> String {
    format!(r#"{{"type":"{kind}","x-mcp-header":"{suffix}"}}"#)
}

#[test]
fn accepted_vectors() {
    let table: Vec<(String, Vec<HeaderParam>)> = vec![
        (r#"{"type":"object"}"#.into(), vec![]),
        (format!(r#"{{"type":"object","properties":{{"region":{}}}}}"#, prop("string", "Region")), vec![param(&["region"], "Region")]),
        (
            format!(
                r#"{{"type":"object","properties":{{"days":{},"metric":{},"filter":{{"type":"object","properties":{{"owner":{}}}}}}}}}"#,
                prop("integer", "Days"),
                prop("boolean", "metric"),
                prop("string", "Owner")
            ),
            // Sorted by lowercased suffix, then path.
            vec![param(&["days"], "Days"), param(&["metric"], "metric"), param(&["filter", "owner"], "Owner")],
        ),
        // Data keywords are not inspected; a property merely named `x-mcp-header` is ordinary.
        (
            r#"{"type":"object","default":{"x-mcp-header":"A"},"properties":{"x-mcp-header":{"type":"object"}},"const":{"x-mcp-header":1}}"#.into(),
            vec![],
        ),
        // Every tchar is accepted, up to 128 bytes.
        (format!(r#"{{"type":"object","properties":{{"a":{}}}}}"#, prop("string", "!#$%&'*+-.^_`|~09AZaz")), vec![param(&["a"], "!#$%&'*+-.^_`|~09AZaz")]),
        (format!(r#"{{"type":"object","properties":{{"a":{}}}}}"#, prop("string", &"x".repeat(128))), vec![param(&["a"], &"x".repeat(128))]),
    ];
    for (schema, want) in table {
        assert_eq!(project(&parse(&schema)), Ok(want), "{schema}");
    }
}

#[test]
fn refused_vectors() {
    use AppErrorKind as K;
    let s = |inner: &str| format!(r#"{{"type":"object","properties":{{"a":{inner}}}}}"#);
    let at = |keyword: &str, sub: &str| format!(r#"{{"type":"object","{keyword}":{sub}}}"#);
    let h = prop("string", "H");
    let mut table: Vec<(String, AppErrorKind)> = vec![
        (r#"{"type":"object","x-mcp-header":"Root"}"#.into(), K::HeaderPlacement),
        // config.md §11 row 77: an object-typed property.
        (s(&prop("object", "Filter")), K::HeaderType),
        (s(&prop("number", "N")), K::HeaderType),
        (s(&prop("array", "N")), K::HeaderType),
        (s(&prop("null", "N")), K::HeaderType),
        (s(r#"{"type":["string"],"x-mcp-header":"N"}"#), K::HeaderType),
        (s(r#"{"x-mcp-header":"N"}"#), K::HeaderType),
        (s(&prop("string", "")), K::HeaderSuffix),
        (s(&prop("string", "has space")), K::HeaderSuffix),
        (s(&prop("string", "a:b")), K::HeaderSuffix),
        (s(&prop("string", "é")), K::HeaderSuffix),
        (s(&prop("string", &"x".repeat(129))), K::HeaderSuffix),
        (s(r#"{"type":"string","x-mcp-header":7}"#), K::HeaderSuffix),
        (
            format!(
                r#"{{"type":"object","properties":{{"a":{},"b":{}}}}}"#,
                prop("string", "Same"),
                prop("string", "sAME")
            ),
            K::HeaderDuplicate,
        ),
    ];
    // Every non-property schema position.
    for keyword in [
        "items",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    ] {
        table.push((at(keyword, &h), K::HeaderPlacement));
    }
    for keyword in ["prefixItems", "allOf", "anyOf", "oneOf"] {
        table.push((at(keyword, &format!("[{h}]")), K::HeaderPlacement));
    }
    for keyword in ["patternProperties", "dependentSchemas", "$defs", "definitions"] {
        table.push((at(keyword, &format!(r#"{{"x":{h}}}"#)), K::HeaderPlacement));
    }
    // `properties` below a non-property position is not a property schema.
    table.push((
        s(&format!(r#"{{"type":"array","items":{{"type":"object","properties":{{"b":{h}}}}}}}"#)),
        K::HeaderPlacement,
    ));
    for (schema, want) in table {
        assert_eq!(project(&parse(&schema)), Err(AppError::new(want)), "{schema}");
    }
}

#[test]
fn path_and_count_bounds() {
    let nested = |depth: usize| {
        let mut schema = prop("string", "Deep");
        for i in (0..depth - 1).rev() {
            schema = format!(r#"{{"type":"object","properties":{{"p{i}":{schema}}}}}"#);
        }
        format!(r#"{{"type":"object","properties":{{"root":{schema}}}}}"#)
    };
    assert_eq!(project(&parse(&nested(16))).unwrap()[0].path.len(), 16);
    assert_eq!(project(&parse(&nested(17))), Err(AppError::new(AppErrorKind::HeaderPathTooLong)));
    let many = |n: usize| {
        let props: Vec<String> =
            (0..n).map(|i| format!(r#""p{i}":{}"#, prop("string", &format!("H{i}")))).collect();
        format!(r#"{{"type":"object","properties":{{{}}}}}"#, props.join(","))
    };
    assert_eq!(project(&parse(&many(24))).unwrap().len(), 24);
    assert_eq!(project(&parse(&many(25))), Err(AppError::new(AppErrorKind::HeaderTooMany)));
}
