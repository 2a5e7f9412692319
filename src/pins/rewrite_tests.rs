//! lifecycle.md §1.3: the rewrite vectors P1–P7: what changes, what stays byte for byte.

use super::*;

fn pins(text: &str) -> Value {
    json::decode(text.as_bytes(), Limits::DOCUMENT).unwrap()
}

const PINS: &str = r#"{"echo":{"expected_application_content_digest":"sha256:new","installation_config_pins":{"notes":"sha256:n1"},"provider_snapshot_pins":{"mission/notes":"sha256:s1"}}}"#;

#[test]
fn rewrite_vectors() {
    let table: &[(&str, &str, &str, &[&str])] = &[
        (
            "P1 multi-line maps keep their layout; other members and their order stay",
            "{\n  \"version\": 1,\n  \"tools\": [\n    {\n      \"name\": \"echo\",\n      \"expected_application_content_digest\": \"sha256:old\",\n      \"installation_config_pins\": {\n        \"notes\": \"sha256:n0\"\n      },\n      \"provider_snapshot_pins\": {\n        \"mission/notes\": \"sha256:s0\"\n      },\n      \"title\": \"Echo\"\n    }\n  ]\n}\n",
            "{\n  \"version\": 1,\n  \"tools\": [\n    {\n      \"name\": \"echo\",\n      \"expected_application_content_digest\": \"sha256:new\",\n      \"installation_config_pins\": {\n        \"notes\": \"sha256:n1\"\n      },\n      \"provider_snapshot_pins\": {\n        \"mission/notes\": \"sha256:s1\"\n      },\n      \"title\": \"Echo\"\n    }\n  ]\n}\n",
            &[
                "echo: expected_application_content_digest \"sha256:old\" → \"sha256:new\"",
                "echo: installation_config_pins {\"notes\":\"sha256:n0\"} → {\"notes\":\"sha256:n1\"}",
                "echo: provider_snapshot_pins {\"mission/notes\":\"sha256:s0\"} → {\"mission/notes\":\"sha256:s1\"}",
            ],
        ),
        (
            "P2 one-line maps stay on one line",
            "{\"tools\": [{\"name\": \"echo\", \"expected_application_content_digest\": \"sha256:new\", \"installation_config_pins\": {}, \"provider_snapshot_pins\": {}}]}",
            "{\"tools\": [{\"name\": \"echo\", \"expected_application_content_digest\": \"sha256:new\", \"installation_config_pins\": {\"notes\": \"sha256:n1\"}, \"provider_snapshot_pins\": {\"mission/notes\": \"sha256:s1\"}}]}",
            &[
                "echo: installation_config_pins {} → {\"notes\":\"sha256:n1\"}",
                "echo: provider_snapshot_pins {} → {\"mission/notes\":\"sha256:s1\"}",
            ],
        ),
        (
            "P3 everything current: the same bytes, no change",
            "{\"tools\":[{\"name\":\"echo\",\"expected_application_content_digest\":\"sha256:new\",\"installation_config_pins\":{\"notes\":\"sha256:n1\"},\"provider_snapshot_pins\":{\"mission/notes\":\"sha256:s1\"}}]}",
            "{\"tools\":[{\"name\":\"echo\",\"expected_application_content_digest\":\"sha256:new\",\"installation_config_pins\":{\"notes\":\"sha256:n1\"},\"provider_snapshot_pins\":{\"mission/notes\":\"sha256:s1\"}}]}",
            &[],
        ),
        (
            "P4 missing members are inserted after the last one, in a multi-line object",
            "{\n\t\"tools\": [\n\t\t{\n\t\t\t\"name\": \"echo\"\n\t\t}\n\t]\n}",
            "{\n\t\"tools\": [\n\t\t{\n\t\t\t\"name\": \"echo\",\n\t\t\t\"expected_application_content_digest\": \"sha256:new\",\n\t\t\t\"installation_config_pins\": {\n\t\t\t\t\"notes\": \"sha256:n1\"\n\t\t\t},\n\t\t\t\"provider_snapshot_pins\": {\n\t\t\t\t\"mission/notes\": \"sha256:s1\"\n\t\t\t}\n\t\t}\n\t]\n}",
            &[
                "echo: expected_application_content_digest (absent) → \"sha256:new\"",
                "echo: installation_config_pins (absent) → {\"notes\":\"sha256:n1\"}",
                "echo: provider_snapshot_pins (absent) → {\"mission/notes\":\"sha256:s1\"}",
            ],
        ),
        (
            "P5 a tool the pins do not name, and strings with braces, are left alone",
            "{\"note\": \"{[\\\"\", \"tools\": [{\"name\": \"other\", \"expected_application_content_digest\": \"x\"}, {\"name\": \"echo\", \"expected_application_content_digest\": \"sha256:old\", \"installation_config_pins\": {\"notes\": \"sha256:n1\"}, \"provider_snapshot_pins\": {\"mission/notes\": \"sha256:s1\"}}]}",
            "{\"note\": \"{[\\\"\", \"tools\": [{\"name\": \"other\", \"expected_application_content_digest\": \"x\"}, {\"name\": \"echo\", \"expected_application_content_digest\": \"sha256:new\", \"installation_config_pins\": {\"notes\": \"sha256:n1\"}, \"provider_snapshot_pins\": {\"mission/notes\": \"sha256:s1\"}}]}",
            &["echo: expected_application_content_digest \"sha256:old\" → \"sha256:new\""],
        ),
        (
            "P6 a multi-line map in a one-line object",
            "{\"tools\": [{\"name\": \"echo\", \"expected_application_content_digest\": \"sha256:new\", \"installation_config_pins\": {\n  \"gone\": \"sha256:g\"\n}, \"provider_snapshot_pins\": {\"mission/notes\": \"sha256:s1\"}}]}",
            "{\"tools\": [{\"name\": \"echo\", \"expected_application_content_digest\": \"sha256:new\", \"installation_config_pins\": {\n  \"notes\": \"sha256:n1\"\n}, \"provider_snapshot_pins\": {\"mission/notes\": \"sha256:s1\"}}]}",
            &["echo: installation_config_pins {\"gone\":\"sha256:g\"} → {\"notes\":\"sha256:n1\"}"],
        ),
    ];
    for (what, before, after, lines) in table {
        let (text, changes) = rewrite(before, &pins(PINS)).unwrap_or_else(|| panic!("{what}: scanned"));
        assert_eq!(text, *after, "{what}");
        let printed: Vec<String> = changes.iter().map(Change::line).collect();
        assert_eq!(printed, *lines, "{what}");
        // The result is still the same document with the new pins.
        assert!(json::decode(text.as_bytes(), Limits::DOCUMENT).is_ok(), "{what}: still JSON");
    }
}

// P7: a document without a `tools` array of named objects is not rewritten.
#[test]
fn a_document_the_scanner_cannot_follow_is_refused() {
    for text in ["[]", "{\"tools\": 5}", "{\"tools\": [{\"title\": \"x\"}]}", "{\"tools\": [1]}"] {
        assert!(rewrite(text, &pins(PINS)).is_none(), "{text}");
    }
}
