//! Emission of the published JSON Schema (draft 2020-12) from a [`Schema`] definition (config.md §9).
//!
//! The output is a `serde_json::Value`; encoding it (deterministic JSON plus LF) and writing the files is the
//! staleness gate's concern. Emission describes serve mode (config.md §9.1): properties required only to
//! serve are listed in `required`. `maxLength` is always written and is a byte bound (config.md §9.4).

use serde_json::{Map, Value};

use super::node::{
    Additional, ArraySchema, ObjectSchema, Presence, Property, Schema, StringSchema, UnionSchema,
};
use crate::json::integer_value;

/// The `$schema` every published file declares.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// What a published root carries besides its definition (config.md §9.3).
pub struct Publication<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub description: &'a str,
}

/// The published schema of a document: `$schema`, `$id`, `title`, `description`, then the definition.
pub fn publish(schema: &Schema, publication: &Publication<'_>) -> Value {
    let mut root = match emit(schema) {
        Value::Object(map) => map,
        other => {
            let mut map = Map::new();
            map.insert("allOf".to_owned(), Value::Array(vec![other]));
            map
        }
    };
    root.insert("$schema".to_owned(), DRAFT_2020_12.into());
    root.insert("$id".to_owned(), publication.id.into());
    root.insert("title".to_owned(), publication.title.into());
    root.insert("description".to_owned(), publication.description.into());
    Value::Object(root)
}

/// The JSON Schema of one node.
pub fn emit(schema: &Schema) -> Value {
    let mut out = Map::new();
    match schema {
        Schema::Boolean(b) => {
            put(&mut out, "type", "boolean");
            if let Some(c) = b.constant {
                put(&mut out, "const", c);
            }
        }
        Schema::Integer(i) => {
            put(&mut out, "type", "integer");
            match i.constant {
                Some(c) => put(&mut out, "const", integer_value(c)),
                None => {
                    put(&mut out, "minimum", integer_value(i.min));
                    put(&mut out, "maximum", integer_value(i.max));
                }
            }
        }
        Schema::Number(n) => {
            put(&mut out, "type", "number");
            put(&mut out, "minimum", Value::from(n.min));
            put(&mut out, "maximum", Value::from(n.max));
        }
        Schema::String(s) => return emit_string(s),
        Schema::Array(a) => return emit_array(a),
        Schema::Object(o) => return emit_object(o),
        Schema::Union(u) => return emit_union(u),
        Schema::OneOf(shapes) => {
            put(&mut out, "oneOf", Value::Array(shapes.iter().map(emit).collect()));
        }
    }
    Value::Object(out)
}

fn put(out: &mut Map<String, Value>, key: &str, value: impl Into<Value>) {
    out.insert(key.to_owned(), value.into());
}

fn count(n: usize) -> Value {
    Value::from(n)
}

/// A string node. Enumerated and constant strings are bounded by their values, so only the other
/// strings carry `minLength`/`maxLength`.
fn emit_string(s: &StringSchema) -> Value {
    let mut out = Map::new();
    put(&mut out, "type", "string");
    if let Some(c) = s.constant {
        put(&mut out, "const", c);
    } else if let Some(values) = s.one_of {
        put(&mut out, "enum", Value::Array(values.iter().map(|v| Value::from(*v)).collect()));
    } else {
        if s.min_bytes > 0 {
            put(&mut out, "minLength", count(s.min_bytes));
        }
        put(&mut out, "maxLength", count(s.max_bytes));
    }
    if let Some(p) = &s.pattern {
        put(&mut out, "pattern", p.source);
    }
    Value::Object(out)
}

fn emit_array(a: &ArraySchema) -> Value {
    let mut out = Map::new();
    put(&mut out, "type", "array");
    put(&mut out, "items", emit(&a.items));
    if a.min_items > 0 {
        put(&mut out, "minItems", count(a.min_items));
    }
    put(&mut out, "maxItems", count(a.max_items));
    if a.unique {
        put(&mut out, "uniqueItems", true);
    }
    Value::Object(out)
}

fn emit_property(p: &Property) -> Value {
    let mut value = emit(&p.schema);
    if let Value::Object(map) = &mut value {
        if let Some(default) = &p.default {
            map.insert("default".to_owned(), default.clone());
        }
        if let Some(description) = p.description {
            map.insert("description".to_owned(), description.into());
        }
    }
    value
}

fn emit_object(o: &ObjectSchema) -> Value {
    let mut out = Map::new();
    put(&mut out, "type", "object");
    if !o.properties.is_empty() {
        let properties: Map<String, Value> =
            o.properties.iter().map(|p| (p.name.to_owned(), emit_property(p))).collect();
        put(&mut out, "properties", Value::Object(properties));
        let required: Vec<Value> = o
            .properties
            .iter()
            .filter(|p| matches!(p.presence, Presence::Required | Presence::RequiredToServe))
            .map(|p| Value::from(p.name))
            .collect();
        if !required.is_empty() {
            put(&mut out, "required", Value::Array(required));
        }
    }
    match &o.additional {
        Additional::Forbidden => put(&mut out, "additionalProperties", false),
        Additional::Uninterpreted => put(&mut out, "additionalProperties", true),
        Additional::Each(each) => put(&mut out, "additionalProperties", emit(each)),
    }
    if let Some(names) = &o.names {
        put(&mut out, "propertyNames", emit_string(names));
    }
    if o.min_properties > 0 {
        put(&mut out, "minProperties", count(o.min_properties));
    }
    if let Some(max) = o.max_properties {
        put(&mut out, "maxProperties", count(max));
    }
    Value::Object(out)
}

/// A tagged union: `oneOf` its shapes, each of which pins the tag member, plus `required` on the tag so
/// that editors can say which member is missing.
fn emit_union(u: &UnionSchema) -> Value {
    let mut out = Map::new();
    put(&mut out, "type", "object");
    put(&mut out, "required", Value::Array(vec![u.tag.into()]));
    put(&mut out, "oneOf", Value::Array(u.variants.iter().map(|v| emit_object(&v.object)).collect()));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::super::node::*;
    use super::*;

    fn parse(text: &str) -> Value {
        crate::json::decode(text.as_bytes(), crate::json::Limits::DOCUMENT).unwrap()
    }

    #[test]
    fn nodes_emit_draft_2020_12_keywords() {
        let schema: Schema = object(vec![
            required("port", integer(1, 65535)),
            required("version", constant_integer(1)),
            defaulted("origins", array(string(1, 2048), 0, 128).unique(), empty_array()),
            required_to_serve("pin", string(1, 71).pattern("^sha256:[0-9a-f]{64}$")),
            optional("trace", constant_boolean(false)),
            required("address", enumeration(&["127.0.0.1", "::1"])),
            optional("oauth", object(Vec::new()).uninterpreted()),
            optional("pins", map(string(1, 128).pattern("^[a-z]+$"), string(1, 8), 0, 128)),
        ])
        .into();
        let want = parse(
            r#"{"type":"object","additionalProperties":false,
            "required":["port","version","pin","address"],
            "properties":{
              "port":{"type":"integer","minimum":1,"maximum":65535},
              "version":{"type":"integer","const":1},
              "origins":{"type":"array","items":{"type":"string","minLength":1,"maxLength":2048},
                         "maxItems":128,"uniqueItems":true,"default":[]},
              "pin":{"type":"string","minLength":1,"maxLength":71,"pattern":"^sha256:[0-9a-f]{64}$"},
              "trace":{"type":"boolean","const":false},
              "address":{"type":"string","enum":["127.0.0.1","::1"]},
              "oauth":{"type":"object","additionalProperties":true},
              "pins":{"type":"object","additionalProperties":{"type":"string","minLength":1,"maxLength":8},
                      "propertyNames":{"type":"string","minLength":1,"maxLength":128,"pattern":"^[a-z]+$"},
                      "maxProperties":128}
            }}"#,
        );
        assert_eq!(emit(&schema), want);
    }

    #[test]
    fn publication_adds_the_root_members() {
        let schema: Schema = object(Vec::new()).into();
        let published =
            publish(&schema, &Publication { id: "https://x/y.json", title: "T", description: "D" });
        let want = parse(
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://x/y.json",
            "title":"T","description":"D","type":"object","additionalProperties":false}"#,
        );
        assert_eq!(published, want);
    }
}
