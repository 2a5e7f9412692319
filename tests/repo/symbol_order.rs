//! The linker's symbol-ordering file of the release binary (`scripts/symbol-order.txt`, read by `build.rs`;
//! docs/decisions.md "The code startup runs, ordered (issue 27)") is in the form the linker reads: one
//! symbol name a line, nothing else. Whether its names are still the binary's needs a release build, so it
//! is not checked here: `scripts/symbol-order --check` counts them, and the bench's G6 figure is what a
//! stale file costs.

use std::collections::HashSet;
use std::path::Path;

#[test]
fn the_ordering_file_is_one_symbol_name_a_line() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/symbol-order.txt");
    let text = std::fs::read_to_string(&path).expect("scripts/symbol-order.txt");
    assert!(text.ends_with('\n'), "the file ends with a newline");
    let mut seen = HashSet::new();
    for (n, line) in text.lines().enumerate() {
        let at = n + 1;
        assert!(!line.is_empty(), "line {at} is empty");
        // Mangled Rust (legacy: `_ZN…17h<hash>E`, with `$` and `.` escapes), C++ and C names only: a
        // space, a comment or a demangled name would be a name the linker never finds.
        assert!(
            line.bytes().all(|b| b.is_ascii_alphanumeric() || b"_$.".contains(&b)),
            "line {at} is not a mangled symbol name: {line:?}"
        );
        assert!(seen.insert(line), "line {at} repeats {line:?}");
    }
    assert!(
        seen.iter().any(|name| name.starts_with("_ZN11ptc_gateway")),
        "the file names the gateway's own functions"
    );
}
