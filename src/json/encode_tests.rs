//! Test vectors for deterministic JSON (pins.md §2, §11.5, §12.1).

use super::*;
use crate::json::{decode, Limits};

/// pins.md §2.3: the float table and its examples.
#[test]
fn float_table() {
    let table: &[(f64, &str)] = &[
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (5e-324, "5e-324"),
        (-5e-324, "-5e-324"),
        (1e16, "1e16"),
        (1e15, "1000000000000000.0"),
        (1e-5, "0.00001"),
        (1e-6, "1e-6"),
        (100.0, "100.0"),
        (1000000000000000.0, "1000000000000000.0"),
        (125.5, "125.5"),
        (3.25, "3.25"),
        (0.1, "0.1"),
        (0.000123, "0.000123"),
        (1.5e-7, "1.5e-7"),
        (1.7976931348623157e308, "1.7976931348623157e308"),
        (-1.7976931348623157e308, "-1.7976931348623157e308"),
        (1.0, "1.0"),
        (-2.5, "-2.5"),
        (2.5, "2.5"),
        (1.5e16, "1.5e16"),
        (1234567890123456.7, "1234567890123456.8"),
        (9007199254740993.0, "9007199254740992.0"),
        (12345678901234567.0, "1.2345678901234568e16"),
        (0.3, "0.3"),
        (0.1 + 0.2, "0.30000000000000004"),
        (2.2250738585072014e-308, "2.2250738585072014e-308"),
        (1e21, "1e21"),
        (1e100, "1e100"),
        (123e-20, "1.23e-18"),
        (0.00001234, "0.00001234"),
        (0.000001234, "1.234e-6"),
        // 2^-25 = 2.98023223876953125e-8 lies exactly between two 17-digit candidates: the even one wins
        // (Ryū, ECMAScript), where Rust's `{:e}` would print `…313`.
        (f64::from_bits(0x3e60_0000_0000_0000), "2.9802322387695312e-8"),
    ];
    for &(f, expected) in table {
        assert_eq!(format_float(f), expected, "bits {:016x}", f.to_bits());
        assert_eq!(to_deterministic_string(&Value::from(f)), expected);
    }
}

/// Non-finite floats are outside the model; the encoder stays total and writes `null`.
#[test]
fn non_finite_float_is_null() {
    for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(format_float(f), "null");
    }
}

/// pins.md §2.3 says the layout is that of the `ryu` crate's `format64`. The digits come from `ryu`; this
/// checks that our layout of them (written from the pins.md §2.3 table) matches its own, and that every
/// output reads back as the same float, on every power of ten and two, the subnormal edges and pseudo-random
/// bit patterns.
#[test]
fn floats_agree_with_ryu() {
    let mut samples: Vec<f64> = Vec::new();
    for e in -324..=308 {
        samples.push(format!("1e{e}").parse().unwrap_or(1.0));
        samples.push(format!("9.5e{e}").parse().unwrap_or(1.0));
    }
    for e in -1074..=1023 {
        samples.push(2f64.powi(e));
    }
    for bits in 1..2000u64 {
        samples.push(f64::from_bits(bits));
        samples.push(f64::from_bits(0x7FEF_FFFF_FFFF_FFFF - bits));
    }
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..200_000 {
        // xorshift64*: deterministic, no dependency.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let bits = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        samples.push(f64::from_bits(bits));
    }
    let mut buffer = ryu::Buffer::new();
    for f in samples.into_iter().filter(|f| f.is_finite()) {
        let ours = format_float(f);
        assert_eq!(ours, buffer.format_finite(f), "bits {:016x}", f.to_bits());
        assert_eq!(ours.parse::<f64>().map(f64::to_bits), Ok(f.to_bits()), "{ours}");
    }
}

/// Every escape of pins.md §2.4, and what is not escaped.
#[test]
fn string_escapes() {
    let table: &[(&str, &str)] = &[
        ("\"", r#""\"""#),
        ("\\", r#""\\""#),
        ("\u{8}", r#""\b""#),
        ("\u{c}", r#""\f""#),
        ("\n", r#""\n""#),
        ("\r", r#""\r""#),
        ("\t", r#""\t""#),
        ("\u{0}", r#""\u0000""#),
        ("\u{1}", r#""\u0001""#),
        ("\u{b}", r#""\u000b""#),
        ("\u{e}", r#""\u000e""#),
        ("\u{1a}", r#""\u001a""#),
        ("\u{1f}", r#""\u001f""#),
        ("/", r#""/""#),
        ("\u{7f}", "\"\u{7f}\""),
        ("\u{2028}\u{2029}", "\"\u{2028}\u{2029}\""),
        ("é😀", "\"é😀\""),
        (" ", "\" \""),
        ("a\"b\\c\nd", r#""a\"b\\c\nd""#),
        ("", r#""""#),
    ];
    for &(input, expected) in table {
        assert_eq!(to_deterministic_string(&Value::String(input.to_owned())), expected, "{input:?}");
    }
    // Every control character has exactly one spelling.
    for c in 0u8..0x20 {
        let encoded = to_deterministic_string(&Value::String(char::from(c).to_string()));
        let named = matches!(c, 0x08 | 0x09 | 0x0A | 0x0C | 0x0D);
        assert_eq!(encoded.len(), if named { 4 } else { 8 }, "{c:#x}");
    }
}

/// Integers: plain decimal at the range edges, never `-0`.
#[test]
fn integers() {
    let table: &[(i128, &str)] = &[
        (0, "0"),
        (-1, "-1"),
        (42, "42"),
        (-9_223_372_036_854_775_808, "-9223372036854775808"),
        (18_446_744_073_709_551_615, "18446744073709551615"),
    ];
    for &(i, expected) in table {
        assert_eq!(to_deterministic_string(&crate::json::integer_value(i)), expected);
    }
}

/// The digit writer agrees with `Display` at every power of ten's edge, both signs, and beyond the
/// range a JSON integer token has (where it falls back to `Display` itself).
#[test]
fn the_integer_writer_is_display() {
    let mut edges: Vec<i128> = vec![0, i128::from(i64::MIN), i128::from(u64::MAX), i128::MAX, i128::MIN + 1];
    let mut power: i128 = 1;
    for _ in 0..=20 {
        edges.extend([power - 1, power, power + 1, -(power - 1), -power, -(power + 1)]);
        power *= 10;
    }
    for i in edges {
        let mut out = String::from("x");
        write_integer(&mut out, i);
        assert_eq!(out, format!("x{i}"), "{i}");
    }
}

/// Keys sort by UTF-8 bytes, a proper prefix first: `"B"` < `"a"` < `"ab"` < `"é"` (pins.md §2.2).
#[test]
fn key_order() {
    let text = r#"{"é":1,"ab":2,"a":3,"B":4,"":5,"z":6,"😀":7,"ÿ":8,"\u007f":9}"#;
    let value = decode(text.as_bytes(), Limits::DOCUMENT).expect("decodes");
    assert_eq!(
        to_deterministic_string(&value),
        "{\"\":5,\"B\":4,\"a\":3,\"ab\":2,\"z\":6,\"\u{7f}\":9,\"é\":1,\"ÿ\":8,\"😀\":7}"
    );
}

/// pins.md §11.5, byte for byte.
#[test]
fn worked_example_11_5() {
    let source = r#"{"b":[1,2.5,1e2,-0.0],"a":"tab\there \u0001 \u00e9 \"q\" /","\u00e9":null,"B":true}"#;
    let value = decode(source.as_bytes(), Limits::DOCUMENT).expect("decodes");
    let expected =
        "{\"B\":true,\"a\":\"tab\\there \\u0001 é \\\"q\\\" /\",\"b\":[1,2.5,100.0,-0.0],\"é\":null}";
    assert_eq!(to_deterministic_string(&value), expected);
    assert_eq!(to_deterministic(&value), expected.as_bytes());
}

/// pins.md §2.5: decoding `DJ(v)` and re-encoding gives the same bytes, and `DJ` keeps integers, floats
/// and signed zeros apart.
#[test]
fn round_trip_and_injectivity() {
    let sources = [
        r#"{"b":[1,2.5,1e2,-0.0],"a":"tab\there \u0001 \u00e9 \"q\" /","\u00e9":null,"B":true}"#,
        r#"[1,1.0,1e0,0,-0,0.0,-0.0,5e-324,1.7976931348623157e308,18446744073709551615]"#,
        r#"{"nested":{"deeper":[[[{"x":"\ud83d\ude00"}]]]},"empty":{},"list":[]}"#,
        r#"[0.1,0.000001,1e-7,123456789012345680000.0,1e300,"\u001f\u007f\u2028"]"#,
    ];
    for source in sources {
        let value = decode(source.as_bytes(), Limits::DOCUMENT).expect("decodes");
        let once = to_deterministic(&value);
        assert_eq!(super::deterministic_len(&value), once.len(), "{source}");
        let again = decode(&once, Limits::DOCUMENT).expect("re-decodes");
        assert_eq!(to_deterministic(&again), once, "{source}");
    }
    assert_ne!(to_deterministic(&Value::from(1)), to_deterministic(&Value::from(1.0)));
    assert_ne!(to_deterministic(&Value::from(0.0)), to_deterministic(&Value::from(-0.0)));
}
