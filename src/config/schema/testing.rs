//! Test helpers: decode a JSON literal and edit a document by JSON pointer, so that the test vectors of
//! config.md §11 read as "baseline plus one change". Test-only; panics are the point here.

use serde_json::Value;

use crate::json::{self, Limits};

/// Decodes a JSON literal with the document limits.
pub fn parse(text: &str) -> Value {
    json::decode(text.as_bytes(), Limits::DOCUMENT).expect("test JSON decodes")
}

fn step<'a>(value: &'a mut Value, token: &str) -> &'a mut Value {
    match value {
        Value::Object(map) => map.get_mut(token).unwrap_or_else(|| panic!("no member {token}")),
        Value::Array(items) => {
            let i: usize = token.parse().expect("array index");
            items.get_mut(i).unwrap_or_else(|| panic!("no index {i}"))
        }
        _ => panic!("cannot step into a scalar at {token}"),
    }
}

/// Splits an RFC 6901 pointer into its unescaped parent tokens and last token.
fn split(pointer: &str) -> (Vec<String>, String) {
    let mut tokens: Vec<String> =
        pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
    let last = tokens.pop().expect("non-empty pointer");
    (tokens, last)
}

fn parent<'a>(doc: &'a mut Value, tokens: &[String]) -> &'a mut Value {
    tokens.iter().fold(doc, |v, t| step(v, t))
}

/// Sets (or adds) the member or element at `pointer` to the decoded `json`.
pub fn set(doc: &mut Value, pointer: &str, json: &str) {
    set_value(doc, pointer, parse(json));
}

/// Sets (or adds) the member or element at `pointer` to `value`.
pub fn set_value(doc: &mut Value, pointer: &str, value: Value) {
    let (tokens, last) = split(pointer);
    match parent(doc, &tokens) {
        Value::Object(map) => {
            map.insert(last, value);
        }
        Value::Array(items) => {
            let i: usize = last.parse().expect("array index");
            *items.get_mut(i).expect("index") = value;
        }
        _ => panic!("cannot set into a scalar"),
    }
}

/// Removes the member at `pointer`.
pub fn remove(doc: &mut Value, pointer: &str) {
    let (tokens, last) = split(pointer);
    match parent(doc, &tokens) {
        Value::Object(map) => {
            map.remove(&last).unwrap_or_else(|| panic!("no member {last} to remove"));
        }
        _ => panic!("remove needs an object"),
    }
}

/// Appends the decoded `json` to the array at `pointer`.
pub fn push(doc: &mut Value, pointer: &str, json: &str) {
    let (tokens, last) = split(pointer);
    let mut all = tokens;
    all.push(last);
    match parent(doc, &all) {
        Value::Array(items) => items.push(parse(json)),
        _ => panic!("push needs an array"),
    }
}

/// Encodes `value` as compact JSON for feeding a loader that takes bytes. Key order does not matter to
/// the loaders; this is not deterministic JSON.
pub fn to_bytes(value: &Value) -> Vec<u8> {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            // `Number`'s `Display` keeps a float token a float (`1.0`, `1e16`).
            Value::Number(n) => out.push_str(&n.to_string()),
            Value::String(s) => out.push_str(&serde_json::to_string(s).expect("string")),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, item)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).expect("key"));
                    out.push(':');
                    write(item, out);
                }
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out.into_bytes()
}

/// The JSON pointer of every node below the root of `value`, parents before children.
pub fn pointers(value: &Value) -> Vec<String> {
    fn walk(value: &Value, at: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, member) in map {
                    let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                    out.push(here.clone());
                    walk(member, &here, out);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let here = format!("{at}/{i}");
                    out.push(here.clone());
                    walk(item, &here, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, "", &mut out);
    out
}

/// One value of every JSON type, for replacing nodes in robustness sweeps.
pub const EVERY_TYPE: [&str; 8] = ["null", "true", "0", "-1", "1.5", r#""x""#, "[]", "{}"];
