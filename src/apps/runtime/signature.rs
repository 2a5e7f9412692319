//! The mission's API as Luau text for a model (models.md §8.2): each granted tool as a typed declaration
//! whose argument and result types come from its pinned input and output schemas, with its description,
//! and each exported mission function with its doc comment, the way code-mode systems show an API as
//! TypeScript.
//!
//! Owns the schema → Luau type mapping and the text's exact form. Pure: the facts come from what startup
//! and acquisition kept (the same as `handle:api()`), nothing is sent.

use std::fmt::Write as _;

use serde_json::Value;

use super::tools::ApiTool;
use crate::apps::luau::exports::ExportedFunction;
use crate::config::host::ToolEffect;

/// Types nest at most this deep; deeper schemas are `any` (models.md §8.2).
const MAX_TYPE_DEPTH: usize = 6;
/// One type's text at most this long; a longer one is `any`.
const MAX_TYPE_BYTES: usize = 2_048;

/// The fixed type preamble every API text starts with.
pub const PREAMBLE: &str = "\
type ToolError = { ok: false, error: { code: string, message: string, retryable: boolean, dispatch: string }, content: {any}? }
type ToolResult<T> = { ok: true, value: T?, content: {any} } | ToolError
";

/// The Luau text of a mission's API: the preamble, the mission functions, then the tools.
pub fn render(functions: &[ExportedFunction], tools: &[ApiTool]) -> String {
    let mut out = String::from(PREAMBLE);
    for function in functions {
        out.push('\n');
        if let Some(doc) = &function.doc {
            comment(&mut out, doc);
        }
        let (component, name) = function.name.split_once('.').unwrap_or(("", &function.name));
        let _ = writeln!(out, "-- require(\"{component}\").{name}(...: any): any");
    }
    for tool in tools {
        out.push('\n');
        if let Some(description) = &tool.description {
            comment(&mut out, description);
        }
        let effect = match tool.effect {
            ToolEffect::Read => "read",
            ToolEffect::Write => "write",
        };
        let _ = writeln!(out, "-- effect: {effect}");
        let result = tool.output_schema.as_deref().map_or_else(|| "any".to_owned(), |s| luau_type(s, 0));
        let _ = writeln!(
            out,
            "declare function tool(alias: {}, arguments: {}): ToolResult<{}>",
            literal(&tool.alias),
            luau_type(&tool.input_schema, 0),
            result
        );
    }
    out
}

/// A doc as `-- ` lines.
fn comment(out: &mut String, text: &str) {
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            out.push_str("--\n");
        } else {
            let _ = writeln!(out, "-- {line}");
        }
    }
}

/// A string singleton type: the string as a JSON string literal (Luau accepts its escapes).
fn literal(s: &str) -> String {
    crate::json::to_deterministic_string(&Value::String(s.to_owned()))
}

/// A Luau identifier that needs no brackets as a table key.
fn is_name(key: &str) -> bool {
    const RESERVED: [&str; 21] = [
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local",
        "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ];
    let mut bytes = key.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !RESERVED.contains(&key)
}

/// models.md §8.2: the Luau type of a JSON Schema; `any` for what it does not map.
pub fn luau_type(schema: &Value, depth: usize) -> String {
    let text = type_of(schema, depth);
    if text.len() > MAX_TYPE_BYTES {
        "any".to_owned()
    } else {
        text
    }
}

fn type_of(schema: &Value, depth: usize) -> String {
    let Some(map) = schema.as_object() else { return "any".to_owned() };
    if depth >= MAX_TYPE_DEPTH {
        return "any".to_owned();
    }
    if let Some(Value::String(c)) = map.get("const") {
        return literal(c);
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let strings: Option<Vec<String>> = values.iter().map(|v| v.as_str().map(literal)).collect();
        return match strings {
            Some(s) if !s.is_empty() => s.join(" | "),
            _ => "any".to_owned(),
        };
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = map.get(keyword) {
            return union(options.iter().map(|o| type_of(o, depth + 1)).collect());
        }
    }
    match map.get("type") {
        Some(Value::String(t)) => of_type(t, map, depth),
        Some(Value::Array(types)) => {
            union(types.iter().filter_map(Value::as_str).map(|t| of_type(t, map, depth)).collect())
        }
        None if map.contains_key("properties") => of_type("object", map, depth),
        _ => "any".to_owned(),
    }
}

/// A union; `T | nil` is written `T?`.
fn union(mut types: Vec<String>) -> String {
    if types.is_empty() || types.iter().any(|t| t == "any") {
        return "any".to_owned();
    }
    types.dedup();
    let nullable = types.iter().any(|t| t == "nil");
    types.retain(|t| t != "nil");
    let joined = match types.len() {
        0 => return "nil".to_owned(),
        1 => types.remove(0),
        _ => format!("({})", types.join(" | ")),
    };
    if nullable {
        format!("{joined}?")
    } else {
        joined
    }
}

fn of_type(name: &str, map: &serde_json::Map<String, serde_json::Value>, depth: usize) -> String {
    match name {
        "string" => "string".to_owned(),
        "integer" | "number" => "number".to_owned(),
        "boolean" => "boolean".to_owned(),
        "null" => "nil".to_owned(),
        "array" => match map.get("items") {
            Some(items) => format!("{{ {} }}", type_of(items, depth + 1)),
            None => "{ any }".to_owned(),
        },
        "object" => object(map, depth),
        _ => "any".to_owned(),
    }
}

fn object(map: &serde_json::Map<String, serde_json::Value>, depth: usize) -> String {
    let required: Vec<&str> = match map.get("required") {
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut fields = Vec::new();
    if let Some(Value::Object(properties)) = map.get("properties") {
        for (key, schema) in properties {
            let mut ty = type_of(schema, depth + 1);
            if !required.contains(&key.as_str()) && !ty.ends_with('?') && ty != "any" {
                ty = if ty.contains(" | ") && !ty.starts_with('(') {
                    format!("({ty})?")
                } else {
                    format!("{ty}?")
                };
            }
            let key = if is_name(key) { key.clone() } else { format!("[{}]", literal(key)) };
            fields.push(format!("{key}: {ty}"));
        }
    }
    match map.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(extra @ Value::Object(_)) => fields.push(format!("[string]: {}", type_of(extra, depth + 1))),
        _ if fields.is_empty() => fields.push("[string]: any".to_owned()),
        _ => {}
    }
    if fields.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{ {} }}", fields.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{decode, Limits};

    fn parse(text: &str) -> Value {
        decode(text.as_bytes(), Limits::DOCUMENT).unwrap()
    }

    // models.md §8.2, vectors G1–G10: a JSON Schema and its Luau type.
    #[test]
    fn type_vectors() {
        let table: &[(&str, &str, &str)] = &[
            (
                "G1 scalars",
                r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"}},"required":["a","b","c"]}"#,
                "{ a: string, b: number, c: boolean }",
            ),
            (
                "G2 optional members",
                r#"{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"number"}},"required":["path"]}"#,
                "{ n: number?, path: string }",
            ),
            ("G3 arrays", r#"{"type":"array","items":{"type":"string"}}"#, "{ string }"),
            ("G4 string enum", r#"{"enum":["a","b"]}"#, "\"a\" | \"b\""),
            ("G5 nullable", r#"{"type":["string","null"]}"#, "string?"),
            (
                "G6 a key that is not a name",
                r#"{"type":"object","properties":{"end":{"type":"string"},"a-b":{"type":"string"}},"required":["end","a-b"]}"#,
                "{ [\"a-b\"]: string, [\"end\"]: string }",
            ),
            ("G7 an open object", r#"{"type":"object"}"#, "{ [string]: any }"),
            ("G8 a closed empty object", r#"{"type":"object","additionalProperties":false}"#, "{}"),
            (
                "G9 a map",
                r#"{"type":"object","additionalProperties":{"type":"number"}}"#,
                "{ [string]: number }",
            ),
            (
                "G10 unknown and too deep",
                r#"{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"string"}}}}}}}"#,
                "{ { { { { { any } } } } } }",
            ),
            ("G11 anyOf", r#"{"anyOf":[{"type":"string"},{"type":"number"}]}"#, "(string | number)"),
        ];
        for (what, schema, want) in table {
            assert_eq!(luau_type(&parse(schema), 0), *want, "{what}");
        }
    }

    // models.md §8.2 vector G12: the whole text of one function and one tool.
    #[test]
    fn the_api_text() {
        let functions = [ExportedFunction { name: "calls.run".into(), doc: Some("Calls one tool.".into()) }];
        let tools = [ApiTool {
            alias: "fx.echo".into(),
            description: Some("Echoes.\nTwice.".into()),
            input_schema: std::sync::Arc::new(parse(
                r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
            )),
            output_schema: Some(std::sync::Arc::new(parse(
                r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
            ))),
            effect: ToolEffect::Read,
        }];
        let want = format!(
            "{PREAMBLE}\n-- Calls one tool.\n-- require(\"calls\").run(...: any): any\n\n-- Echoes.\n-- Twice.\n-- effect: read\n\
             declare function tool(alias: \"fx.echo\", arguments: {{ text: string }}): ToolResult<{{ text: string }}>\n"
        );
        assert_eq!(render(&functions, &tools), want);
    }
}
