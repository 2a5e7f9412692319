//! Generated inputs for the strict decoder (config.md §2; issue 18, docs/reliability.md): JSON-shaped
//! texts with escapes, surrogates, number tokens at the range edges and repeated keys, then mutated byte
//! by byte, and raw bytes.
//!
//! Properties: no panic; the refusal offset lies inside the document; differential against `serde_json`
//! (a document both accept decodes to the same value, and one only `serde_json` accepts is refused for a
//! rule config.md §2 adds: duplicate key, depth, node count, integer range); the bounds refuse exactly
//! the documents beyond them; and an accepted value survives deterministic encoding.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use super::*;
use crate::json::{number_f64, number_integer, to_deterministic};
use crate::support::prop_support::{check, mutated};

fn ws() -> impl Strategy<Value = String> {
    "[ \t\r\n]{0,2}"
}

/// Number tokens of the RFC 8259 grammar, short and long, including the config.md §2.3 range edges.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?",
        select(vec![
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "9007199254740993",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "2.4703282292062328e-324",
            "-0",
            "-0.0",
            "1e400",
        ])
        .prop_map(str::to_owned),
    ]
}

/// String tokens: plain characters, every simple escape, `\u` escapes (some of them lone or reversed
/// surrogates) and valid pairs.
fn string() -> impl Strategy<Value = String> {
    "\"([a-z0-9 é😀\u{7f}]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4}|\\\\u[dD][89abAB][0-9a-fA-F]{2}\\\\u[dD][c-fC-F][0-9a-fA-F]{2}){0,6}\""
}

/// Keys drawn from a small set half of the time, so that objects repeat keys (config.md §2.5), also
/// after unescaping (`"a"` and `"\u0061"`).
fn key() -> impl Strategy<Value = String> {
    prop_oneof![select(vec!["\"a\"", "\"b\"", "\"\\u0061\""]).prop_map(str::to_owned), string()]
}

/// A JSON-shaped text of depth up to about 70 (past the limit of 64 on some draws).
pub(crate) fn json_text() -> impl Strategy<Value = String> {
    let leaf =
        prop_oneof![select(vec!["null", "true", "false"]).prop_map(str::to_owned), number(), string(),];
    leaf.prop_recursive(72, 256, 6, |inner| {
        prop_oneof![
            (vec((ws(), inner.clone(), ws()), 0..6)).prop_map(|items| {
                let items: Vec<String> = items.into_iter().map(|(a, v, b)| format!("{a}{v}{b}")).collect();
                format!("[{}]", items.join(","))
            }),
            (vec((key(), ws(), inner), 0..6)).prop_map(|members| {
                let members: Vec<String> =
                    members.into_iter().map(|(k, w, v)| format!("{k}{w}:{w}{v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

/// Documents: JSON-shaped texts, mutated or not, with optional surrounding whitespace, and raw bytes.
pub(crate) fn document() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => mutated((ws(), json_text(), ws()).prop_map(|(a, t, b)| format!("{a}{t}{b}").into_bytes())),
        1 => vec(any::<u8>(), 0..64),
    ]
}

/// Whether `ours` is the value `theirs` decoded to. Both are `serde_json::Value`, but `serde_json`'s own
/// parser reads `-0` as the float `-0.0`, and without its `float_roundtrip` feature may round a float one
/// unit in the last place differently.
fn same(ours: &Value, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => match number_integer(a) {
            Some(i) => number_integer(b) == Some(i) || (i == 0 && b.as_f64() == Some(0.0)),
            None => b.as_f64().is_some_and(|g| {
                let f = number_f64(a);
                f.to_bits() == g.to_bits()
                    || (f.signum() == g.signum() && f.to_bits().abs_diff(g.to_bits()) <= 1)
            }),
        },
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        (a, b) => a == b,
    }
}

/// Depth (the root is 1, scalars count) and nodes (values plus keys) of config.md §2.6.
fn measure(value: &Value) -> (usize, usize) {
    match value {
        Value::Array(items) => {
            items.iter().map(measure).fold((1, 1), |(d, n), (cd, cn)| (d.max(cd + 1), n + cn))
        }
        Value::Object(map) => {
            map.values().map(measure).fold((1, 1), |(d, n), (cd, cn)| (d.max(cd + 1), n + cn + 1))
        }
        _ => (1, 1),
    }
}

/// The rules config.md §2 adds to what `serde_json` enforces.
const STRICTER: [DecodeErrorKind; 5] = [
    DecodeErrorKind::DuplicateKey,
    DecodeErrorKind::TooDeep,
    DecodeErrorKind::TooManyNodes,
    DecodeErrorKind::NumberOutOfRange,
    DecodeErrorKind::ByteOrderMark,
];

#[test]
fn prop_json_decoder_differential() {
    check("json_decoder", 2048, document(), |bytes| {
        let ours = decode(&bytes, Limits::DOCUMENT);
        let theirs = serde_json::from_slice::<serde_json::Value>(&bytes);
        match (&ours, &theirs) {
            (Ok(value), Ok(other)) => prop_assert!(same(value, other), "{value:?} vs {other:?}"),
            (Ok(value), Err(e)) => prop_assert!(false, "accepted {value:?}, serde_json refused: {e}"),
            (Err(e), Ok(_)) => prop_assert!(STRICTER.contains(&e.kind), "refused {e} only here"),
            (Err(_), Err(_)) => {}
        }
        if let Err(e) = ours {
            prop_assert!(e.offset <= bytes.len(), "{e} beyond {} bytes", bytes.len());
        }
        Ok(())
    });
}

#[test]
fn prop_json_decoder_bounds_and_reencoding() {
    let small = Limits { max_bytes: 512, max_depth: 6, max_nodes: 40 };
    check("json_bounds", 1024, document(), |bytes| {
        let Ok(value) = decode(&bytes, Limits::DOCUMENT) else { return Ok(()) };
        // config.md §2.6: under smaller bounds exactly the documents beyond them are refused, and only
        // with the bound's own error.
        let (depth, nodes) = measure(&value);
        let within = bytes.len() <= small.max_bytes && depth <= small.max_depth && nodes <= small.max_nodes;
        match decode(&bytes, small) {
            Ok(again) => prop_assert!(within && again == value),
            Err(e) => prop_assert!(
                !within
                    && matches!(
                        e.kind,
                        DecodeErrorKind::TooLarge | DecodeErrorKind::TooDeep | DecodeErrorKind::TooManyNodes
                    ),
                "{e} (depth {depth}, nodes {nodes}, {} bytes)",
                bytes.len()
            ),
        }
        // The deterministic encoding decodes to the same value (pins.md §2).
        let encoded = to_deterministic(&value);
        prop_assert_eq!(crate::json::deterministic_len(&value), encoded.len());
        prop_assert_eq!(decode(&encoded, Limits::DOCUMENT), Ok(value));
        Ok(())
    });
}
