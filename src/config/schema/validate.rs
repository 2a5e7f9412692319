//! The structural validator: checks a decoded `Value` against a [`Schema`] together with the byte-bound
//! rules of config.md §2.8 and the integer-token rule of config.md §2.3.
//!
//! It walks the value once, allocates nothing while the document is valid (the path of an offending node
//! is a chain of stack frames, turned into text only for the error), and never panics. It reports the
//! first violation it meets; which startup code that becomes is the loader's concern.

use std::fmt;

use serde_json::{Map, Value};

use super::node::{
    Additional, ArraySchema, IntegerSchema, NumberSchema, ObjectSchema, Presence, Schema, StringSchema,
    UnionSchema, MAX_KEY_BYTES,
};
use crate::config::Mode;
use crate::json::{as_integer, number_f64, number_integer};

/// What was wrong with the node at [`SchemaError::path`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaErrorKind {
    /// The value has another JSON type (a float where an integer token is required counts, config.md §2.3).
    Type,
    /// A required member is absent.
    MissingMember,
    /// A member that the node does not declare (`additionalProperties: false`).
    UnknownMember,
    /// A member name fails `propertyNames`.
    MemberName,
    /// A member name is longer than 256 bytes or contains NUL, LF or CR (config.md §2.8).
    KeyBytes,
    /// Fewer members than `minProperties`.
    TooFewMembers,
    /// More members than `maxProperties`.
    TooManyMembers,
    /// A string contains NUL, CR, or an LF where none is allowed (config.md §2.4, §2.8).
    ForbiddenCharacter,
    /// A string is longer than its byte bound.
    TooLong,
    /// A string is shorter than its byte bound.
    TooShort,
    /// A string does not match its pattern.
    Pattern,
    /// A value is not one of the enumerated ones.
    NotInEnum,
    /// A value differs from the constant.
    NotConstant,
    /// A number lies outside its bounds.
    OutOfRange,
    /// Fewer items than `minItems`.
    TooFewItems,
    /// More items than `maxItems`.
    TooManyItems,
    /// Two equal items where `uniqueItems` holds.
    DuplicateItem,
    /// A union's tag member names no known shape.
    UnknownVariant,
    /// No shape of a `oneOf` matches.
    NoVariant,
    /// More than one shape of a `oneOf` matches.
    AmbiguousVariant,
}

/// A structural violation and where it is, as a JSON-pointer-like path (`/tools/0/name`). The path
/// holds member names and indices only, never a string value, so it can be logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    pub kind: SchemaErrorKind,
    pub path: String,
    /// What a person needs beyond the rule, when the schema knows it.
    pub detail: Detail,
}

/// What a refusal can say beyond its rule and path: names from the schema and the document, never a
/// string value of the document (a host document holds credentials).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    #[default]
    None,
    /// The required member that is absent; `near` is a member of the object that the schema does not
    /// declare and whose name is close to it (a likely misspelling); `pin` when the member is one that
    /// serving requires and discovery computes (`ptc pin` writes it, pins.md §10).
    Missing { member: &'static str, near: Option<String>, pin: bool },
    /// The refused member is not declared; `closest` is the declared member whose name is nearest, when
    /// one is near.
    Unknown { closest: Option<&'static str> },
    /// The value must be exactly this string.
    Constant(&'static str),
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() { "/" } else { &self.path };
        write!(f, "{:?} at {path}", self.kind)
    }
}

impl std::error::Error for SchemaError {}

/// Validates `value` against `schema` in `mode`.
pub fn validate(schema: &Schema, value: &Value, mode: Mode) -> Result<(), SchemaError> {
    Walker { mode }.node(schema, value, &Trail::Root).map_err(|failure| SchemaError {
        kind: failure.kind,
        path: failure.path,
        detail: failure.detail,
    })
}

/// Whether `value` matches `schema`, without building an error.
pub fn matches(schema: &Schema, value: &Value, mode: Mode) -> bool {
    Walker { mode }.node(schema, value, &Trail::Root).is_ok()
}

/// The position of the node being checked: a chain of frames on the stack.
enum Trail<'a> {
    Root,
    Key(&'a str, &'a Trail<'a>),
    Index(usize, &'a Trail<'a>),
}

impl Trail<'_> {
    fn render(&self) -> String {
        let mut parts = Vec::new();
        let mut at = self;
        loop {
            match at {
                Trail::Root => break,
                Trail::Key(key, up) => {
                    parts.push((*key).replace('~', "~0").replace('/', "~1"));
                    at = up;
                }
                Trail::Index(i, up) => {
                    parts.push(i.to_string());
                    at = up;
                }
            }
        }
        parts.iter().rev().fold(String::new(), |mut acc, p| {
            acc.push('/');
            acc.push_str(p);
            acc
        })
    }
}

/// A failure found by the walk. Boxed: the walk returns `Ok` on almost every node, and a small `Err` keeps
/// that path cheap.
struct Failure {
    kind: SchemaErrorKind,
    path: String,
    detail: Detail,
}

type Outcome = Result<(), Box<Failure>>;

fn fail(kind: SchemaErrorKind, trail: &Trail<'_>) -> Outcome {
    fail_with(kind, trail, Detail::None)
}

fn fail_with(kind: SchemaErrorKind, trail: &Trail<'_>, detail: Detail) -> Outcome {
    Err(Box::new(Failure { kind, path: trail.render(), detail }))
}

struct Walker {
    mode: Mode,
}

impl Walker {
    fn node(&self, schema: &Schema, value: &Value, trail: &Trail<'_>) -> Outcome {
        match schema {
            Schema::Boolean(b) => match value {
                Value::Bool(v) if b.constant.is_none_or(|c| c == *v) => Ok(()),
                Value::Bool(_) => fail(SchemaErrorKind::NotConstant, trail),
                _ => fail(SchemaErrorKind::Type, trail),
            },
            Schema::Integer(i) => check_integer(i, value, trail),
            Schema::Number(n) => check_number(n, value, trail),
            Schema::String(s) => match value {
                Value::String(text) => check_string(s, text, trail),
                _ => fail(SchemaErrorKind::Type, trail),
            },
            Schema::Array(a) => self.array(a, value, trail),
            Schema::Object(o) => match value {
                Value::Object(map) => self.object(o, map, trail),
                _ => fail(SchemaErrorKind::Type, trail),
            },
            Schema::Union(u) => self.union(u, value, trail),
            Schema::OneOf(shapes) => {
                let count = shapes.iter().filter(|s| self.node(s, value, trail).is_ok()).count();
                match count {
                    1 => Ok(()),
                    0 => fail(SchemaErrorKind::NoVariant, trail),
                    _ => fail(SchemaErrorKind::AmbiguousVariant, trail),
                }
            }
        }
    }

    fn array(&self, a: &ArraySchema, value: &Value, trail: &Trail<'_>) -> Outcome {
        let Value::Array(items) = value else {
            return fail(SchemaErrorKind::Type, trail);
        };
        if items.len() < a.min_items {
            return fail(SchemaErrorKind::TooFewItems, trail);
        }
        if items.len() > a.max_items {
            return fail(SchemaErrorKind::TooManyItems, trail);
        }
        for (i, item) in items.iter().enumerate() {
            self.node(&a.items, item, &Trail::Index(i, trail))?;
        }
        if a.unique {
            // Arrays with `uniqueItems` hold at most 128 items (config.md §4–§6): the quadratic scan
            // allocates nothing.
            for (i, item) in items.iter().enumerate() {
                if items.iter().skip(i + 1).any(|other| other == item) {
                    return fail(SchemaErrorKind::DuplicateItem, trail);
                }
            }
        }
        Ok(())
    }

    fn object(&self, o: &ObjectSchema, map: &Map<String, Value>, trail: &Trail<'_>) -> Outcome {
        for key in map.keys() {
            key_bytes(key, trail)?;
        }
        if map.len() < o.min_properties {
            return fail(SchemaErrorKind::TooFewMembers, trail);
        }
        if o.max_properties.is_some_and(|max| map.len() > max) {
            return fail(SchemaErrorKind::TooManyMembers, trail);
        }
        for p in &o.properties {
            let needed = match p.presence {
                Presence::Required => true,
                Presence::Optional => false,
                Presence::RequiredToServe => self.mode == Mode::Serve,
            };
            if needed && !map.contains_key(p.name) {
                let undeclared = map.keys().filter(|key| o.property(key).is_none());
                let near = nearest(p.name, undeclared.map(String::as_str)).map(str::to_owned);
                let pin = p.presence == Presence::RequiredToServe;
                return fail_with(
                    SchemaErrorKind::MissingMember,
                    trail,
                    Detail::Missing { member: p.name, near, pin },
                );
            }
        }
        for (key, member) in map {
            let here = Trail::Key(key, trail);
            if let Some(names) = &o.names {
                if check_string(names, key, trail).is_err() {
                    return fail(SchemaErrorKind::MemberName, &here);
                }
            }
            match (o.property(key), &o.additional) {
                (Some(p), _) => self.node(&p.schema, member, &here)?,
                (None, Additional::Forbidden) => {
                    let closest = nearest(key, o.properties.iter().map(|p| p.name));
                    return fail_with(SchemaErrorKind::UnknownMember, &here, Detail::Unknown { closest });
                }
                (None, Additional::Uninterpreted) => uninterpreted(member, &here)?,
                (None, Additional::Each(each)) => self.node(each, member, &here)?,
            }
        }
        Ok(())
    }

    fn union(&self, u: &UnionSchema, value: &Value, trail: &Trail<'_>) -> Outcome {
        let Value::Object(map) = value else {
            return fail(SchemaErrorKind::Type, trail);
        };
        match map.get(u.tag) {
            None => {
                let detail = Detail::Missing { member: u.tag, near: None, pin: false };
                fail_with(SchemaErrorKind::MissingMember, trail, detail)
            }
            Some(Value::String(tag)) => match u.variant(tag) {
                Some(variant) => self.object(&variant.object, map, trail),
                None => fail(SchemaErrorKind::UnknownVariant, &Trail::Key(u.tag, trail)),
            },
            Some(_) => fail(SchemaErrorKind::Type, &Trail::Key(u.tag, trail)),
        }
    }
}

fn check_integer(i: &IntegerSchema, value: &Value, trail: &Trail<'_>) -> Outcome {
    // config.md §2.3: only an integer token satisfies `"type": "integer"`; `8765.0` does not.
    let Some(v) = as_integer(value) else {
        return fail(SchemaErrorKind::Type, trail);
    };
    if i.constant.is_some_and(|c| c != v) {
        return fail(SchemaErrorKind::NotConstant, trail);
    }
    if v < i.min || v > i.max {
        return fail(SchemaErrorKind::OutOfRange, trail);
    }
    Ok(())
}

fn check_number(n: &NumberSchema, value: &Value, trail: &Trail<'_>) -> Outcome {
    let Value::Number(number) = value else {
        return fail(SchemaErrorKind::Type, trail);
    };
    let in_range = match number_integer(number) {
        Some(v) => v >= i128::from(n.min) && v <= i128::from(n.max),
        // The bounds are small integers, exactly representable as f64.
        #[allow(clippy::cast_precision_loss)]
        None => {
            let v = number_f64(number);
            v >= n.min as f64 && v <= n.max as f64
        }
    };
    if in_range {
        Ok(())
    } else {
        fail(SchemaErrorKind::OutOfRange, trail)
    }
}

/// A string against its schema, byte-bound rules first (config.md §2.8).
fn check_string(s: &StringSchema, text: &str, trail: &Trail<'_>) -> Outcome {
    // A constant is the sharpest thing to say of a value that differs from it: its length or characters
    // are wrong only because it is not the constant (`"/tools"` for `/listen/path`).
    if let Some(constant) = s.constant.filter(|c| *c != text) {
        return fail_with(SchemaErrorKind::NotConstant, trail, Detail::Constant(constant));
    }
    if text.bytes().any(|b| b == 0 || b == b'\r' || (b == b'\n' && !s.allow_lf)) {
        return fail(SchemaErrorKind::ForbiddenCharacter, trail);
    }
    if text.len() > s.max_bytes {
        return fail(SchemaErrorKind::TooLong, trail);
    }
    if text.len() < s.min_bytes {
        return fail(SchemaErrorKind::TooShort, trail);
    }
    if s.one_of.is_some_and(|values| !values.contains(&text)) {
        return fail(SchemaErrorKind::NotInEnum, trail);
    }
    if let Some(pattern) = &s.pattern {
        // config.md §1: a pattern matches the whole string.
        let whole =
            pattern.regex.as_ref().and_then(|re| re.find(text)).is_some_and(|m| m.range() == (0..text.len()));
        if !whole {
            return fail(SchemaErrorKind::Pattern, trail);
        }
    }
    Ok(())
}

/// The candidate nearest to `name` when it is near: at most 2 edits away, and at most a third of the longer
/// name's characters (so `id` is not "near" `to`). Ties go to the first candidate.
fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, candidate)| {
            let longer = name.chars().count().max(candidate.chars().count());
            *distance <= 2 && *distance * 3 <= longer
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance in characters (insertions, deletions, substitutions), one row at a time.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// config.md §2.8 on an object key: at most 256 bytes, no NUL, LF or CR.
fn key_bytes(key: &str, trail: &Trail<'_>) -> Outcome {
    if key.len() > MAX_KEY_BYTES || key.bytes().any(|b| b == 0 || b == b'\n' || b == b'\r') {
        return fail(SchemaErrorKind::KeyBytes, trail);
    }
    Ok(())
}

/// A value exempt from the schema (`oauth` members, a reserved source's members, config.md §5.3, §5.4.2): it
/// is still subject to the byte-bound rules, at every depth.
fn uninterpreted(value: &Value, trail: &Trail<'_>) -> Outcome {
    match value {
        Value::String(text) => {
            if text.bytes().any(|b| b == 0 || b == b'\n' || b == b'\r') {
                return fail(SchemaErrorKind::ForbiddenCharacter, trail);
            }
            if text.len() > super::node::DEFAULT_MAX_BYTES {
                return fail(SchemaErrorKind::TooLong, trail);
            }
            Ok(())
        }
        Value::Array(items) => {
            items.iter().enumerate().try_for_each(|(i, item)| uninterpreted(item, &Trail::Index(i, trail)))
        }
        Value::Object(map) => map.iter().try_for_each(|(key, member)| {
            key_bytes(key, trail)?;
            uninterpreted(member, &Trail::Key(key, trail))
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::*;
    use super::*;

    fn check(schema: &Schema, value: Value) -> Result<(), SchemaErrorKind> {
        validate(schema, &value, Mode::Serve).map_err(|e| e.kind)
    }

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    #[test]
    fn strings_count_bytes_and_refuse_control_characters() {
        use SchemaErrorKind::*;
        let title: Schema = string(1, 256).into();
        let desc: Schema = string(1, 4096).with_lf().into();
        let table: Vec<(&Schema, Value, Result<(), SchemaErrorKind>)> = vec![
            (&title, s(&"é".repeat(128)), Ok(())),
            (&title, s(&"é".repeat(129)), Err(TooLong)),
            (&title, s(""), Err(TooShort)),
            (&title, s("a\nb"), Err(ForbiddenCharacter)),
            (&title, s("a\rb"), Err(ForbiddenCharacter)),
            (&title, s("a\0b"), Err(ForbiddenCharacter)),
            (&desc, s("a\nb"), Ok(())),
            (&desc, s("a\r\nb"), Err(ForbiddenCharacter)),
            (&desc, s(&"x".repeat(4097)), Err(TooLong)),
            (&title, Value::from(1), Err(Type)),
        ];
        for (schema, value, want) in table {
            assert_eq!(check(schema, value.clone()), want, "{value:?}");
        }
    }

    #[test]
    fn patterns_match_the_whole_string() {
        let name: Schema = string(1, 128).pattern("^[a-z]+$").into();
        assert_eq!(check(&name, s("abc")), Ok(()));
        assert_eq!(check(&name, s("abc1")), Err(SchemaErrorKind::Pattern));
        // An unanchored pattern still has to cover the whole string.
        let loose: Schema = string(1, 128).pattern("[a-z]+").into();
        assert_eq!(check(&loose, s("1abc")), Err(SchemaErrorKind::Pattern));
    }

    #[test]
    fn integers_need_integer_tokens() {
        use SchemaErrorKind::*;
        let port = integer(1, 65535);
        assert_eq!(check(&port, Value::from(8765)), Ok(()));
        assert_eq!(check(&port, Value::from(8765.0)), Err(Type));
        assert_eq!(check(&port, Value::from(0)), Err(OutOfRange));
        assert_eq!(check(&port, Value::from(65536)), Err(OutOfRange));
        assert_eq!(check(&constant_integer(1), Value::from(2)), Err(NotConstant));
        let temperature = number(0, 2);
        assert_eq!(check(&temperature, Value::from(1.5)), Ok(()));
        assert_eq!(check(&temperature, Value::from(2)), Ok(()));
        assert_eq!(check(&temperature, Value::from(2.01)), Err(OutOfRange));
    }

    #[test]
    fn objects_arrays_and_paths() {
        let schema: Schema = object(vec![
            required("a", integer(0, 9)),
            optional("list", array(string(1, 8), 0, 2).unique()),
            required_to_serve("pin", string(1, 8)),
        ])
        .into();
        let parse = |text: &str| crate::json::decode(text.as_bytes(), crate::json::Limits::DOCUMENT).unwrap();
        let err = |text: &str, mode| validate(&schema, &parse(text), mode).unwrap_err();
        assert_eq!(validate(&schema, &parse(r#"{"a":1,"pin":"x"}"#), Mode::Serve), Ok(()));
        assert_eq!(validate(&schema, &parse(r#"{"a":1}"#), Mode::Discovery), Ok(()));
        let e = err(r#"{"a":1}"#, Mode::Serve);
        assert_eq!((e.kind, e.path.as_str()), (SchemaErrorKind::MissingMember, ""));
        let e = err(r#"{"a":1,"pin":"x","z/~":0}"#, Mode::Serve);
        assert_eq!((e.kind, e.path.as_str()), (SchemaErrorKind::UnknownMember, "/z~1~0"));
        let e = err(r#"{"a":1,"pin":"x","list":["a","a"]}"#, Mode::Serve);
        assert_eq!((e.kind, e.path.as_str()), (SchemaErrorKind::DuplicateItem, "/list"));
        let e = err(r#"{"a":1,"pin":"x","list":["a",""]}"#, Mode::Serve);
        assert_eq!((e.kind, e.path.as_str()), (SchemaErrorKind::TooShort, "/list/1"));
        let e = err(r#"{"a":1,"pin":"x","list":["a","b","c"]}"#, Mode::Serve);
        assert_eq!(e.kind, SchemaErrorKind::TooManyItems);
        let long_key = format!(r#"{{"a":1,"pin":"x","{}":0}}"#, "k".repeat(257));
        assert_eq!(err(&long_key, Mode::Serve).kind, SchemaErrorKind::KeyBytes);
        assert_eq!(err(r#"{"a":1,"pin":"x","k\n":0}"#, Mode::Serve).kind, SchemaErrorKind::KeyBytes);
    }

    #[test]
    fn uninterpreted_members_keep_byte_bounds() {
        let schema: Schema = object(vec![required("source", constant_string("r"))]).uninterpreted().into();
        let parse = |text: &str| crate::json::decode(text.as_bytes(), crate::json::Limits::DOCUMENT).unwrap();
        let ok = r#"{"source":"r","model":7,"anything":{"x":[true,null,1.5,"y"]}}"#;
        assert_eq!(validate(&schema, &parse(ok), Mode::Serve), Ok(()));
        let e = validate(&schema, &parse(r#"{"source":"r","a":{"b":["x\ny"]}}"#), Mode::Serve).unwrap_err();
        assert_eq!((e.kind, e.path.as_str()), (SchemaErrorKind::ForbiddenCharacter, "/a/b/0"));
        let long = format!(r#"{{"source":"r","a":"{}"}}"#, "x".repeat(4097));
        assert_eq!(validate(&schema, &parse(&long), Mode::Serve).unwrap_err().kind, SchemaErrorKind::TooLong);
    }

    /// A member near the missing or unknown one is at most 2 edits away and a third of the longer name.
    #[test]
    fn nearest_names() {
        let known = ["max_concurrent_runs", "max_inflight_requests", "allowed_origins", "to"];
        let table = [
            ("max_concurent_runs", Some("max_concurrent_runs")),
            ("allowed_origin", Some("allowed_origins")),
            ("max_inflight", None),
            ("id", None),
            ("", None),
        ];
        for (name, want) in table {
            assert_eq!(nearest(name, known.into_iter()), want, "{name}");
        }
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }
}
