//! Test vectors for typed canonical JSON and the hashes (pins.md §3, §4, §11.3–§11.5, §12.2).

use super::*;
use crate::json::{decode, to_deterministic_string, Limits};

fn parse(text: &str) -> Value {
    decode(text.as_bytes(), Limits::DOCUMENT).expect("test vector decodes")
}

fn tcj(text: &str) -> String {
    String::from_utf8(typed_canonical(&parse(text))).expect("TCJ is UTF-8")
}

/// One vector per node type, and the example of pins.md §3.
#[test]
fn tagged_forms() {
    let table: &[(&str, &str)] = &[
        ("null", r#"["null"]"#),
        ("true", r#"["boolean",true]"#),
        ("false", r#"["boolean",false]"#),
        ("1", r#"["integer","1"]"#),
        ("-0", r#"["integer","0"]"#),
        ("-9223372036854775808", r#"["integer","-9223372036854775808"]"#),
        ("18446744073709551615", r#"["integer","18446744073709551615"]"#),
        ("1.0", r#"["float64","3ff0000000000000"]"#),
        ("-0.0", r#"["float64","8000000000000000"]"#),
        ("0.0", r#"["float64","0000000000000000"]"#),
        ("5e-324", r#"["float64","0000000000000001"]"#),
        (r#""1""#, r#"["string","1"]"#),
        (r#""a\"\n\u0001/""#, r#"["string","a\"\n\u0001/"]"#),
        ("[]", r#"["array",[]]"#),
        ("{}", r#"["object",[]]"#),
        (
            r#"{"b":[1,2.5],"a":null}"#,
            r#"["object",[["a",["null"]],["b",["array",[["integer","1"],["float64","4004000000000000"]]]]]]"#,
        ),
    ];
    for &(input, expected) in table {
        assert_eq!(tcj(input), expected, "{input}");
    }
}

/// pins.md §11.5: the TCJ line.
#[test]
fn worked_example_11_5() {
    let source = r#"{"b":[1,2.5,1e2,-0.0],"a":"tab\there \u0001 \u00e9 \"q\" /","\u00e9":null,"B":true}"#;
    let expected = "[\"object\",[[\"B\",[\"boolean\",true]],[\"a\",[\"string\",\"tab\\there \\u0001 é \\\"q\\\" /\"]],[\"b\",[\"array\",[[\"integer\",\"1\"],[\"float64\",\"4004000000000000\"],[\"float64\",\"4059000000000000\"],[\"float64\",\"8000000000000000\"]]]],[\"é\",[\"null\"]]]]";
    assert_eq!(tcj(source), expected);
}

/// pins.md §4.2 framing: label, 0x00, `u64_be(len)`, payload.
#[test]
fn labelled_hash_framing() {
    let payload = b"[\"null\"]";
    let mut framed = b"ptc-gateway.installation-config.v1\x00".to_vec();
    framed.extend(8u64.to_be_bytes());
    framed.extend(payload);
    assert_eq!(labelled_hash(LABEL_INSTALLATION_CONFIG, payload), sha256(&framed));
    assert_eq!(LABEL_APPLICATION_CONTENT.len() + 1, 35);
    assert_eq!(LABEL_INSTALLATION_CONFIG.len() + 1, 35);
    assert_eq!(LABEL_PROVIDER_SNAPSHOT.len() + 1, 33);
}

/// pins.md §4.3: 71 bytes, lowercase.
#[test]
fn qualified_digest_shape() {
    let q = qualified(&[0xAB; 32]);
    assert_eq!(q.len(), 71);
    assert_eq!(q, format!("sha256:{}", "ab".repeat(32)));
    assert_eq!(
        sha256_qualified(b""),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

/// pins.md §11.3: the projection of `notes`, its 569-byte TCJ payload and the installation pin.
#[test]
fn installation_pin_11_3() {
    let projection = r#"{"ceilings":{"max_result_bytes":262144,"timeout_ms":5000},"source":"mcp","tools":{"read_text_file":{"as":"notes.read","effect":"read"}},"transport":{"args":["--root","notes"],"command":"mcp-server-fs","cwd":".","env":{},"inherit_environment":false,"protocol":"auto","start_timeout_ms":5000,"type":"stdio"}}"#;
    let expected_payload = r#"["object",[["ceilings",["object",[["max_result_bytes",["integer","262144"]],["timeout_ms",["integer","5000"]]]]],["source",["string","mcp"]],["tools",["object",[["read_text_file",["object",[["as",["string","notes.read"]],["effect",["string","read"]]]]]]]],["transport",["object",[["args",["array",[["string","--root"],["string","notes"]]]],["command",["string","mcp-server-fs"]],["cwd",["string","."]],["env",["object",[]]],["inherit_environment",["boolean",false]],["protocol",["string","auto"]],["start_timeout_ms",["integer","5000"]],["type",["string","stdio"]]]]]]]"#;
    let value = parse(projection);
    assert_eq!(to_deterministic_string(&value), projection);
    let payload = typed_canonical(&value);
    assert_eq!(payload.len(), 569);
    assert_eq!(payload, expected_payload.as_bytes());
    assert_eq!(
        labelled_pin(LABEL_INSTALLATION_CONFIG, &value),
        "sha256:26b11335d94e95f1936867f2b24ce06cee6e929cfb6e1327619dab108311c4a3"
    );
}

/// pins.md §11.4: the field hashes, the 796-byte identity TCJ and the snapshot pin.
#[test]
fn snapshot_pin_11_4() {
    let fields: &[(&str, &str, &str)] = &[
        (
            r#"{"name":"mcp-server-fs","version":"1.0.0"}"#,
            r#"["object",[["name",["string","mcp-server-fs"]],["version",["string","1.0.0"]]]]"#,
            "sha256:38e0f86fdcd4310715372b3a065a7c21a16f77f42ecc90cb67f64a7b7bd69704",
        ),
        (
            r#""Read a UTF-8 text file below the root.""#,
            r#"["string","Read a UTF-8 text file below the root."]"#,
            "sha256:1abf526f70c5d0b1cc9ef24fe999e591984c1b9a89f99fc55ec1416df3ac0a08",
        ),
        (
            r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#,
            r#"["object",[["properties",["object",[["path",["object",[["type",["string","string"]]]]]]]],["required",["array",[["string","path"]]]],["type",["string","object"]]]]"#,
            "sha256:0f7e50b46d183ca32d23015b38cbc438d8468f6b1beb9c5fae8004131740b346",
        ),
        (
            r#"{"readOnlyHint":true}"#,
            r#"["object",[["readOnlyHint",["boolean",true]]]]"#,
            "sha256:705db0cd01003f925e6b676f19451c230e423f22b08db70f6927898b6f5d82dc",
        ),
    ];
    for &(source, expected_tcj, expected_hash) in fields {
        assert_eq!(tcj(source), expected_tcj);
        assert_eq!(field_hash(&parse(source)), expected_hash);
    }
    let executable: [u8; 30] = [
        0x7f, 0x45, 0x4c, 0x46, 0x2d, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x2d, 0x65, 0x78, 0x65, 0x63,
        0x75, 0x74, 0x61, 0x62, 0x6c, 0x65, 0x2d, 0x62, 0x79, 0x74, 0x65, 0x73, 0x0a,
    ];
    assert_eq!(
        sha256_qualified(&executable),
        "sha256:0f7faba14cdad6a1f2c0e85553b7edd0de79bf1f367df2904a06fe80f4a380d7"
    );

    let identity = r#"{"era":"modern","executable_sha256":"sha256:0f7faba14cdad6a1f2c0e85553b7edd0de79bf1f367df2904a06fe80f4a380d7","protocol_version":"2026-07-28","server_identity_sha256":"sha256:38e0f86fdcd4310715372b3a065a7c21a16f77f42ecc90cb67f64a7b7bd69704","source":"mcp","tools":[{"annotations_sha256":"sha256:705db0cd01003f925e6b676f19451c230e423f22b08db70f6927898b6f5d82dc","description_sha256":"sha256:1abf526f70c5d0b1cc9ef24fe999e591984c1b9a89f99fc55ec1416df3ac0a08","input_schema_sha256":"sha256:0f7e50b46d183ca32d23015b38cbc438d8468f6b1beb9c5fae8004131740b346","name":"read_text_file","output_schema_sha256":null}],"transport":"stdio"}"#;
    let value = parse(identity);
    assert_eq!(to_deterministic_string(&value), identity);
    let payload = typed_canonical(&value);
    assert_eq!(payload.len(), 796);
    assert!(payload.starts_with(
        br#"["object",[["era",["string","modern"]],["executable_sha256",["string","sha256:0f7f"#
    ));
    let mut framed = b"ptc-gateway.provider-snapshot.v1\x00".to_vec();
    framed.extend([0, 0, 0, 0, 0, 0, 0x03, 0x1c]);
    framed.extend(&payload);
    assert_eq!(framed.len(), 837);
    assert_eq!(labelled_hash(LABEL_PROVIDER_SNAPSHOT, &payload), sha256(&framed));
    assert_eq!(
        labelled_pin(LABEL_PROVIDER_SNAPSHOT, &value),
        "sha256:2e57eab140487245bd69921ef9fc2676b30842b49eb0ffdbbb1c306fe1d0b24c"
    );
}

/// pins.md §3: TCJ is independent of member order and whitespace, and tells `"1"`, `1`, `1.0` apart.
#[test]
fn tcj_invariances() {
    assert_eq!(tcj(r#"{ "b" : 1 , "a" : [ 2 ] }"#), tcj(r#"{"a":[2],"b":1}"#));
    let distinct = [tcj(r#""1""#), tcj("1"), tcj("1.0"), tcj("-0.0"), tcj("0.0")];
    for (i, a) in distinct.iter().enumerate() {
        for b in distinct.iter().skip(i + 1) {
            assert_ne!(a, b);
        }
    }
}
