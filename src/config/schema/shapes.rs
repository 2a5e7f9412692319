//! Documents of every shape a definition allows, for the test that its Rust type reads them all
//! (`config::typed`): each declared member present, each union variant and each `oneOf` alternative taken
//! in some document, one member in every map and an extra one in every uninterpreted object.
//!
//! The values have the right JSON type but need not pass the schema's patterns or bounds: the typed read
//! checks shapes, not rules. So when a type lacks a field for a member the schema declares (or names it
//! differently), reading one of these documents fails under `deny_unknown_fields`; this is what keeps the
//! schema and the type, the two places a member is written, in step. Test-only.

use serde_json::{json, Map, Value};

use super::node::{Additional, ObjectSchema, Schema, StringSchema};

/// Enough documents that every choice point (union, `oneOf`, an object limited to fewer members than it
/// declares) takes each of its alternatives in at least one: document `i` takes alternative `i mod n`.
pub fn documents(schema: &Schema) -> Vec<Value> {
    let count = most_alternatives(schema).max(1);
    (0..count).map(|pick| shape(schema, pick)).collect()
}

fn most_alternatives(schema: &Schema) -> usize {
    match schema {
        Schema::Array(a) => most_alternatives(&a.items),
        Schema::Object(o) => object_alternatives(o),
        Schema::Union(u) => u
            .variants
            .iter()
            .map(|v| object_alternatives(&v.object).max(v.tags.len()))
            .chain([u.variants.len()])
            .max()
            .unwrap_or(1),
        Schema::OneOf(shapes) => {
            shapes.iter().map(most_alternatives).chain([shapes.len()]).max().unwrap_or(1)
        }
        Schema::Boolean(_) | Schema::Integer(_) | Schema::Number(_) | Schema::String(_) => 1,
    }
}

fn object_alternatives(o: &ObjectSchema) -> usize {
    let own =
        if o.max_properties.is_some_and(|max| max < o.properties.len()) { o.properties.len() } else { 1 };
    let nested = o.properties.iter().map(|p| most_alternatives(&p.schema));
    let each = match &o.additional {
        Additional::Each(each) => most_alternatives(each),
        Additional::Forbidden | Additional::Uninterpreted => 1,
    };
    nested.chain([own, each]).max().unwrap_or(1)
}

fn shape(schema: &Schema, pick: usize) -> Value {
    match schema {
        Schema::Boolean(b) => Value::Bool(b.constant.unwrap_or(true)),
        Schema::Integer(i) => {
            let n = i.constant.unwrap_or(i.min);
            i64::try_from(n).map_or(Value::Null, Value::from)
        }
        Schema::Number(n) => json!(n.min as f64 + 0.5),
        Schema::String(s) => Value::String(string_value(s, pick)),
        Schema::Array(a) => Value::Array(vec![shape(&a.items, pick)]),
        Schema::Object(o) => Value::Object(members(o, pick, None)),
        Schema::Union(u) => {
            let Some(variant) = u.variants.get(pick % u.variants.len().max(1)) else { return Value::Null };
            let tag = variant.tags.get(pick % variant.tags.len().max(1)).copied().unwrap_or_default();
            Value::Object(members(&variant.object, pick, Some((u.tag, tag))))
        }
        Schema::OneOf(shapes) => {
            shapes.get(pick % shapes.len().max(1)).map_or(Value::Null, |s| shape(s, pick))
        }
    }
}

fn string_value(s: &StringSchema, pick: usize) -> String {
    if let Some(constant) = s.constant {
        return constant.to_owned();
    }
    match s.one_of {
        Some(values) if !values.is_empty() => values[pick % values.len()].to_owned(),
        // Dotted, so that a string the type splits (a manifest's `entry`, `component.function`) reads too.
        _ => "x.y".to_owned(),
    }
}

/// Every declared member (or, where fewer are allowed, the `pick`-th), one map entry, and an
/// uninterpreted member where members are not interpreted; `tag` fixes a union's discriminator.
fn members(o: &ObjectSchema, pick: usize, tag: Option<(&str, &str)>) -> Map<String, Value> {
    let mut map = Map::new();
    let limited = o.max_properties.is_some_and(|max| max < o.properties.len());
    for (i, p) in o.properties.iter().enumerate() {
        if limited && i != pick % o.properties.len() {
            continue;
        }
        map.insert(p.name.to_owned(), shape(&p.schema, pick));
    }
    match &o.additional {
        Additional::Each(each) => {
            let name = o.names.as_ref().map_or_else(|| "k".to_owned(), |names| string_value(names, pick));
            map.insert(name, shape(each, pick));
        }
        Additional::Uninterpreted => {
            map.insert("uninterpreted".to_owned(), json!({"any": [1, "two"]}));
        }
        Additional::Forbidden => {}
    }
    if let Some((name, value)) = tag {
        map.insert(name.to_owned(), Value::String(value.to_owned()));
    }
    map
}

#[cfg(test)]
mod tests {
    use super::super::node::*;
    use super::*;

    #[test]
    fn every_member_every_variant_and_one_map_entry() {
        let schema: Schema = object(vec![
            required("a", integer(3, 9)),
            optional("b", enumeration(&["x", "y"])),
            required("c", map(string(1, 8), boolean(), 0, 4)),
            required(
                "d",
                Schema::OneOf(vec![boolean(), object(vec![required("e", constant_string("f"))]).into()]),
            ),
        ])
        .into();
        let found = documents(&schema);
        assert_eq!(
            found,
            vec![
                json!({"a": 3, "b": "x", "c": {"x.y": true}, "d": true}),
                json!({"a": 3, "b": "y", "c": {"x.y": true}, "d": {"e": "f"}}),
            ]
        );
    }

    #[test]
    fn a_union_takes_each_variant_and_an_object_of_one_member_each_member() {
        let one_of_two =
            object(vec![optional("env", string(1, 8)), optional("file", string(1, 8))]).members(1, 1);
        let schema: Schema = UnionSchema {
            tag: "kind",
            variants: vec![
                Variant { tags: &["first"], object: object(vec![required("only", one_of_two)]) },
                Variant { tags: &["second"], object: object(Vec::new()).uninterpreted() },
            ],
        }
        .into();
        assert_eq!(
            documents(&schema),
            vec![
                json!({"kind": "first", "only": {"env": "x.y"}}),
                json!({"kind": "second", "uninterpreted": {"any": [1, "two"]}}),
            ]
        );
    }
}
