//! docs/operations.md against the code: the startup code catalog is `StartupCode::ALL` exactly, and the
//! documents table lists every top-level member of each generated schema, required ones in bold.

use std::collections::BTreeSet;
use std::path::Path;

use ptc_gateway::testing::config::schema::{application_schema, gateway_schema, host_schema};
use ptc_gateway::testing::startup::StartupCode;
use serde_json::Value;

fn doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/operations.md")).unwrap()
}

/// The lines of the markdown section whose heading is `heading`.
fn section<'a>(doc: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = doc.lines().skip_while(|l| *l != heading);
    let first = lines.next().unwrap_or_else(|| panic!("no section {heading}"));
    let level = first.chars().take_while(|c| *c == '#').count();
    lines
        .take_while(|l| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            hashes == 0 || hashes > level
        })
        .collect()
}

/// Every `snake_case` code quoted in backticks in `lines`.
fn quoted_codes(lines: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in lines {
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 1 && !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                out.insert(part.to_owned());
            }
        }
    }
    out
}

#[test]
fn the_startup_code_table_is_the_catalog() {
    let doc = doc();
    let table = section(&doc, "### Startup codes (lifecycle.md §4)");
    let listed = quoted_codes(&table);
    let catalog: BTreeSet<String> = StartupCode::ALL.iter().map(|c| c.as_str().to_owned()).collect();
    assert_eq!(listed, catalog);
}

#[test]
fn the_documents_table_lists_every_schema_member() {
    let doc = doc();
    let table = section(&doc, "## The documents");
    for (file, schema) in [
        ("ptc-gateway-config.schema.json", gateway_schema()),
        ("ptc-host-config.schema.json", host_schema()),
        ("ptc-application.schema.json", application_schema()),
    ] {
        let row = table.iter().find(|l| l.contains(file)).unwrap_or_else(|| panic!("no row for {file}"));
        let members = row.rsplit('|').nth(1).unwrap();
        let properties = schema.get("properties").and_then(Value::as_object).unwrap();
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut listed: Vec<&str> = members.split(',').map(str::trim).collect();
        listed.sort();
        let mut expected: Vec<String> = properties
            .keys()
            .map(|k| if required.contains(k.as_str()) { format!("**`{k}`**") } else { format!("`{k}`") })
            .collect();
        expected.sort();
        assert_eq!(listed, expected, "{file}");
    }
}
