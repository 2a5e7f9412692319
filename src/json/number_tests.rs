//! The integer/float split over `serde_json::Number` (config.md §2.3, pins.md §2.1).

use super::*;
use crate::json::{decode, Limits};

fn parse(text: &str) -> Value {
    decode(text.as_bytes(), Limits::DOCUMENT).expect("test vector decodes")
}

/// Integer tokens answer `as_integer` across the whole range, including `u64` above `i64::MAX`; float
/// tokens never do, even when integral.
#[test]
fn integer_tokens_and_float_tokens() {
    let table: &[(&str, Option<i128>, Option<f64>)] = &[
        ("0", Some(0), None),
        ("-0", Some(0), None),
        ("-9223372036854775808", Some(-9_223_372_036_854_775_808), None),
        ("9223372036854775807", Some(9_223_372_036_854_775_807), None),
        ("9223372036854775808", Some(9_223_372_036_854_775_808), None),
        ("18446744073709551615", Some(18_446_744_073_709_551_615), None),
        ("1.0", None, Some(1.0)),
        ("1e2", None, Some(100.0)),
        ("-0.0", None, Some(-0.0)),
        ("\"1\"", None, None),
        ("null", None, None),
    ];
    for &(text, integer, float) in table {
        let value = parse(text);
        assert_eq!(as_integer(&value), integer, "{text}");
        assert_eq!(as_float(&value).map(f64::to_bits), float.map(f64::to_bits), "{text}");
    }
}

/// `number_f64` is a float token's own value and an integer token rounded to the nearest double.
#[test]
fn as_f64() {
    let n = |text: &str| match parse(text) {
        Value::Number(n) => number_f64(&n),
        other => panic!("{other:?}"),
    };
    assert_eq!(n("-0.0").to_bits(), (-0.0f64).to_bits());
    assert_eq!(n("18446744073709551615"), 18_446_744_073_709_551_615u64 as f64);
    assert_eq!(n("9007199254740993"), 9_007_199_254_740_992.0);
}

/// `integer_value` writes integers as integer tokens and saturates outside −2^63 … 2^64−1.
#[test]
fn integer_values() {
    assert_eq!(integer_value(7), parse("7"));
    assert_eq!(integer_value(-9_223_372_036_854_775_808), parse("-9223372036854775808"));
    assert_eq!(integer_value(18_446_744_073_709_551_615), parse("18446744073709551615"));
    assert_eq!(integer_value(i128::MAX), parse("18446744073709551615"));
    assert_eq!(integer_value(i128::MIN), parse("-9223372036854775808"));
    assert_eq!(as_integer(&integer_value(-1)), Some(-1));
}
