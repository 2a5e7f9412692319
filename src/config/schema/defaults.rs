//! Insertion of absent defaults at every depth, from the same definition that validates and publishes
//! (config.md §4.3 normalisation, pins.md §7.1 rule 1).
//!
//! It is meant for values that already passed validation; on any other value it does what it can and
//! never panics. It inserts only members that have a default: absent members without one stay absent.

use serde_json::Value;

use super::node::{Additional, ObjectSchema, Schema};
use super::validate::matches;
use crate::config::Mode;

/// Inserts every absent default of `schema` into `value`, recursively (a default that is itself an
/// object, such as `ceilings: {}`, is filled too).
pub fn fill_defaults(schema: &Schema, value: &mut Value) {
    match (schema, value) {
        (Schema::Object(o), Value::Object(map)) => fill_object(o, map),
        (Schema::Array(a), Value::Array(items)) => {
            for item in items {
                fill_defaults(&a.items, item);
            }
        }
        (Schema::Union(u), Value::Object(map)) => {
            let variant = map.get(u.tag).and_then(Value::as_str).and_then(|tag| u.variant(tag));
            if let Some(variant) = variant {
                fill_object(&variant.object, map);
            }
        }
        (Schema::OneOf(shapes), value) => {
            let shape = shapes.iter().find(|s| matches(s, value, Mode::Discovery));
            if let Some(shape) = shape {
                fill_defaults(shape, value);
            }
        }
        _ => {}
    }
}

fn fill_object(o: &ObjectSchema, map: &mut serde_json::Map<String, serde_json::Value>) {
    for p in &o.properties {
        if let Some(default) = &p.default {
            if !map.contains_key(p.name) {
                map.insert(p.name.to_owned(), default.clone());
            }
        }
    }
    for (key, member) in map.iter_mut() {
        match (o.property(key), &o.additional) {
            (Some(p), _) => fill_defaults(&p.schema, member),
            (None, Additional::Each(each)) => fill_defaults(each, member),
            (None, Additional::Forbidden | Additional::Uninterpreted) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::*;
    use super::*;

    #[test]
    fn defaults_are_inserted_at_every_depth() {
        let schema: Schema = object(vec![
            required("name", string(1, 8)),
            optional("note", string(1, 8)),
            defaulted(
                "ceilings",
                object(vec![defaulted("timeout_ms", integer(1, 9999), Value::from(5000))]),
                empty_object(),
            ),
            defaulted(
                "headers",
                array(object(vec![defaulted("scheme", enumeration(&["raw", "bearer"]), "raw")]), 0, 4),
                empty_array(),
            ),
        ])
        .into();
        let parse = |text: &str| crate::json::decode(text.as_bytes(), crate::json::Limits::DOCUMENT).unwrap();
        let mut value = parse(r#"{"name":"a"}"#);
        fill_defaults(&schema, &mut value);
        assert_eq!(value, parse(r#"{"name":"a","ceilings":{"timeout_ms":5000},"headers":[]}"#));
        let mut value =
            parse(r#"{"name":"a","ceilings":{"timeout_ms":7},"headers":[{},{"scheme":"bearer"}]}"#);
        fill_defaults(&schema, &mut value);
        let want =
            r#"{"name":"a","ceilings":{"timeout_ms":7},"headers":[{"scheme":"raw"},{"scheme":"bearer"}]}"#;
        assert_eq!(value, parse(want));
    }
}
