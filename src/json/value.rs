//! The value model of pins.md §2.1.
//!
//! Integers and floats are kept apart (`1` is an integer, `1.0` a float) because both the pins and the
//! `"type": "integer"` rule of config.md §2.3 depend on how a number was written. Objects are ordered maps
//! keyed by `String`, whose `Ord` is the unsigned byte order of the UTF-8 encoding, so iterating an object
//! already yields members in the order deterministic JSON writes them.

use std::collections::BTreeMap;

/// An object: member names in UTF-8 byte order, unique by construction.
pub type Map = BTreeMap<String, Value>;

/// One JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// A number written without fraction and exponent, within −2^63 … 2^64−1.
    Integer(i128),
    /// A number written with a fraction or an exponent; always finite.
    Float(f64),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

impl Value {
    /// The object's members, when this is an object.
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The array's elements, when this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The string, when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, when this is an integer token.
    pub fn as_integer(&self) -> Option<i128> {
        match self {
            Value::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// The boolean, when this is a boolean.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// A member of an object, `None` for a missing member or a non-object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|map| map.get(key))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Integer(i128::from(i))
    }
}

impl From<u64> for Value {
    fn from(i: u64) -> Self {
        Value::Integer(i128::from(i))
    }
}
