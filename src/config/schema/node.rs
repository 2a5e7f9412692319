//! The schema DSL: the node types one document definition is written in, and the small builders that keep
//! those definitions close to the tables of config.md §4–§6.
//!
//! A node describes both what the validator accepts (`validate`) and what the published JSON Schema says
//! (`emit`); defaults live on properties so that normalisation (`defaults`) inserts exactly what the
//! published schema documents. This module defines the shapes only; it does not validate or emit.

use regex::Regex;
use serde_json::Value;

/// The bound of config.md §2.8 for a string whose schema gives no `maxLength`.
pub const DEFAULT_MAX_BYTES: usize = 4096;

/// The published description of the two strings that may hold LF (config.md §2.4).
pub const LF_ALLOWED: &str = "May contain LF (multi-line); never CR or NUL.";

/// The bound of config.md §2.8 on every object key.
pub const MAX_KEY_BYTES: usize = 256;

/// One schema node.
#[derive(Debug)]
pub enum Schema {
    Boolean(BooleanSchema),
    Integer(IntegerSchema),
    Number(NumberSchema),
    String(StringSchema),
    Array(ArraySchema),
    Object(ObjectSchema),
    /// An object whose member `tag` selects one of several object shapes (`transport.type`,
    /// `install.<alias>.source`). Published as `oneOf`.
    Union(UnionSchema),
    /// Exactly one of several shapes must match (`workflow`: Luau form or forward form). Published as
    /// `oneOf`.
    OneOf(Vec<Schema>),
}

/// `"type": "boolean"`, optionally pinned to one value (`artifacts.trace` MUST be `false`, config.md §4.8).
#[derive(Debug, Default)]
pub struct BooleanSchema {
    pub constant: Option<bool>,
}

/// `"type": "integer"`: only integer tokens (config.md §2.3), within `min..=max`, optionally one constant.
#[derive(Debug)]
pub struct IntegerSchema {
    pub min: i128,
    pub max: i128,
    pub constant: Option<i128>,
}

/// `"type": "number"`: an integer or a float token within `min..=max` (`params.temperature`, config.md §5.5).
#[derive(Debug)]
pub struct NumberSchema {
    pub min: i64,
    pub max: i64,
}

/// `"type": "string"` with byte-counted bounds (config.md §1, §2.8).
#[derive(Debug)]
pub struct StringSchema {
    /// Minimum length in UTF-8 bytes.
    pub min_bytes: usize,
    /// Maximum length in UTF-8 bytes; [`DEFAULT_MAX_BYTES`] unless the table says otherwise.
    pub max_bytes: usize,
    /// Whether LF may occur: only the two description strings of config.md §2.4. NUL and CR never may.
    pub allow_lf: bool,
    pub pattern: Option<Pattern>,
    /// `enum`: the value MUST be one of these.
    pub one_of: Option<&'static [&'static str]>,
    /// `const`.
    pub constant: Option<&'static str>,
}

/// A schema `pattern`, compiled once. It MUST match the whole string (config.md §1); every pattern of the
/// definitions is written with `^…$`, and the validator also checks that the match spans the string.
#[derive(Debug)]
pub struct Pattern {
    pub source: &'static str,
    /// `None` only if `source` failed to compile, which a unit test rules out; such a pattern then
    /// refuses every string instead of accepting it.
    pub regex: Option<Regex>,
}

/// `"type": "array"`.
#[derive(Debug)]
pub struct ArraySchema {
    pub items: Box<Schema>,
    pub min_items: usize,
    pub max_items: usize,
    pub unique: bool,
}

/// What an object does with members that are not declared properties.
#[derive(Debug)]
pub enum Additional {
    /// `additionalProperties: false`, the rule at every node except the documented exceptions.
    Forbidden,
    /// Members are not interpreted (`oauth`, a reserved source): only the byte-bound rules of config.md §2.8
    /// apply.
    Uninterpreted,
    /// A map: every extra member's value matches this schema (pin maps, `credentials`, `install`, …).
    Each(Box<Schema>),
}

/// Whether a property must be present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Required,
    Optional,
    /// Required in serve mode, optional in discovery mode (the three pin members, config.md §4.6). The
    /// published schema describes serve mode (config.md §9.1).
    RequiredToServe,
}

/// One declared member of an object.
#[derive(Debug)]
pub struct Property {
    pub name: &'static str,
    pub schema: Schema,
    pub presence: Presence,
    /// Inserted when the member is absent (config.md §4.3, pins.md §7.1); published as `default`.
    pub default: Option<Value>,
    /// Published as `description`: what an editor should show beside the member.
    pub description: Option<&'static str>,
}

impl Property {
    /// Adds the published `description`.
    pub fn describe(mut self, text: &'static str) -> Self {
        self.description = Some(text);
        self
    }
}

/// `"type": "object"`.
#[derive(Debug)]
pub struct ObjectSchema {
    pub properties: Vec<Property>,
    pub additional: Additional,
    /// `propertyNames`, applied to every member name.
    pub names: Option<StringSchema>,
    pub min_properties: usize,
    pub max_properties: Option<usize>,
}

/// One shape of a [`UnionSchema`].
#[derive(Debug)]
pub struct Variant {
    /// The values of the tag member that select this shape.
    pub tags: &'static [&'static str],
    pub object: ObjectSchema,
}

/// An object discriminated by the string member `tag`.
#[derive(Debug)]
pub struct UnionSchema {
    pub tag: &'static str,
    pub variants: Vec<Variant>,
}

impl UnionSchema {
    /// The variant a tag value selects.
    pub fn variant(&self, tag: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.tags.contains(&tag))
    }
}

// ---- builders ---------------------------------------------------------------------------------------

/// A string of `min..=max` UTF-8 bytes.
pub fn string(min: usize, max: usize) -> StringSchema {
    StringSchema {
        min_bytes: min,
        max_bytes: max,
        allow_lf: false,
        pattern: None,
        one_of: None,
        constant: None,
    }
}

/// A string that MUST be one of `values`.
pub fn enumeration(values: &'static [&'static str]) -> Schema {
    let max = values.iter().map(|v| v.len()).max().unwrap_or(0);
    Schema::String(StringSchema { one_of: Some(values), ..string(0, max) })
}

/// A string that MUST equal `value`.
pub fn constant_string(value: &'static str) -> Schema {
    Schema::String(StringSchema { constant: Some(value), ..string(0, value.len()) })
}

impl StringSchema {
    /// Adds a whole-string pattern.
    pub fn pattern(mut self, source: &'static str) -> Self {
        self.pattern = Some(Pattern { source, regex: Regex::new(source).ok() });
        self
    }

    /// Lets the string contain LF (config.md §2.4).
    pub fn with_lf(mut self) -> Self {
        self.allow_lf = true;
        self
    }
}

impl From<StringSchema> for Schema {
    fn from(s: StringSchema) -> Self {
        Schema::String(s)
    }
}

/// An integer token in `min..=max`.
pub fn integer(min: i128, max: i128) -> Schema {
    Schema::Integer(IntegerSchema { min, max, constant: None })
}

/// The integer token `value` and nothing else.
pub fn constant_integer(value: i128) -> Schema {
    Schema::Integer(IntegerSchema { min: value, max: value, constant: Some(value) })
}

/// A number (integer or float token) in `min..=max`.
pub fn number(min: i64, max: i64) -> Schema {
    Schema::Number(NumberSchema { min, max })
}

/// Any boolean.
pub fn boolean() -> Schema {
    Schema::Boolean(BooleanSchema::default())
}

/// The boolean `value` and nothing else.
pub fn constant_boolean(value: bool) -> Schema {
    Schema::Boolean(BooleanSchema { constant: Some(value) })
}

/// An array of `min..=max` items.
pub fn array(items: impl Into<Schema>, min: usize, max: usize) -> ArraySchema {
    ArraySchema { items: Box::new(items.into()), min_items: min, max_items: max, unique: false }
}

impl ArraySchema {
    /// `uniqueItems: true`.
    pub fn unique(mut self) -> Self {
        self.unique = true;
        self
    }
}

impl From<ArraySchema> for Schema {
    fn from(a: ArraySchema) -> Self {
        Schema::Array(a)
    }
}

/// A closed object (`additionalProperties: false`) with these properties.
pub fn object(properties: Vec<Property>) -> ObjectSchema {
    ObjectSchema {
        properties,
        additional: Additional::Forbidden,
        names: None,
        min_properties: 0,
        max_properties: None,
    }
}

/// A map: no declared properties, names matching `names`, each value matching `values`.
pub fn map(names: StringSchema, values: impl Into<Schema>, min: usize, max: usize) -> ObjectSchema {
    ObjectSchema {
        properties: Vec::new(),
        additional: Additional::Each(Box::new(values.into())),
        names: Some(names),
        min_properties: min,
        max_properties: Some(max),
    }
}

impl ObjectSchema {
    /// Members other than the declared properties are accepted uninterpreted (byte bounds still apply).
    pub fn uninterpreted(mut self) -> Self {
        self.additional = Additional::Uninterpreted;
        self
    }

    /// Between `min` and `max` members.
    pub fn members(mut self, min: usize, max: usize) -> Self {
        self.min_properties = min;
        self.max_properties = Some(max);
        self
    }

    /// The declared property `name`.
    pub fn property(&self, name: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.name == name)
    }
}

impl From<ObjectSchema> for Schema {
    fn from(o: ObjectSchema) -> Self {
        Schema::Object(o)
    }
}

impl From<UnionSchema> for Schema {
    fn from(u: UnionSchema) -> Self {
        Schema::Union(u)
    }
}

/// A required property.
pub fn required(name: &'static str, schema: impl Into<Schema>) -> Property {
    Property { name, schema: schema.into(), presence: Presence::Required, default: None, description: None }
}

/// An optional property without a default (absent stays absent).
pub fn optional(name: &'static str, schema: impl Into<Schema>) -> Property {
    Property { name, schema: schema.into(), presence: Presence::Optional, default: None, description: None }
}

/// An optional property that defaults to `default` when absent.
pub fn defaulted(name: &'static str, schema: impl Into<Schema>, default: impl Into<Value>) -> Property {
    Property {
        name,
        schema: schema.into(),
        presence: Presence::Optional,
        default: Some(default.into()),
        description: None,
    }
}

/// A property required only to serve (config.md §4.6).
pub fn required_to_serve(name: &'static str, schema: impl Into<Schema>) -> Property {
    Property {
        name,
        schema: schema.into(),
        presence: Presence::RequiredToServe,
        default: None,
        description: None,
    }
}

/// The empty object, as a default.
pub fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// The empty array, as a default.
pub fn empty_array() -> Value {
    Value::Array(Vec::new())
}
