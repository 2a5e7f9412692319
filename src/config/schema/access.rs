//! Reading typed fields out of a value that already passed validation and default insertion.
//!
//! Every accessor returns `Option`, so a loader that meets an unexpected shape (which validation rules
//! out) reports its document's structural code instead of panicking. This module knows nothing about any
//! particular document.

use serde_json::{Map, Value};

use crate::json::as_integer;

/// The member at `path` (a sequence of object keys).
pub fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// The string at `path`.
pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path).and_then(Value::as_str)
}

/// The owned string at `path`.
pub fn string_at(value: &Value, path: &[&str]) -> Option<String> {
    str_at(value, path).map(str::to_owned)
}

/// The boolean at `path`.
pub fn bool_at(value: &Value, path: &[&str]) -> Option<bool> {
    at(value, path).and_then(Value::as_bool)
}

/// The integer at `path`, converted to `T` (validation has already bounded it).
pub fn int_at<T: TryFrom<i128>>(value: &Value, path: &[&str]) -> Option<T> {
    at(value, path).and_then(as_integer).and_then(|i| T::try_from(i).ok())
}

/// The object at `path`.
pub fn object_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Map<String, Value>> {
    at(value, path).and_then(Value::as_object)
}

/// The array at `path`.
pub fn array_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a [Value]> {
    at(value, path).and_then(Value::as_array).map(Vec::as_slice)
}

/// The array of strings at `path`, in order.
pub fn strings_at(value: &Value, path: &[&str]) -> Option<Vec<String>> {
    array_at(value, path)?.iter().map(|v| v.as_str().map(str::to_owned)).collect()
}

/// An object of strings (`"key": "string"`) as an ordered map.
pub fn string_map(map: &Map<String, Value>) -> Option<std::collections::BTreeMap<String, String>> {
    map.iter().map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned()))).collect()
}
