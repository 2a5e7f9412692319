//! The integer/float split of config.md §2.3 and pins.md §2.1, read off `serde_json::Number`.
//!
//! The decoder builds an integer token's number from `i64` or `u64` (the range −2^63 … 2^64−1 is exactly
//! their union) and a float token's from `f64`, and `serde_json::Number` keeps which it was: `1` answers
//! `as_i64`/`as_u64`, `1.0` only `as_f64`. These functions are the one place that reading is written,
//! so that every rule that depends on how a number was written (`"type": "integer"`, the pins, the Luau
//! number rules) sees the same split.

use serde_json::{Number, Value};

/// The least and greatest integer of config.md §2.3: −2^63 and 2^64 − 1.
const INTEGER_RANGE: (i128, i128) = (i64::MIN as i128, u64::MAX as i128);

/// The value of an integer token, `None` for a float token.
pub fn number_integer(n: &Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

/// The number as an `f64`: a float token's own value, an integer token rounded to the nearest double.
/// `Number::as_f64` answers for every number as long as serde_json's `arbitrary_precision` feature stays
/// off (nothing in the build enables it); NaN stands in for the impossible case, and the encoder writes it
/// as `null`.
pub fn number_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

/// The value of an integer token, `None` for a float token or any other value.
pub fn as_integer(value: &Value) -> Option<i128> {
    match value {
        Value::Number(n) => number_integer(n),
        _ => None,
    }
}

/// A float token's value, `None` for an integer token or any other value.
pub fn as_float(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) if n.is_f64() => n.as_f64(),
        _ => None,
    }
}

/// An integer the gateway computed itself (a count, a bound, an echoed id) as a JSON integer. Such
/// integers lie in −2^63 … 2^64−1 (config.md §2.3); one outside would saturate at the nearer end, so the
/// function stays total.
pub fn integer_value(i: i128) -> Value {
    let i = i.clamp(INTEGER_RANGE.0, INTEGER_RANGE.1);
    match u64::try_from(i) {
        Ok(u) => Value::from(u),
        Err(_) => Value::from(i64::try_from(i).unwrap_or(i64::MIN)),
    }
}

#[cfg(test)]
#[path = "number_tests.rs"]
mod tests;
