//! Test vectors for the strict decoder (config.md §2, http-mcp.md §7.1).

use super::*;
use DecodeErrorKind::*;

fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

fn obj(members: &[(&str, Value)]) -> Value {
    Value::Object(members.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect())
}

fn doc(bytes: &[u8]) -> Result<Value, DecodeError> {
    decode(bytes, Limits::DOCUMENT)
}

/// A refusal at `offset` of a one-line ASCII document: line 1, column `offset + 1`.
fn at(kind: DecodeErrorKind, offset: usize) -> DecodeError {
    DecodeError { kind, offset, line: 1, column: offset + 1 }
}

/// The float value of a float token, `None` for anything else.
fn float(value: &Value) -> Option<f64> {
    crate::json::as_float(value)
}

/// Values that decode, with what they decode to.
#[test]
fn accepted_vectors() {
    let table: Vec<(&[u8], Value)> = vec![
        (b"null", Value::Null),
        (b"true", Value::Bool(true)),
        (b"false", Value::Bool(false)),
        (b" \t\r\n1 \t\r\n", Value::from(1)),
        (b"0", Value::from(0)),
        (b"-0", Value::from(0)),
        (b"-9223372036854775808", Value::from(-9_223_372_036_854_775_808i64)),
        (b"18446744073709551615", Value::from(18_446_744_073_709_551_615u64)),
        (b"9223372036854775808", Value::from(9_223_372_036_854_775_808u64)),
        (b"1.0", Value::from(1.0)),
        (b"1e2", Value::from(100.0)),
        (b"1E+2", Value::from(100.0)),
        (b"1e-2", Value::from(0.01)),
        (b"-2.5", Value::from(-2.5)),
        (b"0.5e1", Value::from(5.0)),
        (b"1.7976931348623157e308", Value::from(f64::MAX)),
        (b"5e-324", Value::from(f64::from_bits(1))),
        // Round half to even (config.md §2.3): 2^53 + 1 and 2^53 + 3 lie halfway between representable
        // values.
        (b"9007199254740993.0", Value::from(9_007_199_254_740_992.0)),
        (b"9007199254740995.0", Value::from(9_007_199_254_740_996.0)),
        // Just above half the least subnormal rounds up to it; just below rounds to zero.
        (b"2.4703282292062328e-324", Value::from(f64::from_bits(1))),
        (b"2.4703282292062327e-324", Value::from(0.0)),
        (b"1e-400", Value::from(0.0)),
        (b"\"\"", s("")),
        (b"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", s("\"\\/\u{8}\u{c}\n\r\t")),
        (b"\"\\u00e9\\u00E9\"", s("\u{e9}\u{e9}")),
        (b"\"\\u0000\"", s("\0")),
        (b"\"\\ud83d\\ude00\"", s("\u{1F600}")),
        (b"\"\\uDBFF\\uDFFF\"", s("\u{10FFFF}")),
        ("\"é😀\u{FEFF}\"".as_bytes(), s("é😀\u{FEFF}")),
        (b"\"\x7f\"", s("\u{7f}")),
        (b"[]", Value::Array(vec![])),
        (b"{}", obj(&[])),
        (b"[ 1 , [ ] , { } ]", Value::Array(vec![Value::from(1), Value::Array(vec![]), obj(&[])])),
        (b"{\"a\":{\"a\":1}}", obj(&[("a", obj(&[("a", Value::from(1))]))])),
        (b"{ \"b\" : 1 , \"a\" : 2 }", obj(&[("a", Value::from(2)), ("b", Value::from(1))])),
    ];
    for (input, expected) in table {
        let got = doc(input);
        assert_eq!(got.as_ref().ok(), Some(&expected), "input {:?}", String::from_utf8_lossy(input));
    }
}

/// `-0.0` keeps its sign; `-0` is the integer 0 (config.md §2.3).
#[test]
fn negative_zero() {
    assert_eq!(doc(b"-0.0").ok().as_ref().and_then(float).map(f64::to_bits), Some(0x8000_0000_0000_0000));
    let f = doc(b"-0e0").ok().as_ref().and_then(float);
    assert!(f.is_some_and(|f| f == 0.0 && f.is_sign_negative()), "{f:?}");
    // An integer token: `is_u64`, not `is_f64`, and equal to `0` however it was written.
    let zero = doc(b"-0");
    assert_eq!(zero, Ok(Value::from(0)));
    assert!(zero.ok().and_then(|v| v.as_number().map(serde_json::Number::is_u64)).unwrap_or(false));
}

/// Documents that are refused, with the kind and offset of the first violation.
#[test]
fn refused_vectors() {
    let table: Vec<(&[u8], DecodeErrorKind, usize)> = vec![
        (b"", UnexpectedEnd, 0),
        (b"   ", UnexpectedEnd, 3),
        (b"{", UnexpectedEnd, 1),
        (b"[1", UnexpectedEnd, 2),
        (b"{\"a\"", UnexpectedEnd, 4),
        (b"{\"a\":", UnexpectedEnd, 5),
        (b"\xEF\xBB\xBF{}", ByteOrderMark, 0),
        (b"\xEF\xBB\xBF", ByteOrderMark, 0),
        // UTF-8 (config.md §2.1.2).
        (b"\"\xFF\"", InvalidUtf8, 1),
        (b"{\"a\":\"x\xFF\"}", InvalidUtf8, 7),
        (b"\"\xC0\xAF\"", InvalidUtf8, 1),
        (b"\"\xC1\xBF\"", InvalidUtf8, 1),
        (b"\"\xE0\x80\xAF\"", InvalidUtf8, 1),
        (b"\"\xF0\x80\x80\xAF\"", InvalidUtf8, 1),
        (b"\"\xED\xA0\x80\"", InvalidUtf8, 1),
        (b"\"\xED\xBF\xBF\"", InvalidUtf8, 1),
        (b"\"\xF4\x90\x80\x80\"", InvalidUtf8, 1),
        (b"\"\xF5\x80\x80\x80\"", InvalidUtf8, 1),
        (b"\"ab\xC3\"", InvalidUtf8, 3),
        (b"\"\x80\"", InvalidUtf8, 1),
        (b"\xFF", InvalidUtf8, 0),
        (b"[\xC3\xA9]", Syntax, 1),
        // Grammar (config.md §2.2).
        (b"{} x", TrailingData, 3),
        (b"{}{}", TrailingData, 2),
        (b"1 2", TrailingData, 2),
        (b"0x10", TrailingData, 1),
        (b"NaN", Syntax, 0),
        (b"Infinity", Syntax, 0),
        (b"-Infinity", Syntax, 1),
        (b"[1,]", Syntax, 3),
        (b"[,1]", Syntax, 1),
        (b"{\"a\":1,}", Syntax, 7),
        (b"{,}", Syntax, 1),
        (b"{\"a\" 1}", Syntax, 5),
        (b"{\"a\":1 \"b\":2}", Syntax, 7),
        (b"[1 2]", Syntax, 3),
        (b"[1}", Syntax, 2),
        (b"{\"a\":1]", Syntax, 6),
        (b"// c\n1", Syntax, 0),
        (b"/* c */ 1", Syntax, 0),
        (b"1 // c", TrailingData, 2),
        (b"'a'", Syntax, 0),
        (b"{a:1}", Syntax, 1),
        (b"{'a':1}", Syntax, 1),
        (b"\x0c1", Syntax, 0),
        (b"\xC2\xA01", Syntax, 0),
        (b"01", Syntax, 1),
        (b"-01", Syntax, 2),
        (b"00", Syntax, 1),
        (b"1.", UnexpectedEnd, 2),
        (b"1.e5", Syntax, 2),
        (b".5", Syntax, 0),
        (b"+1", Syntax, 0),
        (b"-", UnexpectedEnd, 1),
        (b"- 1", Syntax, 1),
        (b"1e", UnexpectedEnd, 2),
        (b"1e+", UnexpectedEnd, 3),
        (b"[1e]", Syntax, 3),
        (b"tru", UnexpectedEnd, 3),
        (b"trux", Syntax, 3),
        (b"nul", UnexpectedEnd, 3),
        (b"True", Syntax, 0),
        (b"[truex]", Syntax, 5),
        // Numbers (config.md §2.3).
        (b"-9223372036854775809", NumberOutOfRange, 0),
        (b"18446744073709551616", NumberOutOfRange, 0),
        (b"[100000000000000000000000000000000000000000000]", NumberOutOfRange, 1),
        (b"[1e400]", NumberOutOfRange, 1),
        (b"-1e400", NumberOutOfRange, 0),
        (b"1.7976931348623159e308", NumberOutOfRange, 0),
        // Strings (config.md §2.4).
        (b"\"abc", UnexpectedEnd, 4),
        (b"\"a\\", UnexpectedEnd, 3),
        (b"\"a\\qb\"", InvalidEscape, 2),
        (b"\"\\x41\"", InvalidEscape, 1),
        (b"\"\\U0041\"", InvalidEscape, 1),
        (b"\"\\u12\"", InvalidEscape, 1),
        (b"\"\\u12", UnexpectedEnd, 5),
        (b"\"a\tb\"", ControlCharacter, 2),
        (b"\"a\nb\"", ControlCharacter, 2),
        (b"\"\x00\"", ControlCharacter, 1),
        (b"\"\x1f\"", ControlCharacter, 1),
        (b"\"\\ud83d\"", BadSurrogate, 1),
        (b"\"\\ud83dx\"", BadSurrogate, 1),
        (b"\"\\ud83d\\n\"", BadSurrogate, 1),
        (b"\"\\ud83d\\ud83d\"", BadSurrogate, 1),
        (b"\"\\ude00\"", BadSurrogate, 1),
        (b"\"\\ude00\\ud83d\"", BadSurrogate, 1),
        (b"\"x\\udbff\\u0041\"", BadSurrogate, 2),
        (b"\"\\ud83d\\u12\"", InvalidEscape, 7),
        // Duplicate keys (config.md §2.5).
        (b"{\"a\":1,\"a\":2}", DuplicateKey, 7),
        (b"{\"a\":1,\"\\u0061\":2}", DuplicateKey, 7),
        (b"{\"title\":1,\"\\u0074itle\":2}", DuplicateKey, 11),
        (b"[{\"x\":{\"b\":1,\"c\":2,\"b\":3}}]", DuplicateKey, 19),
        (b"{\"\xC3\xA9\":1,\"\\u00e9\":2}", DuplicateKey, 8),
        // The first violation in byte order decides (config.md §2.7).
        (b"{\"a\":1,\"a\":\"\xFF\"}", DuplicateKey, 7),
        (b"{\"\xFF\":1,\"\xFF\":2}", InvalidUtf8, 2),
        (b"{\"a\":1e400,\"a\":1}", NumberOutOfRange, 5),
        (b"{\"a\":1,\"a\":1e400}", DuplicateKey, 7),
        (b"{\"a\":1,\"a\":2,}", DuplicateKey, 7),
        (b"{\"a\":1,}\xFF", Syntax, 7),
    ];
    for (input, kind, offset) in table {
        // Every table input is one line; its bytes before the offset are well-formed UTF-8, so the
        // column is one more than the characters std counts there.
        let column = 1 + String::from_utf8_lossy(&input[..offset]).chars().count();
        assert_eq!(
            doc(input),
            Err(DecodeError { kind, offset, line: 1, column }),
            "input {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

/// A refusal's line and column (config.md §2.7): lines end at LF only, columns count characters from 1.
#[test]
fn line_and_column() {
    let table: Vec<(&[u8], DecodeErrorKind, usize, usize, usize)> = vec![
        (b"{\n  \"a\": 1,\n  \"a\": 2\n}", DuplicateKey, 14, 3, 3),
        // CR is whitespace, not a line break: CRLF ends one line.
        (b"[\r\n1,\r\n]", Syntax, 7, 3, 1),
        (b"[1]\r2", TrailingData, 4, 1, 5),
        // `Ã©` (é) is one character, `ð` (😀) another.
        ("{\"\u{e9}\":\n\"x\u{ff}\n".as_bytes(), ControlCharacter, 11, 2, 4),
        ("{\"\u{e9}\u{1F600}\": tru}".as_bytes(), Syntax, 14, 1, 11),
        (b"{\"\xC3\xA9\":\n\"x\xFF\"}", InvalidUtf8, 9, 2, 3),
        // The end of a document after a line break is column 1 of the next line.
        (b"[1,\n", UnexpectedEnd, 4, 2, 1),
        (b"\xEF\xBB\xBF\n{}", ByteOrderMark, 0, 1, 1),
    ];
    for (input, kind, offset, line, column) in table {
        assert_eq!(
            doc(input),
            Err(DecodeError { kind, offset, line, column }),
            "input {:?}",
            String::from_utf8_lossy(input)
        );
    }
    // A too-large document is refused before its bytes are read; its position is still defined.
    let limits = Limits { max_bytes: 5, max_depth: 64, max_nodes: 100 };
    assert_eq!(
        decode(b"\n\n\xFF\xFFxyz", limits),
        Err(DecodeError { kind: TooLarge, offset: 5, line: 3, column: 4 })
    );
}

/// The size limit is checked first, on raw bytes, and counts every byte (config.md §2.1.1, §2.7).
#[test]
fn size_limit_precedes_everything() {
    let limits = Limits { max_bytes: 10, max_depth: 64, max_nodes: 100 };
    assert_eq!(decode(b"[1,2,3,4,5]", limits), Err(at(TooLarge, 10)));
    assert_eq!(
        decode(b"\xEF\xBB\xBF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF", limits).map_err(|e| e.kind),
        Err(TooLarge)
    );
    assert!(decode(b"[1,2,3,4] ", limits).is_ok());

    // config.md §11 row 2: padded with spaces to 1,000,001 bytes.
    let mut padded = b"{}".to_vec();
    padded.resize(1_000_001, b' ');
    assert_eq!(doc(&padded), Err(at(TooLarge, 1_000_000)));
    padded.truncate(1_000_000);
    assert_eq!(doc(&padded), Ok(obj(&[])));
}

fn nested_in_member(arrays: usize) -> Vec<u8> {
    let mut out = b"{\"a\":".to_vec();
    out.extend(std::iter::repeat_n(b'[', arrays));
    out.push(b'0');
    out.extend(std::iter::repeat_n(b']', arrays));
    out.push(b'}');
    out
}

/// config.md §2.6: 62 nested arrays inside an object member are accepted (the `0` is at depth 64),
/// 63 are refused at the `0`.
#[test]
fn depth_boundary() {
    let ok = doc(&nested_in_member(62));
    assert!(ok.is_ok(), "{ok:?}");
    assert_eq!(doc(&nested_in_member(63)), Err(at(TooDeep, 5 + 63)));

    // Empty containers count: 64 nested arrays at the root are accepted, 65 refused at the 65th `[`.
    let root = |n: usize| {
        let mut out = vec![b'['; n];
        out.extend(std::iter::repeat_n(b']', n));
        out
    };
    assert!(doc(&root(64)).is_ok());
    assert_eq!(doc(&root(65)), Err(at(TooDeep, 64)));
    let objects = |n: usize| {
        let mut out = b"{\"k\":".repeat(n - 1);
        out.extend(b"{}");
        out.extend(std::iter::repeat_n(b'}', n - 1));
        out
    };
    assert!(doc(&objects(64)).is_ok());
    assert_eq!(doc(&objects(65)), Err(at(TooDeep, 5 * 64)));
}

/// A document of a million `[` is refused at the first too-deep byte, without reading further.
#[test]
fn deep_adversarial_document_is_refused_early() {
    let deep = vec![b'['; 1_000_000];
    assert_eq!(doc(&deep), Err(at(TooDeep, 64)));
}

fn padding(zeros: usize) -> Vec<u8> {
    let mut out = b"{\"padding\":[".to_vec();
    for i in 0..zeros {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'0');
    }
    out.extend(b"]}");
    out
}

/// config.md §2.6: `{"padding":[0,…]}` with 99,997 zeros has 100,000 nodes and is accepted; 99,998 are
/// refused at the last zero.
#[test]
fn node_boundary() {
    match doc(&padding(99_997)) {
        Ok(value) => {
            assert_eq!(value.get("padding").and_then(Value::as_array).map(Vec::len), Some(99_997))
        }
        Err(e) => panic!("{e}"),
    }
    assert_eq!(doc(&padding(99_998)), Err(at(TooManyNodes, 12 + 2 * 99_997)));
}

/// Keys count as nodes and are counted at their opening quote.
#[test]
fn keys_count_as_nodes() {
    let limits = |max_nodes| Limits { max_bytes: 100, max_depth: 64, max_nodes };
    assert!(decode(b"{\"a\":1}", limits(3)).is_ok());
    assert_eq!(decode(b"{\"a\":1}", limits(2)), Err(at(TooManyNodes, 5)));
    assert_eq!(decode(b"{\"a\":1}", limits(1)), Err(at(TooManyNodes, 1)));
    assert_eq!(decode(b"[1,2]", limits(2)), Err(at(TooManyNodes, 3)));
}

/// A duplicate key before a depth violation reports the duplicate, and the other way round (config.md §2.7);
/// config.md §11 row 6: depth precedes anything a schema would say.
#[test]
fn first_violation_wins_between_depth_and_duplicates() {
    let mut dup_first = b"{\"a\":1,\"a\":".to_vec();
    dup_first.extend(vec![b'['; 100]);
    assert_eq!(doc(&dup_first), Err(at(DuplicateKey, 7)));

    let mut deep_first = b"{\"x\":".to_vec();
    deep_first.extend(vec![b'['; 64]);
    deep_first.extend(b"0");
    deep_first.extend(vec![b']'; 64]);
    deep_first.extend(b",\"x\":1}");
    assert_eq!(doc(&deep_first), Err(at(TooDeep, 5 + 63)));
}

/// The limits presets are those of the spec.
#[test]
fn limit_presets() {
    assert_eq!(Limits::DOCUMENT, Limits { max_bytes: 1_000_000, max_depth: 64, max_nodes: 100_000 });
    assert_eq!(Limits::REQUEST, Limits { max_bytes: 2_097_152, max_depth: 64, max_nodes: 100_000 });
    assert_eq!(
        Limits::UPSTREAM_MESSAGE,
        Limits { max_bytes: 8_388_608, max_depth: 64, max_nodes: 1_000_000 }
    );
}

/// Errors print a kind, an offset, a line and a column, never document content.
#[test]
fn error_display_has_no_content() {
    let err = doc(b"{\"secret-token\":1,\"secret-token\":2}").err();
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("strict JSON: duplicate_key at byte 18 (line 1, column 19)")
    );
}

/// Mutation fuzzing with a fixed seed, against `serde_json` as an independent RFC 8259 parser: the
/// decoder never panics; whatever it accepts, `serde_json` accepts and `DJ` round-trips; whatever it
/// refuses on grammar grounds, `serde_json` refuses too.
#[test]
fn mutations_agree_with_an_independent_parser() {
    let seeds: &[&[u8]] = &[
        br#"{"b":[1,2.5,1e2,-0.0],"a":"tab\there \u0001 \u00e9 \"q\" /","\u00e9":null,"B":true}"#,
        br#"[{"x":{"y":[true,false,null,"\ud83d\ude00"]}},-12.5e-3,0,"caf\u00e9",{}]"#,
        "{\"k\u{e9}\":\"\u{1F600}\",\"n\":[1,[2,[3]]]}".as_bytes(),
    ];
    let alphabet = b"{}[]\",:\\/ \t\n\r0123456789-+.eEtrufalsn\x00\x1f\x7f\x80\xbf\xc3\xa9\xed\xa0\xf0\xff";
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..30_000u32 {
        let seed = seeds[usize::try_from(round).unwrap_or(0) % seeds.len()];
        let mut bytes = seed.to_vec();
        for _ in 0..=(next() % 3) {
            let at = usize::try_from(next()).unwrap_or(0) % (bytes.len() + 1);
            let byte = alphabet[usize::try_from(next()).unwrap_or(0) % alphabet.len()];
            match next() % 3 {
                0 if at < bytes.len() => bytes[at] = byte,
                1 if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, byte),
            }
        }
        let independent = serde_json::from_slice::<serde_json::Value>(&bytes);
        match doc(&bytes) {
            Ok(value) => {
                assert!(independent.is_ok(), "{:?}", String::from_utf8_lossy(&bytes));
                let once = crate::json::to_deterministic(&value);
                let again = doc(&once).map(|v| crate::json::to_deterministic(&v));
                assert_eq!(again.as_ref(), Ok(&once));
            }
            Err(e) => {
                let grammar =
                    !matches!(e.kind, DuplicateKey | NumberOutOfRange | TooDeep | TooManyNodes | TooLarge);
                if grammar {
                    assert!(independent.is_err(), "{e} for {:?}", String::from_utf8_lossy(&bytes));
                }
            }
        }
    }
}
