//! Stage 5h (http-mcp.md §9.1): the `x-mcp-header` projection of a normalised input schema, the header
//! parameters `(property path, header suffix)` that `Mcp-Param-*` matching uses at run time.
//!
//! Owns the six projection rules (placement, path length, type, suffix, uniqueness, count) and the order
//! of the result. Does not own the parameter type, the expected header values (`crate::mcp_param`) or the
//! run-time matching of header values (`mcp::params`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::error::{fail, AppError, AppErrorKind};
use super::schema_walk::for_each_child;
use crate::mcp_param::HeaderParam;

/// The annotation keyword.
pub const KEYWORD: &str = "x-mcp-header";
/// http-mcp.md §9.1 rule 2.
pub const MAX_PATH_NAMES: usize = 16;
/// http-mcp.md §9.1 rule 4.
pub const MAX_SUFFIX_BYTES: usize = 128;
/// http-mcp.md §9.1 rule 6.
pub const MAX_PARAMETERS: usize = 24;

/// Where a schema sits, for the placement rule.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Position {
    /// The root schema.
    Root,
    /// `properties.<name>` of the root or of another property schema.
    Property,
    /// Anything else: under `items`, `allOf`, `$defs`, `additionalProperties`, …
    Other,
}

/// Projects `schema` (the normalised input schema). The parameters come back sorted by (lowercased
/// suffix, path).
pub fn project(schema: &Value) -> Result<Vec<HeaderParam>, AppError> {
    let mut out = Vec::new();
    visit(schema, Position::Root, &mut Vec::new(), &mut out)?;
    if out.len() > MAX_PARAMETERS {
        return fail(AppErrorKind::HeaderTooMany);
    }
    let mut seen = BTreeSet::new();
    if !out.iter().all(|p| seen.insert(p.suffix.to_ascii_lowercase())) {
        return fail(AppErrorKind::HeaderDuplicate);
    }
    out.sort_by(|a, b| {
        (a.suffix.to_ascii_lowercase(), &a.path).cmp(&(b.suffix.to_ascii_lowercase(), &b.path))
    });
    Ok(out)
}

/// Walks every schema position (recursion follows the document's depth, bounded by the decoder).
fn visit(
    schema: &Value,
    at: Position,
    path: &mut Vec<String>,
    out: &mut Vec<HeaderParam>,
) -> Result<(), AppError> {
    let Some(map) = schema.as_object() else { return Ok(()) };
    if let Some(suffix) = map.get(KEYWORD) {
        if at != Position::Property {
            return fail(AppErrorKind::HeaderPlacement);
        }
        if path.len() > MAX_PATH_NAMES {
            return fail(AppErrorKind::HeaderPathTooLong);
        }
        if !matches!(map.get("type").and_then(Value::as_str), Some("string" | "integer" | "boolean")) {
            return fail(AppErrorKind::HeaderType);
        }
        match suffix.as_str() {
            Some(s) if valid_suffix(s) => out.push(HeaderParam { path: path.clone(), suffix: s.to_owned() }),
            _ => return fail(AppErrorKind::HeaderSuffix),
        }
    }
    for_each_child(map, &mut |child| {
        let property = child.keyword == "properties" && at != Position::Other;
        match (property, child.name) {
            (true, Some(name)) => {
                path.push(name.to_owned());
                let r = visit(child.schema, Position::Property, path, out);
                path.pop();
                r
            }
            _ => visit(child.schema, Position::Other, path, out),
        }
    })
}

/// http-mcp.md §9.1 rule 4: 1..128 bytes, each a `tchar` of RFC 9110 §5.6.2.
fn valid_suffix(s: &str) -> bool {
    (1..=MAX_SUFFIX_BYTES).contains(&s.len()) && s.bytes().all(is_tchar)
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
